package model_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// archGolden is one file of testdata/arch: llama.cpp's teacher-forced
// logits (every token of one batch) on a random-weight model of one
// architecture that `weft synth` makes from the shipped spec.
type archGolden struct {
	Synth  synthRecipe `json:"synth"`
	SHA256 string      `json:"sha256"`
	Tokens []int       `json:"tokens"`
	Logits [][]float32 `json:"logits"`
	// Tolerance, when set, replaces 1e-4 (relative to 1 + |logit|), and
	// Why says why the reference is not plain f32.
	Tolerance float64 `json:"tolerance"`
	Why       string  `json:"why"`
}

// TestArchitecturesMatchLlamaCpp loads each reference's model with no
// spec named (the spec is picked from general.architecture) and checks
// its logits for every prompt position against llama.cpp's, within f32
// rounding.
func TestArchitecturesMatchLlamaCpp(t *testing.T) {
	files, err := filepath.Glob("testdata/arch/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no references in testdata/arch: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g archGolden
			if err := decodeGolden(data, &g); err != nil {
				t.Fatal(err)
			}
			path := synthGolden(t, g.Synth, g.SHA256)
			// Structure choices are not in the GGUF's metadata (llama.cpp
			// looks for optional tensors): pass them as `weft run --set`
			// would. Params come from the metadata.
			sp, err := specs.LoadBuiltin(g.Synth.Spec)
			if err != nil {
				t.Fatal(err)
			}
			set := map[string]any{}
			for _, c := range sp.Structure {
				if v, ok := g.Synth.Set[c.Name]; ok {
					set[c.Name] = v
				}
			}
			m, err := model.Load(model.Options{Path: path, Set: set})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Spec.Name != g.Synth.Spec {
				t.Fatalf("picked spec %s for architecture %s, want %s", m.Spec.Name, m.Checkpoint.Arch(), g.Synth.Spec)
			}
			got := teacherForced(t, m, g.Tokens)
			for i := range got {
				if i < len(g.Logits) && len(g.Logits[i]) < len(got[i]) {
					got[i] = got[i][:len(g.Logits[i])] // a large vocabulary's reference keeps the first columns
				}
			}
			tol := 1e-4
			if g.Tolerance > 0 {
				if g.Why == "" {
					t.Fatal("a reference with its own tolerance must say why")
				}
				tol = g.Tolerance
			}
			closeVecs(t, name+" logits", got, g.Logits, tol)
		})
	}
}

// teacherForced runs tokens as one sequence in one step and returns the
// logits of every position.
func teacherForced(t *testing.T, m *model.Model, tokens []int) [][]float32 {
	t.Helper()
	dev := cpudev.New("cpu:0", 1, cpu.Kernels{})
	defer dev.Close()
	plan, err := scheduler.NewPlan(m.Graph, scheduler.PlanOptions{MaxTokens: len(tokens), Backends: []backend.Backend{dev}, Registry: m.Registry})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	kv, err := plan.NewKV(0, backend.KVF32)
	if err != nil {
		t.Fatal(err)
	}
	st := &backend.Step{}
	for i, tok := range tokens {
		st.Tokens = append(st.Tokens, int32(tok))
		st.Pos = append(st.Pos, int32(i))
		st.Seq = append(st.Seq, 0)
		st.Keep = append(st.Keep, int32(i))
	}
	if err := kv.AddressWhole(st); err != nil {
		t.Fatal(err)
	}
	outs, err := plan.Run(context.Background(), st, kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := outs[0]
	cols := o.Shape[len(o.Shape)-1]
	h := o.F32()
	var rows [][]float32
	for i := range tokens {
		rows = append(rows, append([]float32(nil), h[i*cols:(i+1)*cols]...))
	}
	return rows
}

// TestHFFoldersMatchGGUF writes Hugging Face folders (config.json and
// model.safetensors) holding a GGUF's weights under HF names and layouts,
// undoing each spec's load-time transforms (rope_permute, add_one, stack,
// transpose), and checks that weft, picking the spec from config.json's
// architectures, gives the GGUF's logits: bit for bit (every transform
// round-trips exactly in f32), and so llama.cpp's where a reference exists.
func TestHFFoldersMatchGGUF(t *testing.T) {
	small := map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2),
		"ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}
	with := func(extra map[string]any) map[string]any {
		m := maps.Clone(small)
		maps.Copy(m, extra)
		return m
	}
	for _, c := range []struct {
		name, class string
		golden      string         // a testdata/arch reference: its model and llama.cpp's logits
		spec        string         // else: synthesize this spec
		set         map[string]any // with these params
		cfg         map[string]any // config.json entries no param states
		arch        string         // synth's --arch
	}{
		{name: "llama", class: "LlamaForCausalLM", golden: "llama"},
		{name: "qwen2", class: "Qwen2ForCausalLM", golden: "qwen2"},
		{name: "qwen2-yarn", class: "Qwen2ForCausalLM", golden: "qwen2-yarn"},
		{name: "gemma", class: "GemmaForCausalLM", golden: "gemma"},
		{name: "gemma2", class: "Gemma2ForCausalLM", golden: "gemma2"},
		{name: "phi3", class: "Phi3ForCausalLM", golden: "phi3"},
		{name: "phi2", class: "PhiForCausalLM", golden: "phi2"},
		{name: "olmo2", class: "Olmo2ForCausalLM", golden: "olmo2"},
		{name: "starcoder2", class: "Starcoder2ForCausalLM", golden: "starcoder2-linear"},
		{name: "stablelm", class: "StableLmForCausalLM", golden: "stablelm-yarn"},
		{name: "mpt", class: "MptForCausalLM", golden: "mpt", cfg: map[string]any{"expansion_ratio": 1.5}},
		{name: "qwen2moe", class: "Qwen2MoeForCausalLM", spec: "qwen2moe", set: with(map[string]any{"ffn_exp": int64(24), "ffn_shexp": int64(40), "experts": int64(4), "experts_used": int64(2)})},
		{name: "mixtral", class: "MixtralForCausalLM", spec: "mixtral", set: with(map[string]any{"experts": int64(4), "experts_used": int64(2)})},
		{name: "qwen3moe", class: "Qwen3MoeForCausalLM", spec: "qwen3", arch: "qwen3moe", set: with(map[string]any{"head_dim": int64(16), "experts": int64(4), "experts_used": int64(2), "ffn_exp": int64(16)})},
		{name: "mistral", class: "MistralForCausalLM", spec: "llama", arch: "mistral", set: small},
		{name: "qwen3", class: "Qwen3ForCausalLM", spec: "qwen3", set: with(map[string]any{"head_dim": int64(16)})},
		{name: "falcon", class: "FalconForCausalLM", golden: "falcon"},
		{name: "falcon-40b", class: "FalconForCausalLM", golden: "falcon-40b"},
		// HF BLOOM's FFN is always 4 · hidden (bloom.json's is not).
		{name: "bloom", class: "BloomForCausalLM", spec: "bloom", set: map[string]any{"hidden": int64(48), "layers": int64(2), "heads": int64(3),
			"ffn": int64(192), "vocab": int64(260), "ctx": int64(64)}},
		{name: "gptneox", class: "GPTNeoXForCausalLM", golden: "gptneox"},
		{name: "gptneox-seq", class: "GPTNeoXForCausalLM", golden: "gptneox-seq"},
		{name: "gpt2", class: "GPT2LMHeadModel", spec: "gpt2", set: map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4),
			"ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}},
		{name: "bert", class: "BertModel", spec: "bert", set: map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4),
			"ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}},
		{name: "nomic-bert", class: "NomicBertModel", spec: "nomic-bert", set: map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4),
			"ffn": int64(48), "vocab": int64(260), "ctx": int64(64)}},
		{name: "gemma3", class: "Gemma3ForCausalLM", spec: "gemma3", set: with(map[string]any{"layers": int64(3), "head_dim": int64(16), "swa_pattern": int64(3), "window": int64(2), "rope_factor": 4.0})},
	} {
		t.Run(c.name, func(t *testing.T) {
			tokens := []int{1, 17, 142, 99, 5, 7}
			var path string
			var want [][]float32
			structure := map[string]any{}
			if c.golden != "" {
				data, err := os.ReadFile(filepath.Join("testdata/arch", c.golden+".json"))
				if err != nil {
					t.Fatal(err)
				}
				var g archGolden
				if err := decodeGolden(data, &g); err != nil {
					t.Fatal(err)
				}
				path, tokens, want = synthGolden(t, g.Synth, g.SHA256), g.Tokens, g.Logits
				// Structure choices are in no metadata: pass them as --set
				// (Falcon-40B's two norms).
				sp, err := specs.LoadBuiltin(g.Synth.Spec)
				if err != nil {
					t.Fatal(err)
				}
				for _, sc := range sp.Structure {
					if v, ok := g.Synth.Set[sc.Name]; ok {
						structure[sc.Name] = v
					}
				}
			} else {
				path = synthFile(t, c.spec, c.arch, c.set)
			}
			gm, err := model.Load(model.Options{Path: path, Set: structure})
			if err != nil {
				t.Fatal(err)
			}
			defer gm.Close()
			dir := t.TempDir()
			writeHF(t, gm, c.class, dir, c.cfg)
			hm, err := model.Load(model.Options{Path: dir, Set: structure})
			if err != nil {
				t.Fatal(err)
			}
			defer hm.Close()
			if hm.Spec.Name != gm.Spec.Name || hm.Checkpoint.Arch() != gm.Checkpoint.Arch() {
				t.Fatalf("config.json's %s is %s and picked spec %s, want %s and %s", c.class, hm.Checkpoint.Arch(), hm.Spec.Name,
					gm.Checkpoint.Arch(), gm.Spec.Name)
			}
			got, ref := teacherForced(t, hm, tokens), teacherForced(t, gm, tokens)
			for i := range ref {
				for j := range ref[i] {
					if got[i][j] != ref[i][j] {
						t.Fatalf("token %d logit %d: HF folder %g, GGUF %g", i, j, got[i][j], ref[i][j])
					}
				}
				if want != nil && len(want[i]) < len(got[i]) {
					got[i] = got[i][:len(want[i])]
				}
			}
			if want != nil {
				closeVecs(t, c.name+" HF logits against llama.cpp", got, want, 2e-3)
			}
		})
	}
}

// TestHFLlama3RoPE: Llama 3.1's RoPE scaling stated in config.json
// (rope_scaling {rope_type: llama3, ...}) gives the logits of the GGUF
// that llama.cpp's converter would write, which carries the factors as
// rope_freqs.weight (here the values worked out by hand for 8-dim heads,
// base 10⁴, ×4 over 16 positions: π/2, 4, 4, 4), and differs from
// unscaled RoPE.
func TestHFLlama3RoPE(t *testing.T) {
	path := synthFile(t, "llama", "", map[string]any{"hidden": int64(32), "layers": int64(2), "heads": int64(4), "kv_heads": int64(2),
		"ffn": int64(48), "vocab": int64(260), "ctx": int64(64), "rope_freqs": true})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := g.Tensor("rope_freqs.weight")
	if err != nil {
		t.Fatal(err)
	}
	copy(rf.Data, tensor.F32ToBytes([]float32{math.Pi / 2, 4, 4, 4}))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gm, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer gm.Close()
	if f := gm.Params["rope_freqs"]; f != true {
		t.Fatalf("rope_freqs = %v with a rope_freqs.weight tensor", f)
	}
	dir := t.TempDir()
	writeHF(t, gm, "LlamaForCausalLM", dir, map[string]any{"skip rope_freqs_w": true, "rope_scaling": map[string]any{
		"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 16}})
	hm, err := model.Load(model.Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer hm.Close()
	tokens := []int{1, 17, 142, 99, 5, 7}
	got, want := teacherForced(t, hm, tokens), teacherForced(t, gm, tokens)
	closeVecs(t, "llama3 RoPE from config.json", got, want, 1e-5)
	plain := t.TempDir()
	writeHF(t, gm, "LlamaForCausalLM", plain, map[string]any{"skip rope_freqs_w": true})
	pm, err := model.Load(model.Options{Path: plain})
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	if p := teacherForced(t, pm, tokens); p[5][0] == got[5][0] {
		t.Errorf("unscaled RoPE gives the scaled logits (%g)", p[5][0])
	}
}

// synthFile writes `weft synth -s SPEC --arch ARCH --dtype f32
// --random-vectors` with the given params into a temporary folder.
func synthFile(t *testing.T, spec, arch string, set map[string]any) string {
	t.Helper()
	sp, err := specs.LoadBuiltin(spec)
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), spec+".gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := convert.Synth(f, sp, params, convert.SynthOptions{DType: tensor.F32, Seed: 9, RandomVectors: true, Arch: arch}); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeHF writes model m's weights as an HF folder: config.json (the
// params that have HF keys, nested for dotted keys, and architectures:
// [class]) and model.safetensors, each tensor under the spec's HF name
// with the HF rule's transforms undone.
func writeHF(t *testing.T, m *model.Model, class, dir string, extra map[string]any) {
	t.Helper()
	cfg := map[string]any{"architectures": []string{class}}
	for _, d := range m.Spec.Params {
		key, ok := d.From["hf"]
		if !ok || strings.HasPrefix(key, "tensor:") || m.Params[d.Name] == nil {
			continue
		}
		obj, parts := cfg, strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			if _, ok := obj[p].(map[string]any); !ok {
				obj[p] = map[string]any{}
			}
			obj = obj[p].(map[string]any)
		}
		obj[parts[len(parts)-1]] = m.Params[d.Name]
	}
	out := map[string]*tensor.Tensor{}
	for _, v := range m.Graph.Params() {
		p := v.Param
		w := m.Spec.Weights[p.Key]
		rules := w.Names["hf"]
		if len(rules) == 0 {
			if _, ok := extra["skip "+p.Key]; ok {
				continue // HF states it otherwise (in extra)
			}
			t.Fatalf("%s: weight %s has no HF name", m.Spec.Name, p.Key)
		}
		gnames, err := m.Spec.TensorNames(p.Key, p.Vars, "gguf", m.Params)
		if err != nil {
			t.Fatal(err)
		}
		ri := min(max(slices.Index(gnames, p.Source), 0), len(rules)-1) // a tied head: the same alternative
		rule := rules[ri]
		undo := func(x *tensor.Tensor) *tensor.Tensor {
			for i := len(rule.Transforms) - 1; i >= 0; i-- {
				tr := rule.Transforms[i]
				var err error
				switch tr.Op {
				case "rope_permute":
					x, err = specs.RoPEUnpermute(x, m.Params.Int(tr.Args[0].Src))
				case "transpose":
					x, err = specs.Transpose(x)
				case "flatten":
					x = &tensor.Tensor{Name: x.Name, DType: x.DType, Shape: []int{1, x.Shape[0]}, Data: x.Data}
				case "qkv_groups":
					x, err = specs.QKVUngroups(x, m.Params.Int(strings.TrimSpace(tr.Args[0].Src)), m.Params.Int(strings.TrimSpace(tr.Args[1].Src)))
				case "add_one":
					f := slices.Clone(x.F32())
					for j := range f {
						f[j]--
					}
					x = tensor.FromF32(x.Name, f, x.Shape...)
				default:
					t.Fatalf("%s: no inverse for transform %s", p.Key, tr.Op)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			return x
		}
		vars := maps.Clone(p.Vars)
		if vars == nil {
			vars = map[string]any{}
		}
		if rule.Stack == nil {
			names, err := m.Spec.TensorNames(p.Key, vars, "hf", m.Params)
			if err != nil {
				t.Fatal(err)
			}
			if _, done := out[names[ri]]; !done {
				out[names[ri]] = undo(p.Tensor)
			}
			continue
		}
		n := p.Tensor.Shape[0]
		each := len(p.Tensor.Data) / n
		for e := range n {
			vars["e"] = int64(e)
			names, err := m.Spec.TensorNames(p.Key, vars, "hf", m.Params)
			if err != nil {
				t.Fatal(err)
			}
			piece := &tensor.Tensor{Name: names[ri], DType: p.Tensor.DType, Shape: slices.Clone(p.Tensor.Shape[1:]), Data: p.Tensor.Data[e*each : (e+1)*each]}
			out[names[ri]] = undo(piece)
		}
	}
	for k, v := range extra {
		switch {
		case strings.HasPrefix(k, "skip "):
		case v == "drop": // leave the key out of config.json
			delete(cfg, k)
		default:
			cfg[k] = v
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), safetensorsBytes(t, out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// safetensorsBytes lays out f32 tensors as a safetensors file: an 8-byte
// little-endian header size, the JSON header ({name: {dtype, shape,
// data_offsets}}), then the data.
func safetensorsBytes(t *testing.T, ts map[string]*tensor.Tensor) []byte {
	t.Helper()
	header := map[string]any{}
	var data []byte
	for _, name := range slices.Sorted(maps.Keys(ts)) {
		x := ts[name]
		if x.DType != tensor.F32 {
			t.Fatalf("%s is %s, want f32", name, x.DType)
		}
		header[name] = map[string]any{"dtype": "F32", "shape": x.Shape, "data_offsets": []int{len(data), len(data) + len(x.Data)}}
		data = append(data, x.Data...)
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(h)))
	buf.Write(h)
	buf.Write(data)
	return buf.Bytes()
}
