package convert_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/weftrun/weft/checkpoint"
	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// greedyTokens loads a model and decodes each golden prompt greedily.
func greedyTokens(t *testing.T, opt model.Options, cases []testdata.Case) [][]int {
	t.Helper()
	m, err := model.Load(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var out [][]int
	for _, c := range cases {
		ids, err := m.Tokenizer.Encode(c.Prompt, tokenizer.EncodeOptions{AddSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := sampling.New(sampling.Config{})
		toks, err := eng.Generate(context.Background(), scheduler.Request{Prompt: ids, MaxTokens: len(c.Steps), Sampler: s}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, toks)
	}
	return out
}

func checkGolden(t *testing.T, what string, got [][]int, cases []testdata.Case) {
	t.Helper()
	for i, c := range cases {
		if !slices.Equal(got[i], c.Tokens()) {
			t.Errorf("%s, prompt %d: tokens\n got  %v\n want %v", what, i, got[i], c.Tokens())
		}
	}
}

func writeFile(t *testing.T, path string, fn func(f *os.File) error) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// convertTo runs `weft convert`'s pipeline on a checkpoint.
func convertTo(t *testing.T, in, out string, vocab gguf.Metadata) {
	t.Helper()
	ck, err := checkpoint.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	sp, err := specs.ForArch(ck.Arch())
	if err != nil {
		t.Fatal(err)
	}
	format := model.NamingScheme(ck.Format())
	params, err := sp.ResolveParams(&specs.Meta{Format: format, Arch: ck.Arch(), Values: ck.Meta()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: ops.Builtins(), Params: params, Format: format, Source: model.Source(ck)})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, func(f *os.File) error {
		return convert.Convert(f, sp, params, g, convert.ConvertOptions{KeepType: true, Vocab: vocab})
	})
}

func storiesVocab(t *testing.T, shared string) gguf.Metadata {
	f, err := gguf.Open(filepath.Join(shared, "models", "stories260K", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f.Meta
}

// TestConvertLlama2C: stories260K.bin → GGUF gives llama.cpp's greedy tokens.
func TestConvertLlama2C(t *testing.T) {
	shared := testdata.Shared(t)
	cases := testdata.Golden(t, shared, "stories260K")
	out := filepath.Join(t.TempDir(), "stories.gguf")
	convertTo(t, filepath.Join(shared, "models", "stories260K", "stories260K.bin"), out, storiesVocab(t, shared))
	checkGolden(t, "converted llama2.c", greedyTokens(t, model.Options{Path: out}, cases), cases)
}

// writeSafetensors writes F32 tensors in the safetensors layout.
func writeSafetensors(t *testing.T, path string, ts map[string]*tensor.Tensor) {
	t.Helper()
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data bytes.Buffer
	for _, n := range names {
		x := ts[n]
		start := data.Len()
		data.Write(x.Data)
		header[n] = map[string]any{"dtype": "F32", "shape": x.Shape, "data_offsets": []int{start, data.Len()}}
	}
	h, _ := json.Marshal(header)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	writeFile(t, path, func(f *os.File) error {
		if err := binary.Write(f, binary.LittleEndian, uint64(len(h))); err != nil {
			return err
		}
		if _, err := f.Write(h); err != nil {
			return err
		}
		_, err := f.Write(data.Bytes())
		return err
	})
}

// TestConvertHFSafetensors builds a Hugging Face folder from stories260K
// (HF names, q/k rows in HF's rotate-half order, config.json), then checks
// that weft runs it directly and after `weft convert` with llama.cpp's
// greedy tokens.
func TestConvertHFSafetensors(t *testing.T) {
	shared := testdata.Shared(t)
	cases := testdata.Golden(t, shared, "stories260K")
	src, err := gguf.Open(filepath.Join(shared, "models", "stories260K", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rename := map[string]string{
		"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight", "output.weight": "lm_head.weight",
	}
	per := map[string]string{
		"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
		"attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj",
		"ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
	}
	ts := map[string]*tensor.Tensor{}
	for _, ti := range src.Tensors {
		x, err := src.Tensor(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		name, ok := rename[ti.Name]
		if !ok {
			layer, part, ok := layerPart(ti.Name)
			if !ok {
				t.Fatalf("unexpected tensor %s", ti.Name)
			}
			name = "model.layers." + strconv.Itoa(layer) + "." + per[part] + ".weight"
			switch part {
			case "attn_q":
				x, err = specs.RoPEUnpermute(x, 8)
			case "attn_k":
				x, err = specs.RoPEUnpermute(x, 4)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		ts[name] = x
	}
	dir := t.TempDir()
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
	cfg := `{"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 5,
	 "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 172, "vocab_size": 512,
	 "max_position_embeddings": 512, "rms_norm_eps": 1e-05, "rope_theta": 10000.0}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(shared, "models", "stories260K", "tok512.bin")
	checkGolden(t, "HF folder", greedyTokens(t, model.Options{Path: dir, Tokenizer: tok}, cases), cases)
	out := filepath.Join(t.TempDir(), "from-hf.gguf")
	convertTo(t, dir, out, storiesVocab(t, shared))
	checkGolden(t, "HF folder converted to GGUF", greedyTokens(t, model.Options{Path: out}, cases), cases)
}

// layerPart splits "blk.N.PART.weight" into N and PART.
func layerPart(name string) (int, string, bool) {
	f := strings.Split(name, ".")
	if len(f) != 4 || f[0] != "blk" || f[3] != "weight" {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[1])
	return n, f[2], err == nil
}

// TestSynth checks the initialisation rule, the metadata and determinism.
func TestSynth(t *testing.T) {
	sp, err := specs.LoadBuiltin("llama")
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(64), "layers": int64(2), "heads": int64(4),
		"kv_heads": int64(2), "ffn": int64(96), "vocab": int64(300), "ctx": int64(64)})
	if err != nil {
		t.Fatal(err)
	}
	synth := func(seed uint64, dt tensor.DType) []byte {
		var b bytes.Buffer
		if err := convert.Synth(&b, sp, params, convert.SynthOptions{DType: dt, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := synth(7, tensor.F32)
	if !bytes.Equal(a, synth(7, tensor.F32)) {
		t.Error("the same seed gave different files")
	}
	if bytes.Equal(a, synth(8, tensor.F32)) {
		t.Error("different seeds gave the same file")
	}
	f, err := gguf.Parse("synth.gguf", a)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"llama.embedding_length": uint32(64), "llama.block_count": uint32(2), "llama.attention.head_count": uint32(4),
		"llama.attention.head_count_kv": uint32(2), "llama.feed_forward_length": uint32(96), "llama.rope.freq_base": float32(10000),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5), "general.architecture": "llama", "llama.rope.dimension_count": uint32(16),
	} {
		if got := f.Meta[key]; got != want {
			t.Errorf("%s = %v (%T), want %v (%T)", key, got, got, want, want)
		}
	}
	if toks, _ := f.Meta.Strings("tokenizer.ggml.tokens"); len(toks) != 300 {
		t.Errorf("synthetic vocabulary has %d tokens, want 300", len(toks))
	}
	for _, ti := range f.Tensors {
		x, _ := f.Tensor(ti.Name)
		mean, std := convert.Stats(x.F32())
		switch {
		case len(ti.Shape) == 2:
			if math.Abs(mean) > 0.002 || math.Abs(std-0.02) > 0.002 {
				t.Errorf("%s: mean %.4f std %.4f, want N(0, 0.02²)", ti.Name, mean, std)
			}
		default:
			if mean != 1 || std != 0 {
				t.Errorf("%s (a norm) is not all ones: mean %v std %v", ti.Name, mean, std)
			}
		}
	}
	// A quantized synth keeps norms f32 and quantizes matrices.
	q, err := gguf.Parse("synth-q4.gguf", synth(7, tensor.Q4_0))
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range q.Tensors {
		want := tensor.Q4_0
		if len(ti.Shape) == 1 {
			want = tensor.F32
		}
		if ti.DType != want {
			t.Errorf("%s is %s, want %s", ti.Name, ti.DType, want)
		}
	}
}

// TestQuantize re-quantizes a synthesized f32 model and checks each 2-D
// tensor decodes close to the original while 1-D ones stay f32 and exact.
func TestQuantize(t *testing.T) {
	sp, _ := specs.LoadBuiltin("llama")
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(64), "layers": int64(1), "heads": int64(4),
		"ffn": int64(128), "vocab": int64(260)})
	if err != nil {
		t.Fatal(err)
	}
	var src bytes.Buffer
	if err := convert.Synth(&src, sp, params, convert.SynthOptions{DType: tensor.F32, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	in, err := gguf.Parse("in.gguf", src.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.F16} {
		var out bytes.Buffer
		if err := convert.Quantize(&out, in, dt, nil); err != nil {
			t.Fatal(err)
		}
		q, err := gguf.Parse("out.gguf", out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range in.Tensors {
			a, _ := in.Tensor(ti.Name)
			b, err := q.Tensor(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			bf, err := convert.ToF32(b)
			if err != nil {
				t.Fatal(err)
			}
			af := a.F32()
			var worst float64
			for i := range af {
				worst = math.Max(worst, math.Abs(float64(af[i]-bf[i])))
			}
			// Q4_0 steps are max|x|/8 per block; |x| ≲ 5σ = 0.1 here.
			tol := map[tensor.DType]float64{tensor.Q8_0: 0.1 / 127, tensor.Q4_0: 0.1 / 8, tensor.F16: 1e-4}[dt]
			if len(ti.Shape) == 1 {
				tol = 0
				if b.DType != tensor.F32 {
					t.Errorf("%s: 1-D tensor became %s", ti.Name, b.DType)
				}
			}
			if worst > tol {
				t.Errorf("%s as %s: max error %g > %g", ti.Name, dt, worst, tol)
			}
		}
	}
}
