package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// span is a byte range of the text being split.
type span struct{ start, end int }

// splitStage is one step of a pre-tokenizer: it cuts s[start:end] into the
// pieces a regular expression matches and the text between them, as
// llama.cpp's unicode_regex_split does, and appends them to dst.
type splitStage interface {
	split(dst []span, s string, start, end int, sc *splitScratch) ([]span, error)
}

// splitScratch holds buffers reused between calls.
type splitScratch struct {
	a, b  []span
	runes []rune
	offs  []int
}

// preTokenizer splits text into words before BPE, by applying its stages
// in turn to every piece the previous stage left.
type preTokenizer struct {
	name   string
	stages []splitStage
	// Flags llama.cpp sets for the named pre-tokenizer.
	ignoreMerges bool // a word that is a whole token is not merged
	addBOS       bool // add BOS by default
	noBOS        bool // the vocabulary has no BOS token
}

// split returns the words of text as spans into it; the result aliases sc.
func (p *preTokenizer) split(text string, sc *splitScratch) ([]span, error) {
	cur := append(sc.a[:0], span{0, len(text)})
	next := sc.b[:0]
	var err error
	for _, st := range p.stages {
		next = next[:0]
		for _, sp := range cur {
			next, err = st.split(next, text, sp.start, sp.end, sc)
			if err != nil {
				return nil, fmt.Errorf("pre-tokenizer %s: %w", p.name, err)
			}
		}
		cur, next = next, cur
	}
	sc.a, sc.b = cur, next
	return cur, nil
}

// regexStage splits with a regular expression run by regexp2, which has
// the lookaround and Unicode classes the reference patterns use. \s is
// Unicode White_Space and \p{L}, \p{N}, \p{P} are Unicode general
// categories, as in the Oniguruma and Rust engines of the references;
// regexp2's RE2 and ECMAScript options would make \s ASCII-only, so they
// are not used.
type regexStage struct {
	re *regexp2.Regexp
}

// matchTimeout bounds one regular-expression match so that a pathological
// pattern cannot hang Encode.
const matchTimeout = 30 * time.Second

func newRegexStage(pattern string) (*regexStage, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", pattern, err)
	}
	re.MatchTimeout = matchTimeout
	return &regexStage{re: re}, nil
}

func (r *regexStage) split(dst []span, s string, start, end int, sc *splitScratch) ([]span, error) {
	runes, offs := sc.runes[:0], sc.offs[:0]
	for i := start; i < end; {
		c, n := utf8.DecodeRuneInString(s[i:end])
		runes = append(runes, c)
		offs = append(offs, i)
		i += n
	}
	offs = append(offs, end)
	sc.runes, sc.offs = runes, offs

	prev := 0 // rune index where the unmatched text begins
	m, err := r.re.FindRunesMatch(runes)
	for m != nil && err == nil {
		if m.Index > prev {
			dst = append(dst, span{offs[prev], offs[m.Index]})
		}
		if m.Length > 0 {
			dst = append(dst, span{offs[m.Index], offs[m.Index+m.Length]})
		}
		prev = m.Index + m.Length
		m, err = r.re.FindNextMatch(m)
	}
	if err != nil {
		return nil, err
	}
	if prev < len(runes) {
		dst = append(dst, span{offs[prev], end})
	}
	return dst, nil
}

// Character classes of the hand-written splitters.
const (
	clsOther  = iota // none of the below: [^\s\p{L}\p{N}]
	clsLetter        // \p{L}
	clsNumber        // \p{N}
	clsSpace         // \s (Unicode White_Space)
)

// asciiClass classifies the ASCII range once.
var asciiClass = func() (t [128]uint8) {
	for c := range t {
		r := rune(c)
		switch {
		case unicode.IsSpace(r):
			t[c] = clsSpace
		case unicode.IsLetter(r):
			t[c] = clsLetter
		case unicode.IsNumber(r):
			t[c] = clsNumber
		default:
			t[c] = clsOther
		}
	}
	return
}()

func classOf(r rune) uint8 {
	if r < 128 {
		return asciiClass[r]
	}
	switch {
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.IsSpace(r):
		return clsSpace
	}
	return clsOther
}

// decodeAt decodes the character at s[i:end] and its class.
func decodeAt(s string, i, end int) (r rune, n int, cls uint8) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1, asciiClass[c]
	}
	r, n = utf8.DecodeRuneInString(s[i:end])
	return r, n, classOf(r)
}

// runOf returns the end of the run of characters of class cls from i.
func runOf(s string, i, end int, cls uint8) int {
	for i < end {
		_, n, c := decodeAt(s, i, end)
		if c != cls {
			break
		}
		i += n
	}
	return i
}

// spaceRun scans the whitespace run starting at i. It returns the run's
// end, the start of its last character, and the end of its last \r or \n
// (0 if none).
func spaceRun(s string, i, end int) (runEnd, lastStart, nlEnd int) {
	lastStart = i
	for i < end {
		r, n, c := decodeAt(s, i, end)
		if c != clsSpace {
			break
		}
		lastStart = i
		i += n
		if r == '\r' || r == '\n' {
			nlEnd = i
		}
	}
	return i, lastStart, nlEnd
}

// contraction returns the length of 's 't 're 've 'm 'll 'd at s[i:end]
// (s[i] == '\”), or 0. fold also accepts upper-case letters.
func contraction(s string, i, end int, fold bool) int {
	if i+1 >= end {
		return 0
	}
	low := func(c byte) byte {
		if fold && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	switch low(s[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < end {
		a, b := low(s[i+1]), low(s[i+2])
		if (a == 'r' || a == 'v') && b == 'e' || a == 'l' && b == 'l' {
			return 3
		}
	}
	return 0
}

// gpt2Stage is a hand-written splitter equal to the GPT-2 pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (tests check it against regexp2 on random text).
type gpt2Stage struct{}

func (gpt2Stage) split(dst []span, s string, start, end int, _ *splitScratch) ([]span, error) {
	for i := start; i < end; {
		r, n, cls := decodeAt(s, i, end)
		if r == '\'' {
			if k := contraction(s, i, end, false); k > 0 {
				dst = append(dst, span{i, i + k})
				i += k
				continue
			}
		}
		k := i
		if r == ' ' && i+1 < end {
			if _, _, c2 := decodeAt(s, i+1, end); c2 != clsSpace {
				k, cls = i+1, c2
			}
		} else {
			k += n
		}
		var j int
		if cls != clsSpace {
			j = runOf(s, k, end, cls)
		} else {
			j = endOfSpaces(s, i, end, false)
		}
		dst = append(dst, span{i, j})
		i = j
	}
	return dst, nil
}

// endOfSpaces is where \s*[\r\n]+ (if nl), else \s+(?!\S), else \s+
// matching at a whitespace character s[i] ends.
func endOfSpaces(s string, i, end int, nl bool) int {
	runEnd, last, nlEnd := spaceRun(s, i, end)
	switch {
	case nl && nlEnd > 0:
		return nlEnd
	case runEnd == end:
		return end
	case last > i:
		return last
	}
	return runEnd
}

// llama3Stage is a hand-written splitter equal to the Llama 3 pattern
// (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// and, with maxDigits 1, to Qwen2's, which has \p{N} for \p{N}{1,3}.
type llama3Stage struct{ maxDigits int }

func (st llama3Stage) split(dst []span, s string, start, end int, _ *splitScratch) ([]span, error) {
	for i := start; i < end; {
		r, n, cls := decodeAt(s, i, end)
		if r == '\'' {
			if k := contraction(s, i, end, true); k > 0 {
				dst = append(dst, span{i, i + k})
				i += k
				continue
			}
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if cls == clsLetter {
			j := runOf(s, i+n, end, clsLetter)
			dst = append(dst, span{i, j})
			i = j
			continue
		}
		if cls != clsNumber && r != '\r' && r != '\n' && i+n < end {
			if _, n2, c2 := decodeAt(s, i+n, end); c2 == clsLetter {
				j := runOf(s, i+n+n2, end, clsLetter)
				dst = append(dst, span{i, j})
				i = j
				continue
			}
		}
		// \p{N}{1,N}
		if cls == clsNumber {
			j := i + n
			for d := 1; d < st.maxDigits && j < end; d++ {
				_, n2, c2 := decodeAt(s, j, end)
				if c2 != clsNumber {
					break
				}
				j += n2
			}
			dst = append(dst, span{i, j})
			i = j
			continue
		}
		//  ?[^\s\p{L}\p{N}]+[\r\n]*
		k := -1
		if cls == clsOther {
			k = i + n
		} else if r == ' ' && i+1 < end {
			if _, n2, c2 := decodeAt(s, i+1, end); c2 == clsOther {
				k = i + 1 + n2
			}
		}
		if k >= 0 {
			j := runOf(s, k, end, clsOther)
			for j < end && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			dst = append(dst, span{i, j})
			i = j
			continue
		}
		// \s*[\r\n]+|\s+(?!\S)|\s+
		j := endOfSpaces(s, i, end, true)
		dst = append(dst, span{i, j})
		i = j
	}
	return dst, nil
}

// runStage splits out runs of characters of a class, as the pattern
// [class]+ does, or (single) each such character, as [class] does; the text
// between them is kept as pieces too.
type runStage struct {
	in     func(r rune) bool
	single bool
}

func (st runStage) split(dst []span, s string, start, end int, _ *splitScratch) ([]span, error) {
	gap := start // start of the unmatched text
	for i := start; i < end; {
		r, n := utf8.DecodeRuneInString(s[i:end])
		if !st.in(r) {
			i += n
			continue
		}
		if gap < i {
			dst = append(dst, span{gap, i})
		}
		j := i + n
		for !st.single && j < end {
			r2, n2 := utf8.DecodeRuneInString(s[j:end])
			if !st.in(r2) {
				break
			}
			j += n2
		}
		dst = append(dst, span{i, j})
		i, gap = j, j
	}
	if gap < end {
		dst = append(dst, span{gap, end})
	}
	return dst, nil
}

// digits3Stage splits out [0-9][0-9][0-9], leftmost first.
type digits3Stage struct{}

func (digits3Stage) split(dst []span, s string, start, end int, _ *splitScratch) ([]span, error) {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	gap := start
	for i := start; i+3 <= end; {
		if isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
			if gap < i {
				dst = append(dst, span{gap, i})
			}
			dst = append(dst, span{i, i + 3})
			i += 3
			gap = i
			continue
		}
		i++
	}
	if gap < end {
		dst = append(dst, span{gap, end})
	}
	return dst, nil
}

// Classes of the simple patterns that have hand-written splitters.
func isNumberRune(r rune) bool { return unicode.IsNumber(r) }

func isPunctOrDefaultSym(r rune) bool {
	return unicode.IsPunct(r) || strings.ContainsRune("$+<=>^~|", r)
}

func isPunctOrFalconSym(r rune) bool {
	return unicode.IsPunct(r) || strings.ContainsRune("$+<=>^~|`", r)
}

// Simple patterns with hand-written splitters.
const (
	patNumber      = `\p{N}`
	patNumbers     = `\p{N}+`
	patDefaultPunc = `[\p{P}\$\+<=>\^~\|]+`
	patFalconPunc  = "[\\p{P}\\$\\+<=>\\^~\\|`]+"
	patDigits3     = `[0-9][0-9][0-9]`
)

// Patterns of llama.cpp's pre-tokenizers (src/llama-vocab.cpp). Where
// llama.cpp rewrote a Hugging Face pattern for std::regex, the original is
// used, since regexp2 runs it; case-insensitive contractions are spelled out.
const (
	patGPT2      = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	patLlama3    = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patQwen2     = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patQwen35    = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patPoro      = ` ?[^(\s|.,!?…。，、।۔،)]+`
	patContr     = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`
	patGPT4o     = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` + patContr + `?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` + patContr + `?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patTekken    = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patDeepseek3 = `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + `{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// patDeepseekLetters is DeepSeek LLM's letter class (cased letters of many
// scripts); written with escapes so that no editor normalises it.
const patDeepseekLetters = `\s?[` + "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943" + `]+`

// preTokenizerDef names the stages of a pre-tokenizer: a pattern, or one
// of the hand-written splitters "<gpt2>", "<llama3>", "<qwen2>".
type preTokenizerDef struct {
	patterns     []string
	ignoreMerges bool
	addBOS       bool
	noBOS        bool
}

var (
	defDefault   = preTokenizerDef{patterns: []string{patDefaultPunc, "<gpt2>", patNumbers, patDigits3}}
	defGPT2      = preTokenizerDef{patterns: []string{"<gpt2>"}}
	defLlama3    = preTokenizerDef{patterns: []string{"<llama3>"}, ignoreMerges: true, addBOS: true}
	defLlama3Pat = preTokenizerDef{patterns: []string{"<llama3>"}}
	defStarcoder = preTokenizerDef{patterns: []string{patNumber, "<gpt2>"}}
	defQwen2     = preTokenizerDef{patterns: []string{"<qwen2>"}}
	defPoro      = preTokenizerDef{patterns: []string{patPoro}}
	defDeepseek3 = preTokenizerDef{patterns: []string{`\p{N}{1,3}`, `[一-龥぀-ゟ゠-ヿ]+`, patDeepseek3}}
)

// preTokenizerDefs maps tokenizer.ggml.pre names to their definitions,
// following llama.cpp's llama_vocab::impl::load.
var preTokenizerDefs = map[string]preTokenizerDef{
	"default": defDefault,

	"llama3": defLlama3, "llama-v3": defLlama3, "llama-bpe": defLlama3, "falcon3": defLlama3,
	"falcon-h1": defLlama3, "pixtral": defLlama3, "midm-2.0": defLlama3, "lfm2": defLlama3,
	"jina-v5-nano": defLlama3,
	"dbrx":         defLlama3Pat, "smaug-bpe": defLlama3Pat,
	"chatglm-bpe": {patterns: []string{"<llama3>"}, noBOS: true},
	"glm4":        {patterns: []string{"<llama3>"}, noBOS: true},

	"deepseek-llm":   {patterns: []string{`[\r\n]`, patDeepseekLetters, `\s?[!-/:-~！-／：-～‘-‟　-。]+`, `\s+$`, `[一-龥ࠀ-一가-퟿]+`, `\p{N}+`}},
	"deepseek-coder": {patterns: []string{`[\r\n]`, `\s?\p{L}+`, `\s?\p{P}+`, `[一-龥ࠀ-一가-퟿]+`, `\p{N}`}},
	"deepseek-v3":    defDeepseek3, "hunyuan-dense": defDeepseek3, "hy_v4": defDeepseek3, "joyai-llm": defDeepseek3,

	"falcon": {patterns: []string{patFalconPunc, "<gpt2>", patDigits3}},

	"starcoder": defStarcoder, "refact": defStarcoder, "command-r": defStarcoder, "smollm": defStarcoder,
	"codeshell": defStarcoder, "exaone": defStarcoder, "minerva-7b": defStarcoder, "mellum2": defStarcoder,

	"gpt-2": defGPT2, "phi-2": defGPT2, "jina-es": defGPT2, "jina-de": defGPT2, "gigachat": defGPT2,
	"jina-v2-es": defGPT2, "jina-v2-de": defGPT2, "a.x-4.0": defGPT2, "mellum": defGPT2,
	"modern-bert": defGPT2, "jina-v1-en": defGPT2, "jina-v2-code": defGPT2, "roberta-bpe": defGPT2,
	"mpt": defGPT2, "olmo": defGPT2, "jais": defGPT2, "trillion": defGPT2, "granite-docling": defGPT2,
	"exaone4": defGPT2,

	"qwen2": defQwen2, "deepseek-r1-qwen": defQwen2, "kormo": defQwen2, "f2llmv2": defQwen2,
	"stablelm2": defQwen2, "hunyuan": defQwen2, "solar-open": defQwen2, "megrez": defQwen2,
	"qwen35": {patterns: []string{patQwen35}},

	"poro-chat": defPoro, "bloom": defPoro, "gpt3-finnish": defPoro,
	"viking": {patterns: []string{patPoro, `\p{N}`}},

	"tekken": {patterns: []string{patTekken}, ignoreMerges: true, addBOS: true},
	"gpt-4o": {patterns: []string{patGPT4o}}, "llama4": {patterns: []string{patGPT4o}},
	"kanana2": {patterns: []string{patGPT4o}}, "minimax-m2": {patterns: []string{patGPT4o}},

	"chameleon": {patterns: []string{
		`<sentinel:[0-9]+>`, `(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z`, `([\t\n]|    |  )`,
		`\p{N}`, `[\p{P}!-/:-@\[-` + "`" + `{-~]`, "<gpt2>",
	}, addBOS: true},

	"jais-2":                  {patterns: []string{`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}`}},
	"superbpe":                {patterns: []string{`\p{N}+`, `(?=(\d{3})+(?!\d))`}},
	"bailingmoe":              {patterns: []string{`'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`}},
	"seed-coder":              {patterns: []string{`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	"grok-2":                  defQwen2,
	"ufakzeka":                {patterns: []string{`[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	"tiny_aya":                {patterns: []string{`\d{1,3}(?=(?:\d{3})*\b)`, patGPT4o}},
	"cohere2moe":              {patterns: []string{`\d{1,3}(?=(?:\d{3})*\b)`, patGPT4o}},
	"exaone-moe":              {patterns: []string{`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+`}},
	"laguna":                  {patterns: []string{`[^\n]+|[\n]+`, patQwen2}},
	"minicpm5":                {patterns: []string{`\p{N}{1,3}`, `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}, ignoreMerges: true},
	"granite-embed-multi-97m": {patterns: []string{`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` + patContr + `?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` + patContr + `?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`}, ignoreMerges: true},
}

// lookupPreTokenizer compiles the named pre-tokenizer. An unknown name is
// an error: splitting with the wrong pattern gives plausible wrong ids.
func lookupPreTokenizer(name string) (*preTokenizer, error) {
	def, ok := preTokenizerDefs[name]
	if !ok {
		return nil, fmt.Errorf("unknown pre-tokenizer %q (known: %s)", name, knownPreTokenizers())
	}
	p, err := compilePreTokenizer(name, def.patterns)
	if err != nil {
		return nil, err
	}
	p.ignoreMerges, p.addBOS, p.noBOS = def.ignoreMerges, def.addBOS, def.noBOS
	return p, nil
}

// compilePreTokenizer builds stages from patterns, using the hand-written
// splitters for the GPT-2, Llama 3 and Qwen2 patterns.
func compilePreTokenizer(name string, patterns []string) (*preTokenizer, error) {
	p := &preTokenizer{name: name}
	for _, pat := range patterns {
		var st splitStage
		switch pat {
		case "<gpt2>", patGPT2:
			st = gpt2Stage{}
		case "<llama3>", patLlama3:
			st = llama3Stage{maxDigits: 3}
		case "<qwen2>", patQwen2:
			st = llama3Stage{maxDigits: 1}
		case patNumber:
			st = runStage{in: isNumberRune, single: true}
		case patNumbers:
			st = runStage{in: isNumberRune}
		case patDefaultPunc:
			st = runStage{in: isPunctOrDefaultSym}
		case patFalconPunc:
			st = runStage{in: isPunctOrFalconSym}
		case patDigits3:
			st = digits3Stage{}
		default:
			rs, err := newRegexStage(pat)
			if err != nil {
				return nil, fmt.Errorf("pre-tokenizer %s: %w", name, err)
			}
			st = rs
		}
		p.stages = append(p.stages, st)
	}
	return p, nil
}

func knownPreTokenizers() string {
	names := make([]string, 0, len(preTokenizerDefs))
	for n := range preTokenizerDefs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
