package cpu

import (
	"runtime"
	"testing"
)

func TestLevelNames(t *testing.T) {
	for _, tc := range []struct {
		l    Level
		name string
	}{
		{Generic, "generic"}, {AVX2, "avx2"}, {AVX512, "avx512"},
		{AVX512VNNI, "avx512vnni"}, {AMX, "amx"},
		{NEON, "neon"}, {DotProd, "dotprod"}, {I8MM, "i8mm"},
	} {
		if got := tc.l.String(); got != tc.name {
			t.Errorf("Level(%d).String() = %q, want %q", tc.l, got, tc.name)
		}
		if l, err := ParseLevel(tc.name); err != nil || l != tc.l {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", tc.name, l, err, tc.l)
		}
	}
	if _, err := ParseLevel("sve"); err == nil {
		t.Error("ParseLevel(\"sve\"): no error")
	}
}

// TestLevels checks that the levels under test are this architecture's,
// and that limiting to another architecture's level gives Generic.
func TestLevels(t *testing.T) {
	ls := Levels()
	if ls[0] != Generic || ls[len(ls)-1] != Detect().Level() {
		t.Fatalf("Levels() = %v: want generic up to the detected %v", ls, Detect().Level())
	}
	for _, l := range ls[1:] {
		arm := l >= NEON
		if arm != (runtime.GOARCH == "arm64") {
			t.Errorf("Levels() = %v: %v is not a %s level", ls, l, runtime.GOARCH)
		}
	}
	for _, l := range []Level{AVX2, AVX512VNNI, AMX, NEON, DotProd, I8MM} {
		k := Detect().Limit(l)
		if (l >= NEON) != (Detect().Level() >= NEON) && k.Level() != Generic {
			t.Errorf("Detect().Limit(%v) = %v, want generic (another architecture)", l, k)
		}
		if k.Level() > Detect().Level() {
			t.Errorf("Detect().Limit(%v) = %v, above the detected %v", l, k, Detect().Level())
		}
	}
}
