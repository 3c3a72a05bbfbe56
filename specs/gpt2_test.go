package specs_test

import (
	"fmt"
	"testing"

	"github.com/weftrun/weft/specs"
)

var gpt2Small = map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "vocab": int64(64), "ctx": int64(16)}

// gpt2Ref is GPT-2's forward pass over GGUF-named weights.
func gpt2Ref(r ref, p specs.Params, tokens []int, output string) mat {
	hidden, eps := p.Int("hidden"), p.Float("norm_eps")
	pos := make([]int, len(tokens))
	for i := range pos {
		pos[i] = i
	}
	x := add(embed(r.mat("token_embd.weight"), tokens), embed(r.mat("position_embd.weight"), pos))
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		h := layerNorm(x, r.vec(b("attn_norm.weight")), r.vec(b("attn_norm.bias")), eps)
		qkv := split(linear(h, r.mat(b("attn_qkv.weight")), r.vec(b("attn_qkv.bias"))), hidden, hidden, hidden)
		a := attention(qkv[0], qkv[1], qkv[2], attnOpts{heads: p.Int("heads"), causal: true})
		x = add(x, linear(a, r.mat(b("attn_output.weight")), r.vec(b("attn_output.bias"))))
		h = layerNorm(x, r.vec(b("ffn_norm.weight")), r.vec(b("ffn_norm.bias")), eps)
		f := apply(linear(h, r.mat(b("ffn_up.weight")), r.vec(b("ffn_up.bias"))), geluTanh)
		x = add(x, linear(f, r.mat(b("ffn_down.weight")), r.vec(b("ffn_down.bias"))))
	}
	x = layerNorm(x, r.vec("output_norm.weight"), r.vec("output_norm.bias"), 1e-5)
	return linear(x, r.mat(output), nil)
}

func TestGPT2(t *testing.T) {
	sp := builtin(t, "gpt2")
	if sp.Architectures[0] != "gpt2" {
		t.Errorf("architectures = %v", sp.Architectures)
	}
	p := resolve(t, sp, gpt2Small)
	if p.Int("ffn") != 128 {
		t.Errorf("ffn = %v, want 4 * hidden = 128", p["ffn"])
	}
	src := randSource(t, sp, p, "gguf")
	g := build(t, sp, p, "gguf", src)
	r := ref{t, src}
	prompt := []int{5, 17, 3, 60, 9}
	got := runSeq(t, g, prompt, 0)
	spread(t, got)
	closeRows(t, "prefill", got, gpt2Ref(r, p, prompt, "output.weight"), 1e-5)
	checkGenerate(t, build(t, sp, p, "gguf", src), prompt, 6, 16, func(toks []int) [][]float64 {
		return gpt2Ref(r, p, toks, "output.weight")
	})

	t.Run("tied output", func(t *testing.T) {
		tied := hiding{src, map[string]bool{"output.weight": true}}
		g := build(t, sp, p, "gguf", tied)
		closeRows(t, "logits", runSeq(t, g, prompt, 0), gpt2Ref(r, p, prompt, "token_embd.weight"), 1e-5)
	})

	// The load-time split (rows() on the fused tensor) computes exactly
	// what the run-time split() does.
	t.Run("load-time qkv split", func(t *testing.T) {
		set := map[string]any{"qkv": "split"}
		for k, v := range gpt2Small {
			set[k] = v
		}
		ps := resolve(t, sp, set)
		gs := build(t, sp, ps, "gguf", src)
		if n := gs.Stats()["split"]; n != 0 {
			t.Errorf("split variant has %d split nodes", n)
		}
		sameRows(t, "logits", runSeq(t, gs, prompt, 0), got)
	})

	// Hugging Face names, Conv1D weights stored [in, out], and no lm_head
	// (tied to wte): the same model must give the same logits.
	t.Run("hf names", func(t *testing.T) {
		hf := mapSource{}
		put := func(hfName, ggufName string, transpose bool) {
			tt, err := src.Tensor(ggufName)
			if err != nil {
				t.Fatal(err)
			}
			if transpose {
				tt = transposed(tt)
			}
			hf[hfName] = tt
		}
		put("wte.weight", "token_embd.weight", false)
		put("wpe.weight", "position_embd.weight", false)
		put("ln_f.weight", "output_norm.weight", false)
		put("ln_f.bias", "output_norm.bias", false)
		for l := 0; l < 2; l++ {
			for _, m := range []struct {
				hf, gguf string
				conv     bool
			}{
				{"ln_1", "attn_norm", false}, {"attn.c_attn", "attn_qkv", true}, {"attn.c_proj", "attn_output", true},
				{"ln_2", "ffn_norm", false}, {"mlp.c_fc", "ffn_up", true}, {"mlp.c_proj", "ffn_down", true},
			} {
				put(fmt.Sprintf("h.%d.%s.weight", l, m.hf), fmt.Sprintf("blk.%d.%s.weight", l, m.gguf), m.conv)
				put(fmt.Sprintf("h.%d.%s.bias", l, m.hf), fmt.Sprintf("blk.%d.%s.bias", l, m.gguf), false)
			}
		}
		want := runSeq(t, build(t, sp, p, "gguf", tied(src)), prompt, 0)
		sameRows(t, "fused", runSeq(t, build(t, sp, p, "hf", hf), prompt, 0), want)
		set := map[string]any{"qkv": "split"}
		for k, v := range gpt2Small {
			set[k] = v
		}
		sameRows(t, "split", runSeq(t, build(t, sp, resolve(t, sp, set), "hf", hf), prompt, 0), want)
	})
}

func tied(src specs.TensorSource) specs.TensorSource {
	return hiding{src, map[string]bool{"output.weight": true}}
}

// TestGPT2Meta resolves GPT-2's params from GGUF-style and HF-style
// metadata; HF's n_inner is null in GPT-2's config and must fall back to
// 4 × hidden.
func TestGPT2Meta(t *testing.T) {
	sp := builtin(t, "gpt2")
	p, err := sp.ResolveParams(&specs.Meta{Format: "hf", Values: map[string]any{
		"n_embd": float64(48), "n_layer": float64(3), "n_head": float64(6), "n_inner": nil,
		"vocab_size": float64(100), "n_positions": float64(64), "layer_norm_epsilon": 1e-6,
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"hidden": int64(48), "layers": int64(3), "heads": int64(6), "ffn": int64(192), "vocab": int64(100), "ctx": int64(64), "norm_eps": 1e-6} {
		if p[k] != want {
			t.Errorf("%s = %v (%T), want %v", k, p[k], p[k], want)
		}
	}
	p, err = sp.ResolveParams(&specs.Meta{Format: "gguf", Arch: "gpt2", Values: map[string]any{
		"gpt2.embedding_length": uint32(64), "gpt2.feed_forward_length": uint32(100), "tokenizer.ggml.tokens": make([]string, 77),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Int("hidden") != 64 || p.Int("ffn") != 100 || p.Int("vocab") != 77 || p.Int("layers") != 12 {
		t.Errorf("gguf params: %v", p)
	}
}
