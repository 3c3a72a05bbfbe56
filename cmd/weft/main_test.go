package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/specs"
)

func weft(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = realMain(args, &o, &e)
	return code, o.String(), e.String()
}

func TestRunJSONContract(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	c := testdata.Golden(t, shared, "stories260K")[1]
	logits := filepath.Join(t.TempDir(), "logits.f32")
	code, out, errOut := weft("run", "-m", m, "-p", c.Prompt, "-n", "64", "--temp", "0", "--json", "--logits-out", logits)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"prompt_tokens", "tokens", "text", "prefill_tok_s", "decode_tok_s"} {
		if _, ok := res[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	ints := func(v any) []int {
		var out []int
		for _, x := range v.([]any) {
			out = append(out, int(x.(float64)))
		}
		return out
	}
	if got := ints(res["prompt_tokens"]); !slices.Equal(got, c.PromptTokens) {
		t.Errorf("prompt_tokens %v, want %v", got, c.PromptTokens)
	}
	if got := ints(res["tokens"]); !slices.Equal(got, c.Tokens()) {
		t.Errorf("tokens %v, want %v", got, c.Tokens())
	}
	if res["text"] != c.Text {
		t.Errorf("text %q, want %q", res["text"], c.Text)
	}
	data, err := os.ReadFile(logits)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 64*512*4 {
		t.Fatalf("--logits-out wrote %d bytes, want 64 rows of 512 floats", len(data))
	}
	want := testdata.Logits(t, shared, "stories260K", 1, 512)
	for r := range want {
		for j := range want[r] {
			got := math.Float32frombits(binary.LittleEndian.Uint32(data[(r*512+j)*4:]))
			if math.Abs(float64(got-want[r][j])) > 1e-3 {
				t.Fatalf("row %d logit %d: %v, golden %v", r, j, got, want[r][j])
			}
		}
	}
}

func TestForceTokens(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	force := []string{"400", "401", "402"}
	code, out, errOut := weft("run", "-m", m, "-p", "Hi", "--temp", "0", "--json", "--force-tokens", strings.Join(force, ","))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct{ Tokens []int }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, f := range force {
		n, _ := strconv.Atoi(f)
		want = append(want, n)
	}
	if !slices.Equal(res.Tokens, want) {
		t.Errorf("forced tokens %v, want %v", res.Tokens, want)
	}
}

// TestErrors: bad input exits non-zero with a message naming the place.
func TestErrors(t *testing.T) {
	shared := testdata.Shared(t)
	dir := t.TempDir()
	gg := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	data, err := os.ReadFile(gg)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.gguf")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	badSpec := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badSpec, []byte("name: x\ngraph:\n  - y: linear(x, w)\ncolour: blue\n"), 0o644)
	cycle := filepath.Join(dir, "cycle.yaml")
	os.WriteFile(cycle, []byte("name: x\nparams:\n  a: b + 1\n  b: a * 2\ngraph:\n  - y: relu(tokens)\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing model", []string{"run", "-m", filepath.Join(dir, "nope.gguf"), "-p", "x"}, 1, []string{"nope.gguf"}},
		{"truncated gguf", []string{"run", "-m", trunc, "-p", "x"}, 1, []string{"trunc.gguf", "past the end"}},
		{"unknown spec key", []string{"graph", "-s", badSpec}, 1, []string{"bad.yaml:4:1", `unknown key "colour"`}},
		{"param cycle", []string{"graph", "-s", cycle}, 1, []string{"cycle.yaml:", "cycle"}},
		{"unknown --set", []string{"run", "-m", gg, "-p", "x", "--set", "hiddn=3"}, 1, []string{"hiddn"}},
		{"bad temperature", []string{"run", "-m", gg, "-p", "x", "--temp", "-1"}, 2, []string{"--temp -1"}},
		{"no model", []string{"run", "-p", "x"}, 2, []string{"-m MODEL"}},
		{"unknown command", []string{"frobnicate"}, 2, []string{"frobnicate"}},
		{"bad graph format", []string{"graph", "-s", "llama", "--format", "png"}, 2, []string{"png"}},
		{"shape mismatch", []string{"run", "-m", gg, "-p", "x", "--set", "ffn=100"}, 1, []string{"llama.yaml:", "ffn_gate.weight", "[172 64]", "[100 64]"}},
		{"unknown device", []string{"run", "-m", gg, "-p", "x", "--devices", "tpu:0"}, 2, []string{"--devices", `unknown device "tpu:0"`}},
		{"device twice", []string{"bench", "-m", gg, "--devices", "cpu:0;cpu:1&cpu:0"}, 2, []string{"--devices", "cpu:0 is listed twice"}},
		{"more groups than layers", []string{"run", "-m", gg, "-p", "x", "--devices", "cpu:0;cpu:1;cpu:2;cpu:3;cpu:4;cpu:5"}, 1, []string{"--devices", "6 layer groups for a model of 5 layers"}},
		{"heads not divisible", []string{"run", "-m", gg, "-p", "x", "--devices", "cpu:0&cpu:1&cpu:2"}, 1, []string{"--devices", "8 heads and 4 KV heads", "3-way tensor split"}},
		{"layer counts", []string{"graph", "-m", gg, "--devices", "cpu:0=4;cpu:1=4"}, 1, []string{"--devices", "add up to 8", "5 layers"}},
		{"quantize over its input", []string{"quantize", copyOf(t, gg), "SAME", "q4_0"}, 2, []string{"does not overwrite its input"}},
		{"re-quantize", []string{"quantize", filepath.Join(shared, "models", "mini-llama", "mini-llama-Q4_0.gguf"), filepath.Join(dir, "r.gguf"), "q8_0"}, 2, []string{"already q6_k", "--allow-requantize"}},
		{"unknown quant type", []string{"quantize", gg, filepath.Join(dir, "x.gguf"), "Q4_K_X"}, 2, []string{`"Q4_K_X" is not a type`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, a := range tc.args {
				if a == "SAME" {
					tc.args[i] = tc.args[i-1] // the output path names the input
				}
			}
			code, _, errOut := weft(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr: %s)", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestGraphExports exports every built-in spec in every format.
func TestGraphExports(t *testing.T) {
	for _, name := range specs.Builtin() {
		for _, format := range []string{"dot", "mermaid", "json", "html"} {
			code, out, errOut := weft("graph", "-s", name, "--format", format)
			if code != 0 {
				t.Errorf("%s %s: exit %d: %s", name, format, code, errOut)
				continue
			}
			var ok bool
			switch format {
			case "dot":
				ok = strings.HasPrefix(out, "digraph") && strings.HasSuffix(strings.TrimSpace(out), "}")
			case "mermaid":
				ok = strings.HasPrefix(out, "flowchart TD")
			case "json":
				var j struct {
					Format string
					Nodes  []any
				}
				ok = json.Unmarshal([]byte(out), &j) == nil && j.Format == "weft-graph/1" && len(j.Nodes) > 0
			case "html":
				ok = strings.Contains(out, "<html") && strings.Contains(out, `"format":"weft-graph/1"`)
			}
			if !ok {
				t.Errorf("%s %s: malformed output:\n%.300s", name, format, out)
			}
		}
	}
}

// TestGraphDevices: weft graph --devices shows each node's device, and
// the copies and all-reduces as nodes, in every format.
func TestGraphDevices(t *testing.T) {
	for _, format := range []string{"json", "dot", "html", "mermaid"} {
		code, out, errOut := weft("graph", "-s", "llama", "--set", "layers=4", "--devices", "cpu:0&cpu:1;cpu:2&cpu:3", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, want := range []string{"all_reduce", "copy", "cpu:0&cpu:1", "cpu:3"} {
			if !strings.Contains(strings.ReplaceAll(out, `\u0026`, "&"), want) {
				t.Errorf("%s: output lacks %q", format, want)
			}
		}
		if format != "json" {
			continue
		}
		var j struct {
			Nodes []struct{ Op, Device string }
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, n := range j.Nodes {
			if n.Device == "" {
				t.Errorf("node %s has no device", n.Op)
			}
			count[n.Op]++
		}
		if count["all_reduce"] != 8 || count["copy"] != 2 {
			t.Errorf("%d all_reduce and %d copy nodes, want 8 and 2", count["all_reduce"], count["copy"])
		}
	}
}

// TestBenchDevices: weft bench --devices --json reports each device's
// weight bytes, which add up to more than the model's (replicated norms
// and embedding) while each split device holds less than the whole.
func TestBenchDevices(t *testing.T) {
	m := filepath.Join(testdata.Shared(t), "models", "mini-llama", "mini-llama-Q4_0.gguf")
	code, out, errOut := weft("bench", "-m", m, "-p", "8", "-n", "4", "-r", "1", "-t", "2", "--devices", "cpu:0&cpu:1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res benchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Devices) != 2 || res.PPTokS <= 0 || res.TGTokS <= 0 {
		t.Fatalf("bench result %+v", res)
	}
	var sum int64
	for _, d := range res.Devices {
		if d.WeightBytes <= 0 || d.WeightBytes >= res.ModelBytes || d.Threads != 1 {
			t.Errorf("device %+v of a %d-byte model", d, res.ModelBytes)
		}
		sum += d.WeightBytes
	}
	if sum <= res.ModelBytes {
		t.Errorf("devices hold %d bytes together, the model %d", sum, res.ModelBytes)
	}
}

// TestBadSpecsNoPanic: specs that once crashed weft now fail with a
// located error (realMain runs in-process, so a panic fails the test).
func TestBadSpecsNoPanic(t *testing.T) {
	shared := testdata.Shared(t)
	gg := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	dir := t.TempDir()
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"recursive block", `name: t
weights:
  emb: {shape: [512, 64], gguf: token_embd.weight}
blocks:
  r:
    in: [x]
    out: [x]
    body:
      - x: r(x)
graph:
  - x: embedding(emb, tokens)
  - logits: r(x)
`, "calls itself"},
		{"repeat bomb", `name: t
weights:
  w: {shape: [512, 64], gguf: token_embd.weight}
graph:
  - x: embedding(w, tokens)
  - repeat: 65536
    body:
      - repeat: 65536
        as: j
        body:
          - x: relu(x)
  - logits: relu(x)
`, "nodes"},
		{"gather of gathered rows", `name: t
weights:
  w: {shape: [512, 64], gguf: token_embd.weight}
graph:
  - x: embedding(w, tokens)
  - y: gather_rows(gather_rows(x))
  - logits: linear(y, w)
`, "one row per token"},
		{"rope with a weight as positions", `name: t
weights:
  w: {shape: [512, 64], gguf: token_embd.weight}
  n: {shape: [64], gguf: output_norm.weight}
graph:
  - x: embedding(w, tokens)
  - y: rope(x, n, heads=8)
  - logits: linear(y, w)
`, "pos must be"},
		{"split sizes overflow", `name: t
weights:
  w: {shape: [512, 64], gguf: token_embd.weight}
graph:
  - x: embedding(w, tokens)
  - "a, b, c, d": split(x, sizes=[9223372036854775807, 9223372036854775807, 2, 64])
  - logits: linear(d, w)
`, "sizes[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			if err := os.WriteFile(p, []byte(tc.spec), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := weft("run", "-m", gg, "-s", p, "-p", "hi", "-n", "2")
			if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, ".yaml:") {
				t.Errorf("exit %d, stderr %q; want exit 1 naming the spec line and %q", code, errOut, tc.want)
			}
		})
	}
	for _, b := range []string{"0", "-3", "100000000000"} {
		if code, _, errOut := weft("run", "-m", gg, "-p", "hi", "--batch", b); code != 2 {
			t.Errorf("--batch %s: exit %d (%s), want a usage error", b, code, errOut)
		}
	}
}

// copyOf copies a file into the test's temporary directory.
func copyOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestQuantizeHelpListsTypes: weft quantize --help lists every type it
// writes with its bits per weight.
func TestQuantizeHelpListsTypes(t *testing.T) {
	_, stdout, stderr := weft("quantize", "--help")
	out := stdout + stderr
	for _, want := range []string{"Q4_0        4.500", "Q8_0        8.500", "Q6_K        6.562", "Q3H_B64T1   4.000", "IQ4_NL      4.500", "--allow-requantize"} {
		if !strings.Contains(out, want) {
			t.Errorf("quantize --help lacks %q:\n%s", want, out)
		}
	}
}
