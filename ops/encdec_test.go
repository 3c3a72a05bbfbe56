package ops

import (
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

func f32t(dims ...Dim) *Type { return &Type{DType: tensor.F32, Shape: dims} }

// TestEncDecShapes: the shape checks of cross_attention and of
// attention's relative-position bias accept T5's shapes and name what is
// wrong otherwise.
func TestEncDecShapes(t *testing.T) {
	reg := Builtins()
	ca, _ := reg.Lookup("cross_attention")
	at, _ := reg.Lookup("attention")
	q, kv := f32t(Tokens, D(64)), f32t(Tokens, D(64))
	attrs := func(d *Def, kv ...any) Attrs {
		a := Attrs{}
		for _, ad := range d.Attrs {
			if ad.Default != nil {
				v, _ := Coerce(ad, ad.Default)
				a[ad.Name] = v
			}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			a[kv[i].(string)] = kv[i+1]
		}
		return a
	}
	for _, tc := range []struct {
		name string
		def  *Def
		in   []*Type
		a    Attrs
		want string // "" for no error
	}{
		{"cross ok", ca, []*Type{q, f32t(D(64), D(32)), f32t(D(64), D(32))}, attrs(ca, "heads", int64(4)), ""},
		{"cross gqa", ca, []*Type{q, f32t(D(32), D(32)), f32t(D(32), D(32))}, attrs(ca, "heads", int64(4), "kv_heads", int64(2)), ""},
		{"cross wk rows", ca, []*Type{q, f32t(D(48), D(32)), f32t(D(64), D(32))}, attrs(ca, "heads", int64(4)), "wk is"},
		{"cross widths differ", ca, []*Type{q, f32t(D(64), D(32)), f32t(D(64), D(16))}, attrs(ca, "heads", int64(4)), "memory features"},
		{"cross heads", ca, []*Type{q, f32t(D(64), D(32)), f32t(D(64), D(32))}, attrs(ca, "heads", int64(5)), "does not divide"},
		{"rel ok", at, []*Type{q, kv, kv, f32t(D(32), D(4))}, attrs(at, "heads", int64(4), "causal", false), ""},
		{"rel heads", at, []*Type{q, kv, kv, f32t(D(32), D(8))}, attrs(at, "heads", int64(4)), "want [buckets, 4]"},
		{"rel odd buckets", at, []*Type{q, kv, kv, f32t(D(31), D(4))}, attrs(at, "heads", int64(4), "causal", false), "even"},
		{"rel max_distance", at, []*Type{q, kv, kv, f32t(D(32), D(4))}, attrs(at, "heads", int64(4), "max_distance", int64(8)), "max_distance"},
		{"rel with alibi", at, []*Type{q, kv, kv, f32t(D(32), D(4))}, attrs(at, "heads", int64(4), "alibi", true), "alibi"},
	} {
		_, err := tc.def.Shape(tc.in, tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
