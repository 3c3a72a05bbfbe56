package scheduler_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
)

// testLlama is a small random-weight llama shared by the engine tests.
func testLlama(t testing.TB) *graph.Graph {
	return randomLlama(t, map[string]any{"hidden": 64, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 96, "vocab": 97, "ctx": 512})
}

func newEngine(t testing.TB, g *graph.Graph, maxTokens int, opt scheduler.Options) *scheduler.Engine {
	t.Helper()
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: maxTokens, Backends: []backend.Backend{cpudev.New("cpu:0", 1, cpu.Kernels{})}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := scheduler.NewEngine(plan, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func prompt(n, seed int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = 1 + (i*7+seed*13)%96
	}
	return p
}

// run drives the engine until every query is done and returns each
// query's events.
func run(t *testing.T, e *scheduler.Engine, each func()) map[int][]scheduler.TokenEvent {
	t.Helper()
	got := map[int][]scheduler.TokenEvent{}
	for steps := 0; e.Active() > 0; steps++ {
		if steps > 100000 {
			t.Fatalf("no end after %d steps: %+v", steps, e.Stats())
		}
		evs, err := e.Infer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			got[ev.Query] = append(got[ev.Query], ev)
		}
		if each != nil {
			each()
		}
	}
	return got
}

func greedy() *sampling.Sampler { s, _ := sampling.New(sampling.Config{}); return s }

// forcedRow returns the logits after prompt+prefix on a fresh engine (an
// independent single-sequence computation).
func forcedRow(t *testing.T, g *graph.Graph, p, prefix []int) []float32 {
	e := newEngine(t, g, 64, scheduler.Options{})
	var row []float32
	full := append(append([]int(nil), p...), prefix...)
	_, err := e.Generate(context.Background(), scheduler.Request{Prompt: full, MaxTokens: 1, Force: []int{0}, KeepLogits: true},
		func(ev scheduler.TokenEvent) { row = ev.Logits })
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func logSoftmax(row []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range row {
		m = max(m, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - m)
	}
	out := make([]float64, len(row))
	for i, v := range row {
		out[i] = float64(v) - m - math.Log(s)
	}
	return out
}

// TestBeamSearch checks the engine's beam search against one written out
// here over independently computed logits: every beam's distribution
// comes from a fresh single-sequence run of its own prefix, so a beam
// that read another beam's rows through the beam table would be caught.
// No stop token: the best W continuations of the W beams each step.
func TestBeamSearch(t *testing.T) {
	g := testLlama(t)
	p := prompt(21, 1)
	const w, steps = 3, 6
	e := newEngine(t, g, 64, scheduler.Options{})
	var got []scheduler.Beam
	_, err := e.Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: steps, Beams: w},
		func(ev scheduler.TokenEvent) { got = ev.Beams })
	if err != nil {
		t.Fatal(err)
	}
	type hyp struct {
		toks []int
		lp   float64
	}
	beams := []hyp{{nil, 0}}
	for s := 0; s < steps; s++ {
		var cands []hyp
		for _, b := range beams {
			lp := logSoftmax(forcedRow(t, g, p, b.toks))
			for tok, l := range lp {
				cands = append(cands, hyp{append(append([]int(nil), b.toks...), tok), b.lp + l})
			}
		}
		slices.SortStableFunc(cands, func(a, b hyp) int {
			if a.lp > b.lp {
				return -1
			}
			if a.lp < b.lp {
				return 1
			}
			return 0
		})
		beams = cands[:w]
	}
	if len(got) != w {
		t.Fatalf("%d beams, want %d", len(got), w)
	}
	for i := range beams {
		if !slices.Equal(got[i].Tokens, beams[i].toks) || math.Abs(got[i].Logprob-beams[i].lp) > 1e-3 {
			t.Errorf("beam %d: %v (%.5f), reference %v (%.5f)", i, got[i].Tokens, got[i].Logprob, beams[i].toks, beams[i].lp)
		}
		// With length penalty 1 the score is the mean log-probability.
		if want := got[i].Logprob / steps; math.Abs(got[i].Score-want) > 1e-12 {
			t.Errorf("beam %d: score %v, want %v", i, got[i].Score, want)
		}
	}
}

// TestBeamOneIsGreedy: one beam gives exactly the greedy tokens.
func TestBeamOneIsGreedy(t *testing.T) {
	g := testLlama(t)
	p := prompt(30, 2)
	stop := func(tok int) bool { return tok == 3 }
	want, err := newEngine(t, g, 16, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: 40, Sampler: greedy(), Stop: stop}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := newEngine(t, g, 16, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: 40, Beams: 1, Stop: stop}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("one beam %v\ngreedy   %v", got, want)
	}
}

// TestBeamKVBytes: a beam search holds exactly Eq. (3) of the Intel
// segment-KV paper, BS×(N_prompt + BW×⌈N_resp/16⌉×16) positions, against
// Eq. (2)'s BS×BW×(N_prompt+N_resp) for a cache without sharing.
func TestBeamKVBytes(t *testing.T) {
	g := testLlama(t)
	const nPrompt, bw, nResp = 100, 4, 32
	e := newEngine(t, g, 128, scheduler.Options{})
	if _, err := e.AddQuery(scheduler.Request{Prompt: prompt(nPrompt, 3), MaxTokens: nResp, Beams: bw}); err != nil {
		t.Fatal(err)
	}
	var peak int64
	run(t, e, func() { peak = max(peak, e.KV().Bytes()) })
	pos := e.KV().PositionBytes()
	eq3 := int64(nPrompt+bw*((nResp+15)/16)*16) * pos
	eq2 := int64(bw*(nPrompt+nResp)) * pos
	if peak != eq3 {
		t.Errorf("peak KV bytes %d, Eq. (3) gives %d (Eq. (2): %d)", peak, eq3, eq2)
	}
	t.Logf("4 beams, 100-token prompt, 32 steps: %d bytes (Eq. 3) vs %d (Eq. 2): %.2f×", peak, eq2, float64(eq2)/float64(peak))
	if e.KV().Bytes() != 0 {
		t.Errorf("%d bytes held after the query", e.KV().Bytes())
	}
}

// TestChoices: n choices share the prompt and each equals the same
// sampler run alone.
func TestChoices(t *testing.T) {
	g := testLlama(t)
	p := prompt(19, 4)
	const n = 3
	mk := func(i int) scheduler.Picker {
		s, _ := sampling.New(sampling.Config{Temperature: 1, Seed: uint64(10 + i)})
		return s
	}
	var want [n][]int
	for i := range want {
		toks, err := newEngine(t, g, 8, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: 20, Sampler: mk(i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = toks
	}
	e := newEngine(t, g, 8, scheduler.Options{})
	pickers := []scheduler.Picker{mk(0), mk(1), mk(2)}
	id, err := e.AddQuery(scheduler.Request{Prompt: p, MaxTokens: 20, N: n, Pickers: pickers, Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got [n][]int
	for _, ev := range run(t, e, nil)[id] {
		got[ev.Seq] = append(got[ev.Seq], ev.Token)
		if ev.Logprob > 0 || len(ev.Top) != 2 || ev.Top[0].Logprob < ev.Top[1].Logprob || ev.Top[0].Logprob < ev.Logprob {
			t.Errorf("choice %d token %d: logprob %v, top %v", ev.Seq, ev.Index, ev.Logprob, ev.Top)
		}
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("choice %d: %v, alone %v", i, got[i], want[i])
		}
	}
}

// TestPrefixCache: a second request sharing 32 prompt tokens with a
// finished one prefills only the rest and gets the same tokens as on a
// cold engine.
func TestPrefixCache(t *testing.T) {
	g := testLlama(t)
	a := prompt(40, 5)
	b := append(append([]int(nil), a[:32]...), prompt(9, 6)...)
	cold, err := newEngine(t, g, 16, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: b, MaxTokens: 12, Sampler: greedy()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, g, 16, scheduler.Options{})
	if _, err := e.Generate(context.Background(), scheduler.Request{Prompt: a, MaxTokens: 5, Sampler: greedy()}, nil); err != nil {
		t.Fatal(err)
	}
	if e.KV().Bytes() != 0 || e.KV().HeldBytes() != 2*16*e.KV().PositionBytes() {
		t.Errorf("after the first request: %d bytes in use, %d held; want 0 and two cached blocks", e.KV().Bytes(), e.KV().HeldBytes())
	}
	warm, err := e.Generate(context.Background(), scheduler.Request{Prompt: b, MaxTokens: 12, Sampler: greedy()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if st.PrefixHits != 2 || st.PrefillTokensSaved != 32 {
		t.Errorf("prefix cache: %d hits, %d tokens saved; want 2 and 32", st.PrefixHits, st.PrefillTokensSaved)
	}
	if !slices.Equal(warm, cold) {
		t.Errorf("with the prefix cached %v, cold %v", warm, cold)
	}
}

// TestKVBudget: with room for about two queries' blocks, five queries
// still all finish with the tokens each gets alone, while the cache never
// holds more than its budget.
func TestKVBudget(t *testing.T) {
	g := testLlama(t)
	want := map[int][]int{}
	for i := 0; i < 5; i++ {
		toks, err := newEngine(t, g, 32, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: prompt(20, 10+i), MaxTokens: 40, Sampler: greedy()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = toks
	}
	probe := newEngine(t, g, 32, scheduler.Options{})
	budget := 2 * (20 + 48) * probe.KV().PositionBytes()
	e := newEngine(t, g, 32, scheduler.Options{KVBudget: budget})
	ids := map[int]int{}
	for i := 0; i < 5; i++ {
		id, err := e.AddQuery(scheduler.Request{Prompt: prompt(20, 10+i), MaxTokens: 40, Sampler: greedy()})
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = i
	}
	var peak int64
	got := run(t, e, func() { peak = max(peak, e.KV().HeldBytes()) })
	for id, i := range ids {
		var toks []int
		for _, ev := range got[id] {
			if ev.Err != nil {
				t.Fatalf("query %d: %v", i, ev.Err)
			}
			toks = append(toks, ev.Token)
		}
		if !slices.Equal(toks, want[i]) {
			t.Errorf("query %d under the budget: %v\nalone: %v", i, toks, want[i])
		}
	}
	if peak > budget {
		t.Errorf("the cache held %d bytes, over its budget of %d", peak, budget)
	}
	if _, err := e.AddQuery(scheduler.Request{Prompt: prompt(200, 1), MaxTokens: 10, Sampler: greedy()}); err == nil {
		t.Error("a request larger than the whole budget was accepted")
	}
}

// badPicker fails on its n-th pick.
type badPicker struct{ n int }

func (b *badPicker) Sample(row []float32) int {
	if b.n--; b.n == 0 {
		return -1
	}
	return 0
}

// TestSamplerErrorIsolated: a sampler that returns a bad token ends its
// own query with an error event; the other query of the same steps goes
// on and gets exactly the tokens it gets alone.
func TestSamplerErrorIsolated(t *testing.T) {
	g := testLlama(t)
	want, err := newEngine(t, g, 16, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: prompt(10, 7), MaxTokens: 10, Sampler: greedy()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, g, 16, scheduler.Options{})
	bad, _ := e.AddQuery(scheduler.Request{Prompt: prompt(10, 8), MaxTokens: 10, Sampler: &badPicker{n: 3}})
	good, _ := e.AddQuery(scheduler.Request{Prompt: prompt(10, 7), MaxTokens: 10, Sampler: greedy()})
	got := run(t, e, nil)
	last := got[bad][len(got[bad])-1]
	if last.Reason != "error" || last.Err == nil || len(got[bad]) != 3 {
		t.Errorf("the failing query's events end with %+v after %d events", last, len(got[bad]))
	}
	var toks []int
	for _, ev := range got[good] {
		toks = append(toks, ev.Token)
	}
	if !slices.Equal(toks, want) {
		t.Errorf("the other query: %v, alone %v", toks, want)
	}
	if e.KV().Bytes() != 0 {
		t.Errorf("%d KV bytes held after both ended", e.KV().Bytes())
	}
}

// TestCancelFrees: Cancel gives a query's blocks back at once.
func TestCancelFrees(t *testing.T) {
	e := newEngine(t, testLlama(t), 16, scheduler.Options{})
	id, _ := e.AddQuery(scheduler.Request{Prompt: prompt(37, 1), MaxTokens: 50, Sampler: greedy()})
	for i := 0; i < 6; i++ {
		e.Infer(context.Background())
	}
	if e.KV().Bytes() == 0 {
		t.Fatal("a running query holds no KV")
	}
	e.Cancel(id)
	if e.KV().Bytes() != 0 {
		t.Errorf("%d bytes held after Cancel", e.KV().Bytes())
	}
}

// TestContextShift: with StreamingLLM's shift a query generates 4× its
// context with the KV memory bounded by the context.
func TestContextShift(t *testing.T) {
	const ctx = 64
	e := newEngine(t, testLlama(t), 16, scheduler.Options{Context: ctx})
	if _, err := e.AddQuery(scheduler.Request{Prompt: prompt(10, 2), MaxTokens: 4 * ctx, Sampler: greedy()}); err == nil {
		t.Fatal("a query past the context was accepted without a shift")
	}
	id, err := e.AddQuery(scheduler.Request{Prompt: prompt(10, 2), MaxTokens: 4 * ctx, Sampler: greedy(), Shift: true, Keep: 4})
	if err != nil {
		t.Fatal(err)
	}
	var peak int64
	got := run(t, e, func() { peak = max(peak, e.KV().Bytes()) })
	if n := len(got[id]); n != 4*ctx || got[id][n-1].Reason != "length" {
		t.Fatalf("%d tokens, last %+v", n, got[id][n-1])
	}
	// The live rows stay below the context; blocks round up to 16 and a
	// shift frees whole blocks only.
	if bound := int64(ctx+2*16) * e.KV().PositionBytes(); peak > bound {
		t.Errorf("peak KV %d bytes > %d", peak, bound)
	}
}

// TestPickerSeesPrompt: a repetition penalty applies to the prompt's
// tokens too (the engine hands the prompt to the sampler), as in
// llama.cpp: with the greedy token of the first step in the prompt and a
// crushing penalty, the first token differs from plain greedy.
func TestPickerSeesPrompt(t *testing.T) {
	g := testLlama(t)
	p := prompt(12, 9)
	gen, err := newEngine(t, g, 16, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: p, MaxTokens: 60, Sampler: greedy()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first step whose greedy token repeats an earlier one: with
	// everything before it as the prompt, greedy would repeat.
	k := 0
	for k < len(gen) && !slices.Contains(append(append([]int(nil), p...), gen[:k]...), gen[k]) {
		k++
	}
	if k == len(gen) {
		t.Fatal("test premise: greedy never repeats a token in 60 steps")
	}
	withTok := append(append([]int(nil), p...), gen[:k]...)
	pen, _ := sampling.New(sampling.Config{RepeatPenalty: 1e6, RepeatLastN: 128})
	got, err := newEngine(t, g, 16, scheduler.Options{}).Generate(context.Background(), scheduler.Request{Prompt: withTok, MaxTokens: 1, Sampler: pen}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(withTok, got[0]) {
		t.Errorf("with a crushing repetition penalty the first token %d repeats the prompt (plain greedy: %d)", got[0], gen[k])
	}
}
