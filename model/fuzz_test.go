package model_test

import (
	"testing"

	"github.com/weftrun/weft/checkpoint"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

// FuzzHFConfigLoad feeds arbitrary config.json text through what loading an
// HF folder does with it before the weights: decoding, picking the spec
// by model_type, resolving and checking the params, building the graph.
// Errors are fine; panics, hangs and runaway graphs are not. Its seeds
// run with the tests, and make fuzz runs it briefly with a bounded count of
// inputs and of minimization, as specs' FuzzSpec (each input compiles CEL
// expressions); checkpoint's FuzzHFConfig fuzzes the decoder alone.
func FuzzHFConfigLoad(f *testing.F) {
	f.Add([]byte(`{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":96,"vocab_size":128,"max_position_embeddings":64,"rms_norm_eps":1e-5,"rope_theta":10000.0}`))
	f.Add([]byte(`{"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,"vocab_size":128,"n_positions":64}`))
	f.Add([]byte(`{"model_type":"bert","hidden_size":32,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":64,"vocab_size":100,"type_vocab_size":2}`))
	f.Add([]byte(`{"model_type":"mixtral","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"num_local_experts":4,"num_experts_per_tok":2}`))
	f.Add([]byte(`{"model_type":"llama","num_attention_heads":0,"rope_theta":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		meta, arch, err := checkpoint.ParseHFConfig("config.json", data)
		if err != nil {
			return
		}
		sp, err := specs.ForCheckpoint(arch, meta)
		if err != nil {
			return
		}
		m := &specs.Meta{Format: "hf", Arch: arch, Values: meta}
		if model.CheckMeta(sp, m) != nil {
			return
		}
		params, err := sp.ResolveParams(m, nil)
		if err != nil || model.CheckParams(sp, params, nil, m) != nil {
			return
		}
		if params.Int("layers") > 8 || params.Int("hidden") > 1<<12 {
			return // valid, and only slower to build
		}
		sp.Build(specs.BuildOptions{Registry: ops.Builtins(), Params: params, Format: "hf"})
	})
}
