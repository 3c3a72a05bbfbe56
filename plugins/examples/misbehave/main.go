// Command misbehave is a weft op plugin for tests: example.misbehave
// passes x through, or fails on purpose as attribute mode says;
// example.tile repeats x's features and answers its output shape through
// the Shape RPC.
package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/sdk"
	"github.com/weftrun/weft/tensor"
)

type misbehave struct{}

func (misbehave) Schema() sdk.Schema {
	return sdk.Schema{
		Name:    "example.misbehave",
		Doc:     "Identity, or a deliberate failure for tests.",
		Inputs:  []sdk.Input{sdk.Activation("x")},
		Outputs: []sdk.Output{{Name: "out", Shape: sdk.SameAs(0)}},
		Attrs: []ops.AttrDef{
			{Name: "mode", Type: ops.AttrString, Default: "ok", Enum: []string{"ok", "panic", "sleep", "shape", "error", "print", "exit"},
				Doc: "ok: identity; panic: panic; sleep: sleep for ms; shape: return a wrong shape; error: return an error; print: write to stdout first; exit: exit(3)"},
			{Name: "ms", Type: ops.AttrInt, Default: int64(60000), Doc: "how long mode=sleep sleeps"},
		},
		RowWise: true,
	}
}

func (misbehave) Execute(ctx context.Context, in []*tensor.Tensor, attrs ops.Attrs) ([]*tensor.Tensor, error) {
	x := in[0]
	switch attrs.String("mode") {
	case "panic":
		panic("misbehave: asked to panic")
	case "sleep":
		time.Sleep(time.Duration(attrs.Int("ms")) * time.Millisecond)
	case "shape":
		return []*tensor.Tensor{tensor.NewF32("", x.Shape[0], x.Shape[1]+1)}, nil
	case "error":
		return nil, fmt.Errorf("misbehave: asked to fail")
	case "print":
		// Stray output on standard output must not break the protocol.
		fmt.Println("misbehave: printing to stdout")
		syscall.Write(1, []byte("misbehave: writing to file descriptor 1\n"))
	case "exit":
		os.Exit(3)
	}
	return []*tensor.Tensor{x}, nil
}

// tile repeats each row's features: out[r] = x[r] x[r] ... (times).
type tile struct{}

func (tile) Schema() sdk.Schema {
	return sdk.Schema{
		Name:    "example.tile",
		Doc:     "Repeats each row's features `times` times.",
		Inputs:  []sdk.Input{sdk.Activation("x")},
		Outputs: []sdk.Output{{Name: "out"}},
		Attrs:   []ops.AttrDef{{Name: "times", Type: ops.AttrInt, Default: int64(2), Doc: "copies of each row"}},
		RowWise: true,
	}
}

// Shape gives [rows, features × times]: no declarative rule multiplies.
func (tile) Shape(in []*ops.Type, attrs ops.Attrs) ([]ops.Type, error) {
	n := attrs.Int("times")
	if n < 1 {
		return nil, fmt.Errorf("times = %d, want at least 1", n)
	}
	x := in[0]
	return []ops.Type{{DType: tensor.F32, Shape: ops.Shape{x.Shape[0], ops.D(x.Shape.Last() * n)}}}, nil
}

func (tile) Execute(ctx context.Context, in []*tensor.Tensor, attrs ops.Attrs) ([]*tensor.Tensor, error) {
	x, n := in[0], attrs.Int("times")
	rows, d := x.Shape[0], x.Shape[1]
	out := sdk.NewOutput(ctx, 0, rows, d*n)
	xs, ys := x.F32(), out.F32()
	for r := 0; r < rows; r++ {
		for k := 0; k < n; k++ {
			copy(ys[(r*n+k)*d:], xs[r*d:(r+1)*d])
		}
	}
	return []*tensor.Tensor{out}, nil
}

func main() { sdk.Serve(misbehave{}, tile{}) }
