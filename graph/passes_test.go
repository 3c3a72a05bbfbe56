package graph_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/internal/randweights"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// forward builds spec src with random weights and runs one step of 5
// tokens, with or without the passes, returning every output's values.
func forward(t *testing.T, src string, set map[string]any, passes bool) [][]float32 {
	t.Helper()
	return forwardKeep(t, src, set, passes, []int32{0, 1, 2, 3, 4})
}

// forwardKeep is forward with the rows the step keeps for its outputs.
func forwardKeep(t *testing.T, src string, set map[string]any, passes bool, keep []int32) [][]float32 {
	t.Helper()
	sp, err := specs.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	params, err := sp.ResolveParams(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := randweights.ForSpec(sp, reg, params, "gguf", randweights.Config{Seed: 1, NormStd: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Source: rw})
	if err != nil {
		t.Fatal(err)
	}
	if passes {
		if err := graph.Optimize(g, reg); err != nil {
			t.Fatal(err)
		}
	}
	dev := cpudev.New("cpu:0", 2, cpu.Kernels{})
	defer dev.Close()
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 8, Backends: []backend.Backend{dev}})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := plan.NewKV(0, backend.KVF32)
	if err != nil {
		t.Fatal(err)
	}
	st := &backend.Step{Tokens: []int32{1, 2, 3, 4, 5}, Pos: []int32{0, 1, 2, 3, 4}, Seq: []int32{0, 0, 0, 0, 0},
		Keep: keep}
	if err := kv.AddressWhole(st); err != nil {
		t.Fatal(err)
	}
	outs, err := plan.Run(t.Context(), st, kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float32, len(outs))
	for i, o := range outs {
		res[i] = append([]float32(nil), tensor.BytesToF32(o.Data)...)
	}
	return res
}

func sameOutputs(t *testing.T, what string, a, b [][]float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d outputs vs %d", what, len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			t.Fatalf("%s: output %d has %d values vs %d", what, i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			if d := math.Abs(float64(a[i][j] - b[i][j])); d > 1e-4*(1+math.Abs(float64(b[i][j]))) {
				t.Fatalf("%s: output %d value %d: fused %v, unfused %v", what, i, j, a[i][j], b[i][j])
			}
		}
	}
}

const tinyLlamaSet = "hidden=32,layers=2,heads=4,kv_heads=2,ffn=48,vocab=40,ctx=64"

func llamaSet(extra map[string]any) map[string]any {
	m := map[string]any{}
	for _, kv := range strings.Split(tinyLlamaSet, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = specs.ParseValue(v)
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestPassesPreserveResults runs graphs with and without the passes and
// demands the same outputs, on specs built to trip each pass.
func TestPassesPreserveResults(t *testing.T) {
	llama, err := os.ReadFile("../specs/llama.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  string
		set  map[string]any
	}{
		{"llama swiglu", string(llama), llamaSet(nil)},
		// fused GEGLU once overwrote its up projection
		{"llama geglu", string(llama), llamaSet(map[string]any{"ffn_act": "geglu"})},
		{"llama layer_norm", string(llama), llamaSet(map[string]any{"norm": "layer_norm"})},
		// a residual produced by a node fused earlier in the same pass
		{"residual of a fused node", `name: t
params: {d: 8, vocab: 16}
weights:
  emb: {shape: [vocab, d], gguf: e}
  w1: {shape: [d, d], gguf: w1}
  w2: {shape: [d, d], gguf: w2}
graph:
  - x: embedding(emb, tokens)
  - a: relu(x)
  - b: silu(x)
  - y1: linear(b, w2)
  - y0: linear(a, w1)
  - s1: add(x, y0)
  - logits: add(s1, y1)
`, nil},
		// a value that is both an output and inside a fusable pattern
		{"output inside a pattern", `name: t
params: {d: 8, vocab: 16}
weights:
  emb: {shape: [vocab, d], gguf: e}
  w1: {shape: [d, d], gguf: w1}
outputs: [logits, y0]
graph:
  - x: embedding(emb, tokens)
  - y0: linear(x, w1)
  - logits: add(x, y0)
`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameOutputs(t, tc.name, forward(t, tc.src, tc.set, true), forward(t, tc.src, tc.set, false))
		})
	}
}

// TestPruneBeforeLastFFN checks where output pruning gathers the kept
// rows of a Llama: before the last layer's FFN (its input residual), as
// llama.cpp does, so that the FFN, the final norm and the LM head run on
// the kept rows; and that the kept rows' logits are those of the whole
// step.
func TestPruneBeforeLastFFN(t *testing.T) {
	llama, err := os.ReadFile("../specs/llama.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := specs.Parse("llama.yaml", llama)
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	params, err := sp.ResolveParams(nil, llamaSet(nil))
	if err != nil {
		t.Fatal(err)
	}
	rw, err := randweights.ForSpec(sp, reg, params, "gguf", randweights.Config{Seed: 1, NormStd: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Source: rw})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.PruneOutputs(g, reg); err != nil {
		t.Fatal(err)
	}
	var after []string
	for i, n := range g.Nodes {
		if n.Op.Name == "gather_rows" {
			for _, m := range g.Nodes[i+1:] {
				after = append(after, m.Op.Name)
			}
			if n.Layer != 1 {
				t.Errorf("gather_rows in layer %d, want 1 (the last)", n.Layer)
			}
		}
	}
	if want := "rms_norm linear linear swiglu linear add rms_norm linear"; strings.Join(after, " ") != want {
		t.Errorf("after gather_rows: %q, want %q", strings.Join(after, " "), want)
	}
	all := forward(t, string(llama), llamaSet(nil), false)
	kept := forwardKeep(t, string(llama), llamaSet(nil), true, []int32{2, 4})
	vocab := len(all[0]) / 5
	sameOutputs(t, "kept rows", kept, [][]float32{append(append([]float32(nil), all[0][2*vocab:3*vocab]...), all[0][4*vocab:]...)})
}

// TestPlanNoSharedOutputs: the outputs of one node never share memory,
// even when one of them is dead.
func TestPlanNoSharedOutputs(t *testing.T) {
	src := `name: t
params: {d: 8, vocab: 16}
weights:
  emb: {shape: [vocab, d], gguf: e}
  wq: {shape: [d, d], gguf: wq}
  wk: {shape: [d, d], gguf: wk}
graph:
  - x: embedding(emb, tokens)
  - "_, kk": linear_multi(x, wq, wk)
  - "a, b": linear_multi(kk, wq, wk)
  - logits: add(a, b)
`
	sp, err := specs.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	params, _ := sp.ResolveParams(nil, nil)
	rw, err := randweights.ForSpec(sp, reg, params, "gguf", randweights.Config{Seed: 1, NormStd: 0.1}) // as forward uses
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Source: rw})
	if err != nil {
		t.Fatal(err)
	}
	dev := cpudev.New("cpu:0", 1, cpu.Kernels{})
	defer dev.Close()
	if _, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 4, Backends: []backend.Backend{dev}}); err != nil {
		t.Fatal(err)
	}
	// Run it and compare with the math: the first node's dead output must
	// not clobber kk while linear_multi writes both.
	got := forward(t, src, nil, false)[0]
	emb, _ := rw.Tensor("e")
	wq, _ := rw.Tensor("wq")
	wk, _ := rw.Tensor("wk")
	mat := func(w *tensor.Tensor, x []float32) []float32 {
		f := w.F32()
		out := make([]float32, 8)
		for o := range out {
			for i := range x {
				out[o] += f[o*8+i] * x[i]
			}
		}
		return out
	}
	e := emb.F32()
	for tok := 1; tok <= 5; tok++ {
		kk := mat(wk, e[tok*8:(tok+1)*8])
		a, b := mat(wq, kk), mat(wk, kk)
		for j := 0; j < 8; j++ {
			want := a[j] + b[j]
			if d := math.Abs(float64(got[(tok-1)*8+j] - want)); d > 1e-4 {
				t.Fatalf("token %d value %d: %v, want %v", tok, j, got[(tok-1)*8+j], want)
			}
		}
	}
}
