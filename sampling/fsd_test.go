package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Inferflow's NGram::penalize on a hand-made history, n = 3, β = 0.9.
//
//	history 7 1 2 6 5 2 6 1 2, context "1 2"
//	level 2, after "1 2": 6            (1 token)
//	level 1, after "2":   6 6          (2 tokens; the last 2 has no successor)
//	level 0, all:         7 1 2 6 5 2 6 1 2  (9 tokens)
//
// From level 2 down, a level where the candidate is absent is skipped
// without discounting r:
//
//	6: .9·1/(1+1) = .45, r = .1; + .1·.9·2/(2+1) = .06, r = .01; + .01·2/9
//	5: absent above level 0: 1·1/9
//	2: 3/9    1: 2/9    3: never seen, 0
func TestNGramPenalty(t *testing.T) {
	hist := []int{7, 1, 2, 6, 5, 2, 6, 1, 2}
	ids := []int32{6, 5, 2, 1, 3}
	want := []float64{0.45 + 0.06 + 0.01*2.0/9, 1.0 / 9, 3.0 / 9, 2.0 / 9, 0}
	top := make([]cand, len(ids))
	for i, id := range ids {
		top[i].id = id
	}
	var f fsdScratch
	if !f.ngram(hist, 3, 0.9, top) {
		t.Fatal("no penalties")
	}
	for i := range top {
		if math.Abs(top[i].key-want[i]) > 1e-6 {
			t.Errorf("token %d: penalty %.7f, want %.7f", ids[i], top[i].key, want[i])
		}
	}
	// Shorter than n−1 tokens: Inferflow computes no penalty at all.
	if f.ngram([]int{4}, 3, 0.9, top) {
		t.Error("penalties from a 1-token history with n = 3")
	}
	// n = 1: unigram frequencies only.
	f.ngram(hist, 1, 0.9, top)
	for i, w := range []float64{2.0 / 9, 1.0 / 9, 3.0 / 9, 2.0 / 9, 0} {
		if math.Abs(top[i].key-w) > 1e-6 {
			t.Errorf("n=1 token %d: %.7f, want %.7f", ids[i], top[i].key, w)
		}
	}
}

// fsdLogits: p(3) = .4, p(4) = .3, p(5) = .2, and .02 for 0 1 2 6 7.
func fsdLogits() []float32 {
	return lp(0.02, 0.02, 0.02, 0.4, 0.3, 0.2, 0.02, 0.02)
}

func fsdConfig(k int) Config {
	c := DefaultConfig()
	c.Mode, c.Temperature, c.FSDK = ModeFSD, 1, k
	return c
}

// FSD worked by hand. History 1 2 3 1 2 4 1 2, context "1 2", k = 3: the
// candidates are 3 (.4), 4 (.3), 5 (.2).
//
//	level 2 after "1 2": 3 4 (2)   level 1 after "2": 3 4 (2)   level 0: 8
//	penalty(3) = .9·1/3 + .1·.9·1/3 + .01·1/8 = .33125 = penalty(4)
//	penalty(5) = 0
//	score = .5·p − .5·penalty: 3 → .034375, 4 → −.015625, 5 → .1
//
// FSD picks 5 where greedy picks 3. With 5 appended the context "2 5" and
// "5" were never followed, so only unigrams count (1/9 each, undiscounted):
// 3 → .2 − .0556, 4 → .15 − .0556, 5 → .1 − .0556: 3 wins.
func TestFSDByHand(t *testing.T) {
	logits := fsdLogits()
	hist := []int{1, 2, 3, 1, 2, 4, 1, 2}
	var f fsdScratch
	pool := f.softmaxPool(logits, 1)
	top := pool[:3]
	if ids := []int32{top[0].id, top[1].id, top[2].id}; !slices.Equal(ids, []int32{3, 4, 5}) {
		t.Fatalf("top 3 = %v", ids)
	}
	f.ngram(hist, 3, 0.9, top)
	for i, w := range []float64{0.33125, 0.33125, 0} {
		if math.Abs(top[i].key-w) > 1e-6 {
			t.Errorf("penalty of %d: %.7f, want %.7f", top[i].id, top[i].key, w)
		}
	}
	for _, tc := range []struct {
		hist []int
		cfg  Config
		want int
	}{
		{hist, fsdConfig(3), 5},
		{append(slices.Clone(hist), 5), fsdConfig(3), 3},
		{hist, fsdConfig(1), 3},     // one candidate
		{[]int{2}, fsdConfig(3), 3}, // shorter than n−1: no penalty, the most likely
		{hist, func() Config { c := fsdConfig(3); c.FSDAlpha = 0; return c }(), 3},
		{hist, func() Config { c := fsdConfig(3); c.IgnoreEOS, c.EOS = true, []int{5}; return c }(), 3},
		// temperature 0 is floored at 0.001: p(3) ≈ 1, the others ≈ 0, and
		// .5 − .165625 beats every −α·penalty
		{hist, func() Config { c := fsdConfig(3); c.Temperature = 0; return c }(), 3},
	} {
		got, err := FSDChoice(logits, tc.hist, tc.cfg)
		if err != nil || got != tc.want {
			t.Errorf("history %v, %+v: got %d (%v), want %d", tc.hist, tc.cfg, got, err, tc.want)
		}
	}
	// The Sampler does the same, and records its choices.
	s := newSampler(t, fsdConfig(3), hist)
	if a, b := s.Sample(logits), s.Sample(logits); a != 5 || b != 3 {
		t.Errorf("sampler chose %d %d, want 5 3", a, b)
	}
	if _, err := FSDChoice(logits, hist, Config{}); err == nil {
		t.Error("FSDChoice accepted k = 0")
	}
}

// The Sampler's FSD is FSDChoice over its history: a run replays from its
// logits.
func TestFSDReplay(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const vocab = 64
	prompt := []int{1, 2, 3, 4, 1, 2, 3, 4, 5}
	cfg := DefaultConfig()
	cfg.Mode, cfg.Temperature = ModeFSD, 0.7
	s := newSampler(t, cfg, prompt)
	var rows [][]float32
	var toks []int
	for range 100 {
		l := make([]float32, vocab)
		for j := range l {
			l[j] = float32(r.NormFloat64())
		}
		l[7] += 3 // a strong favourite for the anti-LM to fight
		rows = append(rows, l)
		toks = append(toks, s.Sample(l))
	}
	hist := slices.Clone(prompt)
	for i, l := range rows {
		got, err := FSDChoice(l, hist, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got != toks[i] {
			t.Fatalf("step %d: replay %d, sampler %d", i, got, toks[i])
		}
		hist = append(hist, got)
	}
	if n := count(toks, 7); n == 0 || n == len(toks) {
		t.Errorf("token 7 chosen %d times of %d: the penalty never or always wins", n, len(toks))
	}
}

func count(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// java.util.Random's published values for seed 42.
func TestJavaRand(t *testing.T) {
	var r javaRand
	r.setSeed(42)
	for i, want := range []int32{-1170105035, 234785527, -1360544799, 205897768} {
		if got := r.next(32); got != want {
			t.Errorf("nextInt #%d = %d, want %d", i, got, want)
		}
	}
	r.setSeed(42)
	if got := r.nextDouble(); got != 0.7275636800328681 {
		t.Errorf("nextDouble = %v", got)
	}
	r.setSeed(42)
	if got := r.nextFloat(); got != 0.7275637 {
		t.Errorf("nextFloat = %v", got)
	}
}

// Randomized FSD: token 0 has p = .95 and the history starts with 1000
// zeros, so FSD (penalty ≈ 1 for token 0 while "0 0" is the context) picks
// another token where the top-p .93 branch keeps token 0 alone. For the
// first 10 generated tokens Inferflow's generator decides: nextFloat < .5
// samples (and spends a nextDouble on the draw), otherwise FSD; after
// that, always FSD.
func TestRandomFSD(t *testing.T) {
	ps := []float64{0.95, 0.03}
	for range 8 {
		ps = append(ps, 0.0025)
	}
	logits := lp(ps...)
	cfg := DefaultConfig()
	cfg.Mode, cfg.Temperature = ModeRandomFSD, 1
	sampled, fsdOther := 0, 0
	for seed := range uint64(8) {
		cfg.Seed = seed
		s := newSampler(t, cfg, make([]int, 1000))
		var coin javaRand
		coin.setSeed(seed)
		for step := range 20 {
			want, _ := FSDChoice(logits, s.History(), cfg)
			if step < 10 && coin.nextFloat() < 0.5 {
				coin.nextDouble()
				want = 0
				sampled++
			} else if want != 0 {
				fsdOther++
			}
			if got := s.Sample(logits); got != want {
				t.Fatalf("seed %d step %d: got %d, want %d", seed, step, got, want)
			}
		}
	}
	if sampled == 0 || fsdOther == 0 {
		t.Errorf("sampling branch %d times, FSD away from token 0 %d times: the test cannot tell the branches apart", sampled, fsdOther)
	}
}
