package checkpoint

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/tensor"
)

func TestGGUFMiniLlama(t *testing.T) {
	for _, q := range []struct {
		file string
		dt   tensor.DType
	}{{"mini-llama-f16.gguf", tensor.F16}, {"mini-llama-Q8_0.gguf", tensor.Q8_0}, {"mini-llama-Q4_0.gguf", tensor.Q4_0}} {
		t.Run(q.file, func(t *testing.T) {
			path := sharedFile(t, "models/mini-llama/"+q.file)
			c, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Format() != FormatGGUF || c.Arch() != "llama" || c.Path() != path {
				t.Errorf("Format, Arch, Path = %q, %q, %q", c.Format(), c.Arch(), c.Path())
			}
			// Figures from ../shared/README.md: hidden 256, 4 layers, 2 KV
			// heads of 32, FFN 704, vocab 32000, tied embedding.
			want := map[string][]int{
				"token_embd.weight":      {32000, 256},
				"blk.0.attn_q.weight":    {256, 256},
				"blk.3.attn_k.weight":    {64, 256},
				"blk.2.ffn_down.weight":  {256, 704},
				"blk.1.ffn_gate.weight":  {704, 256},
				"blk.1.attn_norm.weight": {256},
				"output_norm.weight":     {256},
			}
			for name, shape := range want {
				tt, err := c.Tensor(name)
				if err != nil {
					t.Fatal(err)
				}
				if !equalInts(tt.Shape, shape) {
					t.Errorf("%s: shape %v, want %v", name, tt.Shape, shape)
				}
				n, _ := tt.DType.RowBytes(tensor.NumElems(shape))
				if len(tt.Data) != n {
					t.Errorf("%s: %d bytes, want %d", name, len(tt.Data), n)
				}
				// llama.cpp quantizes a tied token embedding (the LM
				// head) with its own rule, so only check block weights.
				if len(shape) == 2 && strings.HasPrefix(name, "blk.") && tt.DType != q.dt {
					t.Errorf("%s: dtype %v, want %v", name, tt.DType, q.dt)
				}
			}
			if _, err := c.Tensor("output.weight"); err == nil {
				t.Error("output.weight present in a tied-embedding model")
			}
			if v, _ := gguf.Metadata(c.Meta()).Int("llama.block_count"); v != 4 {
				t.Errorf("llama.block_count = %d", v)
			}
			if n := len(c.Infos()); n != 2+4*9 {
				t.Errorf("%d tensors, want %d", n, 2+4*9)
			}
		})
	}
}

// TestGGUFZeroCopy checks that opening a GGUF file and reading every byte of
// every tensor allocates a small fraction of the file: the data is mapped,
// and Tensor hands out views.
func TestGGUFZeroCopy(t *testing.T) {
	path := sharedFile(t, "models/mini-llama/mini-llama-Q4_0.gguf")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var before, opened, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runtime.ReadMemStats(&opened)
	var sum byte
	total := 0
	for _, inf := range c.Infos() {
		tt, err := c.Tensor(inf.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range tt.Data {
			sum += b
		}
		total += len(tt.Data)
	}
	runtime.ReadMemStats(&after)
	openAlloc := opened.TotalAlloc - before.TotalAlloc
	touchAlloc := after.TotalAlloc - opened.TotalAlloc
	t.Logf("file %d bytes, tensors %d bytes; Open allocated %d bytes (metadata, 32000-token vocabulary), touching every tensor %d bytes (checksum %d)",
		st.Size(), total, openAlloc, touchAlloc, sum)
	if touchAlloc > 1<<20 {
		t.Errorf("touching the tensors allocated %d bytes, want < 1 MiB", touchAlloc)
	}
	if total < int(st.Size())/2 {
		t.Fatalf("tensors cover only %d of %d bytes", total, st.Size())
	}
	if openAlloc > uint64(total)/4 {
		t.Errorf("Open allocated %d bytes for %d bytes of tensors: data is being copied", openAlloc, total)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.Tensor("blk.0.attn_q.weight"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Errorf("Tensor makes %v allocations, want at most 3 (the header and shape)", allocs)
	}
}

func TestGGUFBad(t *testing.T) {
	good := sharedFile(t, "models/stories260K/stories260K.gguf")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	badVersion := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(badVersion[4:], 9)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"bad version", badVersion, "unsupported version 9"},
		{"truncated", data[:len(data)-100], "runs past the end of the file"},
		{"header only", data[:30], "past the end of the file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := Open(path)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s and %q", err, path, tc.want)
			}
		})
	}
}
