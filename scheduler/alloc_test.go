package scheduler_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
)

// TestDecodeStepAllocs: once a query is decoding, a step allocates nothing.
func TestDecodeStepAllocs(t *testing.T) {
	shared := testdata.Shared(t)
	for _, name := range []string{"stories260K/stories260K.gguf", "mini-llama/mini-llama-Q4_0.gguf", "mini-llama/mini-llama-f16.gguf"} {
		t.Run(name, func(t *testing.T) {
			m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", name)})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			s, _ := sampling.New(sampling.Config{})
			if _, err := eng.AddQuery(scheduler.Request{Prompt: []int{1, 2, 3}, MaxTokens: 100, Sampler: s}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i := 0; i < 20; i++ { // prefill, then fill the first KV blocks
				if _, err := eng.Infer(ctx); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(10, func() {
				if _, err := eng.Infer(ctx); err != nil {
					t.Fatal(err)
				}
			})
			// A new 16-position KV block per slot every 16 steps is the only
			// expected allocation (amortised well below one per step).
			if allocs > 1 {
				t.Errorf("a decode step allocates %.1f times", allocs)
			}
		})
	}
}
