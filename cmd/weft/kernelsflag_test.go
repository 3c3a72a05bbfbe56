package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/kernels/cpu"
)

// TestKernelsFlag runs perplexity with the machine's best kernels and with
// --kernels avx2: the AVX2 and AVX-512 VNNI kernels of Q4_0 (ggml's order)
// and of Inferflow's Q3H_B64T1 and Q4_B32T1 (kernels/quant's order) give
// the same bits, so the perplexities must be equal, and Q4_0's must be
// llama-perplexity's to the digits it prints.
func TestKernelsFlag(t *testing.T) {
	shared := testdata.Shared(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kernels", "sse9"}, "unknown kernel level"},
		{[]string{"--kernels", "generic"}, "-tags noasm"},
		{[]string{"--kernels", otherArchLevel()}, "this CPU runs at most"},
	} {
		args := append([]string{"bench", "--membw"}, tc.args...)
		code, _, errOut := weft(args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", args, code, errOut, tc.want)
		}
	}
	if runtime.GOARCH != "amd64" || cpu.Detect().Level() < cpu.AVX512VNNI {
		t.Skipf("needs amd64 with AVX-512 VNNI to compare two levels (have %s)", cpu.Detect())
	}
	text := filepath.Join("..", "..", "testdata", "english.txt")
	mini := filepath.Join(shared, "models", "mini-llama")
	// Every matrix of the mini-llama is a whole number of 64-value blocks,
	// so its Inferflow files take the Inferflow kernels everywhere (a
	// matrix left in F32 would sum in its level's own float order).
	var inferflow []string
	for _, typ := range []string{"q3h_b64t1", "q4_b32t1"} {
		out := filepath.Join(t.TempDir(), typ+".gguf")
		if code, _, errOut := weft("quantize", filepath.Join(mini, "mini-llama-f16.gguf"), out, typ); code != 0 {
			t.Fatalf("quantize %s: %s", typ, errOut)
		}
		inferflow = append(inferflow, out)
	}
	for _, tc := range []struct {
		model, ctx string
		want       float64 // llama-perplexity's, where it can read the file
	}{
		{filepath.Join(mini, "mini-llama-Q4_0.gguf"), "256", 32419.8102},
		{inferflow[0], "256", 0},
		{inferflow[1], "256", 0},
	} {
		ppl := map[string]float64{}
		for _, level := range []string{"", "avx2"} {
			args := []string{"perplexity", "-m", tc.model, "-f", text, "-c", tc.ctx, "-t", "2", "--json"}
			if level != "" {
				args = append(args, "--kernels", level)
			}
			code, out, errOut := weft(args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			var res pplResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			ppl[level] = res.Perplexity
		}
		if ppl[""] != ppl["avx2"] {
			t.Errorf("%s: perplexity %.6f with the best kernels, %.6f with --kernels avx2", filepath.Base(tc.model), ppl[""], ppl["avx2"])
		}
		if tc.want != 0 && math.Round(ppl["avx2"]*1e4) != math.Round(tc.want*1e4) {
			t.Errorf("%s: perplexity %.4f at avx2, llama-perplexity %.4f", filepath.Base(tc.model), ppl["avx2"], tc.want)
		}
	}
}

// otherArchLevel names a level of the other architecture.
func otherArchLevel() string {
	if runtime.GOARCH == "arm64" {
		return "avx2"
	}
	return "neon"
}
