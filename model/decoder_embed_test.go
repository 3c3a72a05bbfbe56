package model_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/tokenizer"
)

// decoderEmbedGolden is testdata/decoder-embed/mini-llama.json:
// llama-embedding's pooled embeddings of two texts on the shared
// mini-llama files (its `command` field is the exact command line), keyed
// by file, then by "POOLING NORMALIZE" (--pooling, --embd-normalize).
type decoderEmbedGolden struct {
	Command string                            `json:"command"`
	Texts   []string                          `json:"texts"`
	Tokens  [][]int                           `json:"tokens"`
	Models  map[string]map[string][][]float32 `json:"models"`
}

// TestDecoderEmbedMatchesLlamaCpp: a decoder's pooled final hidden
// states (the spec's `hidden` output) equal llama-embedding's for mean
// and last pooling, raw (--embd-normalize -1) and unit length (2). The
// model is loaded for its logits, as `weft serve` loads it: the embedder
// builds the `hidden` graph itself. llama.cpp rounds activations to f16
// before F16 matmuls and to 8 bits before Q8_0 ones, and keeps an f16 KV
// cache, so the vectors agree closely (see the bounds below), not bit for
// bit.
func TestDecoderEmbedMatchesLlamaCpp(t *testing.T) {
	shared := testdata.Shared(t)
	data, err := os.ReadFile("testdata/decoder-embed/mini-llama.json")
	if err != nil {
		t.Fatal(err)
	}
	var g decoderEmbedGolden
	if err := decodeGolden(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Models) == 0 || len(g.Texts) != len(g.Tokens) {
		t.Fatalf("reference has %d models, %d texts, %d token lists", len(g.Models), len(g.Texts), len(g.Tokens))
	}
	for file, cases := range g.Models {
		t.Run(file, func(t *testing.T) {
			m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "mini-llama", file)})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.CheckGenerates(); err != nil {
				t.Fatalf("loaded for generation, the graph does not output logits first: %v", err)
			}
			if n := len(m.Graph.Outputs); n != 1 {
				t.Fatalf("the generation graph computes %d outputs, want logits alone", n)
			}
			if p, err := m.DefaultPooling(); err != nil || p != model.PoolLast {
				t.Errorf("default pooling of a decoder: %v, %v; want last", p, err)
			}
			e, err := m.NewEmbedder(model.EngineOptions{Threads: 2, MaxTokens: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			// Measured: f16 cosine 0.9999999 and |Δ| ≤ 0.07% of the
			// largest value; Q8_0 (8-bit activations in llama.cpp)
			// 0.99995 and 1.5%.
			minCos, rel := 0.999999, 0.002
			if !strings.Contains(file, "f16") {
				minCos, rel = 0.9999, 0.02
			}
			ctx := context.Background()
			for i, text := range g.Texts {
				toks, err := m.Tokenizer.Encode(text, tokenizer.EncodeOptions{AddSpecial: true})
				if err != nil {
					t.Fatal(err)
				}
				if !equalInts(toks, g.Tokens[i]) {
					t.Fatalf("%q: tokens %v, llama.cpp %v", text, toks, g.Tokens[i])
				}
				for _, pool := range []model.Pooling{model.PoolMean, model.PoolLast} {
					for _, norm := range []int{-1, 2} {
						key := fmt.Sprintf("%s %d", pool, norm)
						want, ok := cases[key]
						if !ok || len(want) != len(g.Texts) {
							t.Fatalf("reference lacks %q", key)
						}
						got, err := e.EmbedText(ctx, text, model.EmbedOptions{Pooling: pool, Normalize: norm == 2})
						if err != nil {
							t.Fatal(err)
						}
						if len(got) != 1 || len(got[0]) != len(want[i]) {
							t.Fatalf("%s %q: got %d vectors of %d, want 1 of %d", key, text, len(got), len(got[0]), len(want[i]))
						}
						checkClose(t, fmt.Sprintf("%s %s %q", file, key, text), got[0], want[i], minCos, rel)
					}
				}
			}
		})
	}
}

// checkClose compares a vector with llama.cpp's: their cosine is at
// least minCos and every value is within rel times the vector's largest
// magnitude.
func checkClose(t *testing.T, what string, got, want []float32, minCos, rel float64) {
	t.Helper()
	if c := testdata.Cosine(got, want); !(c >= minCos) {
		t.Errorf("%s: cosine %.7f with llama.cpp, want ≥ %v", what, c, minCos)
	}
	var scale float64
	for _, w := range want {
		scale = math.Max(scale, math.Abs(float64(w)))
	}
	if d := testdata.MaxAbsDiff(got, want); d > rel*scale {
		t.Errorf("%s: max |Δ| %.4g, more than %g of the largest value %.4g", what, d, rel, scale)
	}
}

// TestHiddenOutputOnlyWhenAsked: a decoder spec declares both logits and
// hidden, but a graph built for one output leaves out what only the other
// needs: the logits graph is the same kernels as before `hidden` was
// declared (one output), and the hidden graph reads no LM head.
func TestHiddenOutputOnlyWhenAsked(t *testing.T) {
	shared := testdata.Shared(t)
	path := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	lg, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	hd, err := model.Load(model.Options{Path: path, Outputs: []string{"hidden"}})
	if err != nil {
		t.Fatal(err)
	}
	defer hd.Close()
	if n := len(lg.Graph.Outputs); n != 1 || lg.Graph.Outputs[0].Name != "logits" {
		t.Fatalf("default graph outputs %d values, want logits alone", n)
	}
	if n := len(hd.Graph.Outputs); n != 1 {
		t.Fatalf("hidden graph outputs %d values, want 1", n)
	}
	vocab, hidden := lg.Params.Int("vocab"), lg.Params.Int("hidden")
	if w := lg.Graph.Outputs[0].Type.Shape.Last(); w != vocab {
		t.Errorf("logits are %d wide, want the vocabulary %d", w, vocab)
	}
	if w := hd.Graph.Outputs[0].Type.Shape.Last(); w != hidden {
		t.Errorf("hidden states are %d wide, want %d", w, hidden)
	}
	// The hidden graph is the logits graph less the LM head: one kernel
	// fewer, and no weight read whose rows are the vocabulary but the
	// token embedding's gather.
	if a, b := len(lg.Graph.Nodes), len(hd.Graph.Nodes); a != b+1 {
		t.Errorf("logits graph %d kernels, hidden graph %d: want exactly one fewer (the LM head)", a, b)
	}
	if _, err := model.Load(model.Options{Path: path, Outputs: []string{"nope"}}); err == nil {
		t.Error("an output the spec does not declare was accepted")
	}
}
