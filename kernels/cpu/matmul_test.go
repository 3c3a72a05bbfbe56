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
// the token's activations quantized to the type it pairs with, by
// quant.QuantizeActivation (float32 for float weights, in float64).
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
			if err := quant.QuantizeActivation(at, act, xt); err != nil {
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
		// Enough tokens for the panel GEMM: full and partial panels,
		// row counts around its 12-row tiles and 192-row blocks,
		// reductions of several 256-element chunks with a tail, more
		// panels than one pass takes, no columns at all.
		{37, 256, 17}, {50, 1056, 40}, {12, 64, 32}, {61, 96, 33},
		{203, 600, 21}, {25, 544, 161}, {14, 0, 20},
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
					xr := x
					if dt == tensor.BF16 && k.hasBF16DP() {
						// ggml's bfloat16 activations (bf16dp.go).
						xr = make([]float32, len(x))
						for i, v := range x {
							xr[i] = bf16(toBF16(v))
						}
					}
					want := refMatMul(t, w, xr, sh.n)
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

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(42, 43)) }

func TestMatMulErrors(t *testing.T) {
	r := newTestRand()
	w := randomMatrix(t, r, tensor.Q4_0, 4, 64)
	x := make([]float32, 2*64)
	dst := make([]float32, 2*4)
	cases := []struct {
		name string
		err  error
	}{
		{"short x", MatMul(nil, dst, w, x[:100], 2)},
		{"short dst", MatMul(nil, dst[:7], w, x, 2)},
		{"negative n", MatMul(nil, dst, w, x, -1)},
		{"bad type", MatMul(nil, dst, Matrix{DType: tensor.I32, Rows: 4, Cols: 64, Data: make([]byte, 1024)}, x, 2)},
		{"partial block", MatMul(nil, dst, Matrix{DType: tensor.Q4_0, Rows: 4, Cols: 48, Data: make([]byte, 1024)}, x, 2)},
		{"short data", MatMul(nil, dst, Matrix{DType: tensor.Q4_0, Rows: 4, Cols: 64, Data: w.Data[:100]}, x, 2)},
		{"mismatched cols", MatMulMulti(nil, [][]float32{dst, dst}, []Matrix{w, randomMatrix(t, r, tensor.Q4_0, 4, 32)}, x, 2)},
		{"dst count", MatMulMulti(nil, [][]float32{dst}, []Matrix{w, w}, x, 2)},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if err := MatMul(nil, dst, w, x, 0); err != nil {
		t.Errorf("n = 0: %v", err)
	}
}

// TestMatMulMultiMatchesSeparate checks one MatMulMulti against separate
// MatMuls, for weights of different types sharing the input.
func TestMatMulMultiMatchesSeparate(t *testing.T) {
	r := newTestRand()
	p := NewPool(2)
	defer p.Close()
	const cols, n = 512, 5
	ws := []Matrix{
		randomMatrix(t, r, tensor.Q4_0, 40, cols), randomMatrix(t, r, tensor.Q8_0, 8, cols),
		randomMatrix(t, r, tensor.F16, 13, cols), randomMatrix(t, r, tensor.Q6_K, 9, cols),
		randomMatrix(t, r, tensor.Q5_1, 3, cols), randomMatrix(t, r, tensor.F32, 4, cols),
		randomMatrix(t, r, tensor.Q4_K, 5, cols), randomMatrix(t, r, tensor.BF16, 6, cols),
		randomMatrix(t, r, tensor.Q4_0, 7, cols), randomMatrix(t, r, tensor.Q2_K, 2, cols),
	}
	x := randRow(r, n*cols, 1)
	dsts := make([][]float32, len(ws))
	for i, w := range ws {
		dsts[i] = make([]float32, n*w.Rows)
	}
	if err := MatMulMulti(p, dsts, ws, x, n); err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		want := make([]float32, n*w.Rows)
		if err := MatMul(nil, want, w, x, n); err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if dsts[i][j] != want[j] {
				t.Fatalf("weight %d (%s) out[%d] = %v, MatMul gives %v", i, w.DType, j, dsts[i][j], want[j])
			}
		}
	}
}

func TestDequantizeRow(t *testing.T) {
	r := newTestRand()
	for _, dt := range matmulTypes {
		w := randomMatrix(t, r, dt, 3, 512)
		got := make([]float32, 512)
		want := make([]float32, 512)
		for row := range 3 {
			if err := DequantizeRow(got, w, row); err != nil {
				t.Fatal(err)
			}
			if err := quant.Dequantize(dt, want, w.Row(row)); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s row %d [%d] = %v, want %v", dt, row, i, got[i], want[i])
				}
			}
		}
		if DequantizeRow(got, w, 3) == nil || DequantizeRow(got, w, -1) == nil || DequantizeRow(got[:10], w, 0) == nil {
			t.Errorf("%s: bad row or short dst accepted", dt)
		}
	}
}
