package specs_test

import (
	"context"
	"fmt"
	"math"
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

// testWeights spreads the random weights wide enough that a miswired
// bias, norm or attention changes the outputs well beyond the tolerance.
var testWeights = randweights.Config{Seed: 7, Std: 0.15, BiasStd: 0.05, NormStd: 0.1}

func builtin(t *testing.T, name string) *specs.Spec {
	t.Helper()
	sp, err := specs.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func parse(t *testing.T, name, src string) *specs.Spec {
	t.Helper()
	sp, err := specs.Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func resolve(t *testing.T, sp *specs.Spec, set map[string]any) specs.Params {
	t.Helper()
	p, err := sp.ResolveParams(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func randSource(t *testing.T, sp *specs.Spec, p specs.Params, format string) *randweights.Source {
	t.Helper()
	src, err := randweights.ForSpec(sp, ops.Builtins(), p, format, testWeights)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func registry() *ops.Registry { return ops.Builtins() }

func randSourceErr(sp *specs.Spec, p specs.Params, format string) (*randweights.Source, error) {
	return randweights.ForSpec(sp, ops.Builtins(), p, format, testWeights)
}

func build(t *testing.T, sp *specs.Spec, p specs.Params, format string, src specs.TensorSource) *graph.Graph {
	t.Helper()
	g, err := sp.Build(specs.BuildOptions{Registry: ops.Builtins(), Params: p, Format: format, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mapSource is a TensorSource over a map.
type mapSource map[string]*tensor.Tensor

func (m mapSource) Has(name string) bool { _, ok := m[name]; return ok }

func (m mapSource) Tensor(name string) (*tensor.Tensor, error) {
	t, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	return t, nil
}

// hiding serves src without the named tensors.
type hiding struct {
	specs.TensorSource
	hidden map[string]bool
}

func (h hiding) Has(name string) bool { return !h.hidden[name] && h.TensorSource.Has(name) }

// runSeq runs one plan step over tokens as one sequence at positions
// 0..n-1, without graph passes, and returns every row of output out.
func runSeq(t *testing.T, g *graph.Graph, tokens []int, out int) [][]float32 {
	t.Helper()
	return runBatch(t, g, [][]int{tokens}, out)[0]
}

// runBatch runs one plan step holding every sequence of seqs whole (the
// rows of sequence s are s's tokens at positions 0..n-1, sequence id s)
// and returns the rows of output out for each sequence.
func runBatch(t *testing.T, g *graph.Graph, seqs [][]int, out int) [][][]float32 {
	t.Helper()
	n := 0
	for _, s := range seqs {
		n += len(s)
	}
	dev := cpudev.New("cpu:0", 1, cpu.Kernels{})
	defer dev.Close()
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: n, Backends: []backend.Backend{dev}})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := plan.NewKV(0, backend.KVF32)
	if err != nil {
		t.Fatal(err)
	}
	st := &backend.Step{}
	for s, toks := range seqs {
		for i, tok := range toks {
			st.Keep = append(st.Keep, int32(len(st.Tokens)))
			st.Tokens = append(st.Tokens, int32(tok))
			st.Pos = append(st.Pos, int32(i))
			st.Seq = append(st.Seq, int32(s))
		}
	}
	if err := kv.AddressWhole(st); err != nil {
		t.Fatal(err)
	}
	outs, err := plan.Run(context.Background(), st, kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := outs[out]
	cols := o.Shape[len(o.Shape)-1]
	data := tensor.BytesToF32(o.Data)
	if len(data) != n*cols {
		t.Fatalf("output %d holds %d values, want %d rows of %d", out, len(data), n, cols)
	}
	res := make([][][]float32, len(seqs))
	r := 0
	for s, toks := range seqs {
		for range toks {
			res[s] = append(res[s], append([]float32(nil), data[r*cols:(r+1)*cols]...))
			r++
		}
	}
	return res
}

type greedy struct{}

func (greedy) Sample(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// generate optimises g like model.Load does, then greedily generates n
// tokens after prompt with the engine, returning the tokens and the
// logits each was picked from.
func generate(t *testing.T, g *graph.Graph, prompt []int, n, ctx int) ([]int, [][]float32) {
	t.Helper()
	if err := graph.Optimize(g, ops.Builtins()); err != nil {
		t.Fatal(err)
	}
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 8, Backends: []backend.Backend{cpudev.New("cpu:0", 2, cpu.Kernels{})}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := scheduler.NewEngine(plan, scheduler.Options{Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var rows [][]float32
	toks, err := e.Generate(context.Background(), scheduler.Request{Prompt: prompt, MaxTokens: n, Sampler: greedy{}, KeepLogits: true},
		func(ev scheduler.TokenEvent) { rows = append(rows, ev.Logits) })
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != n {
		t.Fatalf("generated %d tokens, want %d", len(toks), n)
	}
	return toks, rows
}

// checkGenerate runs the engine and checks each step's logits against the
// reference forward pass over the tokens fed so far.
func checkGenerate(t *testing.T, g *graph.Graph, prompt []int, n, ctx int, ref func(tokens []int) [][]float64) {
	t.Helper()
	toks, rows := generate(t, g, prompt, n, ctx)
	seq := append([]int(nil), prompt...)
	for i, row := range rows {
		want := ref(seq)
		closeRows(t, fmt.Sprintf("step %d", i), [][]float32{row}, want[len(want)-1:], 1e-5)
		seq = append(seq, toks[i])
	}
}

// closeRows fails unless got matches want to within tol times the
// largest magnitude of each wanted row (at least 1).
func closeRows(t *testing.T, what string, got [][]float32, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for r := range want {
		if len(got[r]) != len(want[r]) {
			t.Fatalf("%s: row %d has %d values, want %d", what, r, len(got[r]), len(want[r]))
		}
		scale := 1.0
		for _, v := range want[r] {
			scale = math.Max(scale, math.Abs(v))
		}
		for c := range want[r] {
			if d := math.Abs(float64(got[r][c]) - want[r][c]); d > tol*scale || math.IsNaN(float64(got[r][c])) {
				t.Fatalf("%s: row %d col %d = %g, want %g (|diff| %.3g > %.3g)", what, r, c, got[r][c], want[r][c], d, tol*scale)
			}
		}
	}
}

// sameRows fails unless got and want are bit-identical.
func sameRows(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for r := range want {
		for c := range want[r] {
			if got[r][c] != want[r][c] {
				t.Fatalf("%s: row %d col %d = %g, want %g", what, r, c, got[r][c], want[r][c])
			}
		}
	}
}

// spread fails if every row of a result is (nearly) the same: random
// weights must give token-dependent outputs for a comparison to mean much.
func spread(t *testing.T, rows [][]float32) {
	t.Helper()
	for r := 1; r < len(rows); r++ {
		for c := range rows[r] {
			if math.Abs(float64(rows[r][c]-rows[0][c])) > 1e-3 {
				return
			}
		}
	}
	t.Fatalf("all %d output rows are equal", len(rows))
}
