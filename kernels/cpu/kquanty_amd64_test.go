//go:build amd64 && !noasm

package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestKQuantGemvAVX2 checks the AVX2 K-quant kernels (the levels below
// AVX512VNNI) bit for bit against kernels/quant's dot products: quantized
// matrices, blocks of random bytes (every scale, min, high-bit and quant
// pattern, d and dmin of either sign), and activations whose quants
// include -128 and ±127 runs, for odd row counts and several block counts.
func TestKQuantGemvAVX2(t *testing.T) {
	var ks []Kernels
	for _, l := range []Level{AVX2, AVX512} {
		if k := Detect().Limit(l); k.Level() == l {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		t.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(31, 32))
	type kdesc struct {
		dt   tensor.DType
		kind wkind
		bb   int
		half []int // offsets of the block's f16 scales
	}
	for _, kd := range []kdesc{
		{tensor.Q6_K, wkQ6_K, 210, []int{208}},
		{tensor.Q5_K, wkQ5_K, 176, []int{0, 2}},
		{tensor.Q4_K, wkQ4_K, 144, []int{0, 2}},
		{tensor.Q3_K, wkQ3_K, 110, []int{108}},
		{tensor.Q2_K, wkQ2_K, 84, []int{80, 82}},
	} {
		for _, sh := range []struct {
			rows, cols int
			random     bool
		}{{1, 256, false}, {3, 512, false}, {5, 768, true}, {13, 2048, false}, {9, 4352, true}, {7, 1024, true}} {
			w := randomMatrix(t, r, kd.dt, sh.rows, sh.cols)
			if sh.random {
				for i := 0; i+kd.bb <= len(w.Data); i += kd.bb {
					for j := range kd.bb {
						w.Data[i+j] = byte(r.Uint32())
					}
					for _, o := range kd.half {
						h := quant.ToF16(float32(r.NormFloat64()) * 0.01)
						w.Data[i+o], w.Data[i+o+1] = byte(h), byte(h>>8)
					}
				}
			}
			act := make([]byte, sh.cols/256*292)
			quant.QuantizeRowQ8_K(act, randRow(r, sh.cols, 1))
			if sh.random {
				randQ8K(r, act)
			}
			for _, k := range ks {
				for _, acc := range []bool{false, true} {
					dst, check := guarded(sh.rows, 0.5)
					k.kGemv(kd.kind, w.Data, w.RowBytes(), act, sh.cols/256, dst, acc)
					check(t)
					for i := range dst {
						want := quant.Dot(kd.dt, w.Row(i), act, sh.cols)
						if acc {
							want += 0.5
						}
						if math.Float32bits(dst[i]) != math.Float32bits(want) {
							t.Fatalf("%v %s %dx%d acc=%v: row %d = %v, want %v", k, kd.dt, sh.rows, sh.cols, acc, i, dst[i], want)
						}
					}
				}
			}
		}
	}
}

// randQ8K rewrites the quants of the odd Q8_K blocks of act: random bytes
// (-128 included) in one, -128 and 127 runs in the next, and so on, with
// their true block sums.
func randQ8K(r *rand.Rand, act []byte) {
	for b := 0; b+292 <= len(act); b += 292 {
		if b/292%2 == 0 {
			continue
		}
		q := act[b+4 : b+260]
		for i := range q {
			if b/292%4 == 1 {
				q[i] = byte(r.Uint32())
			} else {
				q[i] = []byte{0x80, 0x7f}[i/16%2]
			}
		}
		for j := range 16 {
			s := 0
			for _, v := range q[16*j : 16*j+16] {
				s += int(int8(v))
			}
			binary.LittleEndian.PutUint16(act[b+260+2*j:], uint16(int16(s)))
		}
	}
}
