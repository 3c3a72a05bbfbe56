package model_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/model"
)

// t5Golden is one file of testdata/arch/t5: llama.cpp's outputs on a
// random-weight T5 that `weft synth -s t5` makes: the teacher-forced
// decoder logits after encoding prompt, and 20 greedy tokens from the
// decoder start token.
type t5Golden struct {
	Synth     synthRecipe `json:"synth"`
	SHA256    string      `json:"sha256"`
	Prompt    []int       `json:"prompt"`
	Decoder   []int       `json:"decoder_tokens"`
	Logits    [][]float32 `json:"logits"`
	Greedy    []int       `json:"greedy"`
	Tolerance float64     `json:"tolerance"`
	Why       string      `json:"why"`
}

// TestT5MatchesLlamaCpp checks the two-phase runner against llama.cpp on
// T5 models with a ReLU FFN (plain f32: within 1e-4) and a gated-GELU FFN
// (llama.cpp's GELU goes through an f16 table): the spec is picked from
// general.architecture, the FFN from the tensors the file has. The
// decoder tokens are fed in one step (teacher forcing) and again one at a
// time, which must give the same logits; the greedy tokens must be
// llama.cpp's.
func TestT5MatchesLlamaCpp(t *testing.T) {
	files, err := filepath.Glob("testdata/arch/t5/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no references in testdata/arch/t5: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g t5Golden
			if err := decodeGolden(data, &g); err != nil {
				t.Fatal(err)
			}
			path := synthGolden(t, g.Synth, g.SHA256)
			m, err := model.Load(model.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Spec.Name != "t5" || m.Encoder == nil {
				t.Fatalf("picked spec %s (encoder %v) for architecture %s", m.Spec.Name, m.Encoder != nil, m.Checkpoint.Arch())
			}
			if _, err := m.NewEngine(model.EngineOptions{Threads: 1}); err == nil || !strings.Contains(err.Error(), "encoder-decoder") {
				t.Errorf("the engine took an encoder-decoder model: %v", err)
			}
			s, err := m.NewSeq2Seq(model.EngineOptions{Threads: 1, Context: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tol := 1e-4
			if g.Tolerance > 0 {
				if g.Why == "" {
					t.Fatal("a reference with its own tolerance must say why")
				}
				tol = g.Tolerance
			}
			ctx := context.Background()
			if err := s.Encode(ctx, g.Prompt); err != nil {
				t.Fatal(err)
			}
			rows, err := s.Decode(ctx, g.Decoder)
			if err != nil {
				t.Fatal(err)
			}
			closeVecs(t, name+" teacher-forced logits", clone(rows), g.Logits, tol)

			// One token a step: the KV cache grows across steps.
			if err := s.Encode(ctx, g.Prompt); err != nil {
				t.Fatal(err)
			}
			var steps [][]float32
			for _, tok := range g.Decoder {
				r, err := s.Decode(ctx, []int{tok})
				if err != nil {
					t.Fatal(err)
				}
				steps = append(steps, clone(r)...)
			}
			closeVecs(t, name+" step-by-step logits", steps, g.Logits, tol)

			got, err := s.Greedy(ctx, g.Prompt, len(g.Greedy), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(got, g.Greedy) {
				t.Fatalf("greedy tokens %v, llama.cpp %v", got, g.Greedy)
			}
		})
	}
}

func clone(rows [][]float32) [][]float32 {
	out := make([][]float32, len(rows))
	for i, r := range rows {
		out[i] = append([]float32(nil), r...)
	}
	return out
}
