package model_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/sampling"
)

// top2 returns the best index and the margin to the runner-up.
func top2(row []float32) (int, float32) {
	b, s := 0, -1
	for i, v := range row {
		if v > row[b] {
			s, b = b, i
		} else if i != b && (s < 0 || v > row[s]) {
			s = i
		}
	}
	return b, row[b] - row[s]
}

// TestMiniLlamaGolden checks the random-weight mini-llama in F16, Q8_0 and
// Q4_0 against llama.cpp: teacher-forced logits rows by cosine, argmax
// wherever llama.cpp's top-2 margin is at least 0.02, and free greedy
// tokens up to the first step where the margin is below that.
func TestMiniLlamaGolden(t *testing.T) {
	shared := testdata.Shared(t)
	for _, tc := range []struct {
		name   string
		cosine float64
	}{{"f16", 0.9999}, {"Q8_0", 0.999}, {"Q4_0", 0.999}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "mini-llama", "mini-llama-"+tc.name+".gguf")})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			golden := "mini-llama-" + tc.name
			for i, c := range testdata.Golden(t, shared, golden) {
				free, logits := generate(t, m, c)
				want := testdata.Logits(t, shared, golden, i, 32000)
				worst := 1.0
				firstTie := len(want)
				for r := range want {
					worst = min(worst, testdata.Cosine(logits[r], want[r]))
					gb, margin := top2(want[r])
					if margin >= 0.02 {
						if b := sampling.Greedy(logits[r]); b != gb {
							t.Errorf("prompt %d step %d: argmax %d, llama.cpp %d (margin %.3f)", i, r, b, gb, margin)
						}
					} else if r < firstTie {
						firstTie = r
					}
				}
				if worst < tc.cosine {
					t.Errorf("prompt %d: worst row cosine %.6f < %v", i, worst, tc.cosine)
				}
				// Free decoding agrees up to the first near-tie step.
				n := min(firstTie, len(free))
				if !slices.Equal(free[:n], c.Tokens()[:n]) {
					t.Errorf("prompt %d: free greedy %v, golden %v (first near-tie at step %d)", i, free[:n], c.Tokens()[:n], firstTie)
				}
				t.Logf("prompt %d: worst cosine %.7f; greedy equal for the first %d steps of %d", i, worst, n, len(want))
			}
		})
	}
}
