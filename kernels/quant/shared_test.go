package quant

import (
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/tensor"
)

// sharedDir returns ../shared beside the module root, skipping the test
// when it is absent (failing instead when CI=true).
func sharedDir(t testing.TB) string {
	t.Helper()
	return testdata.Shared(t) // the one locator of ../shared
}

// TestMatchesLlamaQuantize re-quantizes the F16 mini-llama weights and
// compares the bytes with the Q8_0 and Q4_0 files llama.cpp's quantize tool
// wrote from them (the Q4_0 file keeps token_embd.weight as Q6_K, as
// llama.cpp does for a tied output embedding).
func TestMatchesLlamaQuantize(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "models", "mini-llama")
	src, err := gguf.Open(filepath.Join(dir, "mini-llama-f16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, name := range []string{"mini-llama-Q8_0.gguf", "mini-llama-Q4_0.gguf"} {
		q, err := gguf.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		checked := map[tensor.DType]int{}
		for _, ti := range q.Tensors {
			if !ti.DType.Quantized() {
				continue
			}
			want, err := q.Tensor(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			in, err := src.Tensor(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			f := make([]float32, in.Elems())
			if err := Dequantize(in.DType, f, in.Data); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(want.Data))
			if err := Quantize(ti.DType, got, f); err != nil {
				t.Fatalf("%s %s: %v", name, ti.Name, err)
			}
			bs := ti.DType.TypeSize()
			bad := 0
			for b := 0; b < len(got); b += bs {
				if string(got[b:b+bs]) != string(want.Data[b:b+bs]) {
					if bad < 3 {
						t.Errorf("%s %s (%s): block %d differs:\n got % x\nwant % x", name, ti.Name, ti.DType, b/bs, got[b:b+bs], want.Data[b:b+bs])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%s %s: %d of %d blocks differ", name, ti.Name, bad, len(got)/bs)
			}
			checked[ti.DType]++
		}
		t.Logf("%s: tensors re-quantized bit-exactly per type: %v", name, checked)
		q.Close()
	}
}
