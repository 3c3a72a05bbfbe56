package cpudev

import (
	"fmt"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// TestAllReduce: every output is the sum of the inputs taken in device
// order, bit for bit the same on every device.
func TestAllReduce(t *testing.T) {
	a := tensor.FromF32("a", []float32{1, 1e8, -3, 0.1}, 2, 2)
	b := tensor.FromF32("b", []float32{2, 1, 4, 0.2}, 2, 2)
	c := tensor.FromF32("c", []float32{3, -1e8, 5, 0.3}, 2, 2)
	outs := []*tensor.Tensor{tensor.NewF32("o0", 2, 2), tensor.NewF32("o1", 2, 2), tensor.NewF32("o2", 2, 2)}
	if err := kAllReduce(&Call{In: []*tensor.Tensor{a, b, c}, Out: outs}); err != nil {
		t.Fatal(err)
	}
	// (a + b) + c in float32, written out: 1e8+1 rounds to 1e8, so the
	// second element is 0, where a + (b + c) would give 1.
	want := []float32{6, 0, 6, float32(float32(float32(0.1)+float32(0.2)) + float32(0.3))}
	for k, o := range outs {
		for i, v := range o.F32() {
			if v != want[i] {
				t.Errorf("output %d[%d] = %v, want %v", k, i, v, want[i])
			}
		}
	}
}

// BenchmarkAllReduce is the all-reduce kernel alone: two devices'
// partial sums of a TinyLlama-width (2048) sub-layer output, for a decode
// step (1 row) and a prefill step (128 rows).
func BenchmarkAllReduce(b *testing.B) {
	for _, rows := range []int{1, 128} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			c := &Call{In: []*tensor.Tensor{tensor.NewF32("a", rows, 2048), tensor.NewF32("b", rows, 2048)},
				Out: []*tensor.Tensor{tensor.NewF32("o0", rows, 2048), tensor.NewF32("o1", rows, 2048)}}
			b.SetBytes(int64(rows * 2048 * 4 * 4))
			for b.Loop() {
				kAllReduce(c)
			}
		})
	}
}
