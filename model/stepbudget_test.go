package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
)

// TestStepTokensBitIdentical: with a step budget (StepTokens, serve's
// --batch-tokens) a prompt that arrives while others decode is prefilled
// in chunks of what the decodes leave. Over an f16 cache, where a prompt
// batch and one generated token sum attention in different orders, every
// sequence still gets, step for step, the logits bits it gets alone.
func TestStepTokensBitIdentical(t *testing.T) {
	m := synthQ4(t)
	r := rand.New(rand.NewPCG(5, 6))
	var prompts [][]int
	for _, n := range []int{20, 30, 100} {
		p := make([]int, n)
		for i := range p {
			p[i] = 1 + r.IntN(500)
		}
		prompts = append(prompts, p)
	}
	req := func(p []int) scheduler.Request {
		return scheduler.Request{Prompt: p, MaxTokens: 16, Sampler: argmax{}, KeepLogits: true}
	}
	engine := func(stepTokens int) *scheduler.Engine {
		e, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 128, KVType: "f16", StepTokens: stepTokens})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	alone := make([][][]float32, len(prompts))
	for i, p := range prompts {
		if _, err := engine(0).Generate(context.Background(), req(p), func(ev scheduler.TokenEvent) {
			alone[i] = append(alone[i], append([]float32(nil), ev.Logits...))
		}); err != nil {
			t.Fatal(err)
		}
	}
	e := engine(24)
	ids := map[int]int{}
	together := make([][][]float32, len(prompts))
	mixed := 0
	for s, done := 0, 0; done < len(prompts); s++ {
		if s < 2 { // the long prompt comes while the first two decode
			id, err := e.AddQuery(req(prompts[s*2]))
			if err != nil {
				t.Fatal(err)
			}
			ids[id] = s * 2
			if s == 0 {
				id, err := e.AddQuery(req(prompts[1]))
				if err != nil {
					t.Fatal(err)
				}
				ids[id] = 1
			}
		}
		evs, err := e.Infer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ls := e.LastStep(); ls.Decode > 0 && ls.Prompt > 0 {
			mixed++
			if ls.Decode+ls.Prompt > 24 {
				t.Fatalf("step %d holds %+v, more than 24 tokens", s, ls)
			}
		}
		for _, ev := range evs {
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			i := ids[ev.Query]
			together[i] = append(together[i], append([]float32(nil), ev.Logits...))
			if ev.Done {
				done++
			}
		}
	}
	if mixed < 4 {
		t.Fatalf("the 100-token prompt shared only %d steps with decodes; want it chunked", mixed)
	}
	for i := range prompts {
		if len(together[i]) != len(alone[i]) {
			t.Fatalf("prompt %d: %d tokens chunked, %d alone", i, len(together[i]), len(alone[i]))
		}
		for s := range alone[i] {
			for v := range alone[i][s] {
				if math.Float32bits(together[i][s][v]) != math.Float32bits(alone[i][s][v]) {
					t.Fatalf("prompt %d step %d token %d: logit %g chunked, %g alone", i, s, v, together[i][s][v], alone[i][s][v])
				}
			}
		}
	}
}
