package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wordPieceOptions configures BERT's tokenizer.
type wordPieceOptions struct {
	initPrefix string // prefix of word-initial pieces in the vocabulary ("▁" in GGUF)
	contPrefix string // prefix of continuation pieces ("##" in vocab.txt)
	unk        int
	maxChars   int // words longer than this (in characters) are [UNK]; <= 0: no limit

	// BertNormalizer and BertPreTokenizer.
	cleanText    bool // drop control characters, whitespace becomes ' '
	chinese      bool // CJK ideographs become words of their own
	stripAccents bool // NFD, then drop nonspacing marks
	lowercase    bool
	bertPre      bool // split on whitespace and punctuation
}

// wordPieceEncoder is BERT's WordPiece: normalize, split into words on
// whitespace and punctuation, then take the longest vocabulary piece from
// the start of each word again and again; a word that cannot be covered is
// the unknown token.
type wordPieceEncoder struct {
	v      *vocab
	opt    wordPieceOptions
	maxLen int // longest piece in bytes
	pool   sync.Pool
}

func newWordPieceEncoder(v *vocab, opt wordPieceOptions) *wordPieceEncoder {
	e := &wordPieceEncoder{v: v, opt: opt}
	for _, p := range v.pieces {
		e.maxLen = max(e.maxLen, len(p))
	}
	e.pool.New = func() any { return new([]byte) }
	return e
}

func (e *wordPieceEncoder) encode(dst []int, text string, _ bool) ([]int, error) {
	text = bertNormalize(text, e.opt)
	bp := e.pool.Get().(*[]byte)
	defer e.pool.Put(bp)
	var err error
	if !e.opt.bertPre {
		for _, w := range strings.Fields(text) {
			if dst, err = e.word(dst, w, bp); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	start := -1
	for i, r := range text {
		switch {
		case isBertSpace(r):
			if start >= 0 {
				if dst, err = e.word(dst, text[start:i], bp); err != nil {
					return nil, err
				}
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				if dst, err = e.word(dst, text[start:i], bp); err != nil {
					return nil, err
				}
				start = -1
			}
			if dst, err = e.word(dst, text[i:i+utf8.RuneLen(r)], bp); err != nil {
				return nil, err
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		dst, err = e.word(dst, text[start:], bp)
	}
	return dst, err
}

// word appends the pieces of one word.
func (e *wordPieceEncoder) word(dst []int, w string, bp *[]byte) ([]int, error) {
	if e.opt.maxChars > 0 && utf8.RuneCountInString(w) > e.opt.maxChars {
		return append(dst, e.opt.unk), nil
	}
	n0 := len(dst)
	for start := 0; start < len(w); {
		prefix := e.opt.initPrefix
		if start > 0 {
			prefix = e.opt.contPrefix
		}
		found := false
		end := min(len(w), start+e.maxLen-len(prefix))
		for ; end > start; end-- {
			if end < len(w) && !utf8.RuneStart(w[end]) {
				continue
			}
			key := append(append((*bp)[:0], prefix...), w[start:end]...)
			*bp = key
			if id, ok := e.v.ids[string(key)]; ok {
				dst = append(dst, int(id))
				found = true
				break
			}
		}
		if !found {
			return append(dst[:n0], e.opt.unk), nil
		}
		start = end
	}
	return dst, nil
}

// bertNormalize applies BERT's normalizer: clean text, space out CJK
// ideographs, strip accents, lower-case.
func bertNormalize(s string, opt wordPieceOptions) string {
	if opt.cleanText || opt.chinese {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			if opt.cleanText {
				if r == 0 || r == utf8.RuneError || isBertControl(r) {
					continue
				}
				if isBertSpace(r) {
					r = ' '
				}
			}
			if opt.chinese && isCJK(r) {
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
				continue
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	if opt.stripAccents {
		s = stripAccents(s)
	}
	if opt.lowercase {
		s = strings.ToLower(s)
	}
	return s
}

// stripAccents decomposes (NFD) and drops nonspacing marks.
func stripAccents(s string) string {
	if isASCII(s) {
		return s
	}
	d := norm.NFD.String(s)
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, d)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isBertSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return unicode.IsSpace(r)
}

// isBertControl is Unicode category C (Cc, Cf, Co, Cs and unassigned),
// except tab, newline and carriage return, which count as whitespace.
func isBertControl(r rune) bool {
	if r < utf8.RuneSelf {
		return r < ' ' && r != '\t' && r != '\n' && r != '\r' || r == 0x7F
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isBertPunct is ASCII punctuation and symbols, and Unicode punctuation.
func isBertPunct(r rune) bool {
	if r < 0x80 {
		return r > ' ' && r < 0x7F && !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// isCJK reports CJK ideographs, with the ranges BERT uses (including its
// 0x2B920 where the extension starts at 0x2B820).
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// loadVocabTxt reads a BERT vocab.txt (one piece per line, "##" marks
// continuations). Lower-casing follows a tokenizer_config.json beside it
// (do_lower_case), else whether the vocabulary has upper-case pieces.
func loadVocabTxt(path string) (Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vocab.txt tokenizer: %w", err)
	}
	defer f.Close()
	var pieces []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("vocab.txt tokenizer %s: line %d is not UTF-8", path, len(pieces)+1)
		}
		pieces = append(pieces, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vocab.txt tokenizer %s: line %d: %w", path, len(pieces)+1, err)
	}
	m, err := newVocabTxt(pieces, lowerCaseFromConfig(filepath.Join(filepath.Dir(path), "tokenizer_config.json")))
	if err != nil {
		return nil, fmt.Errorf("vocab.txt tokenizer %s: %w", path, err)
	}
	return m, nil
}

// lowerCaseFromConfig reads do_lower_case from a tokenizer_config.json;
// nil if absent.
func lowerCaseFromConfig(path string) *bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var cfg struct {
		DoLowerCase *bool `json:"do_lower_case"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return nil
	}
	return cfg.DoLowerCase
}

func newVocabTxt(pieces []string, lower *bool) (*model, error) {
	if len(pieces) == 0 {
		return nil, fmt.Errorf("no tokens")
	}
	types := make([]uint8, len(pieces))
	cased := false
	for i, p := range pieces {
		types[i] = typeNormal
		switch p {
		case "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]":
			types[i] = typeControl
			continue
		}
		if !cased && !strings.HasPrefix(p, "[") && strings.ToLower(p) != p {
			cased = true
		}
	}
	v, err := newVocab(pieces, types, nil)
	if err != nil {
		return nil, err
	}
	need := func(s string) (int, error) {
		if id, ok := v.ids[s]; ok {
			return int(id), nil
		}
		return -1, fmt.Errorf("vocabulary has no %s token", s)
	}
	unk, err := need("[UNK]")
	if err != nil {
		return nil, err
	}
	cls, err := need("[CLS]")
	if err != nil {
		return nil, err
	}
	sep, err := need("[SEP]")
	if err != nil {
		return nil, err
	}
	lowercase := !cased
	if lower != nil {
		lowercase = *lower
	}
	m := &model{vocab: v, family: "wpm", bos: cls, eos: -1, prefix: []int{cls}, suffix: []int{sep}, stripLeading: true}
	m.enc = newWordPieceEncoder(&m.vocab, wordPieceOptions{
		contPrefix: "##", unk: unk, maxChars: 100,
		cleanText: true, chinese: true, stripAccents: lowercase, lowercase: lowercase, bertPre: true,
	})
	m.setDecoded(wordPiecePiece(&m.vocab, "##"))
	m.finish()
	return m, nil
}

// wordPiecePiece decodes "##"-style pieces: a continuation joins the word
// before it, any other piece starts a new word after a space.
func wordPiecePiece(v *vocab, cont string) func(id int) []byte {
	return func(id int) []byte {
		p := v.pieces[id]
		if v.types[id] == typeNormal {
			if rest, ok := strings.CutPrefix(p, cont); ok && cont != "" {
				return []byte(rest)
			}
			return []byte(" " + p)
		}
		return []byte(p)
	}
}
