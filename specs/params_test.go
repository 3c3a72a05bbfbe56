package specs_test

import (
	"strings"
	"testing"

	"github.com/weftrun/weft/specs"
)

// paramSpec declares its params out of dependency order.
const paramSpec = `
name: p
params:
  c:        b * 2           # needs b, declared later
  b:        a + 1
  a:        {value: 1, gguf: .a_key, hf: a_key, llama2c: a}
  hidden:   {value: 64, gguf: .embedding_length, hf: hidden_size, llama2c: dim}
  heads:    {value: 4,  gguf: .attention.head_count, hf: num_attention_heads, llama2c: n_heads}
  head_dim: hidden / heads
  vocab:    {value: 10, gguf: tokenizer.ggml.tokens, hf: vocab_size}
  eps:      {value: 1e-5, gguf: .attention.layer_norm_rms_epsilon, hf: rms_norm_eps}
  ratio:    double(hidden) / 3.0
  label:    '"h" + string(hidden)'
  big:      hidden > 100
structure:
  norm: rms_norm
graph: []
`

func TestParams(t *testing.T) {
	sp := parse(t, "p.yaml", paramSpec)
	for _, c := range []struct {
		name string
		meta *specs.Meta
		set  map[string]any
		want map[string]any
	}{
		{"defaults", nil, nil, map[string]any{"a": int64(1), "b": int64(2), "c": int64(4), "head_dim": int64(16),
			"ratio": 64.0 / 3, "label": "h64", "big": false, "eps": 1e-5, "norm": "rms_norm"}},
		{"set feeds dependents", nil, map[string]any{"hidden": int64(256), "a": int64(10)},
			map[string]any{"head_dim": int64(64), "b": int64(11), "c": int64(22), "label": "h256", "big": true}},
		{"set overrides an expression", nil, map[string]any{"head_dim": int64(8)}, map[string]any{"head_dim": int64(8), "hidden": int64(64)}},
		{"set a structure choice", nil, map[string]any{"norm": "layer_norm"}, map[string]any{"norm": "layer_norm"}},
		{"gguf keys take the arch prefix", &specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{
			"llama.embedding_length": uint32(512), "llama.attention.head_count": uint32(8), "llama.a_key": int32(5),
			"llama.attention.layer_norm_rms_epsilon": float32(1e-6), "tokenizer.ggml.tokens": []string{"a", "b", "c"},
			"embedding_length": uint32(1), "other.embedding_length": uint32(2), // not this arch's
		}}, nil, map[string]any{"hidden": int64(512), "heads": int64(8), "head_dim": int64(64), "a": int64(5), "c": int64(12),
			"eps": float64(float32(1e-6)), "vocab": int64(3)}},
		{"gguf of another arch", &specs.Meta{Format: "gguf", Arch: "qwen2", Values: map[string]any{"llama.embedding_length": uint32(512)}},
			nil, map[string]any{"hidden": int64(64)}},
		{"set beats metadata", &specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{"llama.embedding_length": uint32(512)}},
			map[string]any{"hidden": int64(128)}, map[string]any{"hidden": int64(128), "head_dim": int64(32)}},
		{"hf config", &specs.Meta{Format: "hf", Values: map[string]any{
			"hidden_size": float64(96), "num_attention_heads": float64(3), "vocab_size": float64(1000), "rms_norm_eps": 1e-6, "a_key": nil,
		}}, nil, map[string]any{"hidden": int64(96), "head_dim": int64(32), "vocab": int64(1000), "eps": 1e-6, "a": int64(1)}},
		{"llama2c header", &specs.Meta{Format: "llama2c", Values: map[string]any{"dim": 288, "n_heads": 6, "a": 7}},
			nil, map[string]any{"hidden": int64(288), "heads": int64(6), "head_dim": int64(48), "a": int64(7), "vocab": int64(10)}},
		{"hf keys ignored for gguf", &specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{"hidden_size": float64(96)}},
			nil, map[string]any{"hidden": int64(64)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := sp.ResolveParams(c.meta, c.set)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range c.want {
				if p[k] != want {
					t.Errorf("%s = %v (%T), want %v (%T)", k, p[k], p[k], want, want)
				}
			}
		})
	}
}

// TestMetaArrays: an array in the metadata gives its length (a
// vocabulary's size from its token list), whatever its element type.
func TestMetaArrays(t *testing.T) {
	sp := parse(t, "p.yaml", paramSpec)
	for _, v := range []any{[]string{"a", "b"}, []any{1, "x"}, []float32{1, 2}, []int32{5, 6}} {
		p, err := sp.ResolveParams(&specs.Meta{Format: "gguf", Values: map[string]any{"tokenizer.ggml.tokens": v}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Int("vocab") != 2 {
			t.Errorf("%T: vocab = %v, want 2", v, p["vocab"])
		}
	}
}

func TestParamCycles(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"name: c\nparams:\n  a: b\n  b: a\ngraph: []\n", "c.yaml:3:3: params: cycle a -> b -> a"},
		{"name: c\nparams:\n  x: 1\n  a: x + b\n  b: c * 2\n  c: a\ngraph: []\n", "c.yaml:4:3: params: cycle a -> b -> c -> a"},
		{"name: c\nparams:\n  a: {value: b, gguf: .a}\n  b: a\ngraph: []\n", "c.yaml:3:3: params: cycle a -> b -> a"},
	} {
		sp := parse(t, "c.yaml", c.src)
		_, err := sp.ResolveParams(nil, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("err = %v, want %s", err, c.want)
		}
	}
	// Metadata for one param of the cycle breaks it.
	sp := parse(t, "c.yaml", "name: c\nparams:\n  a: {value: b, gguf: .a}\n  b: a\ngraph: []\n")
	p, err := sp.ResolveParams(&specs.Meta{Format: "gguf", Arch: "m", Values: map[string]any{"m.a": uint32(3)}}, nil)
	if err != nil || p.Int("b") != 3 {
		t.Errorf("b = %v, err %v", p["b"], err)
	}
}

func TestParseValue(t *testing.T) {
	for in, want := range map[string]any{"4096": int64(4096), "0x10": int64(16), "1e-5": 1e-5, "2.5": 2.5, "true": true, "layer_norm": "layer_norm"} {
		if got := specs.ParseValue(in); got != want {
			t.Errorf("ParseValue(%q) = %v (%T), want %v", in, got, got, want)
		}
	}
}

// TestStructureChoice builds llama.yaml with --set norm=layer_norm: every
// $norm(...) becomes a layer_norm.
func TestStructureChoice(t *testing.T) {
	sp := builtin(t, "llama")
	set := map[string]any{"hidden": int64(16), "heads": int64(2), "layers": int64(2), "ffn": int64(24), "vocab": int64(10), "norm": "layer_norm"}
	g := build(t, sp, resolve(t, sp, set), "gguf", nil)
	st := g.Stats()
	if st["layer_norm"] != 2*2+1 || st["rms_norm"] != 0 {
		t.Errorf("ops: %v", st)
	}
	set["norm"] = "softmax_norm"
	_, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: resolve(t, sp, set)})
	if err == nil || !strings.Contains(err.Error(), `unknown op "softmax_norm"`) {
		t.Errorf("err = %v", err)
	}
}

func TestForArch(t *testing.T) {
	for arch, want := range map[string]string{"llama": "llama", "mistral": "llama", "gpt2": "gpt2", "bert": "bert", "mixtral": "mixtral"} {
		sp, err := specs.ForArch(arch)
		if err != nil {
			t.Errorf("%s: %v", arch, err)
			continue
		}
		if sp.Name != want {
			t.Errorf("ForArch(%s) = %s, want %s", arch, sp.Name, want)
		}
	}
	if _, err := specs.ForArch("rwkv6"); err == nil || !strings.Contains(err.Error(), `no built-in spec for architecture "rwkv6"`) {
		t.Errorf("rwkv6: %v", err)
	}
}

// scalingSpec has the kinds of metadata source RoPE scaling needs.
const scalingSpec = `
name: s
params:
  ctx:     {value: 64, gguf: .context_length, hf: max_position_embeddings}
  kind:    {value: "'linear'", optional: true, gguf: .rope.scaling.type, hf: [rope_scaling.rope_type, rope_scaling.type]}
  factor:  {value: 1.0, optional: true, gguf: .rope.scaling.factor, hf: rope_scaling.factor}
  freqs:   {value: false, gguf: "tensor:rope_freqs.weight"}
  either:  {value: false, gguf: ["tensor:a.weight", "tensor:b.weight"]}
  scale:   "1.0 / factor"
graph: []
`

// TestParamSources: lists of keys tried in order, nested HF keys, tensor
// presence, whole numbers for float params, quoted strings as literals.
func TestParamSources(t *testing.T) {
	sp := parse(t, "s.yaml", scalingSpec)
	has := func(names ...string) func(string) bool {
		return func(n string) bool { return strings.Contains(strings.Join(names, ","), n) }
	}
	for _, c := range []struct {
		name string
		meta *specs.Meta
		want map[string]any
	}{
		{"defaults", nil, map[string]any{"kind": "linear", "factor": 1.0, "freqs": false, "scale": 1.0}},
		{"hf nested, newer key", &specs.Meta{Format: "hf", Values: map[string]any{
			"rope_scaling": map[string]any{"rope_type": "llama3", "factor": int64(8)}}},
			map[string]any{"kind": "llama3", "factor": 8.0, "scale": 0.125}},
		{"hf nested, older key", &specs.Meta{Format: "hf", Values: map[string]any{
			"rope_scaling": map[string]any{"type": "yarn", "factor": 4.0}}},
			map[string]any{"kind": "yarn", "factor": 4.0}},
		{"hf null rope_scaling", &specs.Meta{Format: "hf", Values: map[string]any{"rope_scaling": nil}},
			map[string]any{"kind": "linear", "factor": 1.0}},
		{"gguf", &specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{
			"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": float32(4)}, HasTensor: has("rope_freqs.weight")},
			map[string]any{"kind": "yarn", "factor": 4.0, "freqs": true, "either": false}},
		{"tensor: list", &specs.Meta{Format: "gguf", Arch: "llama", HasTensor: has("b.weight")},
			map[string]any{"freqs": false, "either": true}},
		{"a dotted gguf key is not nested", &specs.Meta{Format: "gguf", Arch: "llama", Values: map[string]any{
			"llama": map[string]any{"rope": map[string]any{"scaling": map[string]any{"factor": 2.0}}}}},
			map[string]any{"factor": 1.0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := sp.ResolveParams(c.meta, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range c.want {
				if p[k] != want {
					t.Errorf("%s = %v (%T), want %v (%T)", k, p[k], p[k], want, want)
				}
			}
		})
	}
}

// TestOptionalMetaKeys: synth writes an optional key only when its value
// differs from the default.
func TestOptionalMetaKeys(t *testing.T) {
	sp := parse(t, "s.yaml", scalingSpec)
	keys := func(set map[string]any) string {
		p, err := sp.ResolveParams(nil, set)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range sp.MetaKeys("llama", p) {
			out = append(out, m.Key)
		}
		return strings.Join(out, " ")
	}
	if got := keys(nil); got != "llama.context_length" {
		t.Errorf("defaults write %q, want only llama.context_length", got)
	}
	if got := keys(map[string]any{"kind": "yarn", "factor": 4.0}); got != "llama.context_length llama.rope.scaling.type llama.rope.scaling.factor" {
		t.Errorf("yarn x4 writes %q", got)
	}
}
