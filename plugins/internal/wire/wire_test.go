package wire

import (
	"reflect"
	"strings"
	"testing"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
	"google.golang.org/protobuf/proto"
)

func TestAttrRoundTrip(t *testing.T) {
	in := ops.Attrs{"i": int64(-3), "f": 0.25, "s": "rotate_half", "b": true, "l": []int64{1, 2, 3}, "empty": []int64{}}
	p, err := AttrsToProto(in)
	if err != nil {
		t.Fatal(err)
	}
	// Through the wire format, as the plugin sees it.
	data, err := proto.Marshal(&pluginpb.ShapeRequest{Attrs: p})
	if err != nil {
		t.Fatal(err)
	}
	var back pluginpb.ShapeRequest
	if err := proto.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	out, err := AttrsFromProto(back.Attrs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip: %v, want %v", out, in)
	}
	if v, err := AttrToProto(7); err != nil || v.GetI() != 7 {
		t.Errorf("int: %v, %v", v, err)
	}
	if _, err := AttrsToProto(ops.Attrs{"x": struct{}{}}); err == nil || !strings.Contains(err.Error(), "attribute x") {
		t.Errorf("unsupported value: %v", err)
	}
	if _, err := AttrFromProto(&pluginpb.AttrValue{}); err == nil {
		t.Error("empty value accepted")
	}
}

func TestAttrDefs(t *testing.T) {
	cases := []struct {
		def     ops.AttrDef
		wantErr string
	}{
		{ops.AttrDef{Name: "eps", Type: ops.AttrFloat, Default: 1e-5, Doc: "d"}, ""},
		{ops.AttrDef{Name: "n", Type: ops.AttrInt, Default: 4}, ""},
		{ops.AttrDef{Name: "mode", Type: ops.AttrString, Default: "a", Enum: []string{"a", "b"}}, ""},
		{ops.AttrDef{Name: "sizes", Type: ops.AttrInts, Required: true}, ""},
		{ops.AttrDef{Name: "bad", Type: ops.AttrInt, Default: "x"}, "default"},
		{ops.AttrDef{Name: "enum", Type: ops.AttrString, Default: "c", Enum: []string{"a"}}, "not one of"},
	}
	for _, tc := range cases {
		p, err := AttrDefToProto(tc.def)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.def.Name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.def.Name, err)
		}
		back, err := AttrDefFromProto(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.def.Name, err)
		}
		want := tc.def
		if want.Default != nil {
			want.Default, _ = ops.Coerce(want, want.Default)
		}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%s: round trip %+v, want %+v", tc.def.Name, back, want)
		}
	}
	// A plugin's default of the wrong type is refused.
	bad := &pluginpb.AttrDef{Name: "x", Type: pluginpb.AttrType_ATTR_BOOL, Default: &pluginpb.AttrValue{Value: &pluginpb.AttrValue_S{S: "yes"}}}
	if _, err := AttrDefFromProto(bad); err == nil {
		t.Error("a string default for a bool attribute was accepted")
	}
	if _, err := AttrDefFromProto(&pluginpb.AttrDef{Type: pluginpb.AttrType(99), Name: "x"}); err == nil {
		t.Error("an unknown attribute type was accepted")
	}
}

func TestTypes(t *testing.T) {
	ty := &ops.Type{DType: tensor.F32, Shape: ops.Shape{ops.Tokens, ops.D(64)}}
	back, err := TypeFromProto(TypeToProto(ty))
	if err != nil || back.String() != ty.String() {
		t.Errorf("round trip %v, %v", back, err)
	}
	if back, err := TypeFromProto(TypeToProto(nil)); back != nil || err != nil {
		t.Errorf("absent: %v, %v", back, err)
	}
	for _, p := range []*pluginpb.TensorType{
		{Dtype: 99},
		{Dtype: 0, Dims: []*pluginpb.Dim{{Size: -1}}},
	} {
		if _, err := TypeFromProto(p); err == nil {
			t.Errorf("%v accepted", p)
		}
	}
}
