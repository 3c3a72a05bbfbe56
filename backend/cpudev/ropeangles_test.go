package cpudev

import (
	"math"
	"testing"

	"github.com/weftrun/weft/kernels/cpu"
)

// TestRoPEAnglesCache checks the step cache of RoPE angles: its angles are
// RoPEAngles' bits, a second layer with the same positions gets the same
// entry back, and a position buffer rewritten in place (the next step's
// positions in the same memory) or another configuration gets fresh
// angles, never the stale ones.
func TestRoPEAnglesCache(t *testing.T) {
	var a ropeAngles
	r := ropeSpec{headDim: 8, dim: 8, base: 10000}
	pos := []int32{3, 4, 5}
	check := func(what string, r ropeSpec, pos []int32, cs, sn []float32) {
		t.Helper()
		half := r.dim / 2
		if len(cs) != len(pos)*half || len(sn) != len(pos)*half {
			t.Fatalf("%s: %d cosines and %d sines for %d positions", what, len(cs), len(sn), len(pos))
		}
		wc, ws := make([]float32, half), make([]float32, half)
		for i, p := range pos {
			cpu.RoPEAngles(wc, ws, int(p), r.dim, r.base)
			for j := range wc {
				if math.Float32bits(cs[i*half+j]) != math.Float32bits(wc[j]) || math.Float32bits(sn[i*half+j]) != math.Float32bits(ws[j]) {
					t.Fatalf("%s: position %d pair %d: %v %v, want %v %v", what, p, j, cs[i*half+j], sn[i*half+j], wc[j], ws[j])
				}
			}
		}
	}
	cs1, sn1 := a.get(r, pos)
	check("first", r, pos, cs1, sn1)
	cs2, _ := a.get(r, pos)
	if &cs2[0] != &cs1[0] {
		t.Error("the same positions and configuration computed new angles")
	}
	pos[1] = 9 // the next step reuses the buffer
	cs3, sn3 := a.get(r, pos)
	check("rewritten positions", r, pos, cs3, sn3)
	r2 := ropeSpec{headDim: 8, dim: 4, base: 500000}
	cs4, sn4 := a.get(r2, pos)
	check("other configuration", r2, pos, cs4, sn4)
	cs5, sn5 := a.get(r, pos[:2])
	check("fewer positions", r, pos[:2], cs5, sn5)
	// The entries cycle: many configurations later, the first is
	// recomputed correctly.
	for b := range 6 {
		a.get(ropeSpec{headDim: 8, dim: 8, base: float32(100 + b)}, pos)
	}
	cs6, sn6 := a.get(r, pos)
	check("after eviction", r, pos, cs6, sn6)
}
