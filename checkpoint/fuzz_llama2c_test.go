package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLlama2C feeds arbitrary bytes to the llama2.c checkpoint loader
// (through a file, as users give it) and reads every tensor it lists.
func FuzzLlama2C(f *testing.F) {
	// A header of 7 int32: dim 2, hidden 2, layers 1, heads 1, kv heads 1,
	// vocab 2, seq_len 2; then too few floats.
	f.Add([]byte("\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x00\x00\x80\x3f"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "model.bin")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip(err)
		}
		ck, err := OpenLlama2C(p)
		if err != nil {
			return
		}
		defer ck.Close()
		for _, in := range ck.Infos() {
			ck.Tensor(in.Name)
		}
	})
}
