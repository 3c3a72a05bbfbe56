package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/weftrun/weft/grammar"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/tokenizer"
)

// sampleFlags are weft run's decoding flags, spelled as llama.cpp's
// (docs/decoding.md defines each sampler).
type sampleFlags struct {
	cfg      sampling.Config
	samplers string
	seq      string
	mode     string
	bias     listFlag
	breakers listFlag

	grammar, grammarFile, schema, schemaFile string
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// addSampleFlags defines the sampler, FSD and grammar flags on fs.
func addSampleFlags(fs *flag.FlagSet) *sampleFlags {
	f := &sampleFlags{cfg: sampling.DefaultConfig()}
	c := &f.cfg
	fs.Float64Var(&c.Temperature, "temp", c.Temperature, "temperature (0: greedy)")
	fs.IntVar(&c.TopK, "top-k", c.TopK, "top-k (0: off)")
	fs.Float64Var(&c.TopP, "top-p", c.TopP, "top-p (1: off)")
	fs.Float64Var(&c.MinP, "min-p", c.MinP, "min-p (0: off)")
	fs.Float64Var(&c.TypicalP, "typical", c.TypicalP, "locally typical sampling, parameter p (1: off)")
	fs.Float64Var(&c.TFSZ, "tfs", c.TFSZ, "tail-free sampling, parameter z (1: off)")
	fs.Float64Var(&c.TopNSigma, "top-nsigma", c.TopNSigma, "top-n-sigma: keep logits within n standard deviations of the largest (-1: off)")
	fs.Float64Var(&c.TopNSigma, "top-n-sigma", c.TopNSigma, "same as --top-nsigma")
	fs.Float64Var(&c.XTCProbability, "xtc-probability", c.XTCProbability, "XTC: chance of removing the most likely tokens at a step (0: off)")
	fs.Float64Var(&c.XTCThreshold, "xtc-threshold", c.XTCThreshold, "XTC: probability a token needs to be removed (> 0.5: off)")
	fs.Float64Var(&c.DynatempRange, "dynatemp-range", c.DynatempRange, "dynamic temperature range (0: off)")
	fs.Float64Var(&c.DynatempExponent, "dynatemp-exp", c.DynatempExponent, "dynamic temperature exponent")
	fs.IntVar(&c.Mirostat, "mirostat", c.Mirostat, "mirostat: 0 off, 1 mirostat, 2 mirostat 2.0 (replaces the chain)")
	fs.Float64Var(&c.MirostatEta, "mirostat-lr", c.MirostatEta, "mirostat learning rate η")
	fs.Float64Var(&c.MirostatTau, "mirostat-ent", c.MirostatTau, "mirostat target entropy τ")
	fs.Float64Var(&c.RepeatPenalty, "repeat-penalty", c.RepeatPenalty, "penalize repeated tokens (1: off)")
	fs.IntVar(&c.RepeatLastN, "repeat-last-n", c.RepeatLastN, "tokens the penalties look back at (0: off, -1: all)")
	fs.Float64Var(&c.PresencePenalty, "presence-penalty", c.PresencePenalty, "presence penalty (0: off)")
	fs.Float64Var(&c.FrequencyPenalty, "frequency-penalty", c.FrequencyPenalty, "frequency penalty (0: off)")
	fs.Float64Var(&c.DryMultiplier, "dry-multiplier", c.DryMultiplier, "DRY multiplier (0: off)")
	fs.Float64Var(&c.DryBase, "dry-base", c.DryBase, "DRY base")
	fs.IntVar(&c.DryAllowedLength, "dry-allowed-length", c.DryAllowedLength, "DRY: longest repetition left alone")
	fs.IntVar(&c.DryPenaltyLastN, "dry-penalty-last-n", c.DryPenaltyLastN, "DRY: tokens scanned (0: off, -1: all)")
	fs.Var(&f.breakers, "dry-sequence-breaker", "DRY sequence breaker (repeatable; replaces the defaults \\n : \" *; \"none\": no breakers)")
	fs.Var(&f.bias, "logit-bias", "TOKEN_ID(+|-)BIAS, e.g. 15043+1 or 2-inf (repeatable)")
	fs.BoolVar(&c.IgnoreEOS, "ignore-eos", false, "never end at an end-of-generation token")
	fs.StringVar(&f.samplers, "samplers", "", "sampler chain order, ';'-separated (default "+sampling.FormatSamplers(sampling.DefaultSamplers())+")")
	fs.StringVar(&f.seq, "sampling-seq", "", "sampler chain order as letters (e d s k f y p m x t)")
	fs.StringVar(&f.mode, "sampler", "chain", "decoding algorithm: chain, fsd or random-fsd (Inferflow's)")
	fs.Float64Var(&c.FSDAlpha, "fsd-alpha", c.FSDAlpha, "FSD: weight of the n-gram anti-LM penalty")
	fs.IntVar(&c.FSDK, "fsd-k", c.FSDK, "FSD: candidates compared (1 to 50)")
	fs.IntVar(&c.FSDN, "fsd-n", c.FSDN, "FSD: order of the n-gram anti-LM")
	fs.Float64Var(&c.FSDBeta, "fsd-beta", c.FSDBeta, "FSD: n-gram back-off weight")
	fs.StringVar(&f.grammar, "grammar", "", "constrain the output to this GBNF grammar")
	fs.StringVar(&f.grammarFile, "grammar-file", "", "constrain the output to the GBNF grammar in this file")
	fs.StringVar(&f.schema, "json-schema", "", "constrain the output to JSON valid under this JSON Schema")
	fs.StringVar(&f.schemaFile, "json-schema-file", "", "constrain the output to JSON valid under the JSON Schema in this file")
	return f
}

// config returns the sampling config the flags ask for, seeded with seed.
// eos lists the model's end-of-generation ids (nil before the model is
// loaded: --ignore-eos is then checked with a stand-in).
func (f *sampleFlags) config(seed uint64, eos []int) (sampling.Config, error) {
	c := f.cfg
	c.Seed = seed
	var err error
	if c.Mode, err = sampling.ParseMode(f.mode); err != nil {
		return c, err
	}
	switch {
	case f.samplers != "" && f.seq != "":
		return c, errors.New("--samplers and --sampling-seq both set the chain: pick one")
	case f.samplers != "":
		if c.Samplers, err = sampling.ParseSamplers(f.samplers); err != nil {
			return c, err
		}
	case f.seq != "":
		if c.Samplers, err = sampling.ParseSamplerSeq(f.seq); err != nil {
			return c, err
		}
	}
	for _, b := range f.bias {
		lb, err := sampling.ParseLogitBias(b)
		if err != nil {
			return c, err
		}
		c.LogitBias = append(c.LogitBias, lb)
	}
	c.EOS = eos
	if eos == nil && c.IgnoreEOS {
		c.EOS = []int{0}
	}
	return c, c.Validate()
}

// check validates the flags before the model loads: the sampling values
// and the grammar or schema (a syntax error names its line and column).
// Beam search picks by log-probability alone: it takes no sampler and no
// grammar.
func (f *sampleFlags) check(beams int) error {
	if _, err := f.config(0, nil); err != nil {
		return err
	}
	g, err := f.compileGrammar()
	if err != nil {
		return err
	}
	if beams > 0 && g != nil {
		return errors.New("--beams cannot follow a grammar or JSON schema (beam search takes no sampler)")
	}
	if beams > 0 && f.mode != "chain" {
		return fmt.Errorf("--beams and --sampler %s both choose the tokens: pick one", f.mode)
	}
	return nil
}

// compileGrammar returns the grammar of --grammar, --grammar-file,
// --json-schema or --json-schema-file (at most one), or nil.
func (f *sampleFlags) compileGrammar() (*grammar.Grammar, error) {
	n := 0
	for _, v := range []string{f.grammar, f.grammarFile, f.schema, f.schemaFile} {
		if v != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return nil, nil
	case n > 1:
		return nil, errors.New("--grammar, --grammar-file, --json-schema and --json-schema-file are exclusive: give one")
	case f.grammar != "":
		g, err := grammar.Parse(f.grammar)
		if err != nil {
			return nil, fmt.Errorf("--grammar: %w", err)
		}
		return g, nil
	case f.grammarFile != "":
		src, err := os.ReadFile(f.grammarFile)
		if err != nil {
			return nil, fmt.Errorf("--grammar-file: %w", err)
		}
		g, err := grammar.Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("--grammar-file %s: %w", f.grammarFile, err)
		}
		return g, nil
	case f.schema != "":
		g, err := grammar.FromJSONSchema([]byte(f.schema))
		if err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
		return g, nil
	default:
		src, err := os.ReadFile(f.schemaFile)
		if err != nil {
			return nil, fmt.Errorf("--json-schema-file: %w", err)
		}
		g, err := grammar.FromJSONSchema(src)
		if err != nil {
			return nil, fmt.Errorf("--json-schema-file %s: %w", f.schemaFile, err)
		}
		return g, nil
	}
}

// pickers builds n samplers (seeds seed, seed+1, …) for a model with
// tokenizer tk, each wrapped in the grammar's constraint when one is set.
func (f *sampleFlags) pickers(n int, seed uint64, tk tokenizer.Tokenizer) ([]samplePicker, error) {
	var eos []int
	for id := 0; id < tk.VocabSize(); id++ {
		if tk.IsEOG(id) {
			eos = append(eos, id)
		}
	}
	cfg, err := f.config(seed, eos)
	if err != nil {
		return nil, err
	}
	if cfg.DryMultiplier > 0 && cfg.DryPenaltyLastN != 0 {
		brk := []string{"\n", ":", "\"", "*"}
		if len(f.breakers) > 0 {
			brk = f.breakers
			if len(brk) == 1 && brk[0] == "none" {
				brk = nil
			}
		}
		tokenize := func(s string) ([]int, error) { return tk.Encode(s, tokenizer.EncodeOptions{}) }
		if cfg.DrySequenceBreakers, err = sampling.DryBreakers(brk, tk.VocabSize(), tk.Piece, tokenize); err != nil {
			return nil, fmt.Errorf("--dry-sequence-breaker: %w", err)
		}
	}
	for _, b := range cfg.LogitBias {
		if b.Token >= tk.VocabSize() {
			return nil, fmt.Errorf("--logit-bias %d: the vocabulary has %d tokens", b.Token, tk.VocabSize())
		}
	}
	g, err := f.compileGrammar()
	if err != nil {
		return nil, err
	}
	var pool *grammar.Pool
	if g != nil {
		toks, eog := tokenizer.TokenBytes(tk)
		pool = grammar.NewPool(g, grammar.NewVocab(toks, eog))
	}
	out := make([]samplePicker, n)
	for i := range out {
		c := cfg
		c.Seed = seed + uint64(i)
		s, err := sampling.New(c)
		if err != nil {
			return nil, err
		}
		out[i] = s
		if pool != nil {
			out[i] = grammar.NewConstrained(s, pool.Get())
		}
	}
	return out, nil
}

// samplePicker is what the engine gets: a sampler, perhaps constrained.
type samplePicker interface {
	Sample(logits []float32) int
	AcceptPrompt(tokens []int)
	Accept(token int)
}
