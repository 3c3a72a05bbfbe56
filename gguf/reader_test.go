package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

func TestOpenStories260K(t *testing.T) {
	path := filepath.Join(sharedDir(t), "models", "stories260K", "stories260K.gguf")
	g, err := Open(path)
	must(t, err)
	// Hyperparameters from shared/README.md: dim 64, 5 layers, 8 query
	// heads, 4 KV heads, FFN 172, vocabulary 512.
	for key, want := range map[string]int64{
		"llama.embedding_length":     64,
		"llama.block_count":          5,
		"llama.attention.head_count": 8,
		"llama.feed_forward_length":  172,

		"llama.attention.head_count_kv": 4,
	} {
		if got, ok := g.Meta.Int(key); !ok || got != want {
			t.Errorf("%s = %v (%v), want %d", key, got, ok, want)
		}
	}
	if g.Architecture() != "llama" || g.Version != 3 || g.Alignment != 32 {
		t.Errorf("arch %q version %d alignment %d", g.Architecture(), g.Version, g.Alignment)
	}
	if toks, _ := g.Meta.Strings("tokenizer.ggml.tokens"); len(toks) != 512 || toks[1] != "<s>" {
		t.Errorf("%d tokens, token 1 %q", len(toks), toks[1])
	}
	// 5 layers × 9 tensors, plus token_embd, output_norm and output.
	if len(g.Tensors) != 48 {
		t.Errorf("%d tensors, want 48", len(g.Tensors))
	}
	x, err := g.Tensor("token_embd.weight")
	must(t, err)
	if x.DType != tensor.F32 || len(x.Shape) != 2 || x.Shape[0] != 512 || x.Shape[1] != 64 || len(x.Data) != 512*64*4 {
		t.Errorf("token_embd.weight: %s %v, %d bytes", x.DType, x.Shape, len(x.Data))
	}
	// The llama2.c checkpoint holds the same embedding right after its
	// 28-byte header.
	bin, err := os.ReadFile(filepath.Join(filepath.Dir(path), "stories260K.bin"))
	must(t, err)
	if !bytes.Equal(bin[28:28+len(x.Data)], x.Data) {
		t.Error("token_embd.weight differs from the llama2.c checkpoint's embedding")
	}
	if _, err := g.Tensor("nope"); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("missing tensor: %v", err)
	}
	must(t, g.Close())
	if _, err := g.Tensor("token_embd.weight"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("tensor after Close: %v", err)
	}
	must(t, g.Close()) // a second Close is harmless
}

// dataEnd returns where the last tensor's bytes end: cutting the file
// anywhere before that must fail.
func dataEnd(g *File) uint64 {
	end := uint64(0)
	for _, ti := range g.Tensors {
		end = max(end, g.dataOff+ti.Offset+ti.Size)
	}
	return end
}

// cutPoints returns every offset in the first 4096 bytes, 600 offsets
// spread up to meta (the end of the tensor infos) and 200 over the rest.
func cutPoints(meta, size int) []int {
	var cuts []int
	for i := 0; i < min(4096, size); i++ {
		cuts = append(cuts, i)
	}
	for i := 4096; i < min(meta, size); i += max(1, (meta-4096)/600) {
		cuts = append(cuts, i)
	}
	for i := meta; i < size; i += max(1, (size-meta)/200) {
		cuts = append(cuts, i)
	}
	return append(cuts, size-1)
}

// TestTruncatedFiles cuts the shared GGUFs at thousands of offsets in their
// header, metadata and tensor infos and hundreds in their data: each
// cut must give an error naming the file, never a panic.
func TestTruncatedFiles(t *testing.T) {
	shared := sharedDir(t)
	for _, name := range []string{
		"models/stories260K/stories260K.gguf",
		"models/mini-llama/mini-llama-Q4_0.gguf",
		"tokenizer-vectors/ggml-vocab-llama-spm.gguf",
	} {
		path := filepath.Join(shared, name)
		data, err := os.ReadFile(path)
		must(t, err)
		full, err := Parse(path, data)
		must(t, err)
		end := int(dataEnd(full))
		if len(full.Tensors) == 0 {
			end = len(data)
		}
		cuts := cutPoints(int(full.dataOff)+64, len(data))
		failed := 0
		for _, cut := range cuts {
			label := path + ".cut"
			g, err := Parse(label, data[:cut])
			if cut < end {
				if err == nil {
					t.Fatalf("%s cut at %d of %d: no error", name, cut, len(data))
				}
				if !strings.Contains(err.Error(), label) {
					t.Fatalf("%s cut at %d: error %q does not name the file", name, cut, err)
				}
				failed++
			} else if err != nil {
				t.Errorf("%s cut at %d (after the data end %d): %v", name, cut, end, err)
			} else if len(g.Tensors) != len(full.Tensors) {
				t.Errorf("%s cut at %d: %d tensors", name, cut, len(g.Tensors))
			}
		}
		t.Logf("%s: %d cuts, %d rejected", name, len(cuts), failed)

		// Open takes the same path through a memory map.
		dir := t.TempDir()
		for _, cut := range []int{0, 3, 7, 23, 24, 100, int(full.dataOff) - 1, int(full.dataOff) + 1, end - 1} {
			if cut < 0 || cut >= end {
				continue
			}
			p := filepath.Join(dir, "cut.gguf")
			must(t, os.WriteFile(p, data[:cut], 0o644))
			g, err := Open(p)
			if err == nil {
				g.Close()
				t.Fatalf("Open %s cut at %d: no error", name, cut)
			}
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("Open %s cut at %d: error %q does not name the file", name, cut, err)
			}
		}
	}
}

// rawFile builds a GGUF byte by byte, so that tests can write what the
// Writer refuses to.
type rawFile struct{ bytes.Buffer }

func (r *rawFile) u8(v uint8) *rawFile   { r.WriteByte(v); return r }
func (r *rawFile) u32(v uint32) *rawFile { binary.Write(r, binary.LittleEndian, v); return r }
func (r *rawFile) u64(v uint64) *rawFile { binary.Write(r, binary.LittleEndian, v); return r }
func (r *rawFile) str(s string) *rawFile { r.u64(uint64(len(s))); r.WriteString(s); return r }
func (r *rawFile) header(version uint32, tensors, kvs uint64) *rawFile {
	r.WriteString(Magic)
	return r.u32(version).u64(tensors).u64(kvs)
}
func (r *rawFile) tensorInfo(name string, dt tensor.DType, offset uint64, ne ...uint64) *rawFile {
	r.str(name).u32(uint32(len(ne)))
	for _, n := range ne {
		r.u64(n)
	}
	return r.u32(uint32(dt)).u64(offset)
}
func (r *rawFile) padTo(align int) *rawFile {
	for r.Len()%align != 0 {
		r.WriteByte(0)
	}
	return r
}

func TestParseRejectsBadFiles(t *testing.T) {
	data32 := func(r *rawFile, n int) *rawFile { r.padTo(32); r.Write(make([]byte, n)); return r }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"short magic", []byte("GG"), "bad magic"},
		{"bad magic", append([]byte("GGML"), make([]byte, 40)...), `bad magic "GGML"`},
		{"version 1", new(rawFile).header(1, 0, 0).Bytes(), "unsupported version 1"},
		{"version 4", new(rawFile).header(4, 0, 0).Bytes(), "unsupported version 4"},
		{"version 0", new(rawFile).header(0, 0, 0).Bytes(), "unsupported version 0"},
		{"no counts", []byte("GGUF\x03\x00\x00\x00\x01"), "unexpected end of file"},
		{"huge kv count", new(rawFile).header(3, 0, 1<<62).Bytes(), "array of 4611686018427387904 elements runs past the end"},
		{"huge tensor count", new(rawFile).header(3, math.MaxUint64, 0).Bytes(), "runs past the end"},
		{"huge string", new(rawFile).header(3, 0, 1).u64(math.MaxUint64).u64(0).Bytes(), "string of length 18446744073709551615"},
		{"unknown value type", new(rawFile).header(3, 0, 1).str("k").u32(13).Bytes(), "unknown value type 13"},
		{"bad bool", append(new(rawFile).header(3, 0, 1).str("k").u32(TypeBool).Bytes(), 2), "bool value 2"},
		{"nested array", new(rawFile).header(3, 0, 1).str("k").u32(TypeArray).u32(TypeArray).u64(1).Bytes(), "nested arrays"},
		{"bad array type", new(rawFile).header(3, 0, 1).str("k").u32(TypeArray).u32(77).u64(1).Bytes(), "unknown array element type 77"},
		{"huge array", new(rawFile).header(3, 0, 1).str("k").u32(TypeArray).u32(TypeUint32).u64(1 << 40).Bytes(), "runs past the end"},
		{"array cut short", new(rawFile).header(3, 0, 1).str("k").u32(TypeArray).u32(TypeString).u64(2).str("a").u64(5).Bytes(), "string of length 5"},
		{"value cut", new(rawFile).header(3, 0, 1).str("k").u32(TypeUint32).u8(1).Bytes(), `metadata "k": gguf bad.gguf: at byte 37: unexpected end of file`},
		{"second key cut", new(rawFile).header(3, 0, 2).str("k").u32(TypeUint8).u8(1).u64(100).u8('a').u8('b').Bytes(), "metadata entry 1 key: string of length 100"},
		{"duplicate key", new(rawFile).header(3, 0, 2).str("k").u32(TypeUint8).u8(1).str("k").u32(TypeUint8).u8(2).Bytes(), `duplicate metadata key "k"`},
		{"alignment 48", new(rawFile).header(3, 0, 1).str("general.alignment").u32(TypeUint32).u32(48).Bytes(), "general.alignment 48 is not a power of two"},
		{"alignment 0", new(rawFile).header(3, 0, 1).str("general.alignment").u32(TypeUint32).u32(0).Bytes(), "general.alignment 0"},
		{"alignment negative", new(rawFile).header(3, 0, 1).str("general.alignment").u32(TypeInt64).u64(math.MaxUint64).Bytes(), "general.alignment -1"},
		{"no dims", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 0), 32).Bytes(), `tensor "t" has 0 dimensions`},
		{"five dims", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 0, 1, 1, 1, 1, 1), 32).Bytes(), `tensor "t" has 5 dimensions`},
		{"zero dim", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 0, 4, 0), 32).Bytes(), `tensor "t" has bad dimension 0`},
		{"huge dims", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 0, 1<<30, 1<<30), 32).Bytes(), "bad dimension"},
		{"unknown dtype", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", 5, 0, 4), 32).Bytes(), `tensor "t" has unknown type 5`},
		{"partial block", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.Q4_0, 0, 48), 64).Bytes(), "not a multiple of q4_0's block size 32"},
		{"duplicate tensor", data32(new(rawFile).header(3, 2, 0).tensorInfo("t", tensor.F32, 0, 4).tensorInfo("t", tensor.F32, 32, 4), 64).Bytes(), `duplicate tensor "t"`},
		{"misaligned offset", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 4, 4), 64).Bytes(), `offset 4 is not aligned to 32`},
		{"misaligned offset 64", data32(new(rawFile).header(3, 1, 1).str("general.alignment").u32(TypeUint32).u32(64).tensorInfo("t", tensor.F32, 32, 4), 128).Bytes(), `offset 32 is not aligned to 64`},
		{"offset past end", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 64, 4), 64).Bytes(), "runs past the end of the file"},
		{"offset overflow", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, math.MaxUint64-31, 4), 64).Bytes(), "runs past the end of the file"},
		{"data cut", data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 0, 4), 15).Bytes(), "runs past the end of the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.gguf", tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Errorf("error %v, want one naming bad.gguf and containing %q", err, tt.want)
			}
		})
	}
	// The well-formed sibling of the cases above parses.
	ok := data32(new(rawFile).header(3, 1, 0).tensorInfo("t", tensor.F32, 0, 4), 16).Bytes()
	if _, err := Parse("good.gguf", ok); err != nil {
		t.Errorf("well-formed file: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.gguf")
	if _, err := Open(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	small := filepath.Join(dir, "small.gguf")
	must(t, os.WriteFile(small, []byte("GGUF"), 0o644))
	if _, err := Open(small); err == nil || !strings.Contains(err.Error(), small) || !strings.Contains(err.Error(), "too short") {
		t.Errorf("short file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: %v", err)
	}
}
