package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

var matmulTypes = []tensor.DType{
	tensor.F32, tensor.F16, tensor.BF16,
	tensor.Q4_0, tensor.Q8_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1,
	tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
}

// randomMatrix returns a rows×cols matrix of type dt whose data starts at
// an odd address (to exercise unaligned loads), with a guard byte after.
func randomMatrix(t testing.TB, r *rand.Rand, dt tensor.DType, rows, cols int) Matrix {
	t.Helper()
	f := make([]float32, rows*cols)
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	rb, err := dt.RowBytes(cols)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, rows*rb+2)
	data := buf[1 : 1+rows*rb]
	if err := quant.Quantize(dt, data, f); err != nil {
		t.Fatal(err)
	}
	return Matrix{DType: dt, Rows: rows, Cols: cols, Data: data}
}

// refMatMul is the reference: each weight row dotted by kernels/quant with
// the token's activations quantized to the type it pairs with (float32
// for float weights, in float64).
func refMatMul(t testing.TB, w Matrix, x []float32, n int) []float64 {
	t.Helper()
	out := make([]float64, n*w.Rows)
	rb := w.RowBytes()
	wf := make([]float32, w.Cols)
	at := quant.ActivationType(w.DType)
	for tok := range n {
		xt := x[tok*w.Cols : (tok+1)*w.Cols]
		var act []byte
		if at != tensor.F32 {
			ab, _ := at.RowBytes(w.Cols)
			act = make([]byte, ab)
			if err := quant.Quantize(at, act, xt); err != nil {
				t.Fatal(err)
			}
		}
		for r := range w.Rows {
			row := w.Data[r*rb : (r+1)*rb]
			if at == tensor.F32 {
				if err := quant.Dequantize(w.DType, wf, row); err != nil {
					t.Fatal(err)
				}
				var s float64
				for i, v := range wf {
					s += float64(v) * float64(xt[i])
				}
				out[tok*w.Rows+r] = s
			} else {
				out[tok*w.Rows+r] = float64(quant.Dot(w.DType, row, act, w.Cols))
			}
		}
	}
	return out
}

// absMatMul returns Σ|w·x| per output, the scale of rounding errors.
func absMatMul(t testing.TB, w Matrix, x []float32, n int) []float64 {
	out := make([]float64, n*w.Rows)
	rb := w.RowBytes()
	wf := make([]float32, w.Cols)
	for r := range w.Rows {
		if err := quant.Dequantize(w.DType, wf, w.Data[r*rb:(r+1)*rb]); err != nil {
			t.Fatal(err)
		}
		for tok := range n {
			var s float64
			for i, v := range wf {
				s += math.Abs(float64(v) * float64(x[tok*w.Cols+i]))
			}
			out[tok*w.Rows+r] = s
		}
	}
	return out
}

const sentinel = float32(-12345.5)

// guarded returns a slice of n floats set to fill with sentinels on both
// sides, and a check for them.
func guarded(n int, fill float32) ([]float32, func(t *testing.T)) {
	buf := make([]float32, n+16)
	for i := range buf {
		buf[i] = sentinel
	}
	s := buf[8 : 8+n]
	for i := range s {
		s[i] = fill
	}
	return s, func(t *testing.T) {
		t.Helper()
		for i := range 8 {
			if buf[i] != sentinel || buf[8+n+i] != sentinel {
				t.Fatalf("guard band overwritten: before %v after %v", buf[:8], buf[8+n:])
			}
		}
	}
}

func levelsUnderTest() []Level { return Levels() }

func TestMatMulAllPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []struct{ rows, cols, n int }{
		{1, 32, 1}, {3, 64, 1}, {5, 96, 2}, {7, 288, 3}, {8, 256, 4},
		{9, 512, 5}, {33, 288, 9}, {64, 2048, 1}, {13, 4352, 6},
		{6, 768, 8}, {4, 1024, 4},
	}
	for _, l := range levelsUnderTest() {
		k := Detect().Limit(l)
		pool := NewPoolKernels(2, k)
		defer pool.Close()
		for _, dt := range matmulTypes {
			for _, sh := range shapes {
				if sh.cols%dt.BlockSize() != 0 {
					continue
				}
				name := fmt.Sprintf("%s/%s/%dx%d/n%d", l, dt, sh.rows, sh.cols, sh.n)
				t.Run(name, func(t *testing.T) {
					w := randomMatrix(t, r, dt, sh.rows, sh.cols)
					xb := make([]float32, sh.n*sh.cols+1)
					x := xb[1:]
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					want := refMatMul(t, w, x, sh.n)
					scale := absMatMul(t, w, x, sh.n)
					tol := 2e-5
					if dt.Quantized() {
						tol = 1e-4 // the activations' f16 scales and sum order
					}
					for _, acc := range []bool{false, true} {
						dst, check := guarded(sh.n*sh.rows, 0.25)
						var err error
						if acc {
							err = MatMulAcc(pool, dst, w, x, sh.n)
						} else {
							err = MatMul(pool, dst, w, x, sh.n)
						}
						if err != nil {
							t.Fatal(err)
						}
						check(t)
						for i, v := range dst {
							exp := want[i]
							if acc {
								exp += 0.25
							}
							if d := math.Abs(float64(v) - exp); d > tol*scale[i]+1e-6 || math.IsNaN(float64(v)) {
								t.Fatalf("acc=%v out[%d] (token %d row %d) = %v, want %v (|w·x| %v)", acc, i, i/sh.rows, i%sh.rows, v, exp, scale[i])
							}
						}
					}
				})
			}
		}
	}
}
