package model_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

// generate runs one golden case: free greedy decoding, then teacher-forced
// decoding along the golden tokens with each step's logits kept.
func generate(t *testing.T, m *model.Model, c testdata.Case) (free []int, logits [][]float32) {
	t.Helper()
	ids, err := m.Tokenizer.Encode(c.Prompt, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, c.PromptTokens) {
		t.Fatalf("prompt %q: tokens %v, golden %v", c.Prompt, ids, c.PromptTokens)
	}
	eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s, _ := sampling.New(sampling.Config{})
	ctx := context.Background()
	free, err = eng.Generate(ctx, scheduler.Request{Prompt: ids, MaxTokens: len(c.Steps), Sampler: s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Generate(ctx, scheduler.Request{Prompt: ids, MaxTokens: len(c.Steps), Force: c.Tokens(), KeepLogits: true},
		func(ev scheduler.TokenEvent) { logits = append(logits, ev.Logits) })
	if err != nil {
		t.Fatal(err)
	}
	return free, logits
}

func TestStoriesGolden(t *testing.T) {
	shared := testdata.Shared(t)
	dir := filepath.Join(shared, "models", "stories260K")
	for _, tc := range []struct {
		name string
		opt  model.Options
	}{
		{"gguf", model.Options{Path: filepath.Join(dir, "stories260K.gguf")}},
		{"llama2c", model.Options{Path: filepath.Join(dir, "stories260K.bin"), Tokenizer: filepath.Join(dir, "tok512.bin")}},
		{"gguf-unfused", model.Options{Path: filepath.Join(dir, "stories260K.gguf"), NoPasses: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := model.Load(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for i, c := range testdata.Golden(t, shared, "stories260K") {
				free, logits := generate(t, m, c)
				if !slices.Equal(free, c.Tokens()) {
					t.Errorf("prompt %d %q: greedy tokens\n got  %v\n want %v", i, c.Prompt, free, c.Tokens())
				}
				want := testdata.Logits(t, shared, "stories260K", i, 512)
				if len(logits) != len(want) {
					t.Fatalf("prompt %d: %d logits rows, golden %d", i, len(logits), len(want))
				}
				worst := 0.0
				for r := range want {
					worst = max(worst, testdata.MaxAbsDiff(logits[r], want[r]))
				}
				if worst > 1e-3 {
					t.Errorf("prompt %d: logits max abs diff %.2g > 1e-3", i, worst)
				}
				t.Logf("prompt %d: logits max abs diff %.2g", i, worst)
			}
		})
	}
}
