package model_test

import (
	"context"
	"math"
	"testing"

	"github.com/weftrun/weft/model"
)

// TestEveryArchitectureLoadsWithoutSpec: for each GGUF architecture name
// of issue 15's list, a tiny random GGUF whose general.architecture is
// that name (`weft synth -s SPEC --arch NAME`) loads with no spec named,
// picks the expected shipped spec, and runs: one teacher-forced step for
// a decoder (finite logits over the vocabulary), one embedding for an
// encoder (finite hidden states, one per token), an encode and one
// decoder step for T5.
func TestEveryArchitectureLoadsWithoutSpec(t *testing.T) {
	dense := map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2),
		"ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}
	mha := map[string]any{"hidden": int64(64), "layers": int64(2), "heads": int64(4), "ffn": int64(96), "vocab": int64(260), "ctx": int64(64)}
	with := func(base map[string]any, extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	moe := map[string]any{"experts": int64(4), "experts_used": int64(2)}
	for _, c := range []struct {
		arch, spec string // general.architecture, and the spec it must pick
		set        map[string]any
		kind       string // "decoder" (default), "encoder", "seq2seq"
	}{
		{arch: "llama", spec: "llama", set: dense},
		{arch: "mistral", spec: "llama", set: dense},
		{arch: "mixtral", spec: "mixtral", set: with(dense, moe)},
		{arch: "qwen2", spec: "qwen2", set: dense},
		{arch: "qwen2moe", spec: "qwen2moe", set: with(dense, map[string]any{"ffn_exp": int64(24), "ffn_shexp": int64(40), "experts": int64(4), "experts_used": int64(2)})},
		{arch: "qwen3", spec: "qwen3", set: with(dense, map[string]any{"head_dim": int64(16)})},
		{arch: "qwen3moe", spec: "qwen3", set: with(dense, map[string]any{"head_dim": int64(16), "experts": int64(4), "experts_used": int64(2), "ffn_exp": int64(16)})},
		{arch: "gemma", spec: "gemma", set: with(dense, map[string]any{"kv_heads": int64(1), "head_dim": int64(16)})},
		{arch: "gemma2", spec: "gemma2", set: with(dense, map[string]any{"head_dim": int64(8), "window": int64(3)})},
		{arch: "gemma3", spec: "gemma3", set: with(dense, map[string]any{"layers": int64(3), "head_dim": int64(16), "swa_pattern": int64(3), "window": int64(2)})},
		{arch: "phi2", spec: "phi2", set: mha},
		{arch: "phi3", spec: "phi3", set: with(dense, map[string]any{"window": int64(4)})},
		{arch: "falcon", spec: "falcon", set: with(mha, map[string]any{"kv_heads": int64(1)})},
		{arch: "bloom", spec: "bloom", set: with(mha, map[string]any{"hidden": int64(48), "heads": int64(3)})},
		{arch: "mpt", spec: "mpt", set: mha},
		{arch: "gpt2", spec: "gpt2", set: mha},
		{arch: "gptneox", spec: "gptneox", set: mha},
		{arch: "starcoder2", spec: "starcoder2", set: with(mha, map[string]any{"kv_heads": int64(2)})},
		{arch: "stablelm", spec: "stablelm", set: mha},
		{arch: "olmo2", spec: "olmo2", set: with(dense, map[string]any{"kv_heads": int64(4)})},
		{arch: "bert", spec: "bert", kind: "encoder", set: map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}},
		{arch: "nomic-bert", spec: "nomic-bert", kind: "encoder", set: map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}},
		{arch: "t5", spec: "t5", kind: "seq2seq", set: map[string]any{"hidden": int64(64), "layers": int64(2), "heads": int64(4), "head_dim": int64(16), "ffn": int64(128), "vocab": int64(260), "decoder_start": int64(0)}},
		// llama.cpp writes Mixtral as general.architecture = llama with experts.
		{arch: "llama", spec: "mixtral", set: with(dense, moe)},
	} {
		t.Run(c.arch+"→"+c.spec, func(t *testing.T) {
			path := synthFile(t, c.spec, c.arch, c.set)
			m, err := model.Load(model.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Checkpoint.Arch() != c.arch || m.Spec.Name != c.spec {
				t.Fatalf("general.architecture %s picked spec %s, want architecture %s and spec %s", m.Checkpoint.Arch(), m.Spec.Name, c.arch, c.spec)
			}
			tokens := []int{1, 17, 142, 99, 5, 7}
			var rows [][]float32
			width := int(c.set["vocab"].(int64))
			switch c.kind {
			case "encoder":
				e, err := m.NewEmbedder(model.EngineOptions{Threads: 1, MaxTokens: 16})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				if rows, err = e.Embed(context.Background(), tokens, nil, model.EmbedOptions{Pooling: model.PoolNone}); err != nil {
					t.Fatal(err)
				}
				width = int(c.set["hidden"].(int64))
			case "seq2seq":
				s, err := m.NewSeq2Seq(model.EngineOptions{Threads: 1, Context: 64})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.Encode(context.Background(), tokens); err != nil {
					t.Fatal(err)
				}
				start, err := s.DecoderStart()
				if err != nil {
					t.Fatal(err)
				}
				if rows, err = s.Decode(context.Background(), []int{start}); err != nil {
					t.Fatal(err)
				}
				tokens = tokens[:1]
			default:
				rows = teacherForced(t, m, tokens)
			}
			if len(rows) != len(tokens) {
				t.Fatalf("%d rows for %d tokens", len(rows), len(tokens))
			}
			for i, r := range rows {
				if len(r) != width {
					t.Fatalf("row %d has %d values, want %d", i, len(r), width)
				}
				spread := false
				for j, v := range r {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("row %d value %d is %v", i, j, v)
					}
					spread = spread || v != r[0]
				}
				if !spread {
					t.Fatalf("row %d is constant (%v)", i, r[0])
				}
			}
		})
	}
}
