package specs_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/weftrun/weft/specs"
)

// ropeHalf rotates the pairs (x[j], x[j+d/2]) of each head by
// pos·base^(-2j/d) (HF's rotate-half layout).
func ropeHalf(x mat, heads int, base float64) mat {
	out := make(mat, len(x))
	hd := len(x[0]) / heads
	for pos, row := range x {
		out[pos] = append([]float64(nil), row...)
		for h := 0; h < heads; h++ {
			for j := 0; j < hd/2; j++ {
				th := float64(pos) * math.Pow(base, -2*float64(j)/float64(hd))
				a, b := row[h*hd+j], row[h*hd+j+hd/2]
				out[pos][h*hd+j] = a*math.Cos(th) - b*math.Sin(th)
				out[pos][h*hd+j+hd/2] = a*math.Sin(th) + b*math.Cos(th)
			}
		}
	}
	return out
}

// headNorm is RMSNorm over each head of x with one [head_dim] scale.
func headNorm(x mat, heads int, w []float64, eps float64) mat {
	hd := len(x[0]) / heads
	out := make(mat, len(x))
	for t, row := range x {
		for h := 0; h < heads; h++ {
			out[t] = append(out[t], rmsNorm(mat{row[h*hd : (h+1)*hd]}, w, eps)[0]...)
		}
	}
	return out
}

// qwen3Ref is Qwen3's forward pass over GGUF-named weights, from the
// model card: per-head QK RMSNorm before rotate-half RoPE, no biases, a
// SwiGLU FFN or a renormalised top-k mixture of SwiGLU experts.
func qwen3Ref(r ref, p specs.Params, tokens []int) mat {
	eps, heads, kvh := p.Float("norm_eps"), p.Int("heads"), p.Int("kv_heads")
	x := embed(r.mat("token_embd.weight"), tokens)
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		h := rmsNorm(x, r.vec(b("attn_norm.weight")), eps)
		q := ropeHalf(headNorm(linear(h, r.mat(b("attn_q.weight")), nil), heads, r.vec(b("attn_q_norm.weight")), eps), heads, p.Float("rope_base"))
		k := ropeHalf(headNorm(linear(h, r.mat(b("attn_k.weight")), nil), kvh, r.vec(b("attn_k_norm.weight")), eps), kvh, p.Float("rope_base"))
		v := linear(h, r.mat(b("attn_v.weight")), nil)
		x = add(x, linear(attention(q, k, v, attnOpts{heads: heads, kvHeads: kvh, causal: true}), r.mat(b("attn_output.weight")), nil))
		h = rmsNorm(x, r.vec(b("ffn_norm.weight")), eps)
		if p.Int("experts") > 0 {
			x = add(x, moe(h, r.mat(b("ffn_gate_inp.weight")), r.experts(b("ffn_gate_exps.weight")),
				r.experts(b("ffn_up_exps.weight")), r.experts(b("ffn_down_exps.weight")), p.Int("experts_used")))
		} else {
			g := mul(apply(linear(h, r.mat(b("ffn_gate.weight")), nil), silu), linear(h, r.mat(b("ffn_up.weight")), nil))
			x = add(x, linear(g, r.mat(b("ffn_down.weight")), nil))
		}
	}
	return linear(rmsNorm(x, r.vec("output_norm.weight"), eps), r.mat("output.weight"), nil)
}

// TestQwen3 checks qwen3.yaml (dense and MoE) against qwen3Ref. The
// random source's norm scales are random too, so the per-head QK-norm's
// shared scale is exercised.
func TestQwen3(t *testing.T) {
	sp := builtin(t, "qwen3")
	prompt := []int{1, 30, 4, 55, 12, 8}
	for _, c := range []struct {
		name string
		set  map[string]any
	}{
		{"dense", nil},
		{"moe", map[string]any{"experts": int64(4), "experts_used": int64(2), "ffn_exp": int64(16)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2), "head_dim": int64(16),
				"ffn": int64(24), "vocab": int64(64), "ctx": int64(32)}
			for k, v := range c.set {
				set[k] = v
			}
			p := resolve(t, sp, set)
			src := randSource(t, sp, p, "gguf")
			want := qwen3Ref(ref{t, src}, p, prompt)
			got := runSeq(t, build(t, sp, p, "gguf", src), prompt, 0)
			spread(t, got)
			closeRows(t, "logits", got, want, 1e-4)
		})
	}
}
