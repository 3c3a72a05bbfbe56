package convert_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

var presetInputs = flag.String("preset-inputs", "",
	"write the F16 inputs of TestPresetsMatchLlamaQuantize to this folder (see testdata/llama_quantize.sh)")

// presetModel builds one of the F16 models that testdata/llama_quantize.sh
// quantized with llama-quantize:
//
//   - "synth": weft synth's TinyLlama-shaped Llama (hidden 256, 8 layers,
//     8 query heads and 1 KV head, FFN 256, vocab 260), with an output
//     matrix;
//   - "tied": 16 layers without output.weight (the LM head is the token
//     embedding), 2 query heads and 1 KV head of 32 (GQA 2), FFN 32: the
//     attention output and FFN down rows (64 and 32 values) take llama.cpp's
//     fallback types.
func presetModel(t *testing.T, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch name {
	case "synth":
		sp, err := specs.LoadBuiltin("llama")
		if err != nil {
			t.Fatal(err)
		}
		params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(256), "layers": int64(8), "heads": int64(8),
			"kv_heads": int64(1), "ffn": int64(256), "vocab": int64(260), "ctx": int64(256)})
		if err != nil {
			t.Fatal(err)
		}
		if err := convert.Synth(&buf, sp, params, convert.SynthOptions{DType: tensor.F16, Seed: 7}); err != nil {
			t.Fatal(err)
		}
	case "tied":
		const hidden, layers, qdim, kvdim, ffn, vocab = 256, 16, 64, 32, 32, 260
		w := gguf.NewWriter(&buf)
		for _, m := range []struct {
			k string
			v any
		}{
			{"general.architecture", "llama"}, {"general.name", "tied"},
			{"llama.block_count", uint32(layers)}, {"llama.embedding_length", uint32(hidden)},
			{"llama.feed_forward_length", uint32(ffn)}, {"llama.context_length", uint32(128)},
			{"llama.attention.head_count", uint32(2)}, {"llama.attention.head_count_kv", uint32(1)},
			{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)}, {"general.file_type", uint32(1)},
		} {
			if err := w.AddKV(m.k, m.v); err != nil {
				t.Fatal(err)
			}
		}
		type tdef struct {
			name  string
			shape []int
		}
		defs := []tdef{{"token_embd.weight", []int{vocab, hidden}}, {"output_norm.weight", []int{hidden}}}
		for i := range layers {
			p := "blk." + itoa(i) + "."
			defs = append(defs, tdef{p + "attn_norm.weight", []int{hidden}}, tdef{p + "attn_q.weight", []int{qdim, hidden}},
				tdef{p + "attn_k.weight", []int{kvdim, hidden}}, tdef{p + "attn_v.weight", []int{kvdim, hidden}},
				tdef{p + "attn_output.weight", []int{hidden, qdim}}, tdef{p + "ffn_norm.weight", []int{hidden}},
				tdef{p + "ffn_gate.weight", []int{ffn, hidden}}, tdef{p + "ffn_up.weight", []int{ffn, hidden}},
				tdef{p + "ffn_down.weight", []int{hidden, ffn}})
		}
		for _, d := range defs {
			dt := tensor.F16
			if len(d.shape) == 1 {
				dt = tensor.F32
			}
			if err := w.AddTensor(d.name, dt, d.shape); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteHeader(); err != nil {
			t.Fatal(err)
		}
		for i, d := range defs {
			v := convert.RandomTensor(convert.Init("", d.name, d.shape), tensor.NumElems(d.shape), 11, i)
			data := tensor.F32ToBytes(v)
			if len(d.shape) > 1 {
				data = make([]byte, 2*len(v))
				if err := quant.Quantize(tensor.F16, data, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteTensorData(d.name, data); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no preset model %q", name)
	}
	return buf.Bytes()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestPresetsMatchLlamaQuantize quantizes two small F16 models with every
// preset and compares the SHA-256 of each file with the digest of
// llama-quantize's output from the same input (llama.cpp c392e50,
// testdata/llama_quantize.sha256, made by testdata/llama_quantize.sh):
// the files must be byte-identical, tensor types, quantized bytes,
// metadata and layout alike.
func TestPresetsMatchLlamaQuantize(t *testing.T) {
	inputs := map[string]*gguf.File{}
	for _, name := range []string{"synth", "tied"} {
		data := presetModel(t, name)
		if *presetInputs != "" {
			if err := os.WriteFile(filepath.Join(*presetInputs, name+"-F16in.gguf"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		in, err := gguf.Parse(name, data)
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = in
	}
	f, err := os.Open(filepath.Join("testdata", "llama_quantize.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[[2]string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// sha256sum's format: DIGEST  MODEL-PRESET.gguf
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("llama_quantize.sha256: bad line %q", line)
		}
		model, preset, ok := strings.Cut(strings.TrimSuffix(fields[1], ".gguf"), "-")
		if !ok {
			t.Fatalf("llama_quantize.sha256: bad file name %q", fields[1])
		}
		want[[2]string{model, preset}] = fields[0]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("llama_quantize.sha256 lists no digests")
	}
	for key, digest := range want {
		t.Run(key[0]+"-"+key[1], func(t *testing.T) {
			p, ok := convert.LookupPreset(key[1])
			if !ok {
				t.Fatalf("no preset %s", key[1])
			}
			var out bytes.Buffer
			if err := convert.QuantizePreset(&out, inputs[key[0]], p, false, nil); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(out.Bytes())
			if got := hex.EncodeToString(sum[:]); got != digest {
				t.Errorf("weft quantize %s: SHA-256 %s, llama-quantize's %s", key[1], got, digest)
			}
		})
	}
}

// TestPresetTensorTypes checks llama.cpp's per-tensor rules on the synth
// model by name, written out from llama-quant.cpp's rules (8 layers: more
// bits for layers 0, 3, 6 and 7; GQA 8).
func TestPresetTensorTypes(t *testing.T) {
	in, err := gguf.Parse("synth", presetModel(t, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		preset string
		want   map[string]tensor.DType
	}{
		{"Q4_K_M", map[string]tensor.DType{
			"output.weight": tensor.Q6_K, "token_embd.weight": tensor.Q4_K, "output_norm.weight": tensor.F32,
			"blk.0.attn_v.weight": tensor.Q6_K, "blk.1.attn_v.weight": tensor.Q4_K, "blk.3.attn_v.weight": tensor.Q6_K,
			"blk.0.ffn_down.weight": tensor.Q6_K, "blk.2.ffn_down.weight": tensor.Q4_K, "blk.7.ffn_down.weight": tensor.Q6_K,
			"blk.5.attn_q.weight": tensor.Q4_K, "blk.5.ffn_up.weight": tensor.Q4_K}},
		{"Q3_K_M", map[string]tensor.DType{
			"output.weight": tensor.Q6_K, "blk.0.attn_v.weight": tensor.Q5_K, "blk.1.attn_v.weight": tensor.Q5_K,
			"blk.2.attn_v.weight": tensor.Q4_K, "blk.4.ffn_down.weight": tensor.Q4_K, "blk.4.attn_output.weight": tensor.Q4_K,
			"blk.4.ffn_gate.weight": tensor.Q3_K}},
		{"Q2_K", map[string]tensor.DType{
			"blk.1.attn_v.weight": tensor.Q4_K, "blk.1.ffn_down.weight": tensor.Q3_K, "blk.1.attn_output.weight": tensor.Q3_K,
			"blk.1.ffn_up.weight": tensor.Q2_K}},
		{"IQ4_NL", map[string]tensor.DType{
			"output.weight": tensor.Q6_K, "blk.2.attn_v.weight": tensor.Q5_K, "blk.0.ffn_down.weight": tensor.Q5_K,
			"blk.1.ffn_down.weight": tensor.IQ4_NL}},
		{"Q4_0", map[string]tensor.DType{"output.weight": tensor.Q6_K, "blk.0.attn_v.weight": tensor.Q4_0}},
		{"Q8_0", map[string]tensor.DType{"output.weight": tensor.Q8_0}},
	}
	for _, c := range cases {
		p, ok := convert.LookupPreset(c.preset)
		if !ok {
			t.Fatalf("no preset %s", c.preset)
		}
		var out bytes.Buffer
		if err := convert.QuantizePreset(&out, in, p, false, nil); err != nil {
			t.Fatal(err)
		}
		q, err := gguf.Parse("out", out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for name, dt := range c.want {
			ti, ok := q.Lookup(name)
			if !ok {
				t.Errorf("%s: no tensor %s", c.preset, name)
				continue
			}
			if ti.DType != dt {
				t.Errorf("%s: %s is %s, want %s", c.preset, name, ti.DType, dt)
			}
		}
	}
}

// TestLookupPreset: llama.cpp's names in any case, aliases resolved.
func TestLookupPreset(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{{"q4_k_m", "Q4_K_M"}, {"Q4_K", "Q4_K_M"}, {"q3_k", "Q3_K_M"}, {"Q5_K", "Q5_K_M"}, {"iq4_nl", "IQ4_NL"}, {"Q8_0", "Q8_0"}} {
		p, ok := convert.LookupPreset(c.name)
		if !ok || p.Name != c.want {
			t.Errorf("LookupPreset(%q) = %q, %v; want %q", c.name, p.Name, ok, c.want)
		}
	}
	if _, ok := convert.LookupPreset("Q3H_B64T1"); ok {
		t.Error("Q3H_B64T1 is not a llama.cpp preset")
	}
}
