// Command rmsnorm is an example weft op plugin serving example.rms_norm:
// RMSNorm (Zhang & Sennrich, 2019) with the inputs and attributes of the
// built-in rms_norm, so a spec can swap one for the other.
package main

import (
	"context"
	"fmt"
	"math"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/sdk"
	"github.com/weftrun/weft/tensor"
)

type rmsNorm struct{}

func (rmsNorm) Schema() sdk.Schema {
	return sdk.Schema{
		Name: "example.rms_norm",
		Doc:  "RMSNorm served by a plugin: x / sqrt(mean(x²) + eps) ⊙ w.",
		Inputs: []sdk.Input{
			sdk.Activation("x"),
			{Name: "w", Weight: true, Optional: true, DTypes: []tensor.DType{tensor.F32}, Dims: []sdk.Dim{sdk.Cols(0)}},
		},
		Outputs: []sdk.Output{{Name: "out", Shape: sdk.SameAs(0)}},
		Attrs:   []ops.AttrDef{{Name: "eps", Type: ops.AttrFloat, Default: 1e-5, Doc: "added to the mean square"}},
		RowWise: true,
	}
}

func (rmsNorm) Execute(ctx context.Context, in []*tensor.Tensor, attrs ops.Attrs) ([]*tensor.Tensor, error) {
	x := in[0]
	if len(x.Shape) != 2 {
		return nil, fmt.Errorf("x is %v, want [rows, features]", x.Shape)
	}
	rows, d := x.Shape[0], x.Shape[1]
	xs := x.F32()
	var w []float32
	if in[1] != nil {
		w = in[1].F32()
	}
	eps := attrs.Float("eps")
	out := sdk.NewOutput(ctx, 0, rows, d)
	ys := out.F32()
	for r := 0; r < rows; r++ {
		row, y := xs[r*d:(r+1)*d], ys[r*d:(r+1)*d]
		var ss float64
		for _, v := range row {
			ss += float64(v) * float64(v)
		}
		scale := float32(1 / math.Sqrt(ss/float64(d)+eps))
		for i, v := range row {
			y[i] = v * scale
			if w != nil {
				y[i] *= w[i]
			}
		}
	}
	return []*tensor.Tensor{out}, nil
}

func main() { sdk.Serve(rmsNorm{}) }
