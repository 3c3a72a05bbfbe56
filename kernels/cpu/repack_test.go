package cpu

import (
	"math"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestRepackCopy checks the Q8_0 prefill copies PackWeight makes with
// WithRepack, and which matmuls read them. Per type:
//   - IQ4_NL's and Q5_0's copies hold the same values, bit for bit
//     (dequantized);
//   - a K-quant's copy is within the rounding of Q8_0 written out: per
//     value |copy − w| ≤ d/2 + 127·|d − amax/127|, d the block's stored
//     (f16) scale and amax its largest |w|;
//   - a matmul of repackMinTokens tokens or more gives, to the last bit,
//     what MatMul gives on the copy as a plain Q8_0 matrix, and one of
//     fewer tokens what a pool without WithRepack gives on the original;
//   - without WithRepack, or for a type it leaves alone, nothing is copied.
func TestRepackCopy(t *testing.T) {
	k := Detect()
	if !k.WithRepack(true).repacks(tensor.Q4_K) {
		t.Skip("no Q8_0 kernels on this machine/build: WithRepack copies nothing")
	}
	r := newTestRand()
	const rows, cols = 37, 512
	plain := NewPoolKernels(2, k)
	defer plain.Close()
	for _, dt := range []tensor.DType{tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL,
		tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.Q4_0} {
		t.Run(dt.String(), func(t *testing.T) {
			w := randomMatrix(t, r, dt, rows, cols)
			p := NewPoolKernels(2, k.WithRepack(true))
			defer p.Close()
			p.PackWeight(w)
			c := p.q8CopyFor(w)
			if dt == tensor.Q4_0 {
				if c != nil {
					t.Fatal("Q4_0 was copied")
				}
				return
			}
			if c == nil {
				t.Fatal("no copy")
			}
			plain.PackWeight(w)
			if plain.q8CopyFor(w) != nil {
				t.Fatal("a pool without WithRepack copied the weight")
			}
			orig, got := make([]float32, cols), make([]float32, cols)
			for row := range rows {
				if err := DequantizeRow(orig, w, row); err != nil {
					t.Fatal(err)
				}
				if err := DequantizeRow(got, *c, row); err != nil {
					t.Fatal(err)
				}
				for b := range cols / 32 {
					d := quant.FromF16(uint16(c.Row(row)[34*b]) | uint16(c.Row(row)[34*b+1])<<8)
					var amax float64
					for i := 32 * b; i < 32*b+32; i++ {
						amax = max(amax, math.Abs(float64(orig[i])))
					}
					bound := float64(d)/2 + 127*math.Abs(float64(d)-amax/127)
					for i := 32 * b; i < 32*b+32; i++ {
						if lossless(dt) {
							if math.Float32bits(got[i]) != math.Float32bits(orig[i]) {
								t.Fatalf("row %d value %d: copy %v, weight %v", row, i, got[i], orig[i])
							}
							continue
						}
						if e := math.Abs(float64(got[i] - orig[i])); e > bound*(1+1e-6) {
							t.Fatalf("row %d value %d: copy %v, weight %v: |Δ| %g > %g", row, i, got[i], orig[i], e, bound)
						}
					}
				}
			}
			for _, n := range []int{1, repackMinTokens - 1, repackMinTokens, 33} {
				x := randRow(r, n*cols, 1)
				dst, want := make([]float32, n*rows), make([]float32, n*rows)
				if err := MatMul(p, dst, w, x, n); err != nil {
					t.Fatal(err)
				}
				ref, via := w, plain
				if n >= repackMinTokens {
					ref = *c // the copy as a Q8_0 matrix, through a plain pool
				}
				if err := MatMul(via, want, ref, x, n); err != nil {
					t.Fatal(err)
				}
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d: output %d = %v, want %v (%s)", n, i, dst[i], want[i], ref.DType)
					}
				}
			}
		})
	}
}

// BenchmarkRepackLoad measures what WithRepack adds to loading a model:
// the Q8_0 copy of a 2048×5632 Q4_K matrix on one thread, in ns per
// weight.
func BenchmarkRepackLoad(b *testing.B) {
	w := benchMatrix(b, tensor.Q4_K, 2048, 5632)
	for b.Loop() {
		p := NewPoolKernels(1, Detect().WithRepack(true))
		p.PackWeight(w)
		p.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(w.Rows*w.Cols), "ns/weight")
}
