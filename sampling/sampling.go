// Package sampling picks the next token from a row of logits.
//
// It implements the samplers of llama.cpp (src/llama-sampling.cpp) with
// their semantics — greedy, temperature and dynamic temperature, top-k,
// top-p, min-p, locally typical, tail-free, top-n-sigma, XTC, mirostat 1
// and 2, DRY, repetition/presence/frequency penalties, logit bias and
// --ignore-eos — chained in a configurable order like llama.cpp's
// --samplers, and Inferflow's FSD and randomized FSD decoders
// (src/transformer/sampling_strategy.cc). docs/decoding.md defines each
// one and lists where weft departs from the reference.
//
// A Sampler serves one sequence: it keeps the tokens of that sequence
// (prompt and generated) for the samplers that look back, and the state of
// mirostat. Draws are seeded: the same Config (seed included) and the same
// logits and history give the same tokens, on any machine and under any
// GOMAXPROCS.
package sampling

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Config selects a decoding strategy. The zero Config is greedy decoding;
// DefaultConfig returns llama.cpp's and Inferflow's defaults. Each field
// names the command-line flag (llama.cpp's spelling) that sets it.
type Config struct {
	// Temperature (--temp) divides the logits before the draw; 0 means
	// greedy: the surviving token with the largest logit is chosen. In the
	// FSD modes it is the temperature of FSD's softmax, floored at 0.001 as
	// in Inferflow (whose default is 1).
	Temperature float64
	// TopK (--top-k) keeps the k largest logits; 0: off.
	TopK int
	// TopP (--top-p) keeps the smallest head of the sorted distribution
	// whose probability reaches p; 0 or 1: off.
	TopP float64
	// MinP (--min-p) keeps tokens whose probability is at least p times the
	// largest; 0: off.
	MinP float64
	// Seed (--seed) seeds every random draw: the final draw and mirostat's,
	// XTC's coin (its own stream, as in llama.cpp) and randomized FSD's
	// generator (Inferflow's, seeded the same way).
	Seed uint64

	// TypicalP (--typical) is locally typical sampling's mass p; 0 or 1: off.
	TypicalP float64
	// TFSZ (--tfs) is tail-free sampling's z; 0 or 1: off. (llama.cpp
	// removed it in 2024; weft follows the last llama.cpp that had it.)
	TFSZ float64
	// TopNSigma (--top-nsigma) keeps tokens whose logit is within n standard
	// deviations of the largest; ≤ 0: off (llama.cpp's default is -1).
	TopNSigma float64
	// XTCProbability (--xtc-probability) is the chance that XTC removes the
	// most likely tokens at a step; 0: off.
	XTCProbability float64
	// XTCThreshold (--xtc-threshold) is the probability a token needs to be
	// removed by XTC; above 0.5 XTC does nothing.
	XTCThreshold float64
	// DynatempRange (--dynatemp-range) makes the temperature range over
	// Temperature ± range by the entropy of the candidates; 0: off.
	DynatempRange float64
	// DynatempExponent (--dynatemp-exp) shapes that mapping (llama.cpp: 1).
	DynatempExponent float64

	// Mirostat (--mirostat) replaces the chain by mirostat 1 or 2 after
	// logit bias and temperature, as llama.cpp does; 0: off.
	Mirostat int
	// MirostatTau (--mirostat-ent) is the target surprise τ in bits; the
	// state μ starts at 2τ.
	MirostatTau float64
	// MirostatEta (--mirostat-lr) is the learning rate η of μ.
	MirostatEta float64

	// RepeatPenalty (--repeat-penalty) divides the positive logits and
	// multiplies the negative ones of tokens seen in the last RepeatLastN
	// tokens; 0 or 1: off.
	RepeatPenalty float64
	// RepeatLastN (--repeat-last-n) is the window of the three penalties;
	// 0 disables them, -1 means the whole history.
	RepeatLastN int
	// PresencePenalty (--presence-penalty) is subtracted once from the
	// logit of every token in the window; 0: off.
	PresencePenalty float64
	// FrequencyPenalty (--frequency-penalty) is subtracted per occurrence in
	// the window; 0: off.
	FrequencyPenalty float64

	// DryMultiplier (--dry-multiplier) scales DRY's penalty; 0: off.
	DryMultiplier float64
	// DryBase (--dry-base) is the base of DRY's exponential penalty (≥ 1;
	// llama.cpp: 1.75).
	DryBase float64
	// DryAllowedLength (--dry-allowed-length) is the longest repetition DRY
	// leaves alone (llama.cpp: 2).
	DryAllowedLength int
	// DryPenaltyLastN (--dry-penalty-last-n) is how many recent tokens DRY
	// scans; 0 disables DRY, -1 means the whole history.
	DryPenaltyLastN int
	// DrySequenceBreakers (--dry-sequence-breaker) are token sequences
	// that end a repetition for DRY; DryBreakers turns llama.cpp's strings
	// (default "\n", ":", "\"", "*") into them with a tokenizer.
	DrySequenceBreakers [][]int

	// LogitBias (--logit-bias) is added to the logits before anything else;
	// ParseLogitBias reads the flag's TOKEN(+|-)BIAS syntax.
	LogitBias []LogitBias
	// IgnoreEOS (--ignore-eos) adds a bias of -inf to every token in EOS.
	IgnoreEOS bool
	// EOS lists the model's end-of-generation token ids for IgnoreEOS.
	EOS []int

	// Samplers (--samplers) is the chain's order; nil means
	// DefaultSamplers, an empty chain draws from the softmax of the biased
	// logits. A sampler that is off does nothing wherever it stands.
	// ParseSamplers reads the flag's "a;b;c" syntax.
	Samplers []Stage

	// Mode (--sampler) chooses llama.cpp's chain (the zero value), "fsd" or
	// "random-fsd". The FSD modes use LogitBias, IgnoreEOS, Temperature and
	// the FSD fields; the chain's samplers and Mirostat do not apply.
	Mode Mode
	// FSDAlpha (--fsd-alpha) weighs the anti-LM penalty against the
	// probability (Inferflow: 0.5).
	FSDAlpha float64
	// FSDK (--fsd-k) is how many of the most likely tokens FSD compares
	// (Inferflow: 6; at most 50).
	FSDK int
	// FSDN (--fsd-n) is the order of FSD's n-gram anti-LM (Inferflow: 3).
	FSDN int
	// FSDBeta (--fsd-beta) is the n-gram back-off weight (Inferflow: 0.9).
	FSDBeta float64
}

// LogitBias adds Bias to the logit of Token (-inf forbids the token).
type LogitBias struct {
	Token int
	Bias  float64
}

// DefaultConfig returns llama.cpp's defaults for its samplers (temperature
// 0.8, top-k 40, top-p 0.95, min-p 0.05, the rest off with their default
// parameters) and Inferflow's for FSD. The seed is 0 and DRY has no
// sequence breakers: both need the caller (a random seed, a tokenizer).
func DefaultConfig() Config {
	return Config{
		Temperature:      0.8,
		TopK:             40,
		TopP:             0.95,
		MinP:             0.05,
		TypicalP:         1,
		TFSZ:             1,
		TopNSigma:        -1,
		XTCThreshold:     0.1,
		DynatempExponent: 1,
		MirostatTau:      5,
		MirostatEta:      0.1,
		RepeatPenalty:    1,
		RepeatLastN:      64,
		DryBase:          1.75,
		DryAllowedLength: 2,
		DryPenaltyLastN:  -1,
		Samplers:         DefaultSamplers(),
		Mode:             ModeChain,
		FSDAlpha:         0.5,
		FSDK:             6,
		FSDN:             3,
		FSDBeta:          0.9,
	}
}

// fsdPool is Inferflow's pool_size: FSD looks at the 50 largest logits.
const fsdPool = 50

// maxFSDN bounds the n-gram order (the scan keeps per-level counters).
const maxFSDN = 64

// Validate reports a config a user should fix; the error names the flag.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("sampling: %w", err)
	}
	return nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

func (c Config) validate() error {
	unit := func(flag string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("%s %v: must be between 0 and 1", flag, v)
		}
		return nil
	}
	nonneg := func(flag string, v float64) error {
		if bad(v) || v < 0 {
			return fmt.Errorf("%s %v: must be a finite number ≥ 0", flag, v)
		}
		return nil
	}
	finite := func(flag string, v float64) error {
		if bad(v) {
			return fmt.Errorf("%s %v: must be a finite number", flag, v)
		}
		return nil
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(nonneg("--temp", c.Temperature))
	if c.TopK < 0 {
		add(fmt.Errorf("--top-k %d: must be ≥ 0", c.TopK))
	}
	add(unit("--top-p", c.TopP))
	add(unit("--min-p", c.MinP))
	add(unit("--typical", c.TypicalP))
	add(unit("--tfs", c.TFSZ))
	add(finite("--top-nsigma", c.TopNSigma))
	add(unit("--xtc-probability", c.XTCProbability))
	add(unit("--xtc-threshold", c.XTCThreshold))
	add(nonneg("--dynatemp-range", c.DynatempRange))
	add(nonneg("--dynatemp-exp", c.DynatempExponent))
	if c.Mirostat < 0 || c.Mirostat > 2 {
		add(fmt.Errorf("--mirostat %d: must be 0 (off), 1 or 2", c.Mirostat))
	}
	add(nonneg("--mirostat-ent", c.MirostatTau))
	add(nonneg("--mirostat-lr", c.MirostatEta))
	add(nonneg("--repeat-penalty", c.RepeatPenalty))
	if c.RepeatLastN < -1 {
		add(fmt.Errorf("--repeat-last-n %d: must be ≥ -1 (-1: whole history)", c.RepeatLastN))
	}
	add(finite("--presence-penalty", c.PresencePenalty))
	add(finite("--frequency-penalty", c.FrequencyPenalty))
	if c.RepeatLastN == 0 {
		for _, p := range []struct {
			flag string
			on   bool
		}{
			{"--repeat-penalty", c.RepeatPenalty != 0 && c.RepeatPenalty != 1},
			{"--presence-penalty", c.PresencePenalty != 0},
			{"--frequency-penalty", c.FrequencyPenalty != 0},
		} {
			if p.on {
				add(fmt.Errorf("%s has no effect with --repeat-last-n 0 (use 64, llama.cpp's default, or -1 for the whole history)", p.flag))
			}
		}
	}
	add(nonneg("--dry-multiplier", c.DryMultiplier))
	if c.DryPenaltyLastN < -1 {
		add(fmt.Errorf("--dry-penalty-last-n %d: must be ≥ -1 (-1: whole history)", c.DryPenaltyLastN))
	}
	if c.DryMultiplier > 0 {
		if bad(c.DryBase) || c.DryBase < 1 {
			add(fmt.Errorf("--dry-base %v: must be ≥ 1 when --dry-multiplier is set (llama.cpp: 1.75)", c.DryBase))
		}
		if c.DryAllowedLength < 0 {
			add(fmt.Errorf("--dry-allowed-length %d: must be ≥ 0", c.DryAllowedLength))
		}
		if c.DryPenaltyLastN == 0 {
			add(errors.New("--dry-multiplier has no effect with --dry-penalty-last-n 0 (use -1 for the whole history)"))
		}
	}
	for i, b := range c.DrySequenceBreakers {
		if len(b) == 0 {
			add(fmt.Errorf("--dry-sequence-breaker #%d: empty token sequence", i+1))
		}
		for _, t := range b {
			if t < 0 {
				add(fmt.Errorf("--dry-sequence-breaker #%d: token %d must be ≥ 0", i+1, t))
				break
			}
		}
	}
	for _, b := range c.LogitBias {
		if b.Token < 0 {
			add(fmt.Errorf("--logit-bias %d: token id must be ≥ 0", b.Token))
		}
		if math.IsNaN(b.Bias) {
			add(fmt.Errorf("--logit-bias %d: bias is NaN", b.Token))
		}
	}
	if c.IgnoreEOS && len(c.EOS) == 0 {
		add(errors.New("--ignore-eos needs the model's end-of-generation token ids (Config.EOS)"))
	}
	for _, t := range c.EOS {
		if t < 0 {
			add(fmt.Errorf("--ignore-eos: EOS token %d must be ≥ 0", t))
		}
	}
	for _, st := range c.Samplers {
		if _, ok := stageOp(st); !ok {
			add(fmt.Errorf("--samplers: %w", unknownStage(string(st))))
		}
	}
	switch c.Mode {
	case "", ModeChain:
	case ModeFSD, ModeRandomFSD:
		if c.FSDK < 1 || c.FSDK > fsdPool {
			add(fmt.Errorf("--fsd-k %d: must be between 1 and %d (Inferflow: 6)", c.FSDK, fsdPool))
		}
		if c.FSDN < 1 || c.FSDN > maxFSDN {
			add(fmt.Errorf("--fsd-n %d: must be between 1 and %d (Inferflow: 3)", c.FSDN, maxFSDN))
		}
		add(unit("--fsd-alpha", c.FSDAlpha))
		add(unit("--fsd-beta", c.FSDBeta))
		if c.Mirostat != 0 {
			add(fmt.Errorf("--mirostat %d and --sampler %s both choose the token: pick one", c.Mirostat, c.Mode))
		}
	default:
		add(fmt.Errorf("--sampler: %w", unknownMode(string(c.Mode))))
	}
	return errors.Join(errs...)
}

// Sampler draws tokens under one Config for one sequence. It reuses its
// buffers and keeps the sequence's history, so a Sampler serves one
// sequence at a time; it is not safe for concurrent use.
type Sampler struct {
	cfg  Config
	ops  []op      // the chain, resolved
	bias []biasAdd // LogitBias and IgnoreEOS merged

	rng    *rand.Rand // the final draw (and mirostat's)
	xtcRNG *rand.Rand // XTC's coin, its own stream as in llama.cpp
	ifRNG  javaRand   // randomized FSD: Inferflow's generator
	mu     float32    // mirostat's μ

	hist    []int // prompt then generated tokens, oldest first
	nPrompt int   // how many of hist came from AcceptPrompt

	breakers map[int][][]int // DRY: head token → tails

	w   work     // candidate buffers
	pen penState // penalty counters
	dry dryState
	fsd fsdScratch
}

type biasAdd struct {
	id   int
	bias float32
}

// New returns a sampler for one sequence with an empty history.
func New(cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sampler{cfg: cfg, hist: make([]int, 0, 1024)}
	chain := cfg.Samplers
	if chain == nil {
		chain = DefaultSamplers()
	}
	for _, st := range chain {
		o, _ := stageOp(st)
		s.ops = append(s.ops, o)
	}
	for _, b := range cfg.LogitBias {
		s.bias = append(s.bias, biasAdd{b.Token, float32(b.Bias)})
	}
	if cfg.IgnoreEOS {
		for _, t := range cfg.EOS {
			s.bias = append(s.bias, biasAdd{t, float32(math.Inf(-1))})
		}
	}
	if cfg.DryMultiplier > 0 && len(cfg.DrySequenceBreakers) > 0 {
		s.breakers = make(map[int][][]int)
		for _, b := range cfg.DrySequenceBreakers {
			s.breakers[b[0]] = append(s.breakers[b[0]], b[1:])
		}
	}
	s.Reset()
	return s, nil
}

// Reset empties the history and restarts the random streams and mirostat's
// μ, so the Sampler serves a new sequence exactly as a fresh one would.
func (s *Sampler) Reset() {
	seed := s.cfg.Seed
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.xtcRNG = rand.New(rand.NewPCG(seed, seed^0xd1b54a32d192ed03))
	s.ifRNG.setSeed(seed)
	s.mu = 2 * float32(s.cfg.MirostatTau)
	s.hist = s.hist[:0]
	s.nPrompt = 0
}

// AcceptPrompt appends prompt tokens to the history. Penalties, DRY and FSD
// look at them as llama.cpp and Inferflow do; randomized FSD does not count
// them as generated.
func (s *Sampler) AcceptPrompt(tokens []int) {
	s.hist = append(s.hist, tokens...)
	s.nPrompt += len(tokens)
}

// Accept appends a generated token to the history. Sample already does so
// for the token it returns; call Accept for tokens chosen elsewhere (forced
// tokens, tokens from Choose).
func (s *Sampler) Accept(token int) {
	s.hist = append(s.hist, token)
}

// History returns a copy of the history: the prompt, then the generated
// tokens.
func (s *Sampler) History() []int {
	return append([]int(nil), s.hist...)
}

// Mu returns mirostat's state μ (2τ before the first token).
func (s *Sampler) Mu() float64 { return float64(s.mu) }

// Greedy returns the index of the largest logit (the lowest index on ties).
func Greedy(logits []float32) int {
	if len(logits) == 0 {
		return 0
	}
	best, bv := 0, logits[0]
	for i, v := range logits {
		if v > bv {
			best, bv = i, v
		}
	}
	return best
}

// Sample picks a token from logits (not modified) and appends it to the
// history. See Choose for the order of the samplers.
func (s *Sampler) Sample(logits []float32) int {
	t := s.Choose(logits)
	s.hist = append(s.hist, t)
	return t
}

// Choose picks a token from logits (not modified) without appending it to
// the history; random streams and mirostat's μ do advance.
//
// In chain mode the logit bias applies first, then the samplers of
// Config.Samplers in order (llama.cpp's default: penalties, DRY,
// top-n-sigma, top-k, tail-free, typical, top-p, min-p, XTC, temperature),
// then the draw. With Mirostat set, logit bias, temperature and mirostat
// run instead (llama.cpp ignores the chain then). In the FSD modes the logit
// bias applies, then Inferflow's algorithm.
func (s *Sampler) Choose(logits []float32) int {
	if len(logits) == 0 {
		return 0
	}
	switch s.cfg.Mode {
	case ModeFSD:
		return s.chooseFSD(logits, false)
	case ModeRandomFSD:
		return s.chooseFSD(logits, true)
	}
	if s.greedyOnly() {
		return Greedy(logits)
	}
	w := s.run(logits)
	switch s.cfg.Mirostat {
	case 1:
		return s.mirostat1(w, len(logits))
	case 2:
		return s.mirostat2(w)
	}
	return w.draw(s.rng)
}

// run applies everything before the draw: logit bias, then the chain (or
// the temperature, before mirostat).
func (s *Sampler) run(logits []float32) *work {
	w := &s.w
	w.reset(logits)
	s.applyBias(w)
	if s.cfg.Mirostat != 0 {
		w.temperature(float32(s.cfg.Temperature))
		return w
	}
	for _, o := range s.ops {
		s.apply(o, w)
	}
	return w
}

// greedyOnly reports that the chain reduces to Greedy: temperature 0 and
// nothing that moves logits or can drop the largest one.
func (s *Sampler) greedyOnly() bool {
	c := &s.cfg
	return c.Mirostat == 0 && c.Temperature == 0 && c.DynatempRange == 0 &&
		len(s.bias) == 0 && !s.penaltiesOn() && !s.dryOn() &&
		!typicalOn(c.TypicalP) && !s.xtcOn()
}

func (s *Sampler) applyBias(w *work) {
	if len(s.bias) == 0 {
		return
	}
	d := w.writable()
	for _, b := range s.bias {
		if b.id < len(d) {
			d[b.id] += b.bias
		}
	}
}

func (s *Sampler) apply(o op, w *work) {
	c := &s.cfg
	switch o {
	case opPenalties:
		s.penalties(w)
	case opDRY:
		s.applyDRY(w)
	case opTopNSigma:
		w.topNSigma(c.TopNSigma)
	case opTopK:
		w.topK(c.TopK)
	case opTFS:
		w.tailFree(c.TFSZ)
	case opTypical:
		w.typical(c.TypicalP)
	case opTopP:
		w.topP(c.TopP)
	case opMinP:
		w.minP(c.MinP)
	case opXTC:
		if s.xtcOn() {
			w.xtc(s.xtcRNG, c.XTCProbability, c.XTCThreshold)
		}
	case opTemperature:
		w.dynatemp(c.Temperature, c.DynatempRange, c.DynatempExponent)
	}
}

func (s *Sampler) xtcOn() bool {
	return s.cfg.XTCProbability > 0 && float32(s.cfg.XTCThreshold) <= 0.5
}

func typicalOn(p float64) bool { return p > 0 && p < 1 }
