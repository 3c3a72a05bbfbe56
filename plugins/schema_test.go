package plugins

import (
	"strings"
	"testing"

	"github.com/weftrun/weft/plugins/proto/pluginpb"
)

// TestCheckSchema feeds the host schemas a broken plugin might send.
func TestCheckSchema(t *testing.T) {
	x := &pluginpb.Port{Name: "x", Dtypes: []uint32{0}, Rank: 2}
	out := []*pluginpb.Port{{Name: "out"}}
	same := []*pluginpb.OutputRule{{Rule: &pluginpb.OutputRule_SameAsInput{SameAsInput: 0}}}
	dims := func(dt uint32, d ...*pluginpb.DimRule) []*pluginpb.OutputRule {
		return []*pluginpb.OutputRule{{Rule: &pluginpb.OutputRule_Dims{Dims: &pluginpb.Dims{Dtype: dt, Dims: d}}}}
	}
	inDim := func(i, d int32) *pluginpb.DimRule {
		return &pluginpb.DimRule{Rule: &pluginpb.DimRule_Input{Input: &pluginpb.InputDim{Input: i, Dim: d}}}
	}
	cases := []struct {
		name    string
		s       *pluginpb.OpSchema
		wantErr string
	}{
		{"ok", &pluginpb.OpSchema{Name: "a.b", Inputs: []*pluginpb.Port{x}, Outputs: out, Shape: same}, ""},
		{"ok dynamic", &pluginpb.OpSchema{Name: "a.b", Inputs: []*pluginpb.Port{x}, Outputs: out, DynamicShape: true}, ""},
		{"no name", &pluginpb.OpSchema{Outputs: out, Shape: same}, "no name"},
		{"unusable name", &pluginpb.OpSchema{Name: "a(b)", Outputs: out, Shape: same}, "not usable in a spec"},
		{"no outputs", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}}, "no outputs"},
		{"rules missing", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out}, "0 shape rules for 1 outputs"},
		{"same as nothing", &pluginpb.OpSchema{Name: "a", Outputs: out, Shape: same}, "same as input 0, which does not exist"},
		{"f16 output", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out, Shape: dims(1, inDim(0, 0))}, "outputs are f32"},
		{"empty dims", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out, Shape: dims(0)}, "no dimensions"},
		{"empty rule", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out, Shape: []*pluginpb.OutputRule{{}}}, "no shape rule"},
		{"bad input ref", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out, Shape: dims(0, inDim(4, 0))}, "input 4, which does not exist"},
		{"bad attr ref", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out,
			Shape: dims(0, &pluginpb.DimRule{Rule: &pluginpb.DimRule_Attr{Attr: "n"}})}, `attribute "n"`},
		{"rank mismatch", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{{Name: "x", Rank: 1, Dims: []*pluginpb.DimRule{inDim(0, 0), inDim(0, 1)}}}, Outputs: out, Shape: same}, "rank 1 but 2 dimension rules"},
		{"unknown dtype", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{{Name: "x", Dtypes: []uint32{99}}}, Outputs: out, Shape: same}, "unknown dtype 99"},
		{"duplicate attr", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out, Shape: same,
			Attrs: []*pluginpb.AttrDef{{Name: "n"}, {Name: "n"}}}, "declared twice"},
		{"any output dim", &pluginpb.OpSchema{Name: "a", Inputs: []*pluginpb.Port{x}, Outputs: out,
			Shape: dims(0, &pluginpb.DimRule{Rule: &pluginpb.DimRule_Any{Any: true}})}, "cannot be any"},
	}
	for _, tc := range cases {
		_, err := checkSchema(tc.s)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}
