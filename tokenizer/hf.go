package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// LoadHF reads a Hugging Face tokenizer.json (or the one in a directory).
// It supports BPE (merges as "a b" strings or pairs, byte fallback,
// ignore_merges) and WordPiece models; the NFC, NFD, NFKC, NFKD,
// Lowercase, StripAccents, Replace, Prepend, Strip, BertNormalizer and
// Sequence normalizers; the ByteLevel, Split, Metaspace, Whitespace,
// WhitespaceSplit, BertPreTokenizer, Digits, Punctuation, CharDelimiterSplit
// and Sequence pre-tokenizers; TemplateProcessing, BertProcessing,
// RobertaProcessing, ByteLevel and Sequence post-processors; and the
// ByteLevel, Metaspace, WordPiece, Replace, ByteFallback, Fuse, Strip,
// BPEDecoder and Sequence decoders. Added tokens are matched before
// normalization; special ones only with EncodeOptions.ParseSpecial.
//
// A tokenizer_config.json beside the file, if present, names the BOS and
// EOS tokens. Anything else is a clear error, never a silent fallback.
func LoadHF(path string) (Tokenizer, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	cfg, err := readHFConfig(filepath.Join(filepath.Dir(path), "tokenizer_config.json"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json %s: %w", path, err)
	}
	t, err := parseHF(data, cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json %s: %w", path, err)
	}
	return t, nil
}

// hfConfig is the part of tokenizer_config.json used here.
type hfConfig struct {
	BOS    hfTokenName `json:"bos_token"`
	EOS    hfTokenName `json:"eos_token"`
	PAD    hfTokenName `json:"pad_token"`
	AddBOS *bool       `json:"add_bos_token"`
	AddEOS *bool       `json:"add_eos_token"`
	// ChatTemplate is a string, or a list of {"name", "template"}; it is
	// only carried into GGUF metadata.
	ChatTemplate json.RawMessage `json:"chat_template"`
}

// hfTokenName is a token given as a string or as {"content": ...}.
type hfTokenName string

func (n *hfTokenName) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = hfTokenName(s)
		return nil
	}
	var o struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return nil // null or something else: no name
	}
	*n = hfTokenName(o.Content)
	return nil
}

func readHFConfig(path string) (*hfConfig, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg hfConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &cfg, nil
}

type hfFile struct {
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         json.RawMessage `json:"model"`
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Special    bool   `json:"special"`
}

type hfModel struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	MaxInputCharsPerWord    *int            `json:"max_input_chars_per_word"`
}

// isNull reports a missing or JSON null component.
func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// hfType reads the "type" of a component.
func hfType(raw json.RawMessage) (string, error) {
	var t struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", err
	}
	return t.Type, nil
}

func parseHF(data []byte, cfg *hfConfig) (*model, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if isNull(f.Model) {
		return nil, errors.New("no model")
	}
	var hm hfModel
	if err := json.Unmarshal(f.Model, &hm); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if hm.Type == "" {
		if len(hm.Merges) > 0 {
			hm.Type = "BPE"
		} else {
			hm.Type = "WordPiece"
		}
	}
	if hm.Type != "BPE" && hm.Type != "WordPiece" {
		return nil, fmt.Errorf("model type %q is not supported (want BPE or WordPiece)", hm.Type)
	}

	// Vocabulary: the model's, then the added tokens.
	var mv map[string]int
	if err := json.Unmarshal(hm.Vocab, &mv); err != nil {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	size := 0
	for p, id := range mv {
		if id < 0 {
			return nil, fmt.Errorf("model.vocab: token %q has negative id %d", p, id)
		}
		size = max(size, id+1)
	}
	for _, at := range f.AddedTokens {
		if at.ID < 0 {
			return nil, fmt.Errorf("added token %q has negative id %d", at.Content, at.ID)
		}
		if at.Content == "" {
			return nil, fmt.Errorf("added token %d has no content", at.ID)
		}
		size = max(size, at.ID+1)
	}
	if size == 0 {
		return nil, errors.New("empty vocabulary")
	}
	if size > 1<<24 {
		return nil, fmt.Errorf("token ids up to %d: too large", size-1)
	}
	v := vocab{pieces: make([]string, size), types: make([]uint8, size), ids: make(map[string]int32, size)}
	hole := make([]bool, size)
	for i := range hole {
		hole[i] = true
	}
	for p, id := range mv {
		if !hole[id] {
			return nil, fmt.Errorf("model.vocab: id %d is given to %q and %q", id, v.pieces[id], p)
		}
		v.pieces[id], v.types[id], hole[id] = p, typeNormal, false
		v.ids[p] = int32(id)
		if hm.ByteFallback && isByteToken(p) {
			v.types[id] = typeByte
		}
	}
	attrs := map[int]specialToken{}
	for _, at := range f.AddedTokens {
		if !hole[at.ID] && v.pieces[at.ID] != at.Content {
			return nil, fmt.Errorf("added token %q: id %d already belongs to %q", at.Content, at.ID, v.pieces[at.ID])
		}
		v.pieces[at.ID], hole[at.ID] = at.Content, false
		v.types[at.ID] = typeUserDefined
		if at.Special {
			v.types[at.ID] = typeControl
		}
		v.ids[at.Content] = int32(at.ID)
		attrs[at.ID] = specialToken{lstrip: at.Lstrip, rstrip: at.Rstrip, singleWord: at.SingleWord}
	}
	for id := range hole {
		if hole[id] {
			v.types[id] = typeUnused
		}
	}

	m := &model{vocab: v, family: "hf-" + strings.ToLower(hm.Type), bos: -1, eos: -1}
	enc := &hfEncoder{}
	enc.pool.New = func() any { return new(bpeScratch) }
	var err error
	if enc.norm, err = parseHFNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if enc.pre, err = parseHFPreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	unk := -1
	if hm.UnkToken != nil {
		id, ok := m.ids[*hm.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model.unk_token %q is not in the vocabulary", *hm.UnkToken)
		}
		unk = int(id)
	}
	switch hm.Type {
	case "BPE":
		b, err := newHFBPE(&m.vocab, hm, unk)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		enc.model = b
	case "WordPiece":
		if unk < 0 {
			return nil, errors.New("model: WordPiece needs an unk_token")
		}
		cont := "##"
		if hm.ContinuingSubwordPrefix != nil {
			cont = *hm.ContinuingSubwordPrefix
		}
		maxChars := 100
		if hm.MaxInputCharsPerWord != nil {
			maxChars = *hm.MaxInputCharsPerWord
		}
		enc.model = &hfWordPiece{e: newWordPieceEncoder(&m.vocab, wordPieceOptions{contPrefix: cont, unk: unk, maxChars: maxChars})}
	}
	m.enc = enc

	if m.prefix, m.suffix, err = parseHFPostProcessor(f.PostProcessor, &m.vocab); err != nil {
		return nil, fmt.Errorf("post_processor: %w", err)
	}
	piece, strip, err := parseHFDecoder(f.Decoder, &m.vocab)
	if err != nil {
		return nil, fmt.Errorf("decoder: %w", err)
	}
	m.stripLeading = strip
	m.setDecoded(func(id int) []byte {
		if hole[id] {
			return nil
		}
		if m.types[id] == typeUserDefined {
			return []byte(m.pieces[id])
		}
		return []byte(piece(m.pieces[id]))
	})

	// BOS and EOS: tokenizer_config.json, else the post-processor template.
	named := func(n hfTokenName) int {
		if id, ok := m.ids[string(n)]; ok && n != "" {
			return int(id)
		}
		return -1
	}
	if cfg != nil {
		m.bos, m.eos = named(cfg.BOS), named(cfg.EOS)
	}
	if m.bos < 0 && len(m.prefix) > 0 {
		m.bos = m.prefix[0]
	}
	if m.eos < 0 && len(m.suffix) > 0 && hm.Type == "BPE" {
		m.eos = m.suffix[len(m.suffix)-1]
	}
	if isNull(f.PostProcessor) && cfg != nil {
		if cfg.AddBOS != nil && *cfg.AddBOS && m.bos >= 0 {
			m.prefix = []int{m.bos}
		}
		if cfg.AddEOS != nil && *cfg.AddEOS && m.eos >= 0 {
			m.suffix = []int{m.eos}
		}
	}
	m.finish(eogByText(&m.vocab)...)
	m.special = newSpecialMatcher(&m.vocab, attrs)
	m.src.hf = &hfPipeline{normalizer: f.Normalizer, preTokenizer: f.PreTokenizer, pad: -1}
	for id := range hole {
		if hole[id] {
			m.src.hf.holes++
		}
	}
	if cfg != nil {
		m.src.hf.pad = named(cfg.PAD)
		m.src.hf.chatTemplate = cfg.ChatTemplate
	}
	return m, nil
}

// hfPiece is a piece of text during pre-tokenization. first marks the
// piece that starts at the beginning of the input.
type hfPiece struct {
	text  string
	first bool
}

type hfNormalizer func(string) string

type hfPreStep func(dst []hfPiece, p hfPiece, sc *splitScratch) ([]hfPiece, error)

// hfWordModel encodes one pre-tokenized word.
type hfWordModel interface {
	word(dst []int, w string, sc *bpeScratch) ([]int, error)
}

// hfEncoder runs the tokenizer.json pipeline: normalizers, pre-tokenizer
// steps, then the model on each piece.
type hfEncoder struct {
	norm  []hfNormalizer
	pre   []hfPreStep
	model hfWordModel
	pool  sync.Pool // *bpeScratch
}

func (e *hfEncoder) encode(dst []int, text string, atStart bool) ([]int, error) {
	for _, n := range e.norm {
		text = n(text)
	}
	sc := e.pool.Get().(*bpeScratch)
	defer e.pool.Put(sc)
	pieces := []hfPiece{{text: text, first: atStart}}
	var err error
	for _, step := range e.pre {
		var next []hfPiece
		for _, p := range pieces {
			if next, err = step(next, p, &sc.split); err != nil {
				return nil, err
			}
		}
		pieces = next
	}
	for _, p := range pieces {
		if p.text == "" {
			continue
		}
		if dst, err = e.model.word(dst, p.text, sc); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// hfBPE is the BPE model of tokenizer.json.
type hfBPE struct {
	v            *vocab
	merges       *bpeMerges
	unk          int32
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	contPrefix   string
	suffix       string
	byteTok      [256]int32
	cache        wordCache
}

func newHFBPE(v *vocab, hm hfModel, unk int) (*hfBPE, error) {
	var merges [][2]string
	if len(hm.Merges) > 0 {
		var lines []string
		if err := json.Unmarshal(hm.Merges, &lines); err == nil {
			var err error
			if merges, err = splitMergeLines(lines); err != nil {
				return nil, fmt.Errorf("merges: %w", err)
			}
		} else if err := json.Unmarshal(hm.Merges, &merges); err != nil {
			return nil, fmt.Errorf("merges: want [\"a b\", ...] or [[\"a\", \"b\"], ...]: %w", err)
		}
	}
	b := &hfBPE{v: v, unk: int32(unk), fuseUnk: hm.FuseUnk, byteFallback: hm.ByteFallback, ignoreMerges: hm.IgnoreMerges, byteTok: v.byteTokens()}
	if hm.ContinuingSubwordPrefix != nil {
		b.contPrefix = *hm.ContinuingSubwordPrefix
	}
	if hm.EndOfWordSuffix != nil {
		b.suffix = *hm.EndOfWordSuffix
	}
	for i, mg := range merges {
		for _, part := range []string{mg[0], mg[1], mg[0] + strings.TrimPrefix(mg[1], b.contPrefix)} {
			if _, ok := v.ids[part]; !ok {
				return nil, fmt.Errorf("merge %d (%q %q): %q is not in the vocabulary", i, mg[0], mg[1], part)
			}
		}
	}
	var err error
	if b.merges, err = newBPEMerges(v, merges, b.contPrefix); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *hfBPE) word(dst []int, w string, sc *bpeScratch) ([]int, error) {
	if ids, ok := b.cache.get(w); ok {
		for _, id := range ids {
			dst = append(dst, int(id))
		}
		return dst, nil
	}
	n0 := len(dst)
	if id, ok := b.v.ids[w]; ok && b.ignoreMerges {
		dst = append(dst, int(id))
	} else {
		syms, pos := sc.syms[:0], sc.pos[:0]
		lastUnk := false
		for i := 0; i < len(w); {
			_, n := utf8.DecodeRuneInString(w[i:])
			s := w[i : i+n]
			i += n
			key := s
			if i > n && b.contPrefix != "" {
				key = b.contPrefix + key
			}
			if i == len(w) && b.suffix != "" {
				key += b.suffix
			}
			if id, ok := b.v.ids[key]; ok {
				syms, pos = append(syms, id), append(pos, int32(i-n))
				lastUnk = false
				continue
			}
			if b.byteFallback {
				ok := true
				for j := 0; j < len(s); j++ {
					ok = ok && b.byteTok[s[j]] >= 0
				}
				if ok {
					for j := 0; j < len(s); j++ {
						syms, pos = append(syms, b.byteTok[s[j]]), append(pos, int32(i-n+j))
					}
					lastUnk = false
					continue
				}
			}
			if b.unk < 0 {
				continue // Hugging Face drops characters it has no token for
			}
			if b.fuseUnk && lastUnk {
				continue
			}
			syms, pos = append(syms, b.unk), append(pos, int32(i-n))
			lastUnk = true
		}
		syms, pos = b.merges.apply(sc, syms, pos)
		sc.syms, sc.pos = syms, pos
		for _, id := range syms {
			dst = append(dst, int(id))
		}
	}
	ids := make([]int32, len(dst)-n0)
	for i, id := range dst[n0:] {
		ids[i] = int32(id)
	}
	b.cache.put(w, ids)
	return dst, nil
}

// hfWordPiece is the WordPiece model of tokenizer.json.
type hfWordPiece struct{ e *wordPieceEncoder }

func (w *hfWordPiece) word(dst []int, s string, sc *bpeScratch) ([]int, error) {
	return w.e.word(dst, s, &sc.word)
}

// hfPattern is a Split or Replace pattern: {"String": s} or {"Regex": r}.
type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// compile turns the pattern into a split stage (a literal string becomes an
// escaped regular expression).
func (p hfPattern) compile() (*regexStage, string, error) {
	switch {
	case p.String != nil:
		st, err := newRegexStage(regexp2.Escape(*p.String))
		return st, *p.String, err
	case p.Regex != nil:
		st, err := newRegexStage(*p.Regex)
		return st, *p.Regex, err
	}
	return nil, "", errors.New("pattern has neither String nor Regex")
}

func parseHFNormalizer(raw json.RawMessage) ([]hfNormalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		var s struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		var out []hfNormalizer
		for i, n := range s.Normalizers {
			sub, err := parseHFNormalizer(n)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			out = append(out, sub...)
		}
		return out, nil
	case "NFC":
		return []hfNormalizer{norm.NFC.String}, nil
	case "NFD":
		return []hfNormalizer{norm.NFD.String}, nil
	case "NFKC":
		return []hfNormalizer{norm.NFKC.String}, nil
	case "NFKD":
		return []hfNormalizer{norm.NFKD.String}, nil
	case "Lowercase":
		return []hfNormalizer{strings.ToLower}, nil
	case "StripAccents":
		return []hfNormalizer{func(s string) string {
			return strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Mn, r) {
					return -1
				}
				return r
			}, s)
		}}, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		return []hfNormalizer{func(s string) string {
			if s == "" {
				return s
			}
			return p.Prepend + s
		}}, nil
	case "Replace":
		var r struct {
			Pattern hfPattern `json:"pattern"`
			Content string    `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		if r.Pattern.String != nil {
			old := *r.Pattern.String
			return []hfNormalizer{func(s string) string { return strings.ReplaceAll(s, old, r.Content) }}, nil
		}
		st, _, err := r.Pattern.compile()
		if err != nil {
			return nil, err
		}
		return []hfNormalizer{func(s string) string {
			out, err := st.re.Replace(s, strings.ReplaceAll(r.Content, "$", "$$"), -1, -1)
			if err != nil {
				return s
			}
			return out
		}}, nil
	case "Strip":
		var s struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []hfNormalizer{func(x string) string {
			if s.Left {
				x = strings.TrimLeftFunc(x, unicode.IsSpace)
			}
			if s.Right {
				x = strings.TrimRightFunc(x, unicode.IsSpace)
			}
			return x
		}}, nil
	case "BertNormalizer":
		var b struct {
			CleanText    *bool `json:"clean_text"`
			Chinese      *bool `json:"handle_chinese_chars"`
			StripAccents *bool `json:"strip_accents"`
			Lowercase    *bool `json:"lowercase"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, err
		}
		def := func(p *bool, d bool) bool {
			if p == nil {
				return d
			}
			return *p
		}
		opt := wordPieceOptions{cleanText: def(b.CleanText, true), chinese: def(b.Chinese, true), lowercase: def(b.Lowercase, true)}
		opt.stripAccents = def(b.StripAccents, opt.lowercase)
		return []hfNormalizer{func(s string) string { return bertNormalize(s, opt) }}, nil
	case "ByteLevel":
		return []hfNormalizer{func(s string) string { return string(byteLevelEncode(nil, s)) }}, nil
	case "Precompiled":
		var p struct {
			Map []byte `json:"precompiled_charsmap"`
		}
		if err := json.Unmarshal(raw, &p); err == nil && len(p.Map) == 0 {
			return nil, nil
		}
		return nil, errors.New("Precompiled (SentencePiece charsmap) normalizer is not supported")
	}
	return nil, fmt.Errorf("normalizer type %q is not supported", typ)
}

// Split behaviours of Hugging Face pre-tokenizers.
const (
	behRemoved = iota
	behIsolated
	behMergedWithPrevious
	behMergedWithNext
	behContiguous
)

func parseBehavior(s string) (int, error) {
	switch strings.ToLower(s) {
	case "removed":
		return behRemoved, nil
	case "isolated", "":
		return behIsolated, nil
	case "mergedwithprevious", "merged_with_previous":
		return behMergedWithPrevious, nil
	case "mergedwithnext", "merged_with_next":
		return behMergedWithNext, nil
	case "contiguous":
		return behContiguous, nil
	}
	return 0, fmt.Errorf("split behavior %q is not supported", s)
}

// hfMatch is a span and whether the pattern matched it.
type hfMatch struct {
	span
	match bool
}

// splitPiece applies a split behaviour to p, given the pattern's matches
// (ascending, non-overlapping, non-empty spans).
func splitPiece(dst []hfPiece, p hfPiece, matches []span, beh int, invert bool) []hfPiece {
	var parts []hfMatch
	at := 0
	for _, m := range matches {
		if m.start > at {
			parts = append(parts, hfMatch{span{at, m.start}, invert})
		}
		parts = append(parts, hfMatch{m, !invert})
		at = m.end
	}
	if at < len(p.text) {
		parts = append(parts, hfMatch{span{at, len(p.text)}, invert})
	}
	emit := func(sp span) {
		if sp.end > sp.start {
			dst = append(dst, hfPiece{text: p.text[sp.start:sp.end], first: p.first && sp.start == 0})
		}
	}
	switch beh {
	case behRemoved:
		for _, q := range parts {
			if !q.match {
				emit(q.span)
			}
		}
	case behIsolated:
		for _, q := range parts {
			emit(q.span)
		}
	case behMergedWithPrevious:
		cur := span{-1, -1}
		for _, q := range parts {
			if q.match && cur.start >= 0 {
				cur.end = q.end
				continue
			}
			if cur.start >= 0 {
				emit(cur)
			}
			cur = q.span
		}
		if cur.start >= 0 {
			emit(cur)
		}
	case behMergedWithNext:
		start := -1
		for _, q := range parts {
			if start < 0 {
				start = q.start
			}
			if !q.match {
				emit(span{start, q.end})
				start = -1
			}
		}
		if start >= 0 {
			emit(span{start, len(p.text)})
		}
	case behContiguous:
		cur := hfMatch{span{-1, -1}, false}
		for _, q := range parts {
			if q.match && cur.match && cur.start >= 0 {
				cur.end = q.end
				continue
			}
			if cur.start >= 0 {
				emit(cur.span)
			}
			cur = q
		}
		if cur.start >= 0 {
			emit(cur.span)
		}
	}
	return dst
}

// runeMatches returns one-character matches for every rune where pred
// holds, or runs of them when contiguous.
func runeMatches(s string, pred func(rune) bool, contiguous bool) []span {
	var out []span
	for i, n := 0, 0; i < len(s); i += n {
		var r rune
		r, n = utf8.DecodeRuneInString(s[i:])
		if !pred(r) {
			continue
		}
		if contiguous && len(out) > 0 && out[len(out)-1].end == i {
			out[len(out)-1].end = i + n
			continue
		}
		out = append(out, span{i, i + n})
	}
	return out
}

// stageMatches returns the matches of a split stage in s: the regex
// matches for a regexStage, every piece for the hand-written splitters
// (whose patterns match everywhere).
func stageMatches(st splitStage, s string, sc *splitScratch) ([]span, error) {
	if rs, ok := st.(*regexStage); ok {
		return rs.matches(s, sc)
	}
	return st.split(nil, s, 0, len(s), sc)
}

// matches returns the non-empty matches of the regex in s.
func (r *regexStage) matches(s string, sc *splitScratch) ([]span, error) {
	runes, offs := sc.runes[:0], sc.offs[:0]
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, c)
		offs = append(offs, i)
		i += n
	}
	offs = append(offs, len(s))
	sc.runes, sc.offs = runes, offs
	var out []span
	m, err := r.re.FindRunesMatch(runes)
	for m != nil && err == nil {
		if m.Length > 0 {
			out = append(out, span{offs[m.Index], offs[m.Index+m.Length]})
		}
		m, err = r.re.FindNextMatch(m)
	}
	return out, err
}

// fastStage returns a hand-written splitter for a known pattern.
func fastStage(pattern string) splitStage {
	switch pattern {
	case patGPT2, patGPT2 + `|\s+`:
		return gpt2Stage{}
	case patLlama3, `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:
		return llama3Stage{maxDigits: 3}
	case patQwen2, `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:
		return llama3Stage{maxDigits: 1}
	}
	return nil
}

func parseHFPreTokenizer(raw json.RawMessage) ([]hfPreStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		var s struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		var out []hfPreStep
		for i, p := range s.PreTokenizers {
			sub, err := parseHFPreTokenizer(p)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			out = append(out, sub...)
		}
		return out, nil
	case "ByteLevel":
		var b struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, err
		}
		useRegex := b.UseRegex == nil || *b.UseRegex
		return []hfPreStep{func(dst []hfPiece, p hfPiece, sc *splitScratch) ([]hfPiece, error) {
			t := p.text
			if b.AddPrefixSpace && !strings.HasPrefix(t, " ") {
				t = " " + t
			}
			if !useRegex {
				return append(dst, hfPiece{text: string(byteLevelEncode(nil, t)), first: p.first}), nil
			}
			spans, err := gpt2Stage{}.split(nil, t, 0, len(t), sc)
			if err != nil {
				return nil, err
			}
			for _, sp := range spans {
				dst = append(dst, hfPiece{text: string(byteLevelEncode(nil, t[sp.start:sp.end])), first: p.first && sp.start == 0})
			}
			return dst, nil
		}}, nil
	case "Split":
		var s struct {
			Pattern  hfPattern `json:"pattern"`
			Behavior string    `json:"behavior"`
			Invert   bool      `json:"invert"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		beh, err := parseBehavior(s.Behavior)
		if err != nil {
			return nil, err
		}
		rs, pat, err := s.Pattern.compile()
		if err != nil {
			return nil, err
		}
		var st splitStage = rs
		if s.Pattern.Regex != nil {
			if f := fastStage(pat); f != nil {
				st = f
			}
		}
		return []hfPreStep{func(dst []hfPiece, p hfPiece, sc *splitScratch) ([]hfPiece, error) {
			m, err := stageMatches(st, p.text, sc)
			if err != nil {
				return nil, err
			}
			return splitPiece(dst, p, m, beh, s.Invert), nil
		}}, nil
	case "Metaspace":
		var s struct {
			Replacement    string  `json:"replacement"`
			AddPrefixSpace *bool   `json:"add_prefix_space"`
			PrependScheme  *string `json:"prepend_scheme"`
			Split          *bool   `json:"split"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if s.Replacement == "" {
			s.Replacement = spaceMark
		}
		scheme := "always"
		if s.PrependScheme != nil {
			scheme = *s.PrependScheme
		} else if s.AddPrefixSpace != nil && !*s.AddPrefixSpace {
			scheme = "never"
		}
		if scheme != "always" && scheme != "never" && scheme != "first" {
			return nil, fmt.Errorf("Metaspace prepend_scheme %q is not supported", scheme)
		}
		split := s.Split == nil || *s.Split
		rep := s.Replacement
		return []hfPreStep{func(dst []hfPiece, p hfPiece, _ *splitScratch) ([]hfPiece, error) {
			t := strings.ReplaceAll(p.text, " ", rep)
			if (scheme == "always" || scheme == "first" && p.first) && !strings.HasPrefix(t, rep) {
				t = rep + t
			}
			q := hfPiece{text: t, first: p.first}
			if !split {
				return append(dst, q), nil
			}
			var m []span
			for i := 0; ; {
				j := strings.Index(t[i:], rep)
				if j < 0 {
					break
				}
				m = append(m, span{i + j, i + j + len(rep)})
				i += j + len(rep)
			}
			return splitPiece(dst, q, m, behMergedWithNext, false), nil
		}}, nil
	case "Whitespace":
		st, err := newRegexStage(`\w+|[^\w\s]+`)
		if err != nil {
			return nil, err
		}
		return []hfPreStep{func(dst []hfPiece, p hfPiece, sc *splitScratch) ([]hfPiece, error) {
			m, err := st.matches(p.text, sc)
			if err != nil {
				return nil, err
			}
			return splitPiece(dst, p, m, behRemoved, true), nil
		}}, nil
	case "WhitespaceSplit":
		return []hfPreStep{func(dst []hfPiece, p hfPiece, _ *splitScratch) ([]hfPiece, error) {
			return splitPiece(dst, p, runeMatches(p.text, unicode.IsSpace, false), behRemoved, false), nil
		}}, nil
	case "BertPreTokenizer":
		return []hfPreStep{func(dst []hfPiece, p hfPiece, _ *splitScratch) ([]hfPiece, error) {
			var tmp []hfPiece
			tmp = splitPiece(tmp, p, runeMatches(p.text, isBertSpace, false), behRemoved, false)
			for _, q := range tmp {
				dst = splitPiece(dst, q, runeMatches(q.text, isBertPunct, false), behIsolated, false)
			}
			return dst, nil
		}}, nil
	case "Digits":
		var d struct {
			Individual bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return []hfPreStep{func(dst []hfPiece, p hfPiece, _ *splitScratch) ([]hfPiece, error) {
			if d.Individual {
				return splitPiece(dst, p, runeMatches(p.text, unicode.IsNumber, false), behIsolated, false), nil
			}
			return splitPiece(dst, p, runeMatches(p.text, unicode.IsNumber, true), behIsolated, false), nil
		}}, nil
	case "Punctuation":
		var s struct {
			Behavior string `json:"behavior"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		beh, err := parseBehavior(s.Behavior)
		if err != nil {
			return nil, err
		}
		return []hfPreStep{func(dst []hfPiece, p hfPiece, _ *splitScratch) ([]hfPiece, error) {
			return splitPiece(dst, p, runeMatches(p.text, isBertPunct, false), beh, false), nil
		}}, nil
	case "CharDelimiterSplit":
		var s struct {
			Delimiter string `json:"delimiter"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		d, n := utf8.DecodeRuneInString(s.Delimiter)
		if n == 0 || n != len(s.Delimiter) {
			return nil, fmt.Errorf("CharDelimiterSplit delimiter %q is not one character", s.Delimiter)
		}
		return []hfPreStep{func(dst []hfPiece, p hfPiece, _ *splitScratch) ([]hfPiece, error) {
			return splitPiece(dst, p, runeMatches(p.text, func(r rune) bool { return r == d }, false), behRemoved, false), nil
		}}, nil
	}
	return nil, fmt.Errorf("pre-tokenizer type %q is not supported", typ)
}

// parseHFPostProcessor returns the tokens added before and after a single
// sequence.
func parseHFPostProcessor(raw json.RawMessage, v *vocab) (prefix, suffix []int, err error) {
	if isNull(raw) {
		return nil, nil, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, nil, err
	}
	tokenPair := func(field json.RawMessage, what string) (int, error) {
		var pair []json.RawMessage
		if err := json.Unmarshal(field, &pair); err != nil || len(pair) != 2 {
			return 0, fmt.Errorf("%s: want [\"token\", id]", what)
		}
		var id int
		if err := json.Unmarshal(pair[1], &id); err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		if id < 0 || id >= len(v.pieces) {
			return 0, fmt.Errorf("%s: id %d out of range", what, id)
		}
		return id, nil
	}
	switch typ {
	case "Sequence":
		var s struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		for i, p := range s.Processors {
			pre, suf, err := parseHFPostProcessor(p, v)
			if err != nil {
				return nil, nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			prefix = append(pre, prefix...)
			suffix = append(suffix, suf...)
		}
		return prefix, suffix, nil
	case "ByteLevel":
		return nil, nil, nil
	case "BertProcessing", "RobertaProcessing":
		var s struct {
			Sep json.RawMessage `json:"sep"`
			Cls json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		cls, err := tokenPair(s.Cls, "cls")
		if err != nil {
			return nil, nil, err
		}
		sep, err := tokenPair(s.Sep, "sep")
		if err != nil {
			return nil, nil, err
		}
		return []int{cls}, []int{sep}, nil
	case "TemplateProcessing":
		var s struct {
			Single []struct {
				SpecialToken *struct {
					ID string `json:"id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID string `json:"id"`
				} `json:"Sequence"`
			} `json:"single"`
			SpecialTokens map[string]struct {
				IDs []int `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		seen := false
		for _, it := range s.Single {
			switch {
			case it.Sequence != nil:
				if seen {
					return nil, nil, errors.New("template has two sequences in single")
				}
				seen = true
			case it.SpecialToken != nil:
				st, ok := s.SpecialTokens[it.SpecialToken.ID]
				if !ok {
					return nil, nil, fmt.Errorf("template special token %q has no entry in special_tokens", it.SpecialToken.ID)
				}
				for _, id := range st.IDs {
					if id < 0 || id >= len(v.pieces) {
						return nil, nil, fmt.Errorf("template special token %q: id %d out of range", it.SpecialToken.ID, id)
					}
				}
				if seen {
					suffix = append(suffix, st.IDs...)
				} else {
					prefix = append(prefix, st.IDs...)
				}
			default:
				return nil, nil, errors.New("template item is neither SpecialToken nor Sequence")
			}
		}
		if !seen {
			return nil, nil, errors.New("template single has no Sequence")
		}
		return prefix, suffix, nil
	}
	return nil, nil, fmt.Errorf("post-processor type %q is not supported", typ)
}

// parseHFDecoder returns the per-token decoding and whether one leading
// space of the decoded text is removed.
func parseHFDecoder(raw json.RawMessage, v *vocab) (func(string) string, bool, error) {
	if isNull(raw) {
		return func(s string) string { return s }, false, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, false, err
	}
	switch typ {
	case "Sequence":
		var s struct {
			Decoders []json.RawMessage `json:"decoders"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		var fs []func(string) string
		strip := false
		for i, d := range s.Decoders {
			f, st, err := parseHFDecoder(d, v)
			if err != nil {
				return nil, false, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			fs = append(fs, f)
			strip = strip || st
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, strip, nil
	case "ByteLevel":
		return func(s string) string { return string(byteLevelDecode(nil, s)) }, false, nil
	case "ByteFallback":
		return func(s string) string {
			if b, ok := parseByteToken(s); ok {
				return string([]byte{b})
			}
			return s
		}, false, nil
	case "Fuse":
		return func(s string) string { return s }, false, nil
	case "Replace":
		var r struct {
			Pattern hfPattern `json:"pattern"`
			Content string    `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, false, err
		}
		if r.Pattern.String == nil {
			return nil, false, errors.New("Replace decoder with a Regex pattern is not supported")
		}
		old := *r.Pattern.String
		return func(s string) string { return strings.ReplaceAll(s, old, r.Content) }, false, nil
	case "Strip":
		var s struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		if s.Stop != 0 || s.Start > 1 || s.Start == 1 && s.Content != " " {
			return nil, false, fmt.Errorf("Strip decoder (%q, %d, %d) is not supported; only (\" \", 1, 0)", s.Content, s.Start, s.Stop)
		}
		return func(s string) string { return s }, s.Start == 1, nil
	case "Metaspace":
		var s struct {
			Replacement    string  `json:"replacement"`
			AddPrefixSpace *bool   `json:"add_prefix_space"`
			PrependScheme  *string `json:"prepend_scheme"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		if s.Replacement == "" {
			s.Replacement = spaceMark
		}
		strip := true
		if s.PrependScheme != nil {
			strip = *s.PrependScheme != "never"
		} else if s.AddPrefixSpace != nil {
			strip = *s.AddPrefixSpace
		}
		return func(t string) string { return strings.ReplaceAll(t, s.Replacement, " ") }, strip, nil
	case "WordPiece":
		var s struct {
			Prefix *string `json:"prefix"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		prefix := "##"
		if s.Prefix != nil {
			prefix = *s.Prefix
		}
		return func(t string) string {
			if rest, ok := strings.CutPrefix(t, prefix); ok && prefix != "" {
				return rest
			}
			return " " + t
		}, true, nil
	case "BPEDecoder":
		var s struct {
			Suffix *string `json:"suffix"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		suffix := "</w>"
		if s.Suffix != nil {
			suffix = *s.Suffix
		}
		return func(t string) string { return strings.ReplaceAll(t, suffix, " ") }, false, nil
	}
	return nil, false, fmt.Errorf("decoder type %q is not supported", typ)
}
