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

// TestEmbedDecoderCLI: weft embed on a decoder (the shared mini-llama)
// prints its mean-pooled, unit-length final hidden states, which equal
// llama-embedding's (model/testdata/decoder-embed, --pooling mean
// --embd-normalize 2) to the f16 bound model's TestDecoderEmbedMatchesLlamaCpp
// holds the embedder to.
func TestEmbedDecoderCLI(t *testing.T) {
	shared := testdata.Shared(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "model", "testdata", "decoder-embed", "mini-llama.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Texts  []string                          `json:"texts"`
		Models map[string]map[string][][]float32 `json:"models"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	want := g.Models["mini-llama-f16.gguf"]["mean 2"]
	if len(want) == 0 || len(g.Texts) == 0 {
		t.Fatal("the reference has no f16 mean-pooled vectors")
	}
	code, out, e := weft("embed", "-m", filepath.Join(shared, "models", "mini-llama", "mini-llama-f16.gguf"), "--threads", "2",
		"-p", g.Texts[0], "--pooling", "mean", "--normalize", "--json")
	if code != 0 {
		t.Fatalf("embed: exit %d: %s", code, e)
	}
	var res struct {
		Embedding []float32 `json:"embedding"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if c := testdata.Cosine(res.Embedding, want[0]); len(res.Embedding) != len(want[0]) || !(c >= 0.999999) {
		t.Fatalf("%d values, cosine %v with llama-embedding's %d; want the same vector", len(res.Embedding), c, len(want[0]))
	}
}
