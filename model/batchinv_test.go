package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// argmax is greedy decoding.
type argmax struct{}

func (argmax) Sample(logits []float32) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return best
}

// synthQ4 writes a random-weight Q4_0 llama (head size 64) and loads it:
// its matmuls give ggml's per-row bits at any token count, so only the
// attention's order can tell a token's step apart.
func synthQ4(t *testing.T) *model.Model {
	t.Helper()
	sp, err := specs.LoadBuiltin("llama")
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(512), "layers": int64(3), "heads": int64(8),
		"kv_heads": int64(2), "ffn": int64(1024), "vocab": int64(512), "ctx": int64(512)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "q4.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := convert.Synth(f, sp, params, convert.SynthOptions{DType: tensor.Q4_0, Seed: 3, RandomVectors: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestBatchInvariantDecode: over an f16 cache, whose attention sums a
// prompt batch and a single query in different orders (ggml's: 16 lanes
// for a batch, 4×16 lanes folded for one query of 64+ cells), a
// generated token sums as a step of one token does, whatever shares its
// step. So three prompts decoded greedily together give, step for step,
// the same logits bits as each decoded alone, and speculative decoding
// (prompt lookup, verify steps of several tokens) gives plain greedy's
// tokens.
func TestBatchInvariantDecode(t *testing.T) {
	m := synthQ4(t)
	opts := model.EngineOptions{Threads: 2, MaxTokens: 128, KVType: "f16"}
	newEngine := func() *scheduler.Engine {
		e, err := m.NewEngine(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	r := rand.New(rand.NewPCG(1, 2))
	var prompts [][]int
	for _, n := range []int{70, 90, 75} {
		p := make([]int, n)
		for i := range p {
			p[i] = 1 + r.IntN(500)
		}
		prompts = append(prompts, p)
	}
	req := func(p []int) scheduler.Request {
		return scheduler.Request{Prompt: p, MaxTokens: 24, Sampler: argmax{}, KeepLogits: true}
	}
	alone := make([][][]float32, len(prompts))
	aloneTok := make([][]int, len(prompts))
	for i, p := range prompts {
		toks, err := newEngine().Generate(context.Background(), req(p), func(ev scheduler.TokenEvent) {
			alone[i] = append(alone[i], append([]float32(nil), ev.Logits...))
		})
		if err != nil {
			t.Fatal(err)
		}
		aloneTok[i] = toks
	}

	t.Run("batch", func(t *testing.T) {
		e := newEngine()
		ids := map[int]int{}
		for i, p := range prompts {
			id, err := e.AddQuery(req(p))
			if err != nil {
				t.Fatal(err)
			}
			ids[id] = i
		}
		together := make([][][]float32, len(prompts))
		for done := 0; done < len(prompts); {
			evs, err := e.Infer(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
				i := ids[ev.Query]
				if ev.Logits != nil {
					together[i] = append(together[i], append([]float32(nil), ev.Logits...))
				}
				if ev.Done {
					done++
				}
			}
		}
		for i := range prompts {
			if len(together[i]) != len(alone[i]) {
				t.Fatalf("prompt %d: %d steps together, %d alone", i, len(together[i]), len(alone[i]))
			}
			for s := range alone[i] {
				for v := range alone[i][s] {
					if math.Float32bits(together[i][s][v]) != math.Float32bits(alone[i][s][v]) {
						t.Fatalf("prompt %d step %d token %d: logit %g together, %g alone", i, s, v, together[i][s][v], alone[i][s][v])
					}
				}
			}
		}
	})

	t.Run("speculative", func(t *testing.T) {
		// A prompt that repeats itself, so prompt lookup drafts.
		p := append(slices.Clone(prompts[0][:30]), prompts[0][:30]...)
		want, err := newEngine().Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: 40, Sampler: argmax{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := newEngine().Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: 40, Sampler: argmax{},
			Draft: scheduler.NGramDrafter{N: 2}, DraftMax: 8}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("speculative %v\nplain       %v", got, want)
		}
	})
}
