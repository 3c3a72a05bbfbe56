package model_test

import (
	"testing"

	"github.com/weftrun/weft/model"
)

// TestHFMistralSlidingWindow: an HF Mistral folder whose config.json says
// sliding_window: 3 loads with the window (the GGUF's logits with --set
// window=3, bit for bit: the same positions for i < 3, others for the
// positions past it), and one whose sliding_window is null, or absent,
// gives the unwindowed GGUF's logits exactly, as a llama.cpp GGUF (which
// carries no window key) does. specs' TestMistralSlidingWindow checks the
// window against a float64 reference.
func TestHFMistralSlidingWindow(t *testing.T) {
	set := map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2),
		"ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}
	path := synthFile(t, "llama", "mistral", set)
	gm, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer gm.Close()
	if w := gm.Params.Int("window"); w != 0 || gm.Checkpoint.Arch() != "mistral" || gm.Spec.Name != "llama" {
		t.Fatalf("a GGUF with no window key: window %d, arch %s, spec %s", w, gm.Checkpoint.Arch(), gm.Spec.Name)
	}
	wm, err := model.Load(model.Options{Path: path, Set: map[string]any{"window": int64(3)}})
	if err != nil {
		t.Fatal(err)
	}
	defer wm.Close()
	tokens := []int{1, 17, 142, 99, 5, 7, 33, 200}
	plain, windowed := teacherForced(t, gm, tokens), teacherForced(t, wm, tokens)
	for _, c := range []struct {
		name string
		cfg  map[string]any
		want [][]float32
	}{
		{"sliding_window 3", map[string]any{"sliding_window": 3}, windowed},
		{"sliding_window null", map[string]any{"sliding_window": nil}, plain},
		{"no sliding_window", map[string]any{"sliding_window": "drop"}, plain},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeHF(t, gm, "MistralForCausalLM", dir, c.cfg)
			hm, err := model.Load(model.Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer hm.Close()
			if hm.Checkpoint.Arch() != "mistral" || hm.Spec.Name != "llama" {
				t.Fatalf("MistralForCausalLM is %s and picked %s", hm.Checkpoint.Arch(), hm.Spec.Name)
			}
			got := teacherForced(t, hm, tokens)
			for i := range c.want {
				for j := range c.want[i] {
					if got[i][j] != c.want[i][j] {
						t.Fatalf("token %d logit %d: %g, want %g", i, j, got[i][j], c.want[i][j])
					}
				}
			}
		})
	}
	// The window leaves the first 3 positions as they were and changes the rest.
	for i := range tokens {
		if same := windowed[i][0] == plain[i][0]; same != (i < 3) {
			t.Errorf("position %d: windowed logit %g, whole context %g", i, windowed[i][0], plain[i][0])
		}
	}
}
