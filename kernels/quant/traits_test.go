package quant

import (
	"testing"

	"github.com/weftrun/weft/tensor"
)

// TestTraitsTable checks the traits table against tensor's layouts: each
// entry is filed under its own type, has both row functions, and a dot
// product exactly when its activation type is encodable with a block size
// that divides the weight's; and the table's activation types agree with
// what the package comment documents (Q8_K for the K-quants, Q8_0 for the
// 32- and 64-element formats, F32 for the float types).
func TestTraitsTable(t *testing.T) {
	for dt, tr := range traits {
		if tr.DType != dt {
			t.Errorf("traits[%s] describes %s", dt, tr.DType)
		}
		if !dt.Known() {
			t.Errorf("%s: no layout in tensor", dt)
		}
		if tr.Quantize == nil || tr.Dequantize == nil {
			t.Errorf("%s: missing quantize or dequantize", dt)
		}
		if tr.Dot == nil {
			continue
		}
		at, ok := traits[tr.Activation]
		if !ok {
			t.Errorf("%s: activation type %s has no traits", dt, tr.Activation)
			continue
		}
		if dt.BlockSize()%at.DType.BlockSize() != 0 {
			t.Errorf("%s: blocks of %d do not hold whole %s blocks", dt, dt.BlockSize(), tr.Activation)
		}
	}
	for _, c := range []struct {
		dt, act tensor.DType
	}{
		{tensor.F16, tensor.F32}, {tensor.Q4_0, tensor.Q8_0}, {tensor.Q5_1, tensor.Q8_1}, {tensor.Q2_K, tensor.Q8_K},
		{tensor.Q3_K, tensor.Q8_K}, {tensor.Q5_K, tensor.Q8_K}, {tensor.IQ4_NL, tensor.Q8_0}, {tensor.Q3H_B64T1, tensor.Q8_0},
		{tensor.Q8_K, tensor.F32}, {tensor.I32, tensor.F32},
	} {
		if got := ActivationType(c.dt); got != c.act {
			t.Errorf("ActivationType(%s) = %s, want %s", c.dt, got, c.act)
		}
	}
	// Every block format tensor knows is in the table.
	for dt := tensor.DType(0); dt < 5000; dt++ {
		if dt.Known() && dt.Quantized() {
			if _, ok := TraitsOf(dt); !ok {
				t.Errorf("%s: a block type without traits", dt)
			}
		}
	}
}
