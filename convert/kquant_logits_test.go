package convert_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// The prompt and forced tokens of TestKQuantLogitsMatchLlama's goldens
// (testdata/llama_logits.sh passes the same ids to llama_logits).
var (
	kqPrompt = []int{1, 100, 57, 200, 33, 7, 150, 250}
	kqForced = []int{12, 99, 180, 41, 5, 77, 230, 3}
)

// kqPresets are the mixes whose logits are checked: together they hold
// every K-quant (Q2_K's mix has Q2_K, Q3_K, Q4_K and Q6_K weights),
// IQ4_NL, Q5_0, Q4_1 and Q5_1.
var kqPresets = []string{"Q2_K", "Q3_K_S", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL", "Q5_0", "Q4_1", "Q5_1"}

// kqModel is the F16 model of the goldens: weft synth's Llama, TinyLlama's
// shape shrunk (hidden 256, 2 layers, 8 query heads and 1 KV head, FFN
// 512, vocab 260).
func kqModel(t *testing.T) []byte {
	t.Helper()
	sp, err := specs.LoadBuiltin("llama")
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(256), "layers": int64(2), "heads": int64(8),
		"kv_heads": int64(1), "ffn": int64(512), "vocab": int64(260), "ctx": int64(256)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := convert.Synth(&buf, sp, params, convert.SynthOptions{DType: tensor.F16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestKQuantLogitsMatchLlama quantizes a small F16 model with K-quant
// presets, feeds it a prompt and forced tokens, and compares every logits
// row with llama.cpp's CPU build (c392e50) on the file llama-quantize made
// from the same input: the rows must be equal to the last bit, as every
// K-quant matmul sums in ggml's x86 order (testdata/kq-PRESET.f32, made by
// testdata/llama_logits.sh). Under -tags noasm the Go references run; on a
// machine with AVX-512 VNNI the Q4_K and Q6_K kernels do. On amd64 the
// K-quants run once more on the AVX2 kernels (subtests PRESET/avx2).
func TestKQuantLogitsMatchLlama(t *testing.T) {
	data := kqModel(t)
	if *presetInputs != "" {
		if err := os.WriteFile(filepath.Join(*presetInputs, "kq-F16in.gguf"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := gguf.Parse("kq", data)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range kqPresets {
		t.Run(name, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("testdata", "kq-"+name+".f32"))
			if err != nil {
				t.Fatal(err)
			}
			want := tensor.BytesToF32(golden)
			path := kqQuantize(t, in, dir, name)
			kerns := []cpu.Kernels{cpu.Detect()}
			if k := cpu.Detect().Limit(cpu.AVX2); k.Level() == cpu.AVX2 && cpu.Detect().Level() > cpu.AVX2 {
				kerns = append(kerns, k)
			}
			for _, k := range kerns {
				t.Run(k.String(), func(t *testing.T) { kqCheckLogits(t, path, k, want) })
			}
		})
	}
}

// kqQuantize writes the model in with preset name into dir and returns
// the file's path.
func kqQuantize(t *testing.T, in *gguf.File, dir, name string) string {
	t.Helper()
	p, ok := convert.LookupPreset(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	path := filepath.Join(dir, name+".gguf")
	var out bytes.Buffer
	if err := convert.QuantizePreset(&out, in, p, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// kqRows feeds the model at path, on the kernel set k, the prompt and
// then the forced tokens, and returns its logits rows: the prompt's last
// position's, then each forced token's.
func kqRows(t *testing.T, path string, k cpu.Kernels, prompt, forced []int) [][]float32 {
	t.Helper()
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 64, Kernels: k})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var rows [][]float32
	force := append(append([]int(nil), forced...), 0)
	_, err = eng.Generate(context.Background(), scheduler.Request{Prompt: prompt, MaxTokens: len(force), Force: force, KeepLogits: true},
		func(ev scheduler.TokenEvent) { rows = append(rows, ev.Logits) })
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// kqCheckLogits runs the model at path on the kernel set k and compares
// its logits rows with want, bit for bit.
func kqCheckLogits(t *testing.T, path string, k cpu.Kernels, want []float32) {
	rows := kqRows(t, path, k, kqPrompt, kqForced)
	vocab := 0
	if len(rows) > 0 {
		vocab = len(rows[0])
	}
	if len(want) != vocab*len(rows) {
		t.Fatalf("golden has %d floats, want %d rows of %d", len(want), len(rows), vocab)
	}
	for r, row := range rows {
		w := want[r*vocab : (r+1)*vocab]
		diff, worst := 0, 0.0
		for i := range row {
			if math.Float32bits(row[i]) != math.Float32bits(w[i]) {
				diff++
				worst = max(worst, math.Abs(float64(row[i]-w[i])))
			}
		}
		if diff > 0 {
			t.Errorf("row %d: %d of %d logits differ from llama.cpp's (max |Δ| %g)", r, diff, vocab, worst)
		}
	}
}
