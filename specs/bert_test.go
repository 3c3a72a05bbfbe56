package specs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
)

var bertSmall = map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "ffn": int64(48), "vocab": int64(50), "ctx": int64(16), "types": int64(2)}

// bertRef is BERT's encoder over GGUF-named weights: token i has token
// type types[i] (0 when types is nil); blocks are post-norm with
// bidirectional attention.
func bertRef(r ref, p specs.Params, tokens, types []int) mat {
	eps := p.Float("norm_eps")
	pos := make([]int, len(tokens))
	if types == nil {
		types = make([]int, len(tokens))
	}
	for i := range pos {
		pos[i] = i
	}
	x := add(add(embed(r.mat("token_embd.weight"), tokens), embed(r.mat("position_embd.weight"), pos)), embed(r.mat("token_types.weight"), types))
	x = layerNorm(x, r.vec("token_embd_norm.weight"), r.vec("token_embd_norm.bias"), eps)
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		q := linear(x, r.mat(b("attn_q.weight")), r.vec(b("attn_q.bias")))
		k := linear(x, r.mat(b("attn_k.weight")), r.vec(b("attn_k.bias")))
		v := linear(x, r.mat(b("attn_v.weight")), r.vec(b("attn_v.bias")))
		a := attention(q, k, v, attnOpts{heads: p.Int("heads")})
		x = layerNorm(add(x, linear(a, r.mat(b("attn_output.weight")), r.vec(b("attn_output.bias")))),
			r.vec(b("attn_output_norm.weight")), r.vec(b("attn_output_norm.bias")), eps)
		f := linear(apply(linear(x, r.mat(b("ffn_up.weight")), r.vec(b("ffn_up.bias"))), geluErf), r.mat(b("ffn_down.weight")), r.vec(b("ffn_down.bias")))
		x = layerNorm(add(x, f), r.vec(b("layer_output_norm.weight")), r.vec(b("layer_output_norm.bias")), eps)
	}
	return x
}

func TestBERT(t *testing.T) {
	sp := builtin(t, "bert")
	if len(sp.Outputs) != 1 || sp.Outputs[0] != "hidden" {
		t.Fatalf("outputs = %v", sp.Outputs)
	}
	p := resolve(t, sp, bertSmall)
	src := randSource(t, sp, p, "gguf")
	r := ref{t, src}
	a, b := []int{2, 40, 7, 7, 19, 33}, []int{11, 3, 48}
	want := bertRef(r, p, a, nil)
	got := runSeq(t, build(t, sp, p, "gguf", src), a, 0)
	spread(t, got)
	closeRows(t, "hidden states", got, want, 1e-5)

	// Bidirectional: the first token's state depends on the last token.
	changed := append(append([]int(nil), a[:len(a)-1]...), 1)
	other := runSeq(t, build(t, sp, p, "gguf", src), changed, 0)
	if other[0][0] == got[0][0] && other[0][1] == got[0][1] {
		t.Error("changing the last token left the first token's state unchanged")
	}

	// Two sequences in one step, after the graph passes (output pruning
	// keeps every row, fusion rewrites the linears): each attends only to
	// itself.
	g := build(t, sp, p, "gguf", src)
	if err := graph.Optimize(g, ops.Builtins()); err != nil {
		t.Fatal(err)
	}
	both := runBatch(t, g, [][]int{a, b}, 0)
	closeRows(t, "batched a", both[0], want, 1e-5)
	closeRows(t, "batched b", both[1], bertRef(r, p, b, nil), 1e-5)

	// A sentence pair: the second segment's tokens have type 1, fed by
	// the token_types step input.
	t.Run("token types", func(t *testing.T) {
		types := []int{0, 0, 0, 1, 1, 1}
		g := build(t, sp, p, "gguf", src)
		dev := cpudev.New("cpu:0", 1, cpu.Kernels{})
		defer dev.Close()
		plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: len(a), Backends: []backend.Backend{dev}})
		if err != nil {
			t.Fatal(err)
		}
		kv, err := plan.NewKV(0, backend.KVF32)
		if err != nil {
			t.Fatal(err)
		}
		st := &backend.Step{}
		for i, tok := range a {
			st.Keep = append(st.Keep, int32(i))
			st.Tokens = append(st.Tokens, int32(tok))
			st.Pos = append(st.Pos, int32(i))
			st.Seq = append(st.Seq, 0)
			st.Types = append(st.Types, int32(types[i]))
		}
		if err := kv.AddressWhole(st); err != nil {
			t.Fatal(err)
		}
		outs, err := plan.Run(context.Background(), st, kv, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := outs[0].F32()
		cols := outs[0].Shape[1]
		var rows [][]float32
		for i := range a {
			rows = append(rows, h[i*cols:(i+1)*cols])
		}
		closeRows(t, "typed", rows, bertRef(r, p, a, types), 1e-5)
		if rows[0][0] == got[0][0] {
			t.Error("token types left the hidden states unchanged")
		}
	})

	// HF names with BertForMaskedLM's "bert." prefix.
	t.Run("hf names", func(t *testing.T) {
		hf := mapSource{}
		rename := strings.NewReplacer(
			"token_embd.weight", "embeddings.word_embeddings.weight",
			"position_embd.weight", "embeddings.position_embeddings.weight",
			"token_types.weight", "embeddings.token_type_embeddings.weight",
			"token_embd_norm.", "embeddings.LayerNorm.",
			"blk.", "encoder.layer.",
			".attn_q.", ".attention.self.query.",
			".attn_k.", ".attention.self.key.",
			".attn_v.", ".attention.self.value.",
			".attn_output_norm.", ".attention.output.LayerNorm.",
			".attn_output.", ".attention.output.dense.",
			".ffn_up.", ".intermediate.dense.",
			".ffn_down.", ".output.dense.",
			".layer_output_norm.", ".output.LayerNorm.",
		)
		for _, n := range src.Names() {
			tt, err := src.Tensor(n)
			if err != nil {
				t.Fatal(err)
			}
			hf["bert."+rename.Replace(n)] = tt
		}
		if !hf.Has("bert.encoder.layer.1.attention.output.LayerNorm.bias") || !hf.Has("bert.embeddings.LayerNorm.weight") {
			t.Fatalf("renaming went wrong: %v", hf)
		}
		sameRows(t, "hidden", runSeq(t, build(t, sp, p, "hf", hf), a, 0), got)
	})
}
