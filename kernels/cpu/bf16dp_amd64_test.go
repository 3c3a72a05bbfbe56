//go:build amd64 && !noasm

package cpu

import (
	"math"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestDPBF16Lane checks dpbf16Lane, the Go model of one VDPBF16PS lane,
// against the instruction: random operands, and the edges where it
// departs from plain float32 arithmetic (bfloat16 subnormals read as zero,
// subnormal sums flushed to zero, exact products below the float32 range
// kept until the sum is rounded).
func TestDPBF16Lane(t *testing.T) {
	if !cpu.X86.HasAVX512BF16 || detectLevel() < AVX512 {
		t.Skip("no AVX512_BF16")
	}
	r := newTestRand()
	bf := func(f float64) uint16 { return uint16(math.Float32bits(float32(f)) >> 16) }
	p2 := func(e int) float64 { return math.Ldexp(1, e) }
	type lane struct {
		acc            float32
		w0, w1, x0, x1 uint16
	}
	edges := []lane{
		{0, 1, 0, bf(1), 0},                 // subnormal weight
		{0, 0, bf(1), 0, 1},                 // subnormal activation
		{0, bf(p2(-70)), 0, bf(p2(-70)), 0}, // product below float32
		{float32(p2(-120)), bf(p2(-70)), 0, bf(p2(-70)), 0},
		{float32(p2(-120)), 0, bf(p2(-70)), 0, bf(p2(-70))},
		{float32(1.5 * p2(-126)), bf(p2(-126)), bf(-p2(-126)), bf(1), bf(1)}, // subnormal between
		{float32(p2(-130)), 0, bf(1), 0, bf(1)},                              // subnormal accumulator
		{float32(p2(-125)), 0, bf(-1.5 * p2(-126)), 0, bf(1)},                // subnormal result
		{float32(math.Copysign(0, -1)), 0, 0, 0, 0},
	}
	for range 2000 {
		v := func() float64 { return r.NormFloat64() * math.Exp2(float64(r.IntN(60)-30)) }
		edges = append(edges, lane{float32(v()), bf(v()), bf(v()), bf(v()), bf(v())})
	}
	for i := 0; i < len(edges); i += 16 {
		var a, b [32]uint16
		var acc, want [16]float32
		for l := range 16 {
			e := edges[(i+l)%len(edges)]
			a[2*l], a[2*l+1], b[2*l], b[2*l+1], acc[l] = e.w0, e.w1, e.x0, e.x1, e.acc
			want[l] = dpbf16Lane(e.acc, e.w0, e.w1, e.x0, e.x1)
		}
		dpbf16Z(&a, &b, &acc)
		for l := range 16 {
			if math.Float32bits(acc[l]) != math.Float32bits(want[l]) {
				e := edges[(i+l)%len(edges)]
				t.Fatalf("lane %+v: VDPBF16PS gives %v (%#x), dpbf16Lane %v (%#x)", e, acc[l], math.Float32bits(acc[l]), want[l], math.Float32bits(want[l]))
			}
		}
	}
}
