package sdk

import (
	"context"
	"strings"
	"testing"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// fakeOp is an op with a given schema.
type fakeOp struct{ s Schema }

func (f fakeOp) Schema() Schema { return f.s }

func (fakeOp) Execute(context.Context, []*tensor.Tensor, ops.Attrs) ([]*tensor.Tensor, error) {
	return nil, nil
}

func TestDescribeChecksSchemas(t *testing.T) {
	x := Activation("x")
	out := []Output{{Name: "out", Shape: SameAs(0)}}
	cases := []struct {
		name    string
		s       Schema
		wantErr string
	}{
		{"ok", Schema{Name: "a.b", Inputs: []Input{x}, Outputs: out}, ""},
		{"ok dims", Schema{Name: "a.b", Inputs: []Input{x}, Attrs: []ops.AttrDef{{Name: "n", Type: ops.AttrInt, Default: 2}},
			Outputs: []Output{{Name: "y", Shape: Dims(tensor.F32, Rows(0), AttrDim("n"))}}}, ""},
		{"no name", Schema{Inputs: []Input{x}, Outputs: out}, "op with no name"},
		{"no outputs", Schema{Name: "a", Inputs: []Input{x}}, "no outputs"},
		{"no shape rule", Schema{Name: "a", Inputs: []Input{x}, Outputs: []Output{{Name: "y"}}}, "has no shape rule"},
		{"same as missing input", Schema{Name: "a", Inputs: []Input{x}, Outputs: []Output{{Name: "y", Shape: SameAs(1)}}}, "SameAs(1)"},
		{"any output dim", Schema{Name: "a", Inputs: []Input{x}, Outputs: []Output{{Name: "y", Shape: Dims(tensor.F32, Any())}}}, "cannot be Any"},
		{"f16 output", Schema{Name: "a", Inputs: []Input{x}, Outputs: []Output{{Name: "y", Shape: Dims(tensor.F16, Rows(0))}}}, "outputs are f32"},
		{"dim of missing input", Schema{Name: "a", Inputs: []Input{{Name: "w", Dims: []Dim{DimOf(3, 0)}}}, Outputs: []Output{{Name: "y", Shape: SameAs(0)}}}, "no input 3"},
		{"dim out of rank", Schema{Name: "a", Inputs: []Input{x, {Name: "w", Dims: []Dim{DimOf(0, 2)}}}, Outputs: out}, "has 2 dimensions"},
		{"attr dim not int", Schema{Name: "a", Inputs: []Input{x}, Attrs: []ops.AttrDef{{Name: "f", Type: ops.AttrFloat}},
			Outputs: []Output{{Name: "y", Shape: Dims(tensor.F32, AttrDim("f"))}}}, `no int attribute "f"`},
		{"duplicate attr", Schema{Name: "a", Inputs: []Input{x}, Attrs: []ops.AttrDef{{Name: "n"}, {Name: "n"}}, Outputs: out}, "declared twice"},
		{"bad default", Schema{Name: "a", Inputs: []Input{x}, Attrs: []ops.AttrDef{{Name: "n", Type: ops.AttrInt, Default: "two"}}, Outputs: out}, "default"},
		{"unnamed input", Schema{Name: "a", Inputs: []Input{{}}, Outputs: out}, "input 0 has no name"},
		{"unknown dtype", Schema{Name: "a", Inputs: []Input{{Name: "x", DTypes: []tensor.DType{77}}}, Outputs: out}, "unknown dtype"},
	}
	for _, tc := range cases {
		p, err := describe(fakeOp{tc.s})
		if tc.wantErr == "" {
			if err != nil || p.GetName() != tc.s.Name {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		}
	}
	if _, err := newServer([]Op{fakeOp{cases[0].s}, fakeOp{cases[0].s}}); err == nil || !strings.Contains(err.Error(), "served twice") {
		t.Errorf("duplicate op: %v", err)
	}
	if _, err := newServer(nil); err == nil {
		t.Error("a plugin with no ops was accepted")
	}
}

func TestNewOutput(t *testing.T) {
	region := make([]byte, 4*6)
	ctx := context.WithValue(context.Background(), outputsKey{}, &outputs{bufs: [][]byte{region, nil}})
	cases := []struct {
		i      int
		shape  []int
		shared bool
	}{
		{0, []int{2, 3}, true},
		{0, []int{3, 3}, false}, // not the size offered
		{1, []int{2, 3}, false}, // no region for output 1
		{5, []int{1}, false},
	}
	for _, tc := range cases {
		o := NewOutput(ctx, tc.i, tc.shape...)
		if o.DType != tensor.F32 || len(o.Data) != 4*tensor.NumElems(tc.shape) {
			t.Errorf("NewOutput(%d, %v): %s, %d bytes", tc.i, tc.shape, o.DType, len(o.Data))
		}
		if shared := &o.Data[0] == &region[0]; shared != tc.shared {
			t.Errorf("NewOutput(%d, %v): in the offered region %v, want %v", tc.i, tc.shape, shared, tc.shared)
		}
	}
	if o := NewOutput(context.Background(), 0, 4); len(o.Data) != 16 {
		t.Errorf("without a call: %d bytes", len(o.Data))
	}
}
