package scheduler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/weftrun/weft/scheduler"
)

// TestStepTokens: with Options.StepTokens, a step that carries decodes
// holds at most StepTokens tokens (prompt chunks get what the decodes
// leave, at least one block), a step with no decode may fill the plan,
// and the greedy tokens are the same as with no bound: a long prompt
// that arrives while others decode is prefilled in chunks between their
// tokens instead of in one long step.
func TestStepTokens(t *testing.T) {
	g := testLlama(t)
	const plan, bound = 256, 40
	req := func(n, seed int) scheduler.Request {
		return scheduler.Request{Prompt: prompt(n, seed), MaxTokens: 12, Sampler: greedy()}
	}
	// Three short prompts start together; a 200-token one arrives once
	// they decode.
	drive := func(opt scheduler.Options) (map[int][]int, []scheduler.StepInfo) {
		e := newEngine(t, g, plan, opt)
		for i := range 3 {
			if _, err := e.AddQuery(req(10+i, i)); err != nil {
				t.Fatal(err)
			}
		}
		toks := map[int][]int{}
		var steps []scheduler.StepInfo
		for s := 0; e.Active() > 0; s++ {
			if s == 2 {
				if _, err := e.AddQuery(req(200, 9)); err != nil {
					t.Fatal(err)
				}
			}
			evs, err := e.Infer(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, e.LastStep())
			for _, ev := range evs {
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
				toks[ev.Query] = append(toks[ev.Query], ev.Token)
			}
		}
		return toks, steps
	}
	free, freeSteps := drive(scheduler.Options{})
	bounded, steps := drive(scheduler.Options{StepTokens: bound})
	for id, want := range free {
		if !slices.Equal(bounded[id], want) {
			t.Errorf("query %d: %v with StepTokens %d, %v without", id, bounded[id], bound, want)
		}
	}
	if s := steps[0]; s.Decode != 0 || s.Prompt != 10+11+12 {
		t.Errorf("first step %+v: want the three prompts whole (33 tokens), no decode", s)
	}
	chunks := 0
	for i, s := range steps {
		if s.Decode > 0 && s.Decode+s.Prompt > bound {
			t.Errorf("step %d: %d decode + %d prompt tokens, more than StepTokens %d", i, s.Decode, s.Prompt, bound)
		}
		if s.Decode > 0 && s.Prompt > 0 {
			chunks++
		}
	}
	if chunks < 200/bound {
		t.Errorf("the long prompt was prefilled beside decodes in %d steps, want ≥ %d chunks: %+v", chunks, 200/bound, steps)
	}
	// Without the bound, the long prompt goes in one step with the decodes.
	big := 0
	for _, s := range freeSteps {
		big = max(big, s.Decode+s.Prompt)
	}
	if big < 200 {
		t.Errorf("without StepTokens the largest step held %d tokens, want the whole 200-token prompt in one", big)
	}
	if _, err := scheduler.NewEngine(nil, scheduler.Options{StepTokens: -1}); err == nil {
		t.Error("a negative StepTokens was accepted")
	}
}
