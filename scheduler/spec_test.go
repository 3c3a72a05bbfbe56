package scheduler_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
)

// junk drafts a token derived from the last one, repeated: almost every
// draft is rejected.
type junk struct{}

func (junk) Draft(dst, seq []int, max int) []int {
	for range max {
		dst = append(dst, (seq[len(seq)-1]*31+5)%97)
	}
	return dst
}

func generate(t *testing.T, e *scheduler.Engine, r scheduler.Request) ([]int, scheduler.TokenEvent) {
	t.Helper()
	var last scheduler.TokenEvent
	toks, err := e.Generate(context.Background(), r, func(ev scheduler.TokenEvent) {
		if ev.Done {
			last = ev
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return toks, last
}

// TestSpeculativeGreedy: with any drafter (prompt lookup, the target
// itself as draft model, a smaller random model, drafts always wrong),
// speculative decoding gives exactly plain greedy decoding's tokens.
func TestSpeculativeGreedy(t *testing.T) {
	g := testLlama(t)
	draftG := randomLlama(t, map[string]any{"hidden": 32, "layers": 1, "heads": 2, "kv_heads": 1, "ffn": 48, "vocab": 97, "ctx": 512})
	p := append(prompt(20, 1), prompt(20, 1)...) // repeats itself
	plainE := newEngine(t, g, 64, scheduler.Options{})
	want, _ := generate(t, plainE, scheduler.Request{Prompt: p, MaxTokens: 60, Sampler: greedy()})
	self := &scheduler.ModelDrafter{Engine: newEngine(t, g, 64, scheduler.Options{})}
	small := &scheduler.ModelDrafter{Engine: newEngine(t, draftG, 64, scheduler.Options{})}
	for _, tc := range []struct {
		name     string
		d        scheduler.Drafter
		max, min int
		allKept  bool
	}{
		{"ngram", scheduler.NGramDrafter{N: 3}, 5, 0, false},
		{"ngram-min3", scheduler.NGramDrafter{N: 2}, 8, 3, false},
		{"self", self, 4, 1, true},
		{"small", small, 3, 1, false},
		{"junk", junk{}, 4, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, g, 64, scheduler.Options{})
			got, done := generate(t, e, scheduler.Request{Prompt: p, MaxTokens: 60, Sampler: greedy(), Draft: tc.d, DraftMax: tc.max, DraftMin: tc.min})
			if !slices.Equal(got, want) {
				t.Fatalf("speculative %v\nplain       %v", got, want)
			}
			t.Logf("drafted %d, accepted %d", done.Drafted, done.Accepted)
			if done.Drafted == 0 && tc.name != "junk" {
				t.Error("nothing drafted: the test does not exercise verification")
			}
			if tc.allKept && done.Accepted != done.Drafted {
				t.Errorf("the target as its own draft: %d of %d drafts kept", done.Accepted, done.Drafted)
			}
			if tc.name == "ngram" && done.Accepted == 0 {
				t.Error("prompt lookup never right on a repeating sequence")
			}
		})
	}
}

// TestSpeculativeSampled: verification samples the target at each
// position as plain decoding does, so with the same seed the tokens are
// plain sampling's, not just distributed alike.
func TestSpeculativeSampled(t *testing.T) {
	g := testLlama(t)
	p := append(prompt(20, 2), prompt(20, 2)...)
	cfg := sampling.Config{Temperature: 0.7, TopK: 20, RepeatPenalty: 1.1, RepeatLastN: 64, Seed: 5}
	mk := func() *sampling.Sampler { s, _ := sampling.New(cfg); return s }
	want, _ := generate(t, newEngine(t, g, 64, scheduler.Options{}), scheduler.Request{Prompt: p, MaxTokens: 50, Sampler: mk()})
	got, done := generate(t, newEngine(t, g, 64, scheduler.Options{}), scheduler.Request{Prompt: p, MaxTokens: 50, Sampler: mk(),
		Draft: scheduler.NGramDrafter{N: 3}, DraftMax: 4})
	if !slices.Equal(got, want) {
		t.Fatalf("speculative %v\nplain       %v", got, want)
	}
	if done.Drafted == 0 {
		t.Error("nothing drafted")
	}
}

// TestSpeculativeBatched: a speculative query and plain ones share steps
// (continuous batching); each gets its plain greedy tokens.
func TestSpeculativeBatched(t *testing.T) {
	g := testLlama(t)
	ps := [][]int{append(prompt(12, 3), prompt(12, 3)...), prompt(30, 4), prompt(5, 5)}
	var want [][]int
	for _, p := range ps {
		w, _ := generate(t, newEngine(t, g, 64, scheduler.Options{}), scheduler.Request{Prompt: p, MaxTokens: 40, Sampler: greedy()})
		want = append(want, w)
	}
	e := newEngine(t, g, 48, scheduler.Options{})
	ids := map[int]int{}
	for i, p := range ps {
		r := scheduler.Request{Prompt: p, MaxTokens: 40, Sampler: greedy()}
		if i != 1 {
			r.Draft, r.DraftMax = scheduler.NGramDrafter{N: 3}, 6
		}
		id, err := e.AddQuery(r)
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = i
	}
	for id, evs := range run(t, e, nil) {
		var got []int
		for _, ev := range evs {
			got = append(got, ev.Token)
		}
		if i := ids[id]; !slices.Equal(got, want[i]) {
			t.Errorf("query %d: %v\nwant %v", i, got, want[i])
		}
	}
}

func TestSpeculativeRequestErrors(t *testing.T) {
	e := newEngine(t, testLlama(t), 64, scheduler.Options{Context: 256})
	d := scheduler.NGramDrafter{N: 2}
	for _, r := range []scheduler.Request{
		{Prompt: []int{1}, MaxTokens: 4, Sampler: greedy(), Draft: d, DraftMax: 0},
		{Prompt: []int{1}, MaxTokens: 4, Sampler: greedy(), Draft: d, DraftMax: 2, DraftMin: 3},
		{Prompt: []int{1}, MaxTokens: 4, Sampler: greedy(), Draft: d, DraftMax: 2, N: 2},
		{Prompt: []int{1}, MaxTokens: 4, Beams: 2, Draft: d, DraftMax: 2},
		{Prompt: []int{1}, MaxTokens: 4, Sampler: greedy(), Draft: d, DraftMax: 2, Force: []int{3}},
		{Prompt: []int{1}, MaxTokens: 4, Sampler: greedy(), Draft: d, DraftMax: 2, Shift: true, Keep: 4},
	} {
		if _, err := e.AddQuery(r); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

func TestNGramDrafter(t *testing.T) {
	for _, tc := range []struct {
		n        int
		seq      []int
		max      int
		want     []int
		describe string
	}{
		{3, []int{1, 2, 3, 4, 5, 1, 2, 3}, 4, []int{4, 5, 1, 2}, "3-gram match, 4 followers"},
		{3, []int{1, 2, 3, 9, 2, 3, 7, 8, 2, 3}, 2, []int{7, 8}, "latest 2-gram wins"},
		{3, []int{5, 6, 7}, 3, nil, "no match"},
		{2, []int{4, 4, 4}, 5, []int{4}, "overlap up to the end"},
		{1, []int{3}, 2, nil, "one token"},
	} {
		if got := (scheduler.NGramDrafter{N: tc.n}).Draft(nil, tc.seq, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.describe, got, tc.want)
		}
	}
}

// markov is a tiny model: the distribution of the next token given the
// last, over 4 tokens.
type markov [4][4]float64

func randomMarkov(r *rand.Rand) markov {
	var m markov
	for a := range m {
		var s float64
		for b := range m[a] {
			m[a][b] = r.Float64() + 0.05
			s += m[a][b]
		}
		for b := range m[a] {
			m[a][b] /= s
		}
	}
	return m
}

func draw(p []float64, r *rand.Rand) int {
	u := r.Float64()
	for i, v := range p {
		if u < v {
			return i
		}
		u -= v
	}
	return len(p) - 1
}

// TestAcceptDraftChiSquare: speculative sampling of two tokens from a tiny
// target model p with drafts (3 per round) from another model q, verified
// by AcceptDraft, gives the target's joint distribution of the two tokens
// (χ² over the 16 cells, 15 degrees of freedom: 37.70 is the 0.1% point).
func TestAcceptDraftChiSquare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p, q := randomMarkov(r), randomMarkov(r)
	const start, samples = 0, 200000
	var counts [16]int
	accepted, drafted := 0, 0
	for range samples {
		out := []int{}
		last := start
		for len(out) < 2 {
			// Draft 3 tokens from q, then verify them against p.
			var drafts [3]int
			prev := last
			for i := range drafts {
				drafts[i] = draw(q[prev][:], r)
				prev = drafts[i]
			}
			drafted += 3
			prev = last
			all := true
			for i := range drafts {
				tok, ok := scheduler.AcceptDraft(p[prev][:], q[prev][:], drafts[i], r)
				out = append(out, tok)
				prev = tok
				if !ok {
					all = false
					break
				}
				accepted++
			}
			if all {
				out = append(out, draw(p[prev][:], r)) // the bonus token
			}
			last = out[len(out)-1]
		}
		counts[out[0]*4+out[1]]++
	}
	var chi float64
	for a := range 4 {
		for b := range 4 {
			e := samples * p[start][a] * p[a][b]
			d := float64(counts[a*4+b]) - e
			chi += d * d / e
		}
	}
	t.Logf("χ² = %.2f; %d of %d drafts accepted", chi, accepted, drafted)
	if chi > 37.70 {
		t.Errorf("χ² = %.2f > 37.70: speculative sampling is not distributed as the target", chi)
	}
	// The same test against q's joint distribution must fail: the test
	// can tell the two apart.
	var chiQ float64
	for a := range 4 {
		for b := range 4 {
			e := samples * q[start][a] * q[a][b]
			d := float64(counts[a*4+b]) - e
			chiQ += d * d / e
		}
	}
	if chiQ < 37.70 || math.IsNaN(chiQ) {
		t.Errorf("χ² against the draft model = %.2f: the test cannot tell p from q", chiQ)
	}
}

// top3 returns the three largest logits' ids and their softmax (top-k 3,
// temperature 1: the sampler's distribution, written out).
func top3(row []float32) ([3]int, [3]float64) {
	var ids [3]int
	var ps [3]float64
	used := map[int]bool{}
	for i := range ids {
		best := -1
		for j, v := range row {
			if !used[j] && (best < 0 || v > row[best]) {
				best = j
			}
		}
		ids[i], used[best] = best, true
	}
	var sum float64
	for i, id := range ids {
		ps[i] = math.Exp(float64(row[id] - row[ids[0]]))
		sum += ps[i]
	}
	for i := range ps {
		ps[i] /= sum
	}
	return ids, ps
}

// TestSpeculativeChiSquare: sampled generations of three tokens (top-k 3,
// temperature 1) with the target itself as greedy draft model, over many
// seeds, follow the target's joint distribution of the three tokens,
// computed from teacher-forced rows (χ² over the 27 cells, 26 degrees of
// freedom: 54.05 is the 0.1% point); most second and third tokens come
// from verify steps.
func TestSpeculativeChiSquare(t *testing.T) {
	g := testLlama(t)
	p := prompt(9, 6)
	// The exact joint distribution.
	exact := map[[3]int]float64{}
	ids1, ps1 := top3(forcedRow(t, g, p, nil))
	for a := range 3 {
		ids2, ps2 := top3(forcedRow(t, g, p, []int{ids1[a]}))
		for b := range 3 {
			ids3, ps3 := top3(forcedRow(t, g, p, []int{ids1[a], ids2[b]}))
			for c := range 3 {
				exact[[3]int{ids1[a], ids2[b], ids3[c]}] = ps1[a] * ps2[b] * ps3[c]
			}
		}
	}
	n := 2000
	if testing.Short() {
		n = 1000
	}
	e := newEngine(t, g, 64, scheduler.Options{})
	d := &scheduler.ModelDrafter{Engine: newEngine(t, g, 64, scheduler.Options{})}
	counts := map[[3]int]int{}
	drafted, accepted := 0, 0
	for seed := range n {
		s, _ := sampling.New(sampling.Config{Temperature: 1, TopK: 3, Seed: uint64(seed)})
		toks, done := generate(t, e, scheduler.Request{Prompt: p, MaxTokens: 3, Sampler: s, Draft: d, DraftMax: 2})
		var key [3]int
		copy(key[:], toks)
		if _, ok := exact[key]; !ok {
			t.Fatalf("seed %d: tokens %v outside the top-3 tree", seed, toks)
		}
		counts[key]++
		drafted += done.Drafted
		accepted += done.Accepted
	}
	var chi, chiU float64
	for k, pr := range exact {
		ex := float64(n) * pr
		d := float64(counts[k]) - ex
		chi += d * d / ex
		eu := float64(n) / 27
		du := float64(counts[k]) - eu
		chiU += du * du / eu
	}
	t.Logf("χ² = %.2f over 27 cells; %d of %d drafts accepted", chi, accepted, drafted)
	if chi > 54.05 {
		t.Errorf("χ² = %.2f > 54.05: speculative sampling does not follow the target", chi)
	}
	if chiU < 54.05 {
		t.Errorf("χ² against uniform cells = %.2f: the test cannot tell distributions apart", chiU)
	}
	if accepted < n/4 {
		t.Errorf("only %d drafts accepted in %d generations: verification is hardly exercised", accepted, n)
	}
}

// TestSpeculativeKVBudget: speculative queries under a KV budget that
// forces preemption and recompute still give their plain greedy tokens,
// within the budget.
func TestSpeculativeKVBudget(t *testing.T) {
	g := testLlama(t)
	want := map[int][]int{}
	ps := map[int][]int{}
	for i := range 5 {
		ps[i] = append(prompt(10, 20+i), prompt(10, 20+i)...)
		want[i], _ = generate(t, newEngine(t, g, 32, scheduler.Options{}), scheduler.Request{Prompt: ps[i], MaxTokens: 40, Sampler: greedy()})
	}
	probe := newEngine(t, g, 32, scheduler.Options{})
	budget := 2 * (20 + 48) * probe.KV().PositionBytes()
	e := newEngine(t, g, 32, scheduler.Options{KVBudget: budget})
	ids := map[int]int{}
	for i := range 5 {
		id, err := e.AddQuery(scheduler.Request{Prompt: ps[i], MaxTokens: 40, Sampler: greedy(), Draft: scheduler.NGramDrafter{N: 2}, DraftMax: 6})
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = i
	}
	var peak int64
	got := run(t, e, func() { peak = max(peak, e.KV().HeldBytes()) })
	accepted := 0
	for id, i := range ids {
		var toks []int
		for _, ev := range got[id] {
			if ev.Err != nil {
				t.Fatalf("query %d: %v", i, ev.Err)
			}
			toks = append(toks, ev.Token)
			accepted += ev.Accepted
		}
		if !slices.Equal(toks, want[i]) {
			t.Errorf("query %d under the budget: %v\nalone: %v", i, toks, want[i])
		}
	}
	if peak > budget {
		t.Errorf("the cache held %d bytes, over its budget of %d", peak, budget)
	}
	if accepted == 0 {
		t.Error("no draft accepted: speculation was not exercised")
	}
}
