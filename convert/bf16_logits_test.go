package convert_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
	xcpu "golang.org/x/sys/cpu"
)

// bf16Vocab is the vocabulary of bf16Model: not a multiple of 4 (ggml's
// fallback from tinyBLAS, were the LM head run on a batch).
const bf16Vocab = 262

// bf16Model is the BF16 model of TestBF16LogitsMatchLlama: weft synth's
// Llama like kqModel's but with an FFN of 520, so that the down
// projection's reduction (not a multiple of 32 or 64) takes
// ggml_vec_dot_bf16 and its tail for prompts as well, and a vocabulary of
// bf16Vocab.
func bf16Model(t *testing.T) []byte {
	t.Helper()
	sp, err := specs.LoadBuiltin("llama")
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(256), "layers": int64(2), "heads": int64(8),
		"kv_heads": int64(1), "ffn": int64(520), "vocab": int64(bf16Vocab), "ctx": int64(256)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := convert.Synth(&buf, sp, params, convert.SynthOptions{DType: tensor.BF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBF16LogitsMatchLlama feeds a small BF16 model the prompt and forced
// tokens of TestKQuantLogitsMatchLlama and compares every logits row with
// llama.cpp's CPU build (c392e50) on a machine with AVX512_BF16 and no AMX
// (testdata/bf16.f32, made by testdata/llama_logits.sh): there both
// multiply BF16 weights by bfloat16 activations with VDPBF16PS in the same
// orders, so the rows must be equal to the last bit. Elsewhere weft (and
// ggml) take other paths and the test is skipped.
//
// The prompt's row depends on output pruning: llama.cpp runs the last
// layer's FFN on the last token alone (ggml_get_rows before it), in
// ggml_vec_dot_bf16's order, and so does weft (graph.PruneOutputs gathers
// before that FFN); with the FFN run on all 8 prompt tokens (tinyBLAS's
// order) the row differs in the last bits.
func TestBF16LogitsMatchLlama(t *testing.T) {
	data := bf16Model(t)
	if *presetInputs != "" {
		if err := os.WriteFile(filepath.Join(*presetInputs, "bf16.gguf"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k := cpu.Detect()
	if !xcpu.X86.HasAVX512BF16 || k.Level() < cpu.AVX512 || k.Level() >= cpu.AMX {
		t.Skip("needs AVX512_BF16 without AMX, where weft and ggml multiply BF16 weights with VDPBF16PS")
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "bf16.f32"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bf16.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	kqCheckLogits(t, path, k, tensor.BytesToF32(golden))
}
