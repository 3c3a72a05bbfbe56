package cpu

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
)

func TestF16Conversions(t *testing.T) {
	// Every half-precision value, converted up and back.
	all := make([]byte, 2*65536)
	for h := range 65536 {
		binary.LittleEndian.PutUint16(all[2*h:], uint16(h))
	}
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, n := range []int{65536, 1, 7, 8, 15, 17, 100} {
			src := all[2*(65536-n):] // odd offsets and tails
			f, check := guarded(n, 0)
			k.f16ToF32(f, src)
			check(t)
			back := make([]byte, 2*n+2)
			back[2*n], back[2*n+1] = 0xa5, 0x5a
			k.f32ToF16(back[:2*n], f)
			if back[2*n] != 0xa5 || back[2*n+1] != 0x5a {
				t.Fatalf("%s: f32ToF16 wrote past %d values", l, n)
			}
			for i := range n {
				h := binary.LittleEndian.Uint16(src[2*i:])
				want := quant.FromF16(h)
				if math.Float32bits(f[i]) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(f[i]))) {
					t.Fatalf("%s: f16 %#04x -> %v, want %v", l, h, f[i], want)
				}
				if got := binary.LittleEndian.Uint16(back[2*i:]); got != h && !math.IsNaN(float64(want)) {
					t.Fatalf("%s: f16 %#04x round trip -> %#04x", l, h, got)
				}
			}
		}
		// Rounding of float32s: nearest even, overflow to Inf, as quant.ToF16.
		xs := []float32{0, 1, 1.0009765625 / 2, 65504, 65519, 65520, 1e9, -1e9, 5.96e-8, 2.98e-8, 3e-8, 1e-10, -0.1, 0.33333334}
		for i := 0; i < 200; i++ {
			xs = append(xs, float32(math.Pow(1.37, float64(i-100)))*float32(1-2*(i%2)))
		}
		b := make([]byte, 2*len(xs))
		k.f32ToF16(b, xs)
		for i, x := range xs {
			if got, want := binary.LittleEndian.Uint16(b[2*i:]), quant.ToF16(x); got != want {
				t.Fatalf("%s: f32ToF16(%v) = %#04x, want %#04x", l, x, got, want)
			}
		}
		// BF16 widening.
		bf := make([]float32, 1000)
		k.bf16ToF32(bf, all[3:2003])
		for i := range bf {
			want := quant.FromBF16(binary.LittleEndian.Uint16(all[3+2*i:]))
			if math.Float32bits(bf[i]) != math.Float32bits(want) {
				t.Fatalf("%s: bf16 [%d] = %v, want %v", l, i, bf[i], want)
			}
		}
	}
	if F16ToF32(make([]float32, 4), make([]byte, 7)) == nil || F32ToF16(make([]byte, 7), make([]float32, 4)) == nil {
		t.Error("short buffers accepted")
	}
}
