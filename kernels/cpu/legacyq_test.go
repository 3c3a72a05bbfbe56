package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestLegacyGemv checks the SIMD Q5_0, Q4_1 and Q5_1 matrix-vector
// kernels, for one token and two, row by row against kernels/quant's dot products, to the last
// bit: random block bytes (every quant and fifth bit, f16 scales and
// minimums from subnormal to large), rows left over by the 4 streams,
// partial groups of 1-3 blocks, rows further apart than their length, and
// acc set or not.
func TestLegacyGemv(t *testing.T) {
	k := Detect()
	if !k.hasLegacyQ() {
		t.Skip("no SIMD Q5_0, Q4_1 or Q5_1 kernels on this machine/build")
	}
	for _, dt := range []tensor.DType{tensor.Q5_0, tensor.Q4_1, tensor.Q5_1} {
		t.Run(dt.String(), func(t *testing.T) { testLegacyGemv(t, k, dt) })
	}
}

func testLegacyGemv(t *testing.T, k Kernels, dt tensor.DType) {
	kind, _, af := k.classify(dt)
	if af != afQ8A {
		t.Fatalf("%s: activation format %d, want layout A", dt, af)
	}
	dot, _ := quant.DotFor(dt)
	bs := legacyBlockBytes(kind)
	hasMin := dt != tensor.Q5_0
	r := rand.New(rand.NewPCG(41, uint64(bs)))
	f16 := func() uint16 {
		// Finite f16s of either sign, subnormal to 2^8.
		return toF16(float32(r.NormFloat64() * math.Ldexp(1, r.IntN(30)-22)))
	}
	for _, sh := range []struct{ rows, nb, pad int }{
		{1, 1, 0}, {4, 2, 0}, {5, 3, 0}, {13, 4, 0}, {13, 5, 7}, {8, 6, 0},
		{7, 7, 0}, {12, 9, 22}, {13, 28, 0}, {3, 64, 0}, {16, 13, 3},
	} {
		ldw := sh.nb*bs + sh.pad
		w := make([]byte, (sh.rows-1)*ldw+sh.nb*bs)
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		for row := range sh.rows {
			for b := range sh.nb {
				blk := w[row*ldw+b*bs:]
				binary.LittleEndian.PutUint16(blk, f16())
				if hasMin {
					binary.LittleEndian.PutUint16(blk[2:], f16())
				}
			}
		}
		cols := 32 * sh.nb
		for _, big := range []bool{false, true} {
			x := randRow(r, cols, 1)
			if big {
				// Activations at ±127 and 0.
				for i := range x {
					x[i] = float32(r.IntN(3)-1) * 1e4
				}
			}
			act := make([]byte, cols/32*34)
			quant.QuantizeActivationQ8_0(act, x)
			xa := make([]byte, q8aRowBytes(cols))
			k.packQ8A(xa, x)
			// A second token for the two-token kernel.
			x1 := randRow(r, cols, 3)
			act1 := make([]byte, cols/32*34)
			quant.QuantizeActivationQ8_0(act1, x1)
			xa1 := make([]byte, q8aRowBytes(cols))
			k.packQ8A(xa1, x1)
			for _, acc := range []bool{false, true} {
				dst, check := guarded(sh.rows, 0.5)
				k.legacyGemv(kind, w, ldw, xa, sh.nb, dst, acc)
				check(t)
				d0, check0 := guarded(sh.rows, 0.5)
				d1, check1 := guarded(sh.rows, -0.25)
				k.legacyGemv2(kind, w, ldw, xa, xa1, sh.nb, d0, d1, acc)
				check0(t)
				check1(t)
				for i := range dst {
					row := w[i*ldw : i*ldw+sh.nb*bs]
					want, want1 := dot(row, act, cols), dot(row, act1, cols)
					if acc {
						want += 0.5
						want1 += -0.25
					}
					for _, c := range []struct {
						what      string
						got, want float32
					}{{"one token", dst[i], want}, {"two tokens, first", d0[i], want}, {"two tokens, second", d1[i], want1}} {
						if math.Float32bits(c.got) != math.Float32bits(c.want) {
							t.Fatalf("%s %d rows × %d blocks (ldw %d), big %v, acc %v, %s: row %d = %v (%#x), want %v (%#x)",
								dt, sh.rows, sh.nb, ldw, big, acc, c.what, i, c.got, math.Float32bits(c.got), c.want, math.Float32bits(c.want))
						}
					}
				}
			}
		}
	}
}

// TestLegacyMatMul checks MatMul on Q5_0, Q4_1 and Q5_1 weights at every
// kernel level against kernels/quant's dot products, bit for bit, for one
// token and several.
func TestLegacyMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, dt := range []tensor.DType{tensor.Q5_0, tensor.Q4_1, tensor.Q5_1} {
		for _, sh := range []struct{ rows, cols, n int }{{13, 96, 1}, {37, 896, 3}, {20, 160, 2}, {64, 2048, 5}, {7, 224, 4}} {
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			x := randRow(r, sh.n*sh.cols, 1)
			dot, _ := quant.DotFor(dt)
			at := quant.ActivationType(dt)
			ab, _ := at.RowBytes(sh.cols)
			act := make([]byte, ab)
			for _, level := range Levels() {
				pool := NewPoolKernels(2, Detect().Limit(level))
				for _, acc := range []bool{false, true} {
					got := make([]float32, sh.n*sh.rows)
					for i := range got {
						got[i] = 0.25
					}
					var err error
					if acc {
						err = MatMulAcc(pool, got, w, x, sh.n)
					} else {
						err = MatMul(pool, got, w, x, sh.n)
					}
					if err != nil {
						t.Fatal(err)
					}
					for tok := range sh.n {
						if err := quant.QuantizeActivation(at, act, x[tok*sh.cols:(tok+1)*sh.cols]); err != nil {
							t.Fatal(err)
						}
						for row := range sh.rows {
							want := dot(w.Row(row), act, sh.cols)
							if acc {
								want += 0.25
							}
							if g := got[tok*sh.rows+row]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("%s %v at %s, acc %v: token %d row %d = %v, want %v", dt, sh, level, acc, tok, row, g, want)
							}
						}
					}
				}
				pool.Close()
			}
		}
	}
}
