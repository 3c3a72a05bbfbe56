package cpu

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
)

// quantInputs returns rows of n values that exercise the quantizer:
// random scales, exact ties of x/d at .5, zeros, huge and tiny values.
func quantInputs(r *rand.Rand, n int) map[string][]float32 {
	gen := func(f func(i int) float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	return map[string][]float32{
		"gauss": gen(func(int) float32 { return float32(r.NormFloat64()) }),
		"scaled": gen(func(i int) float32 {
			return float32(math.Pow(10, float64(i/32%7-3)) * r.NormFloat64())
		}),
		// amax 127 gives d = 1 and id = 1: halves are exact ties.
		"ties": gen(func(i int) float32 {
			if i%32 == 0 {
				return 127
			}
			return float32(i%61-30) + 0.5
		}),
		"zeros": make([]float32, n),
		"sparse": gen(func(i int) float32 {
			if i%5 == 0 {
				return float32(r.NormFloat64())
			}
			return 0
		}),
		"tiny": gen(func(int) float32 { return float32(r.NormFloat64()) * 1e-30 }),
		"huge": gen(func(int) float32 { return float32(r.NormFloat64()) * 1e30 }),
	}
}

func TestQuantizeQ8_0MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{32, 64, 96, 160, 2048} {
		for name, x := range quantInputs(r, n) {
			want := make([]byte, n/32*34)
			quant.QuantizeActivationQ8_0(want, x)
			for _, l := range Levels() {
				k := Detect().Limit(l)
				got := make([]byte, len(want)+1)
				got[len(want)] = 0xa5
				k.quantizeQ8_0(got[:len(want)], x)
				if !bytes.Equal(got[:len(want)], want) || got[len(want)] != 0xa5 {
					t.Errorf("%s/%s/n=%d: quantizeQ8_0 differs from quant.QuantizeActivationQ8_0", l, name, n)
				}
			}
			got := make([]byte, len(want))
			if err := QuantizeRowQ8_0(got, x); err != nil || !bytes.Equal(got, want) {
				t.Errorf("QuantizeRowQ8_0(%s, n=%d): err %v, equal %v", name, n, err, bytes.Equal(got, want))
			}
		}
	}
	if err := QuantizeRowQ8_0(make([]byte, 34), make([]float32, 33)); err == nil {
		t.Error("QuantizeRowQ8_0 accepted 33 values")
	}
	if err := QuantizeRowQ8_0(make([]byte, 33), make([]float32, 32)); err == nil {
		t.Error("QuantizeRowQ8_0 accepted a short dst")
	}
}

// TestQuantizeQ8_1MatchesReference checks the Q8_1 activation quantizer of
// every level against quant.QuantizeActivationQ8_1, byte for byte.
func TestQuantizeQ8_1MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{32, 64, 96, 160, 2048} {
		for name, x := range quantInputs(r, n) {
			want := make([]byte, n/32*36)
			quant.QuantizeActivationQ8_1(want, x)
			for _, l := range Levels() {
				k := Detect().Limit(l)
				got := make([]byte, len(want)+1)
				got[len(want)] = 0xa5
				k.quantizeQ8_1(got[:len(want)], x)
				if !bytes.Equal(got[:len(want)], want) || got[len(want)] != 0xa5 {
					t.Errorf("%s/%s/n=%d: quantizeQ8_1 differs from quant.QuantizeActivationQ8_1", l, name, n)
				}
			}
		}
	}
}

// TestPackLayouts checks layouts A, B and P against their definition, written
// out from ggml Q8_0 blocks made by kernels/quant, for every level.
func TestPackLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{32, 64, 96, 128, 160, 224, 2048} {
		for name, x := range quantInputs(r, n) {
			nb := n / 32
			ref := make([]byte, nb*34)
			quant.QuantizeActivationQ8_0(ref, x)
			q := func(j, i int) int32 { return int32(int8(ref[34*j+2+i])) }
			d := func(j int) float32 { return quant.FromF16(uint16(ref[34*j]) | uint16(ref[34*j+1])<<8) }
			wantA := make([]byte, q8aRowBytes(n))
			wantB := make([]byte, q8aRowBytes(n))
			wantP := make([]byte, q8pRowBytes(n))
			for j := range nb {
				for _, m := range []struct {
					want []byte
					f    int32
				}{{wantA, -8}, {wantB, -128}} {
					g, b := m.want[j/4*256:], j%4
					for i := range 16 {
						g[16*b+i] = byte(q(j, i))
						g[64+16*b+i] = byte(q(j, 16+i))
					}
					for l := range 4 {
						s := q(j, 4*l) + q(j, 4*l+1) + q(j, 4*l+2) + q(j, 4*l+3) +
							q(j, 16+4*l) + q(j, 17+4*l) + q(j, 18+4*l) + q(j, 19+4*l)
						putU32(g[128+4*(4*b+l):], uint32(m.f*s))
						putU32(g[192+4*(4*b+l):], math.Float32bits(d(j)))
					}
				}
				p, c := wantP[j/2*192:], j%2
				for i := range 32 {
					p[32*c+i] = byte(q(j, i))
				}
				for l := range 8 {
					s := q(j, 4*l) + q(j, 4*l+1) + q(j, 4*l+2) + q(j, 4*l+3)
					putU32(p[64+4*(8*c+l):], uint32(-128*s))
					putU32(p[128+4*(8*c+l):], math.Float32bits(d(j)))
				}
			}
			for _, l := range Levels() {
				k := Detect().Limit(l)
				for _, tc := range []struct {
					layout string
					want   []byte
					pack   func([]byte, []float32)
				}{{"A", wantA, k.packQ8A}, {"B", wantB, k.packQ8B}, {"P", wantP, k.packQ8P}} {
					got := bytes.Repeat([]byte{0x5a}, len(tc.want)+1)
					tc.pack(got[:len(tc.want)], x)
					if got[len(tc.want)] != 0x5a {
						t.Errorf("%s/%s/%s/n=%d: wrote past the row", l, tc.layout, name, n)
					}
					if i := firstDiff(got[:len(tc.want)], tc.want); i >= 0 {
						t.Errorf("%s/layout %s/%s/n=%d: byte %d = %#x, want %#x", l, tc.layout, name, n, i, got[i], tc.want[i])
					}
				}
			}
		}
	}
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestPackLayoutC checks layout C (records of 16 tokens interleaved, for
// prefill) against its definition, built from ggml Q8_0 blocks made by
// kernels/quant.
func TestPackLayoutC(t *testing.T) {
	k := Detect()
	if !k.hasQ8Unpacked() {
		t.Skip("layout C needs AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{32, 96, 512, 544, 2048, 5632} {
		for name, x := range quantInputs(r, n) {
			nb := n / 32
			ref := make([]byte, nb*34)
			quant.QuantizeActivationQ8_0(ref, x)
			// Token 5 of a group: its records are 48 bytes in, 768 apart.
			const tok = 5
			want := bytes.Repeat([]byte{0x5a}, nb*q8cBlock)
			for j := range nb {
				rec := want[j*q8cBlock+tok*q8cRecord:]
				var s int32
				for e := range 32 {
					q := int8(ref[34*j+2+e])
					rec[e] = byte(q)
					s += int32(q)
				}
				d := quant.FromF16(uint16(ref[34*j]) | uint16(ref[34*j+1])<<8)
				putU32(rec[32:], uint32(-8*s))
				putU32(rec[36:], math.Float32bits(d))
				putU32(rec[40:], uint32(-128*s))
				putU32(rec[44:], math.Float32bits(d))
			}
			got := bytes.Repeat([]byte{0x5a}, nb*q8cBlock)
			k.packQ8C(got[tok*q8cRecord:], x)
			if i := firstDiff(got, want); i >= 0 {
				t.Errorf("%s/n=%d: byte %d (block %d, offset %d) = %#x, want %#x", name, n, i, i/q8cBlock, i%q8cBlock, got[i], want[i])
			}
		}
	}
}
