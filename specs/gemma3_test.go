package specs_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/weftrun/weft/specs"
)

// ropeHalfScaled rotates the pairs (x[j], x[j+d/2]) of each head by
// scale·pos·base^(-2j/d) (HF's rotate-half layout, linear RoPE scaling).
func ropeHalfScaled(x mat, heads int, base, scale float64) mat {
	out := make(mat, len(x))
	hd := len(x[0]) / heads
	for pos, row := range x {
		out[pos] = append([]float64(nil), row...)
		for h := 0; h < heads; h++ {
			for j := 0; j < hd/2; j++ {
				th := scale * float64(pos) * math.Pow(base, -2*float64(j)/float64(hd))
				a, b := row[h*hd+j], row[h*hd+j+hd/2]
				out[pos][h*hd+j] = a*math.Cos(th) - b*math.Sin(th)
				out[pos][h*hd+j+hd/2] = a*math.Sin(th) + b*math.Cos(th)
			}
		}
	}
	return out
}

// gemma3Ref is Gemma 3's forward pass over GGUF-named weights (norm
// scales already 1 + w), from the technical report and the HF model
// card: √hidden embedding scale; per layer, local (sliding window, RoPE
// base 10⁴, no scaling) unless (l+1) % pattern == 0 (global: the whole
// context, RoPE base 10⁶ with linear scaling); per-head RMSNorm of q and
// k before rotate-half RoPE; sandwich norms around attention and the
// tanh-GeGLU MLP; the head tied to the embedding.
func gemma3Ref(r ref, p specs.Params, tokens []int) mat {
	eps, heads, kvh := p.Float("norm_eps"), p.Int("heads"), p.Int("kv_heads")
	x := embed(r.mat("token_embd.weight"), tokens)
	x = apply(x, func(v float64) float64 { return v * math.Sqrt(float64(p.Int("hidden"))) })
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		global := (l+1)%p.Int("swa_pattern") == 0
		base, scale, window := p.Float("rope_base_swa"), 1.0, p.Int("window")
		if global {
			base, scale, window = p.Float("rope_base"), 1/p.Float("rope_factor"), 0
		}
		h := rmsNorm(x, r.vec(b("attn_norm.weight")), eps)
		q := ropeHalfScaled(headNorm(linear(h, r.mat(b("attn_q.weight")), nil), heads, r.vec(b("attn_q_norm.weight")), eps), heads, base, scale)
		k := ropeHalfScaled(headNorm(linear(h, r.mat(b("attn_k.weight")), nil), kvh, r.vec(b("attn_k_norm.weight")), eps), kvh, base, scale)
		v := linear(h, r.mat(b("attn_v.weight")), nil)
		a := attention(q, k, v, attnOpts{heads: heads, kvHeads: kvh, causal: true, window: window})
		x = add(x, rmsNorm(linear(a, r.mat(b("attn_output.weight")), nil), r.vec(b("post_attention_norm.weight")), eps))
		h = rmsNorm(x, r.vec(b("ffn_norm.weight")), eps)
		g := mul(apply(linear(h, r.mat(b("ffn_gate.weight")), nil), geluTanh), linear(h, r.mat(b("ffn_up.weight")), nil))
		x = add(x, rmsNorm(linear(g, r.mat(b("ffn_down.weight")), nil), r.vec(b("post_ffw_norm.weight")), eps))
	}
	return linear(rmsNorm(x, r.vec("output_norm.weight"), eps), r.mat("token_embd.weight"), nil)
}

// TestGemma3 checks gemma3.yaml against gemma3Ref over enough layers and
// tokens for local layers' windows, the global layers' own RoPE base and
// scaling, and two layer patterns to matter.
func TestGemma3(t *testing.T) {
	sp := builtin(t, "gemma3")
	prompt := []int{1, 30, 4, 55, 12, 8, 41, 17}
	for _, c := range []struct {
		name string
		set  map[string]any
	}{
		{"5:1", map[string]any{"layers": int64(7)}},
		{"1:1 scaled", map[string]any{"layers": int64(4), "swa_pattern": int64(2), "rope_factor": 4.0, "window": int64(2)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := map[string]any{"hidden": int64(32), "heads": int64(4), "kv_heads": int64(2), "head_dim": int64(16),
				"ffn": int64(24), "vocab": int64(64), "ctx": int64(32), "window": int64(3)}
			for k, v := range c.set {
				set[k] = v
			}
			p := resolve(t, sp, set)
			src := randSource(t, sp, p, "gguf")
			want := gemma3Ref(ref{t, src}, p, prompt)
			got := runSeq(t, build(t, sp, p, "gguf", src), prompt, 0)
			spread(t, got)
			closeRows(t, "logits", got, want, 1e-4)
		})
	}
}
