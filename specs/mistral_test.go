package specs_test

import (
	"maps"
	"testing"

	"github.com/weftrun/weft/specs"
)

// TestMistralSlidingWindow: llama.yaml reads Mistral's sliding_window from
// an HF config.json (and .attention.sliding_window from a GGUF), and each
// position then attends to the last `window` positions, itself included,
// as the float64 reference computes it (HF Mistral masks key j for query i
// when i - j >= sliding_window). A null or absent key is the whole
// context: the logits of the unwindowed reference, and of a graph built
// with no window at all.
func TestMistralSlidingWindow(t *testing.T) {
	sp := builtin(t, "llama")
	set := map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2), "ffn": int64(24),
		"vocab": int64(64), "ctx": int64(32)}
	prompt := []int{1, 30, 4, 55, 12, 8, 19, 2}
	var plain [][]float32
	for _, c := range []struct {
		name   string
		meta   *specs.Meta
		window int
	}{
		{"absent", &specs.Meta{Format: "hf", Values: map[string]any{}}, 0},
		{"hf null", &specs.Meta{Format: "hf", Values: map[string]any{"sliding_window": nil}}, 0},
		{"hf 3", &specs.Meta{Format: "hf", Values: map[string]any{"sliding_window": float64(3)}}, 3},
		{"gguf 3", &specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{"llama.attention.sliding_window": uint32(3)}}, 3},
		{"gguf mistral 2", &specs.Meta{Format: "gguf", Arch: "mistral", Values: map[string]any{"mistral.attention.sliding_window": uint32(2)}}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := sp.ResolveParams(c.meta, set)
			if err != nil {
				t.Fatal(err)
			}
			if p.Int("window") != c.window {
				t.Fatalf("window = %v, want %d", p["window"], c.window)
			}
			src := randSource(t, sp, p, "gguf")
			got := runSeq(t, build(t, sp, p, "gguf", src), prompt, 0)
			spread(t, got)
			rp := maps.Clone(p)
			rp["experts"] = int64(0) // mixtralRef's dense SwiGLU FFN: Llama
			closeRows(t, "prefill", got, mixtralRef(ref{t, src}, rp, prompt), 1e-5)
			checkGenerate(t, build(t, sp, p, "gguf", src), prompt, 4, 32, func(toks []int) [][]float64 { return mixtralRef(ref{t, src}, rp, toks) })
			if c.window == 0 {
				if plain == nil {
					plain = got
				}
				sameRows(t, "unwindowed logits", got, plain)
				return
			}
			// The window changes what a position past it sees.
			whole := maps.Clone(rp)
			whole["window"] = int64(0)
			w := mixtralRef(ref{t, src}, whole, prompt)
			if d := w[len(prompt)-1][0] - float64(got[len(prompt)-1][0]); d > -1e-4 && d < 1e-4 {
				t.Errorf("window %d gives the whole context's last logit (%g)", c.window, w[len(prompt)-1][0])
			}
		})
	}
}
