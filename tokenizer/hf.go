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
	"unicode/utf8"

	"github.com/dlclark/regexp2"
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
	if m.pair, err = parseHFPairTemplate(f.PostProcessor, &m.vocab); err != nil {
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
