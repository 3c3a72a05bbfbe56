//go:build amd64 && !noasm

package cpu

import (
	"math"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

func TestDotQ4_0F32(t *testing.T) {
	if Detect().Level() < AVX512 {
		t.Skip("needs AVX-512")
	}
	r := newTestRand()
	w := randomMatrix(t, r, tensor.Q4_0, 3, 2048)
	x := randRow(r, 2048, 1)
	wf := make([]float32, 2048)
	for row := range 3 {
		quant.DequantizeRowQ4_0(wf, w.Row(row))
		var want, abs float64
		for i, v := range wf {
			want += float64(v) * float64(x[i])
			abs += math.Abs(float64(v) * float64(x[i]))
		}
		got := dotQ4_0F32Z(unsafePointer(w.Row(row)), &x[0], 64)
		if math.Abs(float64(got)-want) > 1e-5*abs {
			t.Fatalf("row %d: %v, want %v", row, got, want)
		}
	}
}

// BenchmarkQ4_0Activations compares a Q4_0 matrix-vector product with the
// activations quantized to 8 bits (the VNNI kernels MatMul uses) against
// one that widens the weights to float32, on one thread, for weights in
// L2 (256×2048) and in DRAM (64 MiB).
func BenchmarkQ4_0Activations(b *testing.B) {
	if Detect().Level() < AVX512VNNI {
		b.Skip("needs AVX-512 VNNI")
	}
	for _, rows := range []int{256, 58254} {
		w := benchMatrix(b, tensor.Q4_0, rows, 2048)
		x := make([]float32, 2048)
		for i := range x {
			x[i] = float32(i%9) - 4
		}
		dst := make([]float32, rows)
		p := NewPool(1)
		b.Run("q8act/"+map[int]string{256: "L2", 58254: "DRAM"}[rows], func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for b.Loop() {
				must(b, MatMul(p, dst, w, x, 1))
			}
		})
		b.Run("f32act/"+map[int]string{256: "L2", 58254: "DRAM"}[rows], func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			rb := w.RowBytes()
			for b.Loop() {
				for r := range rows {
					dst[r] = dotQ4_0F32Z(unsafePointer(w.Data[r*rb:]), &x[0], 64)
				}
			}
		})
		p.Close()
	}
}
