package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
)

// TestEmbedCLI: weft synth makes a small BERT with the bge vocabulary;
// weft embed prints one pooled vector as {"embedding"}, per-token vectors
// and several texts as {"embeddings"}; --normalize gives unit vectors;
// bad flags exit 2 with the flag named. (The values themselves are
// checked against llama-embedding in model's TestEmbedMatchesLlamaCpp.)
func TestEmbedCLI(t *testing.T) {
	shared := testdata.Shared(t)
	dir := t.TempDir()
	m := filepath.Join(dir, "bert.gguf")
	if code, _, e := weft("synth", "-s", "bert", "--set", "hidden=16", "--set", "layers=1", "--set", "heads=2", "--set", "ffn=24",
		"--set", "ctx=32", "--set", "vocab=30522", "--dtype", "f32", "--vocab", filepath.Join(shared, "tokenizer-vectors", "ggml-vocab-bert-bge.gguf"), "-o", m); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, e)
	}
	texts := filepath.Join(dir, "texts.txt")
	if err := os.WriteFile(texts, []byte("hello world\n\nthe lazy dog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		code, out, e := weft(append([]string{"embed", "-m", m, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("embed %v: exit %d: %s", args, code, e)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		return res
	}
	one := run("-p", "hello world", "--normalize")
	v, ok := one["embedding"].([]any)
	if !ok || len(v) != 16 {
		t.Fatalf("embedding = %v, want 16 values", one)
	}
	var n float64
	for _, x := range v {
		n += x.(float64) * x.(float64)
	}
	if math.Abs(n-1) > 1e-5 {
		t.Errorf("--normalize: squared length %v", n)
	}
	// "hello world" is [CLS] hello world [SEP]: 4 tokens.
	if vs, _ := run("-p", "hello world", "--pooling", "none")["embeddings"].([]any); len(vs) != 4 {
		t.Errorf("--pooling none gave %d vectors, want 4", len(vs))
	}
	if vs, _ := run("-f", texts, "--pooling", "mean")["embeddings"].([]any); len(vs) != 2 {
		t.Errorf("-f with two texts gave %d vectors, want 2", len(vs))
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"embed", "-m", m, "-p", "x", "--pooling", "max"}, 2, `--pooling: pooling "max"`},
		{[]string{"embed", "-m", m}, 2, "nothing to embed"},
		{[]string{"embed", "-m", m, "-f", filepath.Join(dir, "none.txt")}, 2, "-f:"},
		{[]string{"embed", "-p", "x"}, 2, "-m MODEL"},
	} {
		code, _, e := weft(tc.args...)
		if code != tc.code || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", tc.args, code, e, tc.code, tc.want)
		}
	}
}
