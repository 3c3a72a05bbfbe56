package specs_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// badBase is a valid spec head; cases append graph statements (from line 6).
const badBase = `name: t
params: {hidden: 8, heads: 2, layers: 2}
weights:
  emb: {shape: [16, hidden], gguf: token_embd.weight}
graph:
`

// reshaped serves src but gives one tensor another shape.
type reshaped struct {
	specs.TensorSource
	name  string
	shape []int
}

func (r reshaped) Tensor(name string) (*tensor.Tensor, error) {
	if name != r.name {
		return r.TensorSource.Tensor(name)
	}
	return tensor.NewF32(name, r.shape...), nil
}

// lineOf returns the 1-based line of the first line of a built-in spec
// that starts with prefix.
func lineOf(t *testing.T, file, prefix string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line starts with %q", file, prefix)
	return 0
}

// colOf returns the 1-based column of substr in line of file.
func colOf(t *testing.T, file string, line int, substr string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(strings.Split(string(data), "\n")[line-1], substr)
	if i < 0 {
		t.Fatalf("%s:%d has no %q", file, line, substr)
	}
	return i + 1
}

type errCase struct {
	name   string
	src    string         // spec text; "" loads builtin
	file   string         // name of the spec (bad.yaml, or builtin's name)
	set    map[string]any // --set
	meta   *specs.Meta
	format string
	// source, when set, binds the build to a checkpoint.
	source func(t *testing.T, sp *specs.Spec, p specs.Params) specs.TensorSource
	pos    string // exact leading "file:line:col: " or "file:line: "
	msg    string // a substring of the rest
}

func TestErrors(t *testing.T) {
	llamaSet := map[string]any{"hidden": int64(64), "heads": int64(4), "layers": int64(4), "ffn": int64(96), "vocab": int64(32)}
	llamaSource := func(t *testing.T, sp *specs.Spec, p specs.Params) specs.TensorSource {
		return randSource(t, sp, p, "gguf")
	}
	wq, wk := lineOf(t, "llama.yaml", "  wq:"), lineOf(t, "llama.yaml", "  wk:")
	wv := lineOf(t, "gpt2.yaml", "  wv:")
	cases := []errCase{
		// Structure of the YAML.
		{name: "yaml syntax", src: "name: t\ngraph:\n  - x: [a\n", pos: "bad.yaml: ", msg: "yaml: line 2: did not find expected ',' or ']'"},
		{name: "unknown top-level key", src: "nme: x\n" + badBase + "  - x: embedding(emb, tokens)\n", pos: "bad.yaml:1:1: ", msg: `spec: unknown key "nme"`},
		{name: "missing graph", src: "name: t\n", pos: "bad.yaml:1:1: ", msg: `spec: missing key "graph"`},
		{name: "list for mapping", src: "name: t\nparams: [hidden, heads]\ngraph: []\n", pos: "bad.yaml:2:9: ", msg: "params: want a mapping, got a list"},
		{name: "duplicate key", src: "name: t\nparams:\n  a: 1\n  a: 2\ngraph: []\n", pos: "bad.yaml:4:3: ", msg: `params: duplicate key "a"`},
		{name: "param optional not a bool", src: "name: t\nparams:\n  a: {value: 1, optional: maybe}\ngraph: []\n", pos: "bad.yaml:3:27: ", msg: "params.a.optional: want true or false"},
		{name: "param empty key list", src: "name: t\nparams:\n  a: {value: 1, hf: []}\ngraph: []\n", pos: "bad.yaml:3:21: ", msg: "params.a.hf: an empty list"},
		{name: "unknown key in weight", src: "name: t\nweights:\n  w: {shape: [1], gguf: w, shap: [2]}\ngraph: []\n", pos: "bad.yaml:3:28: ", msg: `weights.w: unknown key "shap" (allowed: [shape optional gguf hf llama2c])`},
		{name: "weight without shape", src: "name: t\nweights:\n  w: {gguf: w}\ngraph: []\n", pos: "bad.yaml:3:3: ", msg: "weights.w: missing shape"},
		{name: "unknown transform", src: "name: t\nweights:\n  w: {shape: [1], gguf: {name: w, transform: flip()}}\ngraph: []\n", pos: "bad.yaml:3:46: ", msg: `weights.w.gguf: unknown transform "flip" (known: transpose(), rope_permute(heads), rows(start, count), add_one(), flatten(), qkv_groups(groups, heads))`},
		{name: "transform arity", src: "name: t\nweights:\n  w: {shape: [1], gguf: {name: w, transform: \"rows(1)\"}}\ngraph: []\n", pos: "bad.yaml:3:46: ", msg: "weights.w.gguf: transform rows takes 2 arguments, got 1"},
		{name: "unclosed template", src: "name: t\nweights:\n  w: {shape: [1], gguf: \"blk.{i.w\"}\ngraph: []\n", pos: "bad.yaml:3:25: ", msg: `unclosed '{' in "blk.{i.w"`},
		{name: "statement with two assignments", src: badBase + "  - x: embedding(emb, tokens)\n    y: embedding(emb, tokens)\n", pos: "bad.yaml:7:5: ", msg: `one assignment per statement (found "x" and "y")`},
		{name: "repeat without body", src: badBase + "  - repeat: layers\n", pos: "bad.yaml:6:5: ", msg: "repeat needs a body"},
		{name: "block named like an op", src: "name: t\nblocks:\n  add:\n    in: [x]\n    out: [x]\n    body: [{x: relu(x)}]\ngraph:\n  - x: embedding(e, tokens)\n", pos: "bad.yaml:3:3: ", msg: `block "add" has the name of an op`},

		// Call syntax and CEL.
		{name: "missing paren", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: add(x, x\n", pos: "bad.yaml:7:21: ", msg: `logits: missing ')' in "add(x, x"`},
		{name: "positional after attribute", src: badBase + "  - x: rms_norm(emb, eps=1e-5, emb)\n", pos: "bad.yaml:6:32: ", msg: "positional argument after attributes"},
		{name: "bad CEL in param", src: "name: t\nparams:\n  a: 2\n  b: \"a +* 2\"\ngraph: []\n", pos: "bad.yaml:4:6: ", msg: "params.b: bad expression \"a +* 2\":\n    ERROR: <input>:1:4: Syntax error: extraneous input '*'"},
		{name: "CEL caret", src: "name: t\nparams:\n  a: 2\n  b: \"a +* 2\"\ngraph: []\n", pos: "bad.yaml:4:6: ", msg: "| a +* 2\n     | ...^"},
		{name: "undeclared name in param", src: "name: t\nparams:\n  b: hiden * 2\ngraph: []\n", pos: "bad.yaml:3:6: ", msg: "undeclared reference to 'hiden'"},
		{name: "bad CEL in attribute", src: badBase + "  - x: rms_norm(embedding(emb, tokens), eps=hidden +* 2)\n", pos: "bad.yaml:6:45: ", msg: "attribute eps: bad expression \"hidden +* 2\""},

		// Params.
		{name: "param cycle", src: "name: t\nparams:\n  a: b\n  b: c\n  c: a + 1\ngraph: []\n", pos: "bad.yaml:3:3: ", msg: "params: cycle a -> b -> c -> a"},
		{name: "param self cycle", src: "name: t\nparams:\n  n: n * 2\ngraph: []\n", pos: "bad.yaml:3:3: ", msg: "params: cycle n -> n"},
		{name: "param division by zero", src: "name: t\nparams:\n  heads: 0\n  hd: 8 / heads\ngraph: []\n", pos: "bad.yaml:4:7: ", msg: "params.hd = 8 / heads: division by zero"},
		{name: "set unknown param", src: badBase + "  - x: embedding(emb, tokens)\n", set: map[string]any{"hiden": int64(4)}, pos: "bad.yaml: ", msg: "--set hiden: no such param or structure choice"},
		{name: "unsupported metadata value", src: "name: t\nparams:\n  hidden: {value: 8, gguf: .embedding_length}\ngraph: []\n",
			meta: &specs.Meta{Format: "gguf", Arch: "x", Values: map[string]any{"x.embedding_length": map[string]any{}}},
			pos:  "bad.yaml:3:3: ", msg: "params.hidden: checkpoint key x.embedding_length: unsupported value map[string]interface {}"},

		// Graph building.
		{name: "unknown op", src: badBase + "  - x: foo(emb, tokens)\n", pos: "bad.yaml:6:8: ", msg: `unknown op "foo"`},
		{name: "unknown nested op", src: badBase + "  - x: add(embedding(emb, tokens), bar(tokens))\n", pos: "bad.yaml:6:36: ", msg: `unknown op "bar"`},
		{name: "unknown structure choice", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: \"add(x, $nope(x))\"\n", pos: "bad.yaml:7:21: ", msg: `$nope: no structure choice "nope"`},
		{name: "value never assigned", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: add(x, z)\n", pos: "bad.yaml:7:20: ", msg: `unknown value or weight "z"`},
		{name: "too many inputs", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: add(x, x, x)\n", pos: "bad.yaml:7:13: ", msg: "add takes at most 2 inputs, got 3"},
		{name: "missing input", src: badBase + "  - x: embedding(emb)\n", pos: "bad.yaml:6:8: ", msg: "embedding: missing input ids"},
		{name: "unknown step input", src: "name: t\ninputs: [tokens, memory]\n" + badBase[len("name: t\n"):] + "  - logits: embedding(emb, tokens)\n", pos: "bad.yaml:2:18: ", msg: `inputs: unknown step input "memory" (known: pos, seq, token_types, tokens)`},
		{name: "zero eps", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: rms_norm(x, eps=0)\n", pos: "bad.yaml:7:13: ", msg: "logits: rms_norm: eps=0 must be a positive number"},
		{name: "negative eps", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: layer_norm(x, eps=-1e-6)\n", pos: "bad.yaml:7:13: ", msg: "logits: layer_norm: eps=-1e-06 must be a positive number"},
		{name: "CEL comment", src: "name: t\nparams:\n  hidden: 8\n  heads: 2\n  hd: hidden // heads\ngraph: []\n", pos: "bad.yaml:5:7: ", msg: `params.hd: "hidden // heads": "//" starts a CEL comment`},
		{name: "unknown attribute", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: rms_norm(x, epss=1e-5)\n", pos: "bad.yaml:7:25: ", msg: `rms_norm: unknown attribute "epss" (known: eps, groups)`},
		{name: "attribute of wrong type", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: attention(x, x, x, heads=\"four\")\n", pos: "bad.yaml:7:32: ", msg: "attention: attribute heads: want int, got string (four)"},
		{name: "bool attribute given an int", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: attention(x, x, x, heads=2, causal=1)\n", pos: "bad.yaml:7:41: ", msg: "attention: attribute causal: want bool, got int64 (1)"},
		{name: "enum attribute", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: rope(x, pos, heads=2, pairing=sideways)\n", pos: "bad.yaml:7:35: ", msg: `rope: attribute pairing = sideways: unknown name "sideways"`},
		{name: "missing required attribute", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: attention(x, x, x)\n", pos: "bad.yaml:7:13: ", msg: "attention: missing attribute heads"},
		{name: "shape error", src: badBase + "  - x: embedding(emb, tokens)\n  - logits: attention(x, x, x, heads=3)\n", pos: "bad.yaml:7:13: ", msg: "logits: attention: heads=3 does not divide q's 8 features"},
		{name: "shape error in a layer", src: badBase + "  - x: embedding(emb, tokens)\n  - repeat: layers\n    body:\n      - x: attention(x, x, x, heads=3)\n  - logits: add(x, x)\n", pos: "bad.yaml:9:12: ", msg: "x: attention (layer 0): heads=3 does not divide q's 8 features"},
		{name: "repeat with a non-integer", src: badBase + "  - x: embedding(emb, tokens)\n  - repeat: 2.5\n    body:\n      - x: add(x, x)\n  - logits: add(x, x)\n", pos: "bad.yaml:7:13: ", msg: "repeat 2.5: gives 2.5, want an integer"},
		{name: "repeat with a string", src: badBase + "  - x: embedding(emb, tokens)\n  - repeat: \"'two'\"\n    body:\n      - x: add(x, x)\n  - logits: add(x, x)\n", pos: "bad.yaml:7:13: ", msg: "repeat 'two': gives two, want an integer"},
		{name: "negative repeat", src: badBase + "  - x: embedding(emb, tokens)\n  - repeat: -1\n    body:\n      - x: add(x, x)\n  - logits: add(x, x)\n", pos: "bad.yaml:7:13: ", msg: "repeat -1: count -1 out of range"},
		{name: "when not a bool", src: badBase + "  - x: embedding(emb, tokens)\n  - when: hidden\n    body:\n      - logits: add(x, x)\n", pos: "bad.yaml:7:11: ", msg: "when hidden: gives 8, want true or false"},
		{name: "too many names", src: badBase + "  - x: embedding(emb, tokens)\n  - \"logits, c, d\": split(x, sizes=[4, 4])\n", pos: "bad.yaml:7:5: ", msg: "split gives 2 outputs, 3 names assigned"},
		{name: "output never assigned", src: badBase + "  - x: embedding(emb, tokens)\n", pos: "bad.yaml:5:1: ", msg: `output "logits" is never assigned (the default output; name others with outputs:)`},
		{name: "declared output never assigned", src: "name: t\noutputs: [h]\n" + badBase[len("name: t\n"):] + "  - x: embedding(emb, tokens)\n", pos: "bad.yaml:2:10: ", msg: `output "h" is never assigned`},
		{name: "bad dimension", src: "name: t\nparams: {n: 0}\nweights:\n  w: {shape: [n, 4], gguf: w}\ngraph:\n  - logits: embedding(w, tokens)\n", pos: "bad.yaml:4:15: ", msg: "weights.w: dimension n = 0"},
		{name: "no name for format", src: badBase + "  - logits: embedding(emb, tokens)\n", format: "hf", pos: "bad.yaml:4: ", msg: "emb: no tensor name for hf checkpoints"},

		// Binding to a checkpoint.
		{name: "shape mismatch", file: "llama.yaml", set: llamaSet,
			source: func(t *testing.T, sp *specs.Spec, p specs.Params) specs.TensorSource {
				return reshaped{llamaSource(t, sp, p), "blk.3.attn_q.weight", []int{64, 128}}
			},
			pos: fmt.Sprintf("llama.yaml:%d: ", wq), msg: "wq for layer 3: checkpoint tensor blk.3.attn_q.weight is [64 128], spec expects [64 64]"},
		{name: "missing tensor", file: "llama.yaml", set: llamaSet,
			source: func(t *testing.T, sp *specs.Spec, p specs.Params) specs.TensorSource {
				return hiding{llamaSource(t, sp, p), map[string]bool{"blk.2.attn_k.weight": true}}
			},
			pos: fmt.Sprintf("llama.yaml:%d: ", wk), msg: "wk for layer 2: checkpoint has no tensor blk.2.attn_k.weight"},
		{name: "missing tensor with fallbacks", file: "gpt2.yaml", set: gpt2Small, format: "hf",
			source: func(t *testing.T, sp *specs.Spec, p specs.Params) specs.TensorSource { return mapSource{} },
			pos:    fmt.Sprintf("gpt2.yaml:%d: ", lineOf(t, "gpt2.yaml", "  tok_embd:")), msg: "tok_embd: checkpoint has no tensor wte.weight or transformer.wte.weight"},
		{name: "failing transform", file: "gpt2.yaml", set: map[string]any{"hidden": int64(32), "heads": int64(4), "layers": int64(1), "vocab": int64(8), "ctx": int64(8), "qkv": "split"},
			source: func(t *testing.T, sp *specs.Spec, p specs.Params) specs.TensorSource {
				fused := resolve(t, sp, map[string]any{"hidden": int64(32), "heads": int64(4), "layers": int64(1), "vocab": int64(8), "ctx": int64(8)})
				return reshaped{randSource(t, sp, fused, "gguf"), "blk.0.attn_qkv.weight", []int{64, 32}}
			},
			pos: fmt.Sprintf("gpt2.yaml:%d:%d: ", wv, colOf(t, "gpt2.yaml", wv, `transform: "rows(2 * hidden`)+len("transform: ")), msg: "wv for layer 0: rows: rows(64, 32) outside the 64 rows of blk.0.attn_qkv.weight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := attempt(t, c)
			if err == nil {
				t.Fatalf("no error; want %s%s", c.pos, c.msg)
			}
			got := err.Error()
			if !strings.HasPrefix(got, c.pos) || !strings.Contains(got[len(c.pos):], c.msg) {
				t.Errorf("error:\n%s\nwant it to start with %q and contain %q", got, c.pos, c.msg)
			}
			var se *specs.Error
			if strings.Count(c.pos, ":") > 1 && !errors.As(err, &se) {
				t.Errorf("%T is not a *specs.Error", err)
			}
		})
	}
}

func attempt(t *testing.T, c errCase) error {
	var sp *specs.Spec
	var err error
	if c.src != "" {
		sp, err = specs.Parse("bad.yaml", []byte(c.src))
	} else {
		sp, err = specs.LoadBuiltin(strings.TrimSuffix(c.file, ".yaml"))
	}
	if err != nil {
		return err
	}
	p, err := sp.ResolveParams(c.meta, c.set)
	if err != nil {
		return err
	}
	format := c.format
	if format == "" {
		format = "gguf"
	}
	var src specs.TensorSource
	if c.source != nil {
		src = c.source(t, sp, p)
	}
	_, err = sp.Build(specs.BuildOptions{Registry: ops.Builtins(), Params: p, Format: format, Source: src})
	return err
}

// TestPlanRejectsUnknownInput: a graph input the scheduler cannot fill
// (here one added by hand, past the spec checks) is an error, not a
// tensor silently left at zero.
func TestPlanRejectsUnknownInput(t *testing.T) {
	sp := builtin(t, "bert")
	p := resolve(t, sp, bertSmall)
	g := build(t, sp, p, "gguf", randSource(t, sp, p, "gguf"))
	g.AddInput("memory", ops.Type{DType: tensor.I32, Shape: ops.Shape{ops.Tokens}})
	dev := cpudev.New("cpu:0", 1, cpu.Kernels{})
	defer dev.Close()
	_, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 4, Backends: []backend.Backend{dev}})
	if err == nil || !strings.Contains(err.Error(), `graph input "memory" is not a step input`) {
		t.Fatalf("NewPlan: %v, want an unknown-input error", err)
	}
}
