package ops

import "testing"

func TestCoerce(t *testing.T) {
	for _, tc := range []struct {
		ad   AttrDef
		in   any
		want any
		ok   bool
	}{
		{AttrDef{Name: "n", Type: AttrInt}, int64(3), int64(3), true},
		{AttrDef{Name: "n", Type: AttrInt}, 3.0, int64(3), true},
		{AttrDef{Name: "n", Type: AttrInt}, 3.5, nil, false},
		{AttrDef{Name: "f", Type: AttrFloat}, int64(2), 2.0, true},
		{AttrDef{Name: "s", Type: AttrString, Enum: []string{"a", "b"}}, "b", "b", true},
		{AttrDef{Name: "s", Type: AttrString, Enum: []string{"a", "b"}}, "c", nil, false},
		{AttrDef{Name: "b", Type: AttrBool}, "yes", nil, false},
	} {
		got, err := Coerce(tc.ad, tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("Coerce(%s, %v) = %v, %v", tc.ad.Name, tc.in, got, err)
		}
	}
}
