package specs_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

func mixtralSet(extra map[string]any) map[string]any {
	set := map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2), "ffn": int64(24),
		"vocab": int64(64), "ctx": int64(32), "experts": int64(4), "experts_used": int64(2)}
	for k, v := range extra {
		set[k] = v
	}
	return set
}

// mixtralRef is the forward pass of a Llama decoder whose FFN is a top-k
// mixture of SwiGLU experts (experts > 0) or one SwiGLU FFN.
func mixtralRef(r ref, p specs.Params, tokens []int) mat {
	eps, heads, kvh := p.Float("norm_eps"), p.Int("heads"), p.Int("kv_heads")
	hd := p.Int("hidden") / heads
	x := embed(r.mat("token_embd.weight"), tokens)
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		h := rmsNorm(x, r.vec(b("attn_norm.weight")), eps)
		q := rope(linear(h, r.mat(b("attn_q.weight")), nil), heads, hd, p.Float("rope_base"))
		k := rope(linear(h, r.mat(b("attn_k.weight")), nil), kvh, hd, p.Float("rope_base"))
		v := linear(h, r.mat(b("attn_v.weight")), nil)
		a := attention(q, k, v, attnOpts{heads: heads, kvHeads: kvh, causal: true, window: p.Int("window")})
		x = add(x, linear(a, r.mat(b("attn_output.weight")), nil))
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

func TestMixtral(t *testing.T) {
	sp := builtin(t, "mixtral")
	prompt := []int{1, 30, 4, 55, 12, 8}
	for _, c := range []struct {
		name string
		set  map[string]any
	}{
		{"moe", nil},
		{"moe top-1", map[string]any{"experts_used": int64(1)}},
		{"sliding window", map[string]any{"window": int64(3)}},
		{"dense", map[string]any{"experts": int64(0)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := resolve(t, sp, mixtralSet(c.set))
			src := randSource(t, sp, p, "gguf")
			if moe := src.Has("blk.1.ffn_gate_exps.weight"); moe != (p.Int("experts") > 0) {
				t.Fatalf("experts = %d but expert tensors bound: %v", p.Int("experts"), moe)
			}
			r := ref{t, src}
			got := runSeq(t, build(t, sp, p, "gguf", src), prompt, 0)
			spread(t, got)
			closeRows(t, "prefill", got, mixtralRef(r, p, prompt), 1e-5)
			checkGenerate(t, build(t, sp, p, "gguf", src), prompt, 5, 32, func(toks []int) [][]float64 { return mixtralRef(r, p, toks) })
		})
	}
}

// TestMixtralServesLlama: with experts = 0 the spec is llama.yaml.
func TestMixtralServesLlama(t *testing.T) {
	mx, ll := builtin(t, "mixtral"), builtin(t, "llama")
	set := mixtralSet(map[string]any{"experts": int64(0), "rope_base": 10000.0})
	pm := resolve(t, mx, set)
	delete(set, "experts")
	delete(set, "experts_used")
	pl := resolve(t, ll, set)
	src := randSource(t, ll, pl, "gguf")
	prompt := []int{3, 1, 4, 1, 5, 9}
	sameRows(t, "logits", runSeq(t, build(t, mx, pm, "gguf", src), prompt, 0), runSeq(t, build(t, ll, pl, "gguf", src), prompt, 0))
}

// TestMixtralMeta: llama.cpp writes Mixtral under the "llama"
// architecture; the "." keys take that prefix.
func TestMixtralMeta(t *testing.T) {
	sp := builtin(t, "mixtral")
	p, err := sp.ResolveParams(&specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{
		"llama.expert_count": uint32(8), "llama.expert_used_count": uint32(2), "llama.embedding_length": uint32(4096),
		"llama.attention.head_count": uint32(32), "llama.rope.freq_base": float32(1e6),
	}}, map[string]any{"layers": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Int("experts") != 8 || p.Int("experts_used") != 2 || p.Int("head_dim") != 128 || p.Float("rope_base") != 1e6 || p.Int("window") != 0 || p.Int("layers") != 1 {
		t.Errorf("params: %v", p)
	}
	// HF Mixtral: sliding_window is null (full attention).
	p, err = sp.ResolveParams(&specs.Meta{Format: "hf", Values: map[string]any{"num_local_experts": float64(8), "sliding_window": nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Int("window") != 0 || p.Int("experts") != 8 {
		t.Errorf("hf params: window %v experts %v", p["window"], p["experts"])
	}
}

// TestMixtralHFExperts: HF Mixtral's per-expert tensors
// (experts.E.w1/w3/w2) load as the stacked [experts, rows, cols] weights
// the moe op reads, equal to the GGUF's stacked tensors; a missing expert
// is an error naming it.
func TestMixtralHFExperts(t *testing.T) {
	sp := builtin(t, "mixtral")
	p := resolve(t, sp, mixtralSet(nil))
	src := randSource(t, sp, p, "gguf")
	ren := strings.NewReplacer("token_embd.weight", "model.embed_tokens.weight", "output_norm.weight", "model.norm.weight",
		"output.weight", "lm_head.weight", "blk.", "model.layers.",
		".attn_norm.", ".input_layernorm.", ".ffn_norm.", ".post_attention_layernorm.",
		".attn_q.", ".self_attn.q_proj.", ".attn_k.", ".self_attn.k_proj.", ".attn_v.", ".self_attn.v_proj.",
		".attn_output.", ".self_attn.o_proj.", ".ffn_gate_inp.", ".block_sparse_moe.gate.")
	hf := mapSource{}
	experts := map[string]string{"ffn_gate_exps": "w1", "ffn_up_exps": "w3", "ffn_down_exps": "w2"}
	for _, n := range src.Names() {
		tt, err := src.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		var l int
		var kind string
		if _, err := fmt.Sscanf(strings.ReplaceAll(n, ".", " "), "blk %d %s weight", &l, &kind); err == nil && experts[kind] != "" {
			per := len(tt.Data) / tt.Shape[0]
			for e := 0; e < tt.Shape[0]; e++ {
				hf[fmt.Sprintf("model.layers.%d.block_sparse_moe.experts.%d.%s.weight", l, e, experts[kind])] =
					&tensor.Tensor{Name: "x", DType: tt.DType, Shape: tt.Shape[1:], Data: tt.Data[e*per : (e+1)*per]}
			}
			continue
		}
		hf[ren.Replace(n)] = tt
	}
	g := build(t, sp, p, "hf", hf)
	seen := 0
	for _, v := range g.Params() {
		kind := map[string]string{"gate_exps": "ffn_gate_exps", "up_exps": "ffn_up_exps", "down_exps": "ffn_down_exps"}[v.Param.Key]
		if kind == "" {
			continue
		}
		want, err := src.Tensor(fmt.Sprintf("blk.%d.%s.weight", v.Param.Layer, kind))
		if err != nil {
			t.Fatal(err)
		}
		got := v.Param.Tensor
		if !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: stacked %v differs from the GGUF tensor %v", v.Name, got.Shape, want.Shape)
		}
		seen++
	}
	if seen != 3*p.Int("layers") {
		t.Errorf("%d stacked expert weights, want %d", seen, 3*p.Int("layers"))
	}
	delete(hf, "model.layers.1.block_sparse_moe.experts.2.w3.weight")
	_, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: p, Format: "hf", Source: hf})
	if err == nil || !strings.Contains(err.Error(), "up_exps for layer 1: checkpoint has no tensor model.layers.1.block_sparse_moe.experts.2.w3.weight (piece 2 of 4)") {
		t.Errorf("missing expert: %v", err)
	}
}
