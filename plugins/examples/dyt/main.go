// Command dyt is an example weft op plugin serving example.dyt: Dynamic
// Tanh (Zhu et al., "Transformers without Normalization", 2025), a
// drop-in replacement for a normalisation layer:
//
//	y = γ ⊙ tanh(α·x) + β
//
// with a learnt scalar α and per-feature vectors γ and β.
package main

import (
	"context"
	"fmt"
	"math"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/sdk"
	"github.com/weftrun/weft/tensor"
)

type dyt struct{}

func (dyt) Schema() sdk.Schema {
	f32 := []tensor.DType{tensor.F32}
	return sdk.Schema{
		Name: "example.dyt",
		Doc:  "Dynamic Tanh: γ ⊙ tanh(α·x) + β (Zhu et al., 2025).",
		Inputs: []sdk.Input{
			sdk.Activation("x"),
			{Name: "alpha", Doc: "scalar α, shape [1]", Weight: true, DTypes: f32, Dims: []sdk.Dim{sdk.Size(1)}},
			{Name: "gamma", Doc: "per-feature scale γ", Weight: true, DTypes: f32, Dims: []sdk.Dim{sdk.Cols(0)}},
			{Name: "beta", Doc: "per-feature shift β", Weight: true, Optional: true, DTypes: f32, Dims: []sdk.Dim{sdk.Cols(0)}},
		},
		Outputs: []sdk.Output{{Name: "out", Shape: sdk.SameAs(0)}},
		RowWise: true,
	}
}

func (dyt) Execute(ctx context.Context, in []*tensor.Tensor, _ ops.Attrs) ([]*tensor.Tensor, error) {
	x := in[0]
	if len(x.Shape) != 2 {
		return nil, fmt.Errorf("x is %v, want [rows, features]", x.Shape)
	}
	rows, d := x.Shape[0], x.Shape[1]
	xs, alpha, gamma := x.F32(), float64(in[1].F32()[0]), in[2].F32()
	var beta []float32
	if in[3] != nil {
		beta = in[3].F32()
	}
	out := sdk.NewOutput(ctx, 0, rows, d)
	ys := out.F32()
	for r := 0; r < rows; r++ {
		for i := 0; i < d; i++ {
			v := float32(math.Tanh(alpha*float64(xs[r*d+i]))) * gamma[i]
			if beta != nil {
				v += beta[i]
			}
			ys[r*d+i] = v
		}
	}
	return []*tensor.Tensor{out}, nil
}

func main() { sdk.Serve(dyt{}) }
