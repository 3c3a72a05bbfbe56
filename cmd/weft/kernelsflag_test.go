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
			args := []string{"-m", tc.model, "-f", text, "-c", tc.ctx}
			if level != "" {
				args = append(args, "--kernels", level)
			}
			ppl[level] = perplexityOf(t, args...)
		}
		if ppl[""] != ppl["avx2"] {
			t.Errorf("%s: perplexity %.6f with the best kernels, %.6f with --kernels avx2", filepath.Base(tc.model), ppl[""], ppl["avx2"])
		}
		if tc.want != 0 && math.Round(ppl["avx2"]*1e4) != math.Round(tc.want*1e4) {
			t.Errorf("%s: perplexity %.4f at avx2, llama-perplexity %.4f", filepath.Base(tc.model), ppl["avx2"], tc.want)
		}
	}
}

// perplexityOf runs `weft perplexity -t 2 --json` with args and returns
// the perplexity it prints.
func perplexityOf(t *testing.T, args ...string) float64 {
	t.Helper()
	args = append([]string{"perplexity", "-t", "2", "--json"}, args...)
	code, out, errOut := weft(args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var res pplResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	return res.Perplexity
}

// otherArchLevel names a level of the other architecture.
func otherArchLevel() string {
	if runtime.GOARCH == "arm64" {
		return "avx2"
	}
	return "neon"
}

// TestRepackFlag runs perplexity on a Q4_K_M mini-llama with and without
// --repack (prefill on Q8_0 copies of its K-quant weights): the copies
// must be in use (another perplexity, and the kernel set named
// "+repack" by bench) and cost little (within 1% of the exact run's,
// on a random-weight model whose perplexity is in the tens of
// thousands). serve and chat take the flags too.
func TestRepackFlag(t *testing.T) {
	shared := testdata.Shared(t)
	for _, cmd := range []string{"serve", "chat"} {
		code, _, errOut := weft(cmd, "-m", "x.gguf", "--kernels", "sse9")
		if code != 2 || !strings.Contains(errOut, "unknown kernel level") {
			t.Errorf("%s --kernels sse9: exit %d, stderr %q; want exit 2 and an unknown level", cmd, code, errOut)
		}
	}
	if cpu.Detect().Level() == cpu.Generic {
		t.Skip("the pure-Go kernels have no Q8_0 prefill copies")
	}
	q4km := filepath.Join(t.TempDir(), "q4_k_m.gguf")
	if code, _, errOut := weft("quantize", filepath.Join(shared, "models", "mini-llama", "mini-llama-f16.gguf"), q4km, "Q4_K_M"); code != 0 {
		t.Fatalf("quantize: %s", errOut)
	}
	text := filepath.Join("..", "..", "testdata", "english.txt")
	ppl := map[bool]float64{}
	for _, repack := range []bool{false, true} {
		args := []string{"-m", q4km, "-f", text, "-c", "128"}
		if repack {
			args = append(args, "--repack")
		}
		ppl[repack] = perplexityOf(t, args...)
	}
	t.Logf("perplexity %.4f exact, %.4f with --repack", ppl[false], ppl[true])
	if ppl[false] == ppl[true] || math.Abs(ppl[true]/ppl[false]-1) > 0.01 {
		t.Errorf("perplexity %.4f exact, %.4f with --repack: want different, within 1%%", ppl[false], ppl[true])
	}
	code, out, errOut := weft("bench", "-m", q4km, "-p", "8", "-n", "1", "-r", "1", "-t", "2", "--repack", "--json")
	if code != 0 {
		t.Fatalf("bench --repack: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"kernels":"`+cpu.Detect().String()+`+repack"`) {
		t.Errorf("bench --repack --json does not name the kernels %s+repack: %s", cpu.Detect(), out)
	}
}
