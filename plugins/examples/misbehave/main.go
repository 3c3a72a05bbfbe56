// Command misbehave is a weft op plugin for tests: example.misbehave
// passes x through, or fails on purpose as attribute mode says.
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

func main() { sdk.Serve(misbehave{}) }
