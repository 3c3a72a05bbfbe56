package scheduler_test

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

// TestContinuousBatching runs all golden prompts at once through AddQuery
// and Infer, with prefill chunks smaller than the prompts, and checks each
// query gets exactly the tokens it gets alone (llama.cpp's golden tokens).
func TestContinuousBatching(t *testing.T) {
	shared := testdata.Shared(t)
	m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "stories260K", "stories260K.gguf")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cases := testdata.Golden(t, shared, "stories260K")
	eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 8}) // 8 tokens per step: prompts span several steps
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	want := map[int][]int{}
	got := map[int][]int{}
	add := func(c testdata.Case, n int) {
		ids, err := m.Tokenizer.Encode(c.Prompt, tokenizer.EncodeOptions{AddSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := sampling.New(sampling.Config{})
		id, err := eng.AddQuery(scheduler.Request{Prompt: ids, MaxTokens: n, Sampler: s})
		if err != nil {
			t.Fatal(err)
		}
		want[id] = c.Tokens()[:n]
	}
	// Two queries start together; the others join while they run.
	add(cases[0], 64)
	add(cases[1], 40)
	steps := 0
	for eng.Active() > 0 {
		if steps == 3 {
			add(cases[2], 64)
		}
		if steps == 10 {
			add(cases[3], 20)
		}
		evs, err := eng.Infer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			got[ev.Query] = append(got[ev.Query], ev.Token)
		}
		steps++
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("query %d:\n got  %v\n want %v", id, got[id], w)
		}
	}
	if eng.KV().Bytes() != 0 {
		t.Errorf("finished queries left %d bytes in the KV cache", eng.KV().Bytes())
	}
}

func TestAddQueryErrors(t *testing.T) {
	shared := testdata.Shared(t)
	m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "stories260K", "stories260K.gguf")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s, _ := sampling.New(sampling.Config{})
	for _, r := range []scheduler.Request{
		{Prompt: nil, MaxTokens: 1, Sampler: s},
		{Prompt: []int{1, 99999}, MaxTokens: 1, Sampler: s},
		{Prompt: []int{1}, MaxTokens: 100000, Sampler: s},
		{Prompt: []int{1}, MaxTokens: 1},
		{Prompt: []int{1}, MaxTokens: 0, Sampler: s},
		{Prompt: []int{1}, MaxTokens: 2, Force: []int{3, 9999}},
		{Prompt: []int{1}, MaxTokens: 1, Force: []int{-5}},
	} {
		if _, err := eng.AddQuery(r); err == nil {
			t.Errorf("AddQuery(%+v) accepted", r)
		}
	}
}
