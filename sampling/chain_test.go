package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// lp returns logits whose softmax is ps (ln p, in float32).
func lp(ps ...float64) []float32 {
	l := make([]float32, len(ps))
	for i, p := range ps {
		l[i] = float32(math.Log(p))
	}
	return l
}

func newSampler(t *testing.T, cfg Config, hist []int) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AcceptPrompt(hist)
	return s
}

// probsAfter runs everything before the draw and returns the distribution
// the draw uses, by token id.
func probsAfter(t *testing.T, cfg Config, logits []float32, hist []int) []float64 {
	t.Helper()
	s := newSampler(t, cfg, hist)
	w := s.run(logits)
	out := make([]float64, len(logits))
	if w.isDense {
		maxL := slices.Max(w.dense)
		var z float64
		for i, v := range w.dense {
			out[i] = math.Exp(float64(v - maxL))
			z += out[i]
		}
		for i := range out {
			out[i] /= z
		}
		return out
	}
	w.softmax()
	for _, c := range w.c {
		out[c.id] = c.p
	}
	return out
}

// logitsAfter runs everything before the draw and returns the logits by
// token id (-inf for dropped tokens).
func logitsAfter(t *testing.T, cfg Config, logits []float32, hist []int) []float32 {
	t.Helper()
	s := newSampler(t, cfg, hist)
	w := s.run(logits)
	if w.isDense {
		return slices.Clone(w.dense)
	}
	out := make([]float32, len(logits))
	for i := range out {
		out[i] = ninf()
	}
	for _, c := range w.c {
		out[c.id] = c.logit
	}
	return out
}

func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// Each sampler on a tiny vocabulary; the wanted distributions are worked
// out by hand in the comments.
func TestSamplers(t *testing.T) {
	only := func(st ...Stage) []Stage { return st }
	p4 := lp(0.5, 0.25, 0.15, 0.1)
	t4 := lp(0.4, 0.3, 0.2, 0.1)
	for _, tc := range []struct {
		name   string
		cfg    Config
		logits []float32
		want   []float64
	}{
		{"top-k 2", Config{Temperature: 1, TopK: 2}, p4, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
		{"top-p 0.7: .5+.25 reaches it", Config{Temperature: 1, TopP: 0.7}, p4, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
		{"min-p 0.4: p ≥ 0.2", Config{Temperature: 1, MinP: 0.4}, p4, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
		// H = 1.279854; |−ln p − H| = .36356, .07588, .32959, 1.02273:
		// order 1, 2, 0, 3; masses .3, .5, .9
		{"typical 0.45", Config{Temperature: 1, TypicalP: 0.45}, t4, []float64{0, 0.6, 0.4, 0}},
		{"typical 0.55", Config{Temperature: 1, TypicalP: 0.55}, t4, []float64{0.4 / 0.9, 0.3 / 0.9, 0.2 / 0.9, 0}},
		// p .35 .3 .2 .1 .05: first differences .05 .1 .1 .05, |second|
		// .05 0 .05, normalised .5 0 .5, running sums .5 .5 1: the sum
		// first exceeds .6 at i = 2 (keep 2) and .4 at i = 0, which
		// min_keep 1 moves to i = 1 (keep 1)
		{"tfs 0.6", Config{Temperature: 1, TFSZ: 0.6}, lp(0.35, 0.3, 0.2, 0.1, 0.05), []float64{0.35 / 0.65, 0.3 / 0.65, 0, 0, 0}},
		{"tfs 0.4", Config{Temperature: 1, TFSZ: 0.4}, lp(0.35, 0.3, 0.2, 0.1, 0.05), []float64{1, 0, 0, 0, 0}},
		// logits 3 2 1 0 -1: mean 1, σ = √2; 3 − σ = 1.586 keeps 3 and 2:
		// 1/(1+e⁻¹), e⁻¹/(1+e⁻¹)
		{"top-n-sigma 1", Config{Temperature: 1, TopNSigma: 1}, []float32{3, 2, 1, 0, -1}, []float64{0.7310585786, 0.2689414214, 0, 0, 0}},
		// 3 − 2√2 = 0.172 keeps 3 2 1: e⁰, e⁻¹, e⁻² normalised
		{"top-n-sigma 2", Config{Temperature: 1, TopNSigma: 2}, []float32{3, 2, 1, 0, -1}, []float64{0.6652409558, 0.2447284711, 0.0900305732, 0, 0}},
		{"top-n-sigma on a list (after min-p)", Config{Temperature: 1, TopNSigma: 1, MinP: 0.001, Samplers: only(StageMinP, StageTopNSigma)}, []float32{3, 2, 1, 0, -1}, []float64{0.7310585786, 0.2689414214, 0, 0, 0}},
		{"top-n-sigma ignores -inf", Config{Temperature: 1, TopNSigma: 1}, []float32{3, 2, 1, 0, -1, ninf()}, []float64{0.7310585786, 0.2689414214, 0, 0, 0, 0}},
		// tokens with p ≥ .25: 0 and 1; all but the least likely go
		{"xtc threshold .25", Config{Temperature: 1, XTCProbability: 1, XTCThreshold: 0.25}, t4, []float64{0, 0.5, 1.0 / 3, 1.0 / 6}},
		{"xtc threshold .35: one above, nothing removed", Config{Temperature: 1, XTCProbability: 1, XTCThreshold: 0.35}, t4, []float64{0.4, 0.3, 0.2, 0.1}},
		{"xtc threshold .6 is off", Config{Temperature: 1, XTCProbability: 1, XTCThreshold: 0.6}, t4, []float64{0.4, 0.3, 0.2, 0.1}},
		// p^(1/2) normalised
		{"temperature 2", Config{Temperature: 2}, p4, []float64{0.3700903444, 0.2616933922, 0.2027068299, 0.1655094336}},
		// p .5 .25 .125 .125: H = 1.2130076, H/ln 4 = .875, T = .5 + 1·.875
		// = 1.375, p^(1/T) normalised
		{"dynatemp", Config{Temperature: 1, DynatempRange: 0.5, DynatempExponent: 1}, lp(0.5, 0.25, 0.125, 0.125), []float64{0.4284885267, 0.2588262331, 0.1563426201, 0.1563426201}},
		// T = .5 + .875² = 1.265625
		{"dynatemp exponent 2", Config{Temperature: 1, DynatempRange: 0.5, DynatempExponent: 2}, lp(0.5, 0.25, 0.125, 0.125), []float64{0.4450093296, 0.2573464936, 0.1488220884, 0.1488220884}},
		// softmax of 1 2
		{"ignore-eos", Config{Temperature: 1, IgnoreEOS: true, EOS: []int{2}}, []float32{1, 2, 3}, []float64{0.2689414214, 0.7310585786, 0}},
		// softmax of 2 2 3
		{"logit bias", Config{Temperature: 1, LogitBias: []LogitBias{{0, 1}}}, []float32{1, 2, 3}, []float64{0.2119415576, 0.2119415576, 0.5761168848}},
		// temperature 100 first: p^.01 normalised is .2522 .2505 .2492
		// .2482, whose running sums reach .7 at the third token
		{"temperature before top-p", Config{Temperature: 100, TopP: 0.7, Samplers: only(StageTemperature, StageTopP)}, p4, []float64{0.3354438392, 0.3331267593, 0.3314294015, 0}},
		{"top-p before temperature", Config{Temperature: 100, TopP: 0.7}, p4, []float64{0.5017328610, 0.4982671390, 0, 0}},
		{"empty chain: raw softmax", Config{Temperature: 100, TopK: 1, Samplers: []Stage{}}, p4, []float64{0.5, 0.25, 0.15, 0.1}},
	} {
		got := probsAfter(t, tc.cfg, tc.logits, nil)
		if !near(got, tc.want, 1e-6) {
			t.Errorf("%s: got %.6f, want %.6f", tc.name, got, tc.want)
		}
	}
}

// With temperature 0 the chain still runs: typical can drop the most
// likely token, and the greedy choice is then the best survivor.
func TestGreedyAfterTypical(t *testing.T) {
	// p .4 .3 .3: H = 1.0889, keys .1726 .1151 .1151: order 1, 2, 0; the
	// mass exceeds .5 after tokens 1 and 2; the larger logit of the two
	// (a tie) goes to the lower id
	s := newSampler(t, Config{TypicalP: 0.5}, nil)
	logits := lp(0.4, 0.3, 0.3)
	for range 10 {
		if got := s.Sample(logits); got != 1 {
			t.Fatalf("got %d, want 1", got)
		}
	}
	if g := Greedy(logits); g != 0 {
		t.Fatalf("Greedy = %d", g)
	}
}

func TestPenalties(t *testing.T) {
	logits := []float32{2, -1, 0.5, 1}
	hist := []int{0, 0, 1, 3}
	pen := []Stage{StagePenalties}
	inf := ninf()
	for _, tc := range []struct {
		name string
		cfg  Config
		want []float32
	}{
		// window 0 1 3: each once. 2/2 − (.5 + .25); −1·2 − .75; 1/2 − .75
		{"last 3", Config{Temperature: 1, RepeatPenalty: 2, FrequencyPenalty: 0.5, PresencePenalty: 0.25, RepeatLastN: 3, Samplers: pen}, []float32{0.25, -2.75, 0.5, -0.25}},
		// whole history: token 0 twice, 1 − (2·.5 + .25)
		{"whole history", Config{Temperature: 1, RepeatPenalty: 2, FrequencyPenalty: 0.5, PresencePenalty: 0.25, RepeatLastN: -1, Samplers: pen}, []float32{-0.25, -2.75, 0.5, -0.25}},
		{"repeat only", Config{Temperature: 1, RepeatPenalty: 2, RepeatLastN: 64, Samplers: pen}, []float32{1, -2, 0.5, 0.5}},
		{"presence only", Config{Temperature: 1, PresencePenalty: 1, RepeatLastN: 64, Samplers: pen}, []float32{1, -2, 0.5, 0}},
		{"frequency only", Config{Temperature: 1, FrequencyPenalty: 1, RepeatLastN: 64, Samplers: pen}, []float32{0, -2, 0.5, 0}},
		// top-k 3 leaves 0 3 2 as a list; the penalties then apply to it
		{"after top-k", Config{Temperature: 1, TopK: 3, RepeatPenalty: 2, FrequencyPenalty: 0.5, PresencePenalty: 0.25, RepeatLastN: 3, Samplers: []Stage{StageTopK, StagePenalties}}, []float32{0.25, inf, 0.5, -0.25}},
	} {
		got := logitsAfter(t, tc.cfg, logits, hist)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// DRY on "a b c c b c y a b c" (a=0 b=1 c=2 y=3), llama.cpp's own example.
// Going back from the end, "a b c" also ends at position 2 (followed by c),
// "b c" at 5 (followed by y), "c" at 3 (followed by b): c would extend a
// repetition of 3, y one of 2, b one of 1.
func TestDRY(t *testing.T) {
	hist := []int{0, 1, 2, 2, 1, 2, 3, 0, 1, 2}
	logits := make([]float32, 5)
	cfg := func(allowed, lastN int, breakers ...[]int) Config {
		return Config{Temperature: 1, DryMultiplier: 0.8, DryBase: 1.75, DryAllowedLength: allowed,
			DryPenaltyLastN: lastN, DrySequenceBreakers: breakers, Samplers: []Stage{StageDRY}}
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []float32
	}{
		// c: .8·1.75^(3−2) = 1.4; y: .8·1.75⁰ = .8; b: 1 < 2
		{"allowed 2", cfg(2, -1), []float32{0, 0, -1.4, -0.8, 0}},
		// c 2.45, y 1.4, b .8
		{"allowed 1", cfg(1, -1), []float32{0, -0.8, -2.45, -1.4, 0}},
		// the last a is 2 tokens back: repetitions are cut to 2
		{"breaker a", cfg(2, -1, []int{0}), []float32{0, 0, -0.8, -0.8, 0}},
		// y breaks 3 back (no cut for c's 3) and is never penalised itself
		{"breaker y", cfg(2, -1, []int{3}), []float32{0, 0, -1.4, 0, 0}},
		// "b c" ends the window: the repetition limit is 0 < 2, no penalty
		{"breaker b c", cfg(2, -1, []int{1, 2}), []float32{0, 0, 0, 0, 0}},
		// last 4 tokens y a b c: nothing repeats
		{"last 4", cfg(2, 4), []float32{0, 0, 0, 0, 0}},
		{"window too short", cfg(10, -1), []float32{0, 0, 0, 0, 0}},
	} {
		got := logitsAfter(t, tc.cfg, logits, hist)
		want := tc.want
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-6 {
				t.Errorf("%s: got %v, want %v", tc.name, got, want)
				break
			}
		}
	}
	// As a list (after min-p) the same penalties apply.
	c := cfg(2, -1)
	c.MinP, c.Samplers = 0.01, []Stage{StageMinP, StageDRY}
	if got := logitsAfter(t, c, logits, hist); !slices.Equal(got, []float32{0, 0, -1.4, -0.8, 0}) {
		t.Errorf("list: got %v", got)
	}
	// 300 a's: a would extend a repetition of 299; the exponent 297 is
	// clamped to ⌊88.7228391 / ln 1.75⌋ = 158, so the penalty stays finite.
	long := make([]int, 300)
	got := logitsAfter(t, cfg(2, -1), make([]float32, 2), long)
	want := float32(-0.8 * math.Pow(1.75, 158))
	if math.Abs(float64(got[0]/want-1)) > 1e-6 || got[1] != 0 {
		t.Errorf("long repetition: got %v, want [%v 0]", got, want)
	}
}

func TestMirostat(t *testing.T) {
	// p .5 .25 .125 .125: surprises 1 2 3 3 bits.
	logits := lp(0.5, 0.25, 0.125, 0.125)
	// Mirostat 2, τ 2: μ = 4 keeps every token; μ' = 4 − .1·(s − 2).
	wantMu := map[int]float64{0: 4.1, 1: 4.0, 2: 3.9, 3: 3.9}
	// Mirostat 2, τ 1: μ = 2 keeps tokens 0 and 1, renormalised 2/3 1/3
	// with surprises .58496 and 1.58496 bits: μ' = 2 − .1·(s − 1).
	// Mirostat 1, τ 1: ŝ = Σtb/Σt² with t = ln 2, ln 1.5, ln 4/3 and
	// b = ln 2, ln 2, 0 is 1.0465686; ε̂ = .0465686 and
	// k = (ε̂·2² / (1 − 4^−ε̂))^(1/ŝ) = 2.838 keeps the same two tokens.
	wantMu1 := map[int]float64{0: 2.0415037499, 1: 1.9415037499}
	for seed := range uint64(30) {
		s := newSampler(t, Config{Temperature: 1, Mirostat: 2, MirostatTau: 2, MirostatEta: 0.1, Seed: seed}, nil)
		if s.Mu() != 4 {
			t.Fatalf("μ starts at %v, want 2τ = 4", s.Mu())
		}
		tok := s.Sample(logits)
		if math.Abs(s.Mu()-wantMu[tok]) > 1e-6 {
			t.Errorf("mirostat 2 τ 2 seed %d: token %d, μ %v, want %v", seed, tok, s.Mu(), wantMu[tok])
		}
		for _, m := range []int{1, 2} {
			s := newSampler(t, Config{Temperature: 1, Mirostat: m, MirostatTau: 1, MirostatEta: 0.1, Seed: seed}, nil)
			tok := s.Sample(logits)
			want, ok := wantMu1[tok]
			if !ok || math.Abs(s.Mu()-want) > 1e-6 {
				t.Errorf("mirostat %d τ 1 seed %d: token %d, μ %v, want %v", m, seed, tok, s.Mu(), wantMu1)
			}
			s.Reset()
			if s.Mu() != 2 {
				t.Errorf("Reset: μ %v, want 2", s.Mu())
			}
		}
	}
	// A flat distribution gives ŝ = 0 and k = (2^μ/(N−1))^∞, ∞ or 0:
	// either way one token stays (llama.cpp's int conversion of ∞ on x86
	// is INT_MIN, raised to 1). Its surprise is 0: μ' = 2τ + ητ.
	s := newSampler(t, Config{Temperature: 1, Mirostat: 1, MirostatTau: 5, MirostatEta: 0.1}, nil)
	for range 5 {
		if tok := s.Sample(make([]float32, 4)); tok != 0 {
			t.Fatalf("flat: token %d", tok)
		}
	}
	if want := 10 + 5*0.1*5; math.Abs(s.Mu()-want) > 1e-5 {
		t.Errorf("flat: μ %v after 5 tokens, want %v", s.Mu(), want)
	}
}

func TestDeterminism(t *testing.T) {
	full := DefaultConfig()
	full.RepeatPenalty, full.FrequencyPenalty, full.PresencePenalty = 1.1, 0.1, 0.1
	full.DryMultiplier = 0.8
	full.DrySequenceBreakers = [][]int{{3}, {5, 6}}
	full.TypicalP, full.TFSZ, full.TopNSigma = 0.95, 0.95, 2
	full.XTCProbability, full.XTCThreshold = 0.5, 0.1
	full.DynatempRange = 0.3
	full.TopK = 0
	full.LogitBias = []LogitBias{{7, 2}, {9, math.Inf(-1)}}
	miro := DefaultConfig()
	miro.Mirostat = 2
	fsd := DefaultConfig()
	fsd.Mode = ModeFSD
	rfsd := DefaultConfig()
	rfsd.Mode = ModeRandomFSD
	for name, cfg := range map[string]Config{"full": full, "mirostat": miro, "fsd": fsd, "random-fsd": rfsd} {
		run := func(seed uint64, s *Sampler) []int {
			if s == nil {
				cfg.Seed = seed
				s = newSampler(t, cfg, nil)
			}
			s.AcceptPrompt([]int{1, 2, 3, 4, 5, 6, 1, 2, 3})
			r := rand.New(rand.NewPCG(99, 1))
			logits := make([]float32, 500)
			out := make([]int, 200)
			for i := range out {
				for j := range logits {
					logits[j] = float32(r.NormFloat64() * 2)
				}
				out[i] = s.Sample(logits)
			}
			return out
		}
		a, b, c := run(7, nil), run(7, nil), run(8, nil)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different tokens", name)
		}
		if name != "fsd" && slices.Equal(a, c) {
			t.Errorf("%s: different seeds, same tokens", name)
		}
		cfg.Seed = 7
		s := newSampler(t, cfg, nil)
		run(0, s)
		s.Reset()
		if d := run(0, s); !slices.Equal(a, d) {
			t.Errorf("%s: Reset does not restart the sequence", name)
		}
	}
}

func TestHistory(t *testing.T) {
	s := newSampler(t, Config{}, []int{4, 5})
	s.Accept(1)
	tok := s.Sample([]float32{0, 0, 3})
	s.Choose([]float32{9, 0, 0})
	if h := s.History(); !slices.Equal(h, []int{4, 5, 1, tok}) || tok != 2 {
		t.Errorf("history %v", h)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	fsd := func(c Config) Config {
		d := DefaultConfig()
		d.Mode = ModeFSD
		if c.FSDK != 0 {
			d.FSDK = c.FSDK
		}
		if c.FSDN != 0 {
			d.FSDN = c.FSDN
		}
		if c.FSDAlpha != 0 {
			d.FSDAlpha = c.FSDAlpha
		}
		if c.FSDBeta != 0 {
			d.FSDBeta = c.FSDBeta
		}
		d.Mirostat = c.Mirostat
		return d
	}
	for _, tc := range []struct {
		cfg  Config
		flag string
	}{
		{Config{Temperature: -1}, "--temp"},
		{Config{Temperature: math.NaN()}, "--temp"},
		{Config{TopK: -1}, "--top-k"},
		{Config{TopP: 1.5}, "--top-p"},
		{Config{MinP: -0.1}, "--min-p"},
		{Config{TypicalP: 2}, "--typical"},
		{Config{TFSZ: -1}, "--tfs"},
		{Config{TopNSigma: math.Inf(1)}, "--top-nsigma"},
		{Config{XTCProbability: 1.1}, "--xtc-probability"},
		{Config{XTCThreshold: -0.1}, "--xtc-threshold"},
		{Config{DynatempRange: -1}, "--dynatemp-range"},
		{Config{Mirostat: 3}, "--mirostat 3"},
		{Config{MirostatTau: -5}, "--mirostat-ent"},
		{Config{MirostatEta: math.NaN()}, "--mirostat-lr"},
		{Config{RepeatPenalty: -1}, "--repeat-penalty"},
		{Config{RepeatLastN: -2}, "--repeat-last-n"},
		{Config{RepeatPenalty: 1.1}, "--repeat-penalty has no effect with --repeat-last-n 0"},
		{Config{PresencePenalty: math.Inf(-1), RepeatLastN: 64}, "--presence-penalty"},
		{Config{FrequencyPenalty: 0.5}, "--frequency-penalty has no effect"},
		{Config{DryMultiplier: 0.8, DryPenaltyLastN: -1}, "--dry-base"},
		{Config{DryMultiplier: 0.8, DryBase: 1.75}, "--dry-penalty-last-n 0"},
		{Config{DryMultiplier: 0.8, DryBase: 1.75, DryPenaltyLastN: -1, DryAllowedLength: -1}, "--dry-allowed-length"},
		{Config{DrySequenceBreakers: [][]int{{}}}, "--dry-sequence-breaker"},
		{Config{LogitBias: []LogitBias{{-1, 1}}}, "--logit-bias"},
		{Config{IgnoreEOS: true}, "--ignore-eos"},
		{Config{Samplers: []Stage{"top_k", "warp"}}, `--samplers: unknown sampler "warp"`},
		{Config{Mode: "beam"}, `--sampler: unknown decoding algorithm "beam"`},
		{fsd(Config{FSDK: 51}), "--fsd-k 51"},
		{fsd(Config{FSDN: -1}), "--fsd-n"},
		{fsd(Config{FSDAlpha: 2}), "--fsd-alpha"},
		{fsd(Config{FSDBeta: -1}), "--fsd-beta"},
		{fsd(Config{Mirostat: 2}), "--mirostat 2 and --sampler fsd"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: error %v, want one naming %q", tc.cfg, err, tc.flag)
		}
	}
	for _, c := range []Config{{}, DefaultConfig()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestParseLogitBias(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want LogitBias
		err  string
	}{
		{in: "15043+1", want: LogitBias{15043, 1}},
		{in: "15043-1", want: LogitBias{15043, -1}},
		{in: "7+0.5", want: LogitBias{7, 0.5}},
		{in: "2-inf", want: LogitBias{2, math.Inf(-1)}},
		{in: "0+1e2", want: LogitBias{0, 100}},
		{in: "", err: "no + or -"},
		{in: "15043", err: "no + or -"},
		{in: "+1", err: "missing token id"},
		{in: "-3+1", err: "missing token id"},
		{in: "12+", err: "missing bias"},
		{in: "x+1", err: `token id "x"`},
		{in: "12+x", err: `bias "x"`},
		{in: "12+-1", err: "second sign"},
		{in: "12+nan", err: `bias "nan"`},
	} {
		got, err := ParseLogitBias(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--logit-bias") {
				t.Errorf("%q: error %v, want one with %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case got != tc.want:
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseSamplers(t *testing.T) {
	got, err := ParseSamplers("penalties;dry;top_k;typ_p;top_p;min_p;xtc;temperature")
	want := []Stage{StagePenalties, StageDRY, StageTopK, StageTypical, StageTopP, StageMinP, StageXTC, StageTemperature}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("canonical: %v %v", got, err)
	}
	got, err = ParseSamplers("top-k;typical;nucleus;temp;tfs;top-n-sigma")
	want = []Stage{StageTopK, StageTypical, StageTopP, StageTemperature, StageTFS, StageTopNSigma}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("alternative names: %v %v", got, err)
	}
	if _, err := ParseSamplers("top_k;mirostat;temperature"); err == nil || !strings.Contains(err.Error(), `unknown sampler "mirostat"`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := ParseSamplers(""); err == nil {
		t.Error("empty list accepted")
	}
	got, err = ParseSamplerSeq("edskfypmxt")
	if err != nil || !slices.Equal(got, DefaultSamplers()) {
		t.Errorf("sequence: %v %v", got, err)
	}
	if _, err := ParseSamplerSeq("kq"); err == nil || !strings.Contains(err.Error(), `'q'`) {
		t.Errorf("unknown letter: %v", err)
	}
	if s := FormatSamplers(DefaultSamplers()); s != "penalties;dry;top_n_sigma;top_k;tfs_z;typ_p;top_p;min_p;xtc;temperature" {
		t.Errorf("default chain %q", s)
	}
	for in, want := range map[string]Mode{"chain": ModeChain, "fsd": ModeFSD, "random-fsd": ModeRandomFSD} {
		if m, err := ParseMode(in); m != want || err != nil {
			t.Errorf("ParseMode(%q) = %q, %v", in, m, err)
		}
	}
	if _, err := ParseMode("beam"); err == nil || !strings.Contains(err.Error(), "--sampler") {
		t.Errorf("ParseMode(beam): %v", err)
	}
}

// llama.cpp's breaker processing on a toy vocabulary: tokens containing a
// breaker are breakers; a token ending with the start of a breaker heads a
// sequence whose tail is the rest, tokenized.
func TestDryBreakers(t *testing.T) {
	vocab := []string{"a", "b:", "\n", "x\ny", ":c", "ab", "*", "b"}
	tok := func(s string) ([]int, error) {
		if i := slices.Index(vocab, s); i >= 0 {
			return []int{i}, nil
		}
		return nil, errBadText(s)
	}
	got, err := DryBreakers([]string{"\n", ":", "", "ab"}, len(vocab), func(id int) string { return vocab[id] }, tok)
	want := [][]int{{2}, {3}, {1}, {4}, {0, 7}, {5}}
	if err != nil || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
	if _, err := DryBreakers([]string{"ax"}, len(vocab), func(id int) string { return vocab[id] }, tok); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("tokenizer error: %v", err)
	}
}

type errBadText string

func (e errBadText) Error() string { return "cannot tokenize " + string(e) }

func vocab32k() []float32 { return vocabLogits(32000) }

// fullChain turns on every sampler of the chain.
func fullChain() Config {
	c := DefaultConfig()
	c.Seed = 1
	c.RepeatPenalty, c.FrequencyPenalty, c.PresencePenalty = 1.1, 0.1, 0.1
	c.DryMultiplier = 0.8
	c.DrySequenceBreakers = [][]int{{13}, {29871, 13}, {1115}}
	c.TopNSigma = 3
	c.TFSZ, c.TypicalP = 0.95, 0.95
	c.XTCProbability, c.XTCThreshold = 0.5, 0.1
	c.DynatempRange = 0.2
	c.LogitBias = []LogitBias{{100, 1}, {200, -1}}
	c.IgnoreEOS, c.EOS = true, []int{2}
	return c
}

// prompt1k is a 1024-token history with repetitions for DRY to find.
func prompt1k() []int {
	r := rand.New(rand.NewPCG(5, 6))
	h := make([]int, 1024)
	for i := range h {
		if i >= 64 && r.IntN(4) == 0 {
			h[i] = h[i-37]
		} else {
			h[i] = r.IntN(32000)
		}
	}
	return h
}

func chainConfigs() []struct {
	name string
	cfg  Config
} {
	miro := DefaultConfig()
	miro.Mirostat = 2
	miro1 := DefaultConfig()
	miro1.Mirostat = 1
	fsd := DefaultConfig()
	fsd.Mode = ModeFSD
	rfsd := DefaultConfig()
	rfsd.Mode = ModeRandomFSD
	return []struct {
		name string
		cfg  Config
	}{
		{"full", fullChain()},
		{"llama.cpp-defaults", DefaultConfig()},
		{"top-p-only", Config{Temperature: 1, TopP: 0.9}},
		{"typical-only", Config{Temperature: 1, TypicalP: 0.9}},
		{"temperature-only", Config{Temperature: 1}},
		{"mirostat-1", miro1},
		{"mirostat-2", miro},
		{"fsd", fsd},
		{"random-fsd", rfsd},
		{"greedy", Config{}},
	}
}

func TestChainAllocs(t *testing.T) {
	logits := vocab32k()
	for _, tc := range chainConfigs() {
		s := newSampler(t, tc.cfg, prompt1k())
		s.Choose(logits)
		if a := testing.AllocsPerRun(20, func() { s.Choose(logits) }); a != 0 {
			t.Errorf("%s: %.0f allocations per token", tc.name, a)
		}
	}
}

// BenchmarkChain: one sample at vocabulary 32 000 after a 1024-token
// history; "full" has every sampler of the chain on.
func BenchmarkChain(b *testing.B) {
	logits := vocab32k()
	for _, tc := range chainConfigs() {
		b.Run(tc.name, func(b *testing.B) {
			s, err := New(tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			s.AcceptPrompt(prompt1k())
			for b.Loop() {
				s.Choose(logits)
			}
		})
	}
}

// top-p and typical on a large vocabulary keep what a full sort and a
// running sum keep (the definition, done the slow way).
func TestHeadsMatchFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	logits := make([]float32, 5000)
	for trial := range 20 {
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * (0.5 + float64(trial%4)))
		}
		logits[r.IntN(len(logits))] = ninf()
		p := 0.05 + 0.9*r.Float64()
		// the definition: probabilities, then the order, then the cut
		maxL := slices.Max(logits)
		probs := make([]float64, len(logits))
		var z float64
		for i, l := range logits {
			probs[i] = math.Exp(float64(l - maxL))
			z += probs[i]
		}
		var h float64
		for i := range probs {
			probs[i] /= z
			if probs[i] > 0 {
				h -= probs[i] * math.Log(probs[i])
			}
		}
		ids := make([]int, len(logits))
		for i := range ids {
			ids[i] = i
		}
		cut := func(less func(a, b int) bool, strict bool) []int {
			order := slices.Clone(ids)
			slices.SortStableFunc(order, func(a, b int) int {
				switch {
				case less(a, b):
					return -1
				case less(b, a):
					return 1
				}
				return a - b
			})
			var cum float64
			for i, id := range order {
				cum += probs[id]
				if cum > p || !strict && cum >= p {
					order = order[:i+1]
					break
				}
			}
			slices.Sort(order)
			return order
		}
		surprise := func(i int) float64 {
			if probs[i] == 0 {
				return math.Inf(1)
			}
			return math.Abs(-math.Log(probs[i]) - h)
		}
		wantP := cut(func(a, b int) bool { return logits[a] > logits[b] }, false)
		wantT := cut(func(a, b int) bool { return surprise(a) < surprise(b) }, true)
		for _, tc := range []struct {
			cfg  Config
			want []int
		}{
			{Config{Temperature: 1, TopP: p}, wantP},
			{Config{Temperature: 1, TypicalP: p}, wantT},
		} {
			got := probsAfter(t, tc.cfg, logits, nil)
			var kept []int
			for i, q := range got {
				if q > 0 {
					kept = append(kept, i)
				}
			}
			if !slices.Equal(kept, tc.want) {
				t.Errorf("trial %d, %+v: kept %d tokens, the definition %d", trial, tc.cfg, len(kept), len(tc.want))
			}
		}
	}
}
