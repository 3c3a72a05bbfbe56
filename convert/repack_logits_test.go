package convert_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/tensor"
)

// The prompt of TestRepackPrefillLogits (24 tokens: a prefill long enough
// for the Q8_0 copies) and its forced tokens; testdata/llama_logits.sh
// passes the same ids for kq-F16-long.f32.
var (
	rpPrompt = []int{1, 100, 57, 200, 33, 7, 150, 250, 19, 88, 140, 61, 222, 5, 171, 93, 38, 245, 120, 66, 11, 199, 130, 77}
	rpForced = []int{12, 99, 180, 41, 5, 77, 230, 3}
)

// TestRepackPrefillLogits measures what --repack (cpu.Kernels.WithRepack:
// prefill on Q8_0 copies of K-quant and IQ4_NL weights) costs in
// accuracy. The reference is llama.cpp's logits for the unquantized F16
// model (testdata/kq-F16-long.f32). For each preset, the RMS distance of
// the repacked run's logits rows from the reference must stay within 10%
// of the exact run's (the re-quantization adds an error far smaller than
// the preset's own), and the two runs must differ (the copies are in
// use) by at most twice what 8-bit weights and activations cost: the
// Q8_0 preset's distance from the reference.
func TestRepackPrefillLogits(t *testing.T) {
	if cpu.Detect().Level() == cpu.Generic {
		t.Skip("the pure-Go kernels have no Q8_0 prefill copies")
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "kq-F16-long.f32"))
	if err != nil {
		t.Fatal(err)
	}
	ref := tensor.BytesToF32(golden)
	in, err := gguf.Parse("kq", kqModel(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The yardstick: how far 8-bit weights and activations (the Q8_0
	// preset) are from the F16 reference.
	q8 := rms(rpLogits(t, kqQuantize(t, in, dir, "Q8_0"), cpu.Detect()), ref)
	t.Logf("RMS from F16 of the Q8_0 preset: %.5f", q8)
	for _, name := range kqPresets {
		t.Run(name, func(t *testing.T) {
			path := kqQuantize(t, in, dir, name)
			exact := rpLogits(t, path, cpu.Detect())
			repack := rpLogits(t, path, cpu.Detect().WithRepack(true))
			if len(exact) != len(ref) || len(repack) != len(ref) {
				t.Fatalf("%d and %d logits, golden %d", len(exact), len(repack), len(ref))
			}
			ex, rp, diff := rms(exact, ref), rms(repack, ref), rms(repack, exact)
			t.Logf("RMS from F16: exact %.5f, repack %.5f; repack from exact %.5f", ex, rp, diff)
			if rp > 1.1*ex {
				t.Errorf("repacked prefill is %.5f from F16, exact %.5f: more than 10%% further", rp, ex)
			}
			if diff == 0 {
				t.Errorf("repacked and exact logits are identical: the copies were not used")
			}
			if diff > 2*q8 {
				t.Errorf("repacked logits are %.5f from exact ones, more than twice the Q8_0 preset's %.5f from F16", diff, q8)
			}
		})
	}
}

// rpLogits returns the logits rows of rpPrompt and rpForced on the model
// at path, on the kernel set k, one after the other.
func rpLogits(t *testing.T, path string, k cpu.Kernels) []float32 {
	t.Helper()
	var all []float32
	for _, row := range kqRows(t, path, k, rpPrompt, rpForced) {
		all = append(all, row...)
	}
	return all
}

// rms is the root mean square of a − b.
func rms(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i] - b[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(a)))
}
