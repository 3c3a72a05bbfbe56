package gguf

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// fuzzSeed builds a small valid file with metadata of several types and a
// few tensors.
func fuzzSeed(t testing.TB, align uint32) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.AddKV("general.architecture", "llama"))
	if align != 0 {
		must(t, w.AddKV("general.alignment", align))
	}
	must(t, w.AddKV("n", uint32(3)))
	must(t, w.AddKV("eps", float32(1e-5)))
	must(t, w.AddKV("flag", true))
	must(t, w.AddKV("tokens", []string{"<s>", "a", "bc"}))
	must(t, w.AddKV("scores", []float32{0, -1, -2}))
	must(t, w.AddKV("ids", []int32{1, 2}))
	must(t, w.AddKV("wide", []uint16{7}))
	must(t, w.AddTensor("w", tensor.Q4_0, []int{2, 32}))
	must(t, w.AddTensor("b", tensor.F32, []int{3}))
	must(t, w.WriteHeader())
	must(t, w.WriteTensorData("w", make([]byte, 36)))
	must(t, w.WriteTensorData("b", []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}))
	must(t, w.Close())
	return buf.Bytes()
}

// rewrite writes a parsed file back out, or returns nil when the Writer
// refuses something the reader accepts (an alignment that is not a uint32,
// a long tensor name, an empty key).
func rewrite(g *File) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, k := range g.Keys {
		if w.AddKV(k, g.Meta[k]) != nil {
			return nil
		}
	}
	for _, ti := range g.Tensors {
		if w.AddTensor(ti.Name, ti.DType, ti.Shape) != nil {
			return nil
		}
	}
	if w.WriteHeader() != nil {
		return nil
	}
	for _, ti := range g.Tensors {
		x, err := g.Tensor(ti.Name)
		if err != nil || w.WriteTensorData(ti.Name, x.Data) != nil {
			return nil
		}
	}
	if w.Close() != nil {
		return nil
	}
	return buf.Bytes()
}

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, errors
// must name the input, every tensor of a parsed file must be readable, and
// writing a parsed file back out must give a file that parses to the same
// bytes again.
func FuzzParse(f *testing.F) {
	f.Add(fuzzSeed(f, 0))
	f.Add(fuzzSeed(f, 64))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse("fuzz.gguf", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.gguf") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		for _, ti := range g.Tensors {
			x, err := g.Tensor(ti.Name)
			if err != nil {
				t.Fatalf("tensor %q: %v", ti.Name, err)
			}
			if uint64(len(x.Data)) != ti.Size {
				t.Fatalf("tensor %q: %d bytes, info says %d", ti.Name, len(x.Data), ti.Size)
			}
		}
		out := rewrite(g)
		if out == nil {
			return
		}
		g2, err := Parse("rewritten", out)
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		if again := rewrite(g2); !bytes.Equal(again, out) {
			t.Fatalf("rewriting is not stable: %d then %d bytes", len(out), len(again))
		}
	})
}
