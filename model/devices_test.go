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
)

// forced runs the golden case teacher-forced on the devices named by devs
// and returns each step's logits.
func forced(t *testing.T, m *model.Model, c testdata.Case, devs string, threads int) [][]float32 {
	t.Helper()
	eng, err := m.NewEngine(model.EngineOptions{Threads: threads, MaxTokens: 64, Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var logits [][]float32
	_, err = eng.Generate(context.Background(), scheduler.Request{Prompt: c.PromptTokens, MaxTokens: len(c.Steps), Force: c.Tokens(), KeepLogits: true},
		func(ev scheduler.TokenEvent) { logits = append(logits, ev.Logits) })
	if err != nil {
		t.Fatalf("%s: %v", devs, err)
	}
	return logits
}

// TestDevices runs stories260K and the mini-llama files teacher-forced on
// several devices and compares with one device: a split by layer gives
// the same bits (the same kernels on the same rows, in the same order); a
// split by tensor sums the partial output projections of each sub-layer
// in another order, so it is held to cosine ≥ 0.99999 and the same argmax
// wherever the single device's top-2 margin is at least 0.02.
func TestDevices(t *testing.T) {
	shared := testdata.Shared(t)
	for _, f := range []struct{ golden, path string }{
		{"stories260K", "stories260K/stories260K.gguf"},
		{"mini-llama-f16", "mini-llama/mini-llama-f16.gguf"},
		{"mini-llama-Q8_0", "mini-llama/mini-llama-Q8_0.gguf"},
		{"mini-llama-Q4_0", "mini-llama/mini-llama-Q4_0.gguf"},
	} {
		t.Run(f.golden, func(t *testing.T) {
			m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", f.path)})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for i, c := range testdata.Golden(t, shared, f.golden) {
				if i >= 2 {
					break
				}
				ref := forced(t, m, c, "", 2)
				for _, tc := range []struct {
					devs  string
					exact bool
				}{
					{"cpu:0;cpu:1", true},
					{"cpu:0=1;cpu:1", true},
					{"cpu:0&cpu:1", false},
					{"cpu:0&cpu:1;cpu:2&cpu:3", false},
				} {
					got := forced(t, m, c, tc.devs, 4)
					if len(got) != len(ref) {
						t.Fatalf("%s: %d rows, one device %d", tc.devs, len(got), len(ref))
					}
					worst, flips, maxd := 1.0, 0, 0.0
					for r := range ref {
						if tc.exact {
							if !slices.Equal(got[r], ref[r]) {
								t.Errorf("prompt %d %s: step %d differs from one device (max |Δ| %.3g)", i, tc.devs, r, testdata.MaxAbsDiff(got[r], ref[r]))
							}
							continue
						}
						worst = min(worst, testdata.Cosine(got[r], ref[r]))
						maxd = max(maxd, testdata.MaxAbsDiff(got[r], ref[r]))
						if b, margin := top2(ref[r]); margin >= 0.02 && sampling.Greedy(got[r]) != b {
							flips++
							t.Errorf("prompt %d %s: step %d argmax %d, one device %d (margin %.3f)", i, tc.devs, r, sampling.Greedy(got[r]), b, margin)
						}
					}
					if !tc.exact {
						if worst < 0.99999 {
							t.Errorf("prompt %d %s: worst row cosine %.7f < 0.99999", i, tc.devs, worst)
						}
						t.Logf("prompt %d %s: worst cosine %.10f, max |Δ| %.3g, %d argmax flips", i, tc.devs, worst, maxd, flips)
					}
				}
			}
		})
	}
}
