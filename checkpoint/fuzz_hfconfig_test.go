package checkpoint

import (
	"encoding/json"
	"testing"
)

// FuzzHFConfig feeds arbitrary config.json text to the decoder an HF
// folder's metadata goes through; whatever it accepts must be plain JSON
// values again (numbers as int64 or float64), which the spec's params read.
func FuzzHFConfig(f *testing.F) {
	f.Add([]byte(`{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"rms_norm_eps":1e-5,"rope_theta":10000.0,"rope_scaling":null}`))
	f.Add([]byte(`{"model_type":"gpt2","n_embd":64,"architectures":["GPT2LMHeadModel"],"task_specific_params":{"a":{"b":[1,2.5,"c"]}}}`))
	f.Add([]byte(`{"a":1e400,"b":-0,"c":9223372036854775808}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		meta, arch, err := ParseHFConfig("config.json", data)
		if err != nil {
			return
		}
		if meta == nil {
			t.Fatal("nil metadata without an error")
		}
		// The architecture is the first class of `architectures` that
		// weft knows, else model_type (renamed where GGUF's name differs).
		mt, _ := meta["model_type"].(string)
		want := mt
		if r, ok := hfModelTypes[mt]; ok {
			want = r
		}
		if list, ok := meta["architectures"].([]any); ok {
			for _, c := range list {
				if name, ok := c.(string); ok && hfClasses[name] != "" {
					want = hfClasses[name]
					break
				}
			}
		}
		if arch != want {
			t.Fatalf("arch %q, want %q (model_type %q, architectures %v)", arch, want, mt, meta["architectures"])
		}
		var check func(v any)
		check = func(v any) {
			switch x := v.(type) {
			case nil, bool, string, int64, float64:
			case []any:
				for _, e := range x {
					check(e)
				}
			case map[string]any:
				for _, e := range x {
					check(e)
				}
			default:
				t.Fatalf("value of type %T", v)
			}
		}
		check(meta)
		if _, err := json.Marshal(meta); err != nil {
			t.Fatalf("decoded metadata does not encode: %v", err)
		}
	})
}
