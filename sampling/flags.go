package sampling

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Stage names one sampler of the chain, spelled as llama.cpp's --samplers
// spells it.
type Stage string

// The chain's samplers.
const (
	StagePenalties   Stage = "penalties"   // --repeat-penalty, --presence-penalty, --frequency-penalty
	StageDRY         Stage = "dry"         // --dry-multiplier and friends
	StageTopNSigma   Stage = "top_n_sigma" // --top-nsigma
	StageTopK        Stage = "top_k"       // --top-k
	StageTFS         Stage = "tfs_z"       // --tfs
	StageTypical     Stage = "typ_p"       // --typical
	StageTopP        Stage = "top_p"       // --top-p
	StageMinP        Stage = "min_p"       // --min-p
	StageXTC         Stage = "xtc"         // --xtc-probability, --xtc-threshold
	StageTemperature Stage = "temperature" // --temp, --dynatemp-range, --dynatemp-exp
)

type op uint8

const (
	opPenalties op = iota
	opDRY
	opTopNSigma
	opTopK
	opTFS
	opTypical
	opTopP
	opMinP
	opXTC
	opTemperature
)

// stages lists the samplers with their llama.cpp names, other accepted
// spellings and --sampling-seq letters (the order is DefaultSamplers').
func stages() []struct {
	st     Stage
	op     op
	alt    []string
	letter byte
} {
	return []struct {
		st     Stage
		op     op
		alt    []string
		letter byte
	}{
		{StagePenalties, opPenalties, nil, 'e'},
		{StageDRY, opDRY, nil, 'd'},
		{StageTopNSigma, opTopNSigma, []string{"top-n-sigma", "top-nsigma", "top_nsigma"}, 's'},
		{StageTopK, opTopK, []string{"top-k"}, 'k'},
		{StageTFS, opTFS, []string{"tfs-z", "tfs"}, 'f'},
		{StageTypical, opTypical, []string{"typical-p", "typical", "typ-p", "typ"}, 'y'},
		{StageTopP, opTopP, []string{"top-p", "nucleus"}, 'p'},
		{StageMinP, opMinP, []string{"min-p"}, 'm'},
		{StageXTC, opXTC, nil, 'x'},
		{StageTemperature, opTemperature, []string{"temp"}, 't'},
	}
}

func stageOp(st Stage) (op, bool) {
	for _, e := range stages() {
		if e.st == st {
			return e.op, true
		}
	}
	return 0, false
}

func knownStages() string {
	var b strings.Builder
	for i, e := range stages() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(e.st))
	}
	return b.String()
}

func unknownStage(name string) error {
	return fmt.Errorf("unknown sampler %q (known: %s)", name, knownStages())
}

// DefaultSamplers returns llama.cpp's default chain, with tail-free where
// llama.cpp had it (after top-k): penalties;dry;top_n_sigma;top_k;tfs_z;
// typ_p;top_p;min_p;xtc;temperature. Samplers that are off do nothing.
func DefaultSamplers() []Stage {
	var out []Stage
	for _, e := range stages() {
		out = append(out, e.st)
	}
	return out
}

// ParseSamplers reads llama.cpp's --samplers value: sampler names separated
// by ';', canonical ("top_k") or alternative ("top-k", "temp", "nucleus")
// spellings, in the order they run. Unlike llama.cpp, which drops unknown
// names silently, an unknown name is an error.
func ParseSamplers(s string) ([]Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--samplers %q: empty list", s)
	}
	var out []Stage
	for _, name := range strings.Split(s, ";") {
		name = strings.TrimSpace(name)
		st, ok := lookupStage(name)
		if !ok {
			return nil, fmt.Errorf("--samplers %q: %w", s, unknownStage(name))
		}
		out = append(out, st)
	}
	return out, nil
}

func lookupStage(name string) (Stage, bool) {
	for _, e := range stages() {
		if name == string(e.st) {
			return e.st, true
		}
		for _, a := range e.alt {
			if name == a {
				return e.st, true
			}
		}
	}
	return "", false
}

// ParseSamplerSeq reads llama.cpp's --sampling-seq value, one letter per
// sampler: e penalties, d dry, s top_n_sigma, k top_k, f tfs_z, y typ_p,
// p top_p, m min_p, x xtc, t temperature.
func ParseSamplerSeq(s string) ([]Stage, error) {
	if s == "" {
		return nil, fmt.Errorf("--sampling-seq %q: empty sequence", s)
	}
	var out []Stage
	for i := 0; i < len(s); i++ {
		found := false
		for _, e := range stages() {
			if e.letter == s[i] {
				out = append(out, e.st)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("--sampling-seq %q: unknown sampler letter %q (known: e d s k f y p m x t)", s, s[i])
		}
	}
	return out, nil
}

// FormatSamplers writes a chain in --samplers syntax.
func FormatSamplers(chain []Stage) string {
	parts := make([]string, len(chain))
	for i, st := range chain {
		parts[i] = string(st)
	}
	return strings.Join(parts, ";")
}

// Mode selects the decoding algorithm (--sampler).
type Mode string

// The decoding algorithms.
const (
	// ModeChain is llama.cpp's sampler chain (or mirostat); "" means it too.
	ModeChain Mode = "chain"
	// ModeFSD is Inferflow's frustratingly simple decoding.
	ModeFSD Mode = "fsd"
	// ModeRandomFSD is Inferflow's randomized FSD.
	ModeRandomFSD Mode = "random-fsd"
)

func unknownMode(name string) error {
	return fmt.Errorf("unknown decoding algorithm %q (known: chain, fsd, random-fsd)", name)
}

// ParseMode reads the --sampler value: chain, fsd or random-fsd.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case ModeChain, ModeFSD, ModeRandomFSD:
		return m, nil
	}
	return "", fmt.Errorf("--sampler: %w", unknownMode(s))
}

// ParseLogitBias reads one --logit-bias value, llama.cpp's
// TOKEN_ID(+|-)BIAS: "15043+1" raises token 15043 by 1, "15043-1" lowers
// it, "2-inf" forbids token 2. BIAS is a decimal number or "inf".
func ParseLogitBias(s string) (LogitBias, error) {
	fail := func(why string) (LogitBias, error) {
		return LogitBias{}, fmt.Errorf("--logit-bias %q: %s; want TOKEN_ID(+|-)BIAS, e.g. 15043+1, 15043-0.5 or 2-inf", s, why)
	}
	i := strings.IndexAny(s, "+-")
	switch {
	case i < 0:
		return fail("no + or - between token and bias")
	case i == 0:
		return fail("missing token id")
	case i == len(s)-1:
		return fail("missing bias")
	}
	tok, err := strconv.Atoi(s[:i])
	if err != nil || tok < 0 {
		return fail(fmt.Sprintf("token id %q is not a non-negative integer", s[:i]))
	}
	v := s[i+1:]
	if v[0] == '+' || v[0] == '-' {
		return fail(fmt.Sprintf("bias %q has a second sign", v))
	}
	bias, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(bias) {
		return fail(fmt.Sprintf("bias %q is not a number", v))
	}
	if s[i] == '-' {
		bias = -bias
	}
	return LogitBias{Token: tok, Bias: bias}, nil
}
