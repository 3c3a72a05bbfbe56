package tensor

import "testing"

// TestFileType checks general.file_type against llama.cpp's llama_ftype
// numbers (include/llama.h): the K-quants map to their _M mixes.
func TestFileType(t *testing.T) {
	for _, c := range []struct {
		d    DType
		want uint32
		ok   bool
	}{
		{F32, 0, true}, {F16, 1, true}, {Q4_0, 2, true}, {Q4_1, 3, true}, {Q8_0, 7, true}, {Q5_0, 8, true},
		{Q5_1, 9, true}, {Q2_K, 10, true}, {Q3_K, 12, true}, {Q4_K, 15, true}, {Q5_K, 17, true},
		{Q6_K, 18, true}, {IQ4_NL, 25, true}, {BF16, 32, true},
		{Q8_K, 0, false}, {I32, 0, false}, {Q3H_B64T1, 0, false}, {DType(999), 0, false},
	} {
		got, ok := c.d.FileType()
		if got != c.want || ok != c.ok {
			t.Errorf("%s.FileType() = %d, %v; want %d, %v", c.d, got, ok, c.want, c.ok)
		}
	}
}
