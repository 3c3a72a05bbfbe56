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
				Detect().kGemv(kind, w.Data, w.RowBytes(), act, nb, dst, acc, nil)
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

// TestInferflowMoreMatMul checks MatMul and MatMulAcc with the SIMD
// Inferflow kernels (two threads, one and several tokens, rows in 4-row
// groups and left over) against the Go reference at Generic, bit for bit.
func TestInferflowMoreMatMul(t *testing.T) {
	if Detect().Level() == Generic {
		t.Skip("no SIMD level")
	}
	r := rand.New(rand.NewPCG(23, 24))
	simd := NewPoolKernels(2, Detect())
	defer simd.Close()
	ref := NewPoolKernels(2, Detect().Limit(Generic))
	defer ref.Close()
	for _, dt := range []tensor.DType{tensor.Q4_B32T1, tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q3_B32T1, tensor.Q2_B32T1} {
		for _, sh := range []struct{ rows, cols, n int }{{37, 2048, 1}, {37, 2048, 3}, {22, 1088, 1}, {22, 1088, 5}, {5, 96, 2}} {
			if sh.cols%dt.BlockSize() != 0 {
				continue
			}
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			x := randRow(r, sh.n*sh.cols, 1)
			for _, acc := range []bool{false, true} {
				matMulSameBits(t, simd, ref, w, x, sh.n, acc)
			}
		}
	}
}

// matMulSameBits runs MatMul (MatMulAcc with acc) of n tokens on the pools
// simd and ref, into outputs preset to 0.5, fails unless the two give the
// same bits, and returns the multiply and the SIMD output for further
// checks.
func matMulSameBits(t *testing.T, simd, ref *Pool, w Matrix, x []float32, n int, acc bool) (mm func(*Pool, []float32, Matrix, []float32, int) error, got []float32) {
	t.Helper()
	got, want := make([]float32, n*w.Rows), make([]float32, n*w.Rows)
	for i := range got {
		got[i], want[i] = 0.5, 0.5
	}
	mm = MatMul
	if acc {
		mm = MatMulAcc
	}
	if err := mm(simd, got, w, x, n); err != nil {
		t.Fatal(err)
	}
	if err := mm(ref, want, w, x, n); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s %dx%d n=%d acc=%v: out[%d] = %v, want %v", w.DType, w.Rows, w.Cols, n, acc, i, got[i], want[i])
		}
	}
	return mm, got
}

// TestQ8B32T2RunsAsQ8_0 checks that Inferflow's Q8_B32T2 weights take
// the Q8_0 kernels at every level: a Q8_B32T2 matrix and the same bytes
// read as Q8_0 give the same products bit for bit, for one token and for
// several, and kernels/quant gives the same row dot products for both.
func TestQ8B32T2RunsAsQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	w := randomMatrix(t, r, tensor.Q8_B32T2, 13, 512)
	as8 := w
	as8.DType = tensor.Q8_0
	for _, level := range Levels() {
		pool := NewPoolKernels(2, Detect().Limit(level))
		if kind, _, _ := pool.Kernels().classify(tensor.Q8_B32T2); pool.Kernels().hasQ8() && kind != wkQ8_0 {
			t.Errorf("at %s Q8_B32T2 runs as kind %d, not Q8_0's", level, kind)
		}
		for _, n := range []int{1, 4, 9} {
			x := randRow(r, n*512, 1)
			_, got := matMulSameBits(t, pool, pool, w, x, n, false)
			_, want := matMulSameBits(t, pool, pool, as8, x, n, false)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("at %s, %d tokens: out[%d] = %v as Q8_B32T2, %v as Q8_0", level, n, i, got[i], want[i])
				}
			}
		}
		pool.Close()
	}
	act := make([]byte, 512/32*34)
	quant.QuantizeRowQ8_0(act, randRow(r, 512, 1))
	for i := range w.Rows {
		if a, b := quant.Dot(tensor.Q8_B32T2, w.Row(i), act, 512), quant.Dot(tensor.Q8_0, w.Row(i), act, 512); math.Float32bits(a) != math.Float32bits(b) {
			t.Fatalf("row %d: kernels/quant gives %v for Q8_B32T2, %v for Q8_0", i, a, b)
		}
	}
}
