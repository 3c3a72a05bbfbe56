package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestInferflowMoreGemv checks the SIMD Q6_B64T1, Q5_B64T1, Q4_B32T1,
// Q3_B32T1 and Q2_B32T1 matrix-vector kernels row by row against
// kernels/quant's dot products, to the last bit: 1 to 13 rows (those
// left over by the 4 streams included), odd and even block counts, random
// bytes in every block (bases and scales of both signs and every quant
// value), activations random and at ±127, storing and accumulating.
func TestInferflowMoreGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []tensor.DType{tensor.Q4_B32T1, tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q3_B32T1, tensor.Q2_B32T1} {
		t.Run(dt.String(), func(t *testing.T) { testInferflowMoreGemv(t, r, dt) })
	}
}

func testInferflowMoreGemv(t *testing.T, r *rand.Rand, dt tensor.DType) {
	kind, _, _ := Detect().classify(dt)
	if !Detect().hasKQuant(kind) {
		t.Skipf("no SIMD kernel for %s on this machine/build", dt)
	}
	elems, bb := dt.BlockSize(), dt.TypeSize()
	for rows := 1; rows <= 13; rows++ {
		for _, cols := range []int{32, 64, 96, 128, 160, 192, 1024, 2048, 2080} {
			if cols%elems != 0 {
				continue
			}
			nb := cols / elems
			w := randomMatrix(t, r, dt, rows, cols)
			for i := 0; i < len(w.Data); i += bb {
				// f16 base and scale of either sign, exponent 2^-10..2^5.
				for h := 0; h < 4; h += 2 {
					v := r.Uint32()&0x8000 | (5+r.Uint32()%16)<<10 | r.Uint32()&0x3ff
					w.Data[i+h], w.Data[i+h+1] = byte(v), byte(v>>8)
				}
				for j := 4; j < bb; j++ {
					w.Data[i+j] = byte(r.Uint32())
				}
			}
			x := randRow(r, cols, 1)
			if rows%3 == 0 {
				for i := range x {
					x[i] = float32(r.IntN(3)-1) * 1e4 // blocks at ±127
				}
			}
			act := make([]byte, cols/32*34)
			quant.QuantizeActivationQ8_0(act, x)
			for _, acc := range []bool{false, true} {
				dst, check := guarded(rows, 0.5)
				Detect().kGemv(kind, w.Data, w.RowBytes(), act, nb, dst, acc)
				check(t)
				for i := range dst {
					want := quant.Dot(dt, w.Row(i), act, cols)
					if acc {
						want += 0.5
					}
					if math.Float32bits(dst[i]) != math.Float32bits(want) {
						t.Fatalf("%s %dx%d acc=%v: row %d = %v, want %v", dt, rows, cols, acc, i, dst[i], want)
					}
				}
			}
		}
	}
}
