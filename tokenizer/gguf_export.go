package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/weftrun/weft/gguf"
)

// GGUFMetadata returns the tokenizer.* metadata entries that describe t in a
// GGUF file (tokenizer.ggml.model, .tokens, .scores, .token_type, .merges,
// .pre, the bos/eos/unknown/separator/padding ids, add_bos_token,
// add_eos_token, add_space_prefix, ...), such that FromGGUF of them encodes
// and decodes as t does, and llama.cpp loads them. Values have the Go types
// gguf.Writer.AddKV takes and llama.cpp expects: string, []string,
// []float32 scores, []int32 token types, uint32 ids, bool flags.
//
// What each kind of tokenizer becomes:
//
//   - A SentencePiece-style tokenizer (GGUF model "llama", llama2.c
//     tokenizer.bin) becomes model "llama" with its tokens, scores (zeros
//     where it had none), token types (llama2.c: <unk> 2, <s> and </s> 3,
//     <0xNN> 6, the rest 1), BOS, EOS and unknown ids, add_bos_token,
//     add_eos_token and add_space_prefix.
//   - A byte-level BPE GGUF tokenizer becomes model "gpt2" with its merges
//     and pre-tokenizer name.
//   - A WordPiece tokenizer (GGUF model "bert", vocab.txt, tokenizer.json
//     WordPiece with BertNormalizer and BertPreTokenizer) becomes model
//     "bert"; pieces are written the way llama.cpp stores them ("##ing" as
//     "ing", a word-initial "play" as "▁play"). tokenizer.ggml.normalizer.
//     lowercase and .strip_accents are written when they differ from the
//     default (lower-casing and stripping accents), for FromGGUF; llama.cpp
//     ignores them.
//   - A tokenizer.json BPE with a ByteLevel pre-tokenizer becomes model
//     "gpt2" with the llama.cpp pre-tokenizer whose patterns and
//     ignore_merges flag are those of its pre-tokenizer steps (Split
//     regexes with behavior Isolated, ByteLevel, Digits, Punctuation), for
//     example "gpt-2" (GPT-2), "llama-bpe" (Llama 3), "qwen2", "starcoder".
//     Every byte needs a token: Hugging Face drops a byte it has none for
//     before merging, llama.cpp after (StarCoder's and Falcon's
//     tokenizer.json files lack some; Falcon's also splits digits after
//     ByteLevel, which no llama.cpp pre-tokenizer does).
//   - A tokenizer.json BPE with byte_fallback whose spaces become U+2581
//     through a Replace normalizer (with a Prepend("▁") for the space
//     prefix) or a Metaspace pre-tokenizer with prepend_scheme "never"
//     becomes model "llama". Its merges are turned into scores (a piece
//     scores minus the rank of its first merge), which is exact when, as
//     for vocabularies converted from SentencePiece, every way to cut a
//     piece into two pieces is a merge and a piece's merges are
//     consecutive; both are checked. One difference remains possible: where
//     two different cuts of the same piece could be merged at once,
//     SentencePiece takes the leftmost and BPE the better-ranked.
//
// Phi-3's special tokens eat the whitespace after them because the model
// file's general.name says Phi-3 (llama.cpp's rule, which FromGGUF follows);
// that entry is the model's, not written here, so a GGUF source's
// general.name must be kept for its tokenizer to come back the same.
//
// A GGUF source's other tokenizer.* entries (chat template, padding, FIM
// ids, ...) are carried over; a tokenizer.json's tokenizer_config.json
// gives the padding id and the chat template. Special-token ids that a
// tokenizer lacks but llama.cpp would default to a real token are written
// as 0xFFFFFFFF: FromGGUF reads that as none, llama.cpp warns and keeps its
// default.
//
// Anything GGUF cannot record is an error that names it: normalizers other
// than the ones above (NFC, Lowercase, ...), pre-tokenizer steps or
// patterns no llama.cpp pre-tokenizer has, a Metaspace that prepends its
// U+2581 (it skips text that already starts with a space, and with
// "first" text after a special token, where llama.cpp's add_space_prefix
// always prepends), added tokens with lstrip, rstrip or single_word,
// special tokens added around the text other than BOS and EOS, unassigned
// token ids, continuing-subword prefixes or end-of-word suffixes on BPE,
// and merge sets SentencePiece scores cannot reproduce.
//
// Two differences are inherent in llama.cpp's WordPiece and are accepted:
// it has no limit on the characters in a word (Hugging Face's
// max_input_chars_per_word, 100 for vocab.txt), and text containing U+2581
// can match a word-initial piece in the middle of a word.
//
// Before returning, GGUFMetadata loads the metadata back with FromGGUF
// and checks that the tokens, types, special ids, special-token matching
// and the decoded bytes of every token agree, and that a set of probe
// strings (with the special tokens among them) encodes to the same ids.
func GGUFMetadata(t Tokenizer) (gguf.Metadata, error) {
	m, ok := t.(*model)
	if !ok || m == nil {
		return nil, fmt.Errorf("gguf export: %T is not a tokenizer built by this package", t)
	}
	p, err := m.planGGUF()
	if err != nil {
		return nil, fmt.Errorf("gguf export: %w", err)
	}
	meta := m.assembleGGUF(p)
	if err := m.checkGGUF(meta, p); err != nil {
		return nil, fmt.Errorf("gguf export: self-check: %w", err)
	}
	return meta, nil
}

// exportSource is what a loader records for GGUFMetadata.
type exportSource struct {
	// gguf holds the tokenizer.* entries of a GGUF source other than the
	// token arrays; the ones GGUFMetadata does not rebuild (chat template,
	// padding and FIM ids, ...) are carried over.
	gguf gguf.Metadata
	// ggufName is the source's general.name, from which llama.cpp and
	// FromGGUF derive Phi-3's whitespace stripping around special tokens.
	ggufName string
	// hf is set for tokenizer.json sources.
	hf *hfPipeline
}

// hfPipeline is the part of a tokenizer.json that the encoder does not keep
// in a form GGUFMetadata can inspect.
type hfPipeline struct {
	normalizer, preTokenizer json.RawMessage
	holes                    int             // token ids no entry was given
	pad                      int             // tokenizer_config.json pad_token; -1 if none
	chatTemplate             json.RawMessage // tokenizer_config.json chat_template
}

// ggufSource records the tokenizer.* entries of a GGUF file.
func ggufSource(meta gguf.Metadata) exportSource {
	src := exportSource{gguf: gguf.Metadata{}}
	for k, v := range meta {
		switch k {
		case keyTokens, keyScores, keyTypes, keyMerges:
			continue // rebuilt from the tokenizer; not worth keeping twice
		}
		if strings.HasPrefix(k, "tokenizer.") {
			src.gguf[k] = v
		}
	}
	src.ggufName, _ = meta.String("general.name")
	return src
}

// Special-token id keys GGUFMetadata writes.
const (
	keyBOSID  = "tokenizer.ggml.bos_token_id"
	keyEOSID  = "tokenizer.ggml.eos_token_id"
	keyUnkID  = "tokenizer.ggml.unknown_token_id"
	keySepID  = "tokenizer.ggml.seperator_token_id"
	keyPadID  = "tokenizer.ggml.padding_token_id"
	keyClsID  = "tokenizer.ggml.cls_token_id"
	keyMaskID = "tokenizer.ggml.mask_token_id"
)

// noToken is how GGUF files write a missing special token.
const noToken = uint32(math.MaxUint32)

// ggufPlan is the GGUF form of a tokenizer before it becomes metadata.
type ggufPlan struct {
	kind         string // tokenizer.ggml.model
	pieces       []string
	types        []int32
	scores       []float32 // nil: not written
	merges       []string  // gpt2
	pre          string    // gpt2
	spacePrefix  bool      // llama
	unk, sep     int       // llama and bert; -1 for none
	lower, strip bool      // bert
	// rewritten reports that pieces differ from the tokenizer's (WordPiece
	// continuation prefixes turned into llama.cpp's U+2581 form).
	rewritten bool
	// extra are further entries (padding id, chat template).
	extra gguf.Metadata
}

// planGGUF works out the GGUF form of m, or why there is none.
func (m *model) planGGUF() (*ggufPlan, error) {
	if h := m.src.hf; h != nil && h.holes > 0 {
		return nil, fmt.Errorf("%d token ids have no token in tokenizer.json; a GGUF vocabulary has no gaps", h.holes)
	}
	if m.src.gguf == nil {
		// Only FromGGUF sets per-token whitespace stripping that GGUF
		// can reproduce (from general.name and tokenizer.ggml.pre).
		if st, ok := m.special.firstAttr(); ok {
			return nil, fmt.Errorf("added token %q (id %d) has lstrip, rstrip or single_word; GGUF cannot record them and llama.cpp would not apply them", st.text, st.id)
		}
	}
	var p *ggufPlan
	var err error
	switch e := m.enc.(type) {
	case *spmEncoder:
		p, err = m.planSPM(e)
	case *byteBPEEncoder:
		p, err = m.planByteBPE(e)
	case *wordPieceEncoder:
		p, err = m.planWordPiece(e.opt)
	case *hfEncoder:
		p, err = m.planHF(e)
	default:
		err = fmt.Errorf("%s tokenizer has no GGUF form", m.family)
	}
	if err != nil {
		return nil, err
	}
	if p.kind != "bert" {
		if len(m.prefix) > 1 || len(m.prefix) == 1 && m.prefix[0] != m.bos {
			return nil, fmt.Errorf("it adds %s before the text; GGUF can only ask for the BOS token (%s)", m.describe(m.prefix), m.describe([]int{m.bos}))
		}
		if len(m.suffix) > 1 || len(m.suffix) == 1 && m.suffix[0] != m.eos {
			return nil, fmt.Errorf("it adds %s after the text; GGUF can only ask for the EOS token (%s)", m.describe(m.suffix), m.describe([]int{m.eos}))
		}
	}
	if h := m.src.hf; h != nil {
		if p.extra == nil {
			p.extra = gguf.Metadata{}
		}
		if h.pad >= 0 {
			p.extra[keyPadID] = uint32(h.pad)
		}
		ct, err := chatTemplateMeta(h.chatTemplate)
		if err != nil {
			return nil, err
		}
		for k, v := range ct {
			p.extra[k] = v
		}
	}
	return p, nil
}

// describe names tokens for error messages.
func (m *model) describe(ids []int) string {
	if len(ids) == 0 {
		return "nothing"
	}
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		if id < 0 || id >= len(m.pieces) {
			b.WriteString("none")
			continue
		}
		fmt.Fprintf(&b, "%q (%d)", m.pieces[id], id)
	}
	return b.String()
}

// firstAttr returns a special token with lstrip, rstrip or single_word.
func (s *specialMatcher) firstAttr() (specialToken, bool) {
	var found []specialToken
	for _, list := range s.byFirst {
		for _, st := range list {
			if st.lstrip || st.rstrip || st.singleWord {
				found = append(found, st)
			}
		}
	}
	if len(found) == 0 {
		return specialToken{}, false
	}
	sort.Slice(found, func(i, j int) bool { return found[i].id < found[j].id })
	return found[0], true
}

// basePlan copies the vocabulary into a plan.
func (m *model) basePlan(kind string) *ggufPlan {
	p := &ggufPlan{kind: kind, pieces: slices.Clone(m.pieces), types: make([]int32, len(m.types)), unk: -1, sep: -1}
	for i, t := range m.types {
		p.types[i] = int32(t)
	}
	if m.scores != nil {
		p.scores = slices.Clone(m.scores)
	}
	return p
}

// planSPM exports a SentencePiece-style tokenizer (GGUF "llama", llama2.c).
func (m *model) planSPM(e *spmEncoder) (*ggufPlan, error) {
	if m.stripLeading != e.addSpacePrefix {
		return nil, fmt.Errorf("removing a leading space when decoding (%v) differs from add_space_prefix (%v); GGUF ties the two", m.stripLeading, e.addSpacePrefix)
	}
	p := m.basePlan("llama")
	if p.scores == nil {
		p.scores = make([]float32, len(p.pieces)) // what FromGGUF assumes without scores
	}
	p.spacePrefix = e.addSpacePrefix
	p.unk = int(e.unk)
	return p, nil
}

// planByteBPE exports a byte-level BPE GGUF tokenizer.
func (m *model) planByteBPE(e *byteBPEEncoder) (*ggufPlan, error) {
	p := m.basePlan("gpt2")
	p.pre = e.pre.name
	var err error
	if p.merges, err = mergeLines(e.merges); err != nil {
		return nil, err
	}
	return p, nil
}

// mergeLines writes merge rules as GGUF "left right" lines in rank order.
func mergeLines(b *bpeMerges) ([]string, error) {
	rules := sortedRules(b)
	lines := make([]string, len(rules))
	for i, r := range rules {
		l, rt := b.text(r.l), b.text(r.r)
		// A reader splits at the first space after the first byte.
		if l == "" || rt == "" || strings.IndexByte(l[1:], ' ') >= 0 {
			return nil, fmt.Errorf("merge %d (%q %q) cannot be written as a GGUF \"left right\" line", i, l, rt)
		}
		lines[i] = l + " " + rt
	}
	return lines, nil
}

// mergeRule is one rule of a bpeMerges, by symbol ids.
type mergeRule struct {
	rank     int32
	l, r, to int32
}

// sortedRules returns the merge rules in rank order.
func sortedRules(b *bpeMerges) []mergeRule {
	out := make([]mergeRule, 0, len(b.rules))
	for k, r := range b.rules {
		out = append(out, mergeRule{rank: r.rank, l: int32(uint32(k >> 32)), r: int32(uint32(k)), to: r.id})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rank < out[j].rank })
	return out
}

// planWordPiece exports a WordPiece tokenizer whose encoder runs BERT's
// normalizer and pre-tokenizer with options o.
func (m *model) planWordPiece(o wordPieceOptions) (*ggufPlan, error) {
	if !o.bertPre || !o.cleanText || !o.chinese {
		return nil, errors.New("WordPiece without BERT's text cleaning, CJK splitting and whitespace/punctuation pre-tokenizer has no llama.cpp equivalent")
	}
	if len(m.prefix) != 1 || len(m.suffix) != 1 || m.prefix[0] != m.bos {
		return nil, fmt.Errorf("it adds %s before and %s after the text; llama.cpp's BERT adds one BOS ([CLS]) before and one separator after", m.describe(m.prefix), m.describe(m.suffix))
	}
	p := m.basePlan("bert")
	p.unk, p.sep = o.unk, m.suffix[0]
	p.lower, p.strip = o.lowercase, o.stripAccents
	switch {
	case o.initPrefix == spaceMark && o.contPrefix == "":
		// Already llama.cpp's form.
	case o.initPrefix == "" && o.contPrefix != "":
		for i, t := range m.types {
			if t != typeNormal {
				continue
			}
			if rest, ok := strings.CutPrefix(p.pieces[i], o.contPrefix); ok {
				p.pieces[i] = rest
			} else {
				p.pieces[i] = spaceMark + p.pieces[i]
			}
			if p.pieces[i] == "" {
				return nil, fmt.Errorf("token %d (%q) is only the continuation prefix", i, m.pieces[i])
			}
		}
		p.rewritten = true
	default:
		return nil, fmt.Errorf("WordPiece with word prefix %q and continuation prefix %q has no llama.cpp form", o.initPrefix, o.contPrefix)
	}
	if m.src.gguf == nil {
		p.extra = gguf.Metadata{keyClsID: uint32(m.bos)}
		if id, ok := m.ids["[MASK]"]; ok && m.types[id] == typeControl {
			p.extra[keyMaskID] = uint32(id)
		}
		if m.src.hf == nil {
			if id, ok := m.ids["[PAD]"]; ok && m.types[id] == typeControl {
				p.extra[keyPadID] = uint32(id)
			}
		}
	}
	return p, nil
}

// hfStep is one normalizer or pre-tokenizer of a tokenizer.json, with
// Sequences flattened.
type hfStep struct {
	typ string
	raw json.RawMessage
}

// hfSteps flattens a normalizer or pre-tokenizer; list names the field of
// its Sequence. Empty Precompiled normalizers, which do nothing, are left
// out.
func hfSteps(raw json.RawMessage, list string) ([]hfStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		var s map[string]json.RawMessage
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(s[list], &items); err != nil && !isNull(s[list]) {
			return nil, err
		}
		var out []hfStep
		for _, it := range items {
			sub, err := hfSteps(it, list)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		return out, nil
	case "Precompiled":
		return nil, nil // LoadHF accepts only an empty charsmap
	}
	return []hfStep{{typ, raw}}, nil
}

func stepNames(steps []hfStep) string {
	if len(steps) == 0 {
		return "none"
	}
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.typ
	}
	return strings.Join(names, ", ")
}

// planHF exports a tokenizer.json tokenizer.
func (m *model) planHF(e *hfEncoder) (*ggufPlan, error) {
	h := m.src.hf
	if h == nil {
		return nil, errors.New("tokenizer.json pipeline was not recorded")
	}
	norms, err := hfSteps(h.normalizer, "normalizers")
	if err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	pres, err := hfSteps(h.preTokenizer, "pretokenizers")
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch mdl := e.model.(type) {
	case *hfWordPiece:
		return m.planHFWordPiece(mdl, norms, pres)
	case *hfBPE:
		if mdl.contPrefix != "" || mdl.suffix != "" {
			return nil, fmt.Errorf("BPE continuing_subword_prefix %q / end_of_word_suffix %q have no llama.cpp equivalent", mdl.contPrefix, mdl.suffix)
		}
		for _, s := range pres {
			if s.typ == "ByteLevel" {
				return m.planHFByteLevel(mdl, norms, pres)
			}
		}
		if mdl.byteFallback {
			return m.planHFSentencePiece(mdl, norms, pres)
		}
		return nil, fmt.Errorf("BPE with neither a ByteLevel pre-tokenizer nor byte_fallback (pre-tokenizer: %s) has no llama.cpp equivalent", stepNames(pres))
	}
	return nil, fmt.Errorf("%s tokenizer has no GGUF form", m.family)
}

// planHFWordPiece exports a tokenizer.json WordPiece model.
func (m *model) planHFWordPiece(w *hfWordPiece, norms, pres []hfStep) (*ggufPlan, error) {
	if len(norms) != 1 || norms[0].typ != "BertNormalizer" {
		return nil, fmt.Errorf("normalizer %s: llama.cpp's BERT tokenizer runs exactly BERT's normalizer", stepNames(norms))
	}
	if len(pres) != 1 || pres[0].typ != "BertPreTokenizer" {
		return nil, fmt.Errorf("pre-tokenizer %s: llama.cpp's BERT tokenizer splits exactly like BertPreTokenizer", stepNames(pres))
	}
	var b struct {
		CleanText    *bool `json:"clean_text"`
		Chinese      *bool `json:"handle_chinese_chars"`
		StripAccents *bool `json:"strip_accents"`
		Lowercase    *bool `json:"lowercase"`
	}
	if err := json.Unmarshal(norms[0].raw, &b); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	def := func(p *bool, d bool) bool {
		if p == nil {
			return d
		}
		return *p
	}
	o := w.e.opt
	o.cleanText, o.chinese, o.lowercase = def(b.CleanText, true), def(b.Chinese, true), def(b.Lowercase, true)
	o.stripAccents = def(b.StripAccents, o.lowercase)
	o.bertPre = true
	return m.planWordPiece(o)
}

// planHFByteLevel exports a tokenizer.json byte-level BPE as model gpt2.
func (m *model) planHFByteLevel(b *hfBPE, norms, pres []hfStep) (*ggufPlan, error) {
	if len(norms) > 0 {
		return nil, fmt.Errorf("normalizer %s: llama.cpp's byte-level BPE does not normalize text", stepNames(norms))
	}
	stages, err := byteLevelStages(pres)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	var missing []string
	for c := 0; c < 256; c++ {
		if _, ok := m.ids[string(byteLevel.enc[c])]; !ok {
			missing = append(missing, fmt.Sprintf("0x%02X", c))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no token for the bytes %s: Hugging Face drops such a byte before merging, llama.cpp after", strings.Join(missing, " "))
	}
	pre, err := matchPreTokenizer(stages, b.ignoreMerges)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	p := m.basePlan("gpt2")
	p.pre = pre
	if p.merges, err = mergeLines(b.merges); err != nil {
		return nil, err
	}
	return p, nil
}

// Punctuation classes of Hugging Face's Punctuation pre-tokenizer (ASCII
// punctuation and symbols, Unicode punctuation): runs and single characters.
const (
	patHFPunctRun = patFalconPunc
	patHFPunct    = "[\\p{P}\\$\\+<=>\\^~\\|`]"
)

// byteLevelStages turns the pre-tokenizer steps of a byte-level BPE into
// llama.cpp's form: patterns that each split every piece into its matches
// and the text between them, run on the raw text.
func byteLevelStages(steps []hfStep) ([]string, error) {
	var out []string
	mapped := false // a ByteLevel step has turned the text into byte-level characters
	for i, st := range steps {
		var pat string
		switch st.typ {
		case "ByteLevel":
			var s struct {
				AddPrefixSpace bool  `json:"add_prefix_space"`
				UseRegex       *bool `json:"use_regex"`
			}
			if err := json.Unmarshal(st.raw, &s); err != nil {
				return nil, err
			}
			if s.AddPrefixSpace {
				return nil, errors.New("ByteLevel add_prefix_space: llama.cpp never puts a space before the text")
			}
			if mapped {
				return nil, errors.New("two ByteLevel steps")
			}
			if s.UseRegex == nil || *s.UseRegex {
				out = append(out, "<gpt2>")
			}
			mapped = true
			continue
		case "Split":
			var s struct {
				Pattern  hfPattern `json:"pattern"`
				Behavior string    `json:"behavior"`
				Invert   bool      `json:"invert"`
			}
			if err := json.Unmarshal(st.raw, &s); err != nil {
				return nil, err
			}
			beh, err := parseBehavior(s.Behavior)
			if err != nil {
				return nil, err
			}
			if beh != behIsolated || s.Invert {
				return nil, fmt.Errorf("step %d: Split with behavior %q, invert %v: llama.cpp only isolates matches", i, s.Behavior, s.Invert)
			}
			switch {
			case s.Pattern.Regex != nil:
				pat = *s.Pattern.Regex
			case s.Pattern.String != nil:
				pat = regexp2.Escape(*s.Pattern.String)
			default:
				return nil, fmt.Errorf("step %d: Split pattern has neither String nor Regex", i)
			}
		case "Digits":
			var d struct {
				Individual bool `json:"individual_digits"`
			}
			if err := json.Unmarshal(st.raw, &d); err != nil {
				return nil, err
			}
			pat = patNumbers
			if d.Individual {
				pat = patNumber
			}
		case "Punctuation":
			var s struct {
				Behavior string `json:"behavior"`
			}
			if err := json.Unmarshal(st.raw, &s); err != nil {
				return nil, err
			}
			beh, err := parseBehavior(s.Behavior)
			if err != nil {
				return nil, err
			}
			switch beh {
			case behContiguous:
				pat = patHFPunctRun
			case behIsolated:
				pat = patHFPunct
			default:
				return nil, fmt.Errorf("step %d: Punctuation with behavior %q: llama.cpp only isolates matches", i, s.Behavior)
			}
		default:
			return nil, fmt.Errorf("step %d: %s has no llama.cpp equivalent", i, st.typ)
		}
		pat = canonPattern(pat)
		if mapped && pat != patDigits3 {
			// After ByteLevel the step sees byte-level characters (a
			// space is "Ġ", "é" is "Ã©"); llama.cpp splits the raw text.
			// Only a pattern of ASCII digits is blind to the difference.
			return nil, fmt.Errorf("step %d: %s after ByteLevel splits byte-level text, which llama.cpp's pre-tokenizers never see", i, st.typ)
		}
		out = append(out, pat)
	}
	if !mapped {
		return nil, errors.New("no ByteLevel step")
	}
	return out, nil
}

// canonPattern spells a pre-tokenizer pattern the way preTokenizerDefs do:
// Hugging Face's case-insensitive contractions spelled out, and the GPT-2,
// Llama 3 and Qwen2 patterns by the names of their splitters.
func canonPattern(p string) string {
	p = strings.ReplaceAll(p, "(?i:'s|'t|'re|'ve|'m|'ll|'d)", patContr)
	switch p {
	case patGPT2, patGPT2 + `|\s+`:
		return "<gpt2>"
	case patLlama3:
		return "<llama3>"
	case patQwen2:
		return "<qwen2>"
	}
	return p
}

// preferredPre lists the names chosen when several llama.cpp pre-tokenizers
// share the same patterns and flags.
var preferredPre = []string{"gpt-2", "llama-bpe", "dbrx", "qwen2", "starcoder", "falcon", "default",
	"deepseek-llm", "deepseek-coder", "deepseek-v3", "gpt-4o", "tekken", "poro-chat", "viking", "chameleon"}

// matchPreTokenizer names the llama.cpp pre-tokenizer with these stages.
func matchPreTokenizer(stages []string, ignoreMerges bool) (string, error) {
	var names, near []string
	for name, def := range preTokenizerDefs {
		if def.noBOS || len(def.patterns) != len(stages) {
			continue
		}
		same := true
		for i, p := range def.patterns {
			if canonPattern(p) != stages[i] {
				same = false
				break
			}
		}
		switch {
		case !same:
		case def.ignoreMerges == ignoreMerges:
			names = append(names, name)
		default:
			near = append(near, name)
		}
	}
	if len(names) == 0 {
		if len(near) > 0 {
			sort.Strings(near)
			return "", fmt.Errorf("the patterns are those of %s, but ignore_merges is %v there and %v here", strings.Join(near, ", "), !ignoreMerges, ignoreMerges)
		}
		return "", fmt.Errorf("no llama.cpp pre-tokenizer splits with the patterns %q", stages)
	}
	for _, n := range preferredPre {
		if slices.Contains(names, n) {
			return n, nil
		}
	}
	sort.Strings(names)
	return names[0], nil
}

// planHFSentencePiece exports a tokenizer.json BPE with byte fallback that
// writes spaces as U+2581 as model llama.
func (m *model) planHFSentencePiece(b *hfBPE, norms, pres []hfStep) (*ggufPlan, error) {
	if b.ignoreMerges {
		return nil, errors.New("ignore_merges has no SentencePiece equivalent")
	}
	spacePrefix, split, err := spmEscaping(norms, pres)
	if err != nil {
		return nil, err
	}
	for c, id := range b.byteTok {
		if id < 0 {
			return nil, fmt.Errorf("byte_fallback without a <0x%02X> token", c)
		}
	}
	p := m.basePlan("llama")
	if p.scores, err = spmScores(m, b.merges); err != nil {
		return nil, err
	}
	if split {
		for id, piece := range m.pieces {
			if spmMergeable(m.types[id]) && strings.Contains(piece[min(1, len(piece)):], spaceMark) {
				return nil, fmt.Errorf("Metaspace split cuts before every U+2581, but token %d (%q) has one inside; SentencePiece could produce it", id, piece)
			}
		}
	}
	p.spacePrefix = spacePrefix
	p.unk = int(b.unk)
	return p, nil
}

// spmEscaping checks that the normalizer and pre-tokenizer only write
// spaces as U+2581, with a U+2581 in front of the text when spacePrefix,
// as SentencePiece does. split reports a Metaspace that cuts the text
// before every U+2581.
func spmEscaping(norms, pres []hfStep) (spacePrefix, split bool, err error) {
	switch {
	case len(pres) == 0:
		var replace, prepend int
		for _, n := range norms {
			switch n.typ {
			case "Replace":
				var r struct {
					Pattern hfPattern `json:"pattern"`
					Content string    `json:"content"`
				}
				if err := json.Unmarshal(n.raw, &r); err != nil {
					return false, false, fmt.Errorf("normalizer: %w", err)
				}
				if r.Pattern.String == nil || *r.Pattern.String != " " || r.Content != spaceMark {
					return false, false, errors.New("normalizer: a Replace other than \" \" → \"▁\" has no SentencePiece equivalent")
				}
				replace++
			case "Prepend":
				var r struct {
					Prepend string `json:"prepend"`
				}
				if err := json.Unmarshal(n.raw, &r); err != nil {
					return false, false, fmt.Errorf("normalizer: %w", err)
				}
				if r.Prepend != spaceMark {
					return false, false, fmt.Errorf("normalizer: Prepend(%q) has no SentencePiece equivalent (only \"▁\")", r.Prepend)
				}
				prepend++
			default:
				return false, false, fmt.Errorf("normalizer %s has no llama.cpp equivalent", n.typ)
			}
		}
		if replace != 1 || prepend > 1 {
			return false, false, fmt.Errorf("normalizer %s: want Replace(\" \" → \"▁\"), with one Prepend(\"▁\") for a space prefix", stepNames(norms))
		}
		return prepend == 1, false, nil
	case len(pres) == 1 && pres[0].typ == "Metaspace":
		if len(norms) > 0 {
			return false, false, fmt.Errorf("normalizer %s before Metaspace has no llama.cpp equivalent", stepNames(norms))
		}
		var s struct {
			Replacement    string  `json:"replacement"`
			AddPrefixSpace *bool   `json:"add_prefix_space"`
			PrependScheme  *string `json:"prepend_scheme"`
			Split          *bool   `json:"split"`
		}
		if err := json.Unmarshal(pres[0].raw, &s); err != nil {
			return false, false, fmt.Errorf("pre_tokenizer: %w", err)
		}
		if s.Replacement != "" && s.Replacement != spaceMark {
			return false, false, fmt.Errorf("pre_tokenizer: Metaspace replacement %q: SentencePiece writes spaces as \"▁\"", s.Replacement)
		}
		scheme := "always"
		if s.PrependScheme != nil {
			scheme = *s.PrependScheme
		} else if s.AddPrefixSpace != nil && !*s.AddPrefixSpace {
			scheme = "never"
		}
		if scheme != "never" {
			where := "text that does not start with a space"
			if scheme == "first" {
				where += ", and only at the start of the input"
			}
			return false, false, fmt.Errorf("pre_tokenizer: Metaspace prepend_scheme %q puts \"▁\" only before %s; llama.cpp's add_space_prefix puts one before every piece of text", scheme, where)
		}
		return false, s.Split == nil || *s.Split, nil
	}
	return false, false, fmt.Errorf("pre_tokenizer %s has no SentencePiece equivalent", stepNames(pres))
}

// spmMergeable reports the token types SentencePiece merging can produce.
func spmMergeable(t uint8) bool {
	return t == typeNormal || t == typeUserDefined || t == typeUnused || t == typeUndefined
}

// spmScores gives SentencePiece scores that merge as the ranked BPE merges
// do: a piece scores minus the position of its first merge. It checks what
// makes the two agree: merges join mergeable pieces only, a piece's merges
// are consecutive, and every cut of a piece into two symbols SentencePiece
// could hold (single characters, mergeable pieces) is a merge.
func spmScores(m *model, b *bpeMerges) ([]float32, error) {
	rules := sortedRules(b)
	if len(rules) >= 1<<24 {
		return nil, fmt.Errorf("%d merges: too many for exact float32 scores", len(rules))
	}
	n := len(m.pieces)
	first := make([]int, n)
	last := make([]int, n)
	count := make([]int, n)
	for i := range first {
		first[i] = -1
	}
	for i, r := range rules {
		for _, id := range []int32{r.l, r.r, r.to} {
			if !b.isReal(id) || !spmMergeable(m.types[id]) {
				return nil, fmt.Errorf("merge %d (%q %q) involves %q, which SentencePiece never merges", i, b.text(r.l), b.text(r.r), b.text(id))
			}
		}
		if first[r.to] < 0 {
			first[r.to] = i
		}
		last[r.to] = i
		count[r.to]++
	}
	scores := make([]float32, n)
	for id := range scores {
		switch {
		case !spmMergeable(m.types[id]):
			if utf8.RuneCountInString(m.pieces[id]) == 1 {
				return nil, fmt.Errorf("token %d (%q) is a single character of type %d: BPE takes it for that character, SentencePiece never", id, m.pieces[id], m.types[id])
			}
		case count[id] == 0:
			scores[id] = -float32(len(rules))
		case last[id]-first[id]+1 != count[id]:
			return nil, fmt.Errorf("the %d merges making %q are not consecutive (ranks %d to %d); SentencePiece ranks a piece once", count[id], m.pieces[id], first[id], last[id])
		default:
			scores[id] = -float32(first[id])
		}
	}
	symbol := func(s string) (int32, bool, bool) { // id, is a mergeable token, can be a symbol
		id, ok := m.ids[s]
		tok := ok && spmMergeable(m.types[id])
		return id, tok, tok || utf8.RuneCountInString(s) == 1
	}
	for id, p := range m.pieces {
		if !spmMergeable(m.types[id]) {
			continue
		}
		for k := 1; k < len(p); k++ {
			if !utf8.RuneStart(p[k]) {
				continue
			}
			l, r := p[:k], p[k:]
			lid, ltok, lsym := symbol(l)
			rid, rtok, rsym := symbol(r)
			if !lsym || !rsym {
				continue
			}
			if !ltok || !rtok {
				return nil, fmt.Errorf("SentencePiece would join %q and %q into token %d (%q), but BPE falls back to bytes for a character that is no token", l, r, id, p)
			}
			if _, ok := b.rules[pairKey(lid, rid)]; !ok {
				return nil, fmt.Errorf("SentencePiece would join %q and %q into token %d (%q), but there is no such merge", l, r, id, p)
			}
		}
	}
	return scores, nil
}

// chatTemplateMeta turns tokenizer_config.json's chat_template into GGUF
// entries: a string, or a list of named templates ("default" is the main
// one), as llama.cpp's converter writes them.
func chatTemplateMeta(raw json.RawMessage) (gguf.Metadata, error) {
	if isNull(raw) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return gguf.Metadata{"tokenizer.chat_template": s}, nil
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("tokenizer_config.json chat_template: want a string or a list of {name, template}")
	}
	out := gguf.Metadata{}
	var names []string
	for _, t := range list {
		if t.Name == "" {
			return nil, errors.New("tokenizer_config.json chat_template: a template has no name")
		}
		if t.Name == "default" {
			out["tokenizer.chat_template"] = t.Template
			continue
		}
		out["tokenizer.chat_template."+t.Name] = t.Template
		names = append(names, t.Name)
	}
	if len(names) > 0 {
		out["tokenizer.chat_templates"] = names
	}
	return out, nil
}

// assembleGGUF writes a plan as metadata.
func (m *model) assembleGGUF(p *ggufPlan) gguf.Metadata {
	meta := gguf.Metadata{}
	for k, v := range m.src.gguf {
		meta[k] = v
	}
	for k, v := range p.extra {
		meta[k] = v
	}
	meta[keyModel] = p.kind
	meta[keyTokens] = p.pieces
	meta[keyTypes] = p.types
	if p.scores != nil {
		meta[keyScores] = p.scores
	}
	n := len(p.pieces)
	// id writes a special-token id: none is 0xFFFFFFFF where a reader
	// would otherwise take the default def, and no entry where it would not.
	id := func(key string, id, def int) {
		switch {
		case id >= 0:
			meta[key] = uint32(id)
		case def >= 0 && def < n:
			meta[key] = noToken
		default:
			delete(meta, key)
		}
	}
	switch p.kind {
	case "llama":
		id(keyBOSID, m.bos, 1)
		id(keyEOSID, m.eos, 2)
		id(keyUnkID, p.unk, 0)
		meta[keySpacePrefix] = p.spacePrefix
	case "gpt2":
		id(keyBOSID, m.bos, 11)
		id(keyEOSID, m.eos, 11)
		meta[keyPre] = p.pre
		meta[keyMerges] = p.merges
	case "bert":
		id(keyBOSID, m.bos, 101)
		id(keyEOSID, m.eos, -1)
		id(keyUnkID, p.unk, 100)
		id(keySepID, p.sep, 102)
		delete(meta, keyLowercase)
		delete(meta, keyStripAcc)
		if !p.lower {
			meta[keyLowercase] = false
		}
		if p.strip != p.lower {
			meta[keyStripAcc] = p.strip
		}
	}
	if p.kind != "bert" {
		meta[keyAddBOS] = len(m.prefix) > 0
		meta[keyAddEOS] = len(m.suffix) > 0
	}
	return meta
}

// checkGGUF loads meta back and checks that it behaves as m.
func (m *model) checkGGUF(meta gguf.Metadata, p *ggufPlan) error {
	load := meta
	if m.src.ggufName != "" {
		load = gguf.Metadata{"general.name": m.src.ggufName}
		for k, v := range meta {
			load[k] = v
		}
	}
	ut, err := FromGGUF(load)
	if err != nil {
		return fmt.Errorf("the metadata does not load back: %w", err)
	}
	u := ut.(*model)
	if len(u.pieces) != len(m.pieces) {
		return fmt.Errorf("%d tokens come back as %d", len(m.pieces), len(u.pieces))
	}
	for id := range m.pieces {
		if !p.rewritten && u.pieces[id] != m.pieces[id] {
			return fmt.Errorf("token %d: %q comes back as %q", id, m.pieces[id], u.pieces[id])
		}
		if m.types[id] != u.types[id] {
			return fmt.Errorf("token %d (%q): type %d comes back as %d", id, m.pieces[id], m.types[id], u.types[id])
		}
		if m.eog[id] != u.eog[id] {
			return fmt.Errorf("token %d (%q): end of generation %v comes back as %v", id, m.pieces[id], m.eog[id], u.eog[id])
		}
		if m.skip[id] != u.skip[id] || string(m.decoded[m.off[id]:m.off[id+1]]) != string(u.decoded[u.off[id]:u.off[id+1]]) {
			return fmt.Errorf("token %d (%q) decodes to %q, from the metadata to %q", id, m.pieces[id], m.decoded[m.off[id]:m.off[id+1]], u.decoded[u.off[id]:u.off[id+1]])
		}
	}
	switch {
	case m.bos != u.bos || m.eos != u.eos:
		return fmt.Errorf("BOS/EOS %d/%d come back as %d/%d", m.bos, m.eos, u.bos, u.eos)
	case !slices.Equal(m.prefix, u.prefix) || !slices.Equal(m.suffix, u.suffix):
		return fmt.Errorf("special tokens around the text %v…%v come back as %v…%v", m.prefix, m.suffix, u.prefix, u.suffix)
	case m.stripLeading != u.stripLeading:
		return fmt.Errorf("removing the leading space when decoding (%v) comes back as %v", m.stripLeading, u.stripLeading)
	}
	if a, b := m.special.all(), u.special.all(); !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				return fmt.Errorf("special token matching: %+v comes back as %+v", a[i], b[i])
			}
		}
		return fmt.Errorf("%d special tokens come back as %d", len(a), len(b))
	}
	for _, s := range exportProbes(m, p.kind == "bert") {
		for _, opt := range []EncodeOptions{{}, {AddSpecial: true}, {ParseSpecial: true}, {AddSpecial: true, ParseSpecial: true}} {
			a, errA := m.Encode(s, opt)
			b, errB := u.Encode(s, opt)
			if (errA == nil) != (errB == nil) || !slices.Equal(a, b) {
				return fmt.Errorf("%q (%+v) encodes to %v (%v), from the metadata to %v (%v)", s, opt, a, errA, b, errB)
			}
		}
	}
	return nil
}

// all lists the special tokens in id order.
func (s *specialMatcher) all() []specialToken {
	var out []specialToken
	for _, list := range s.byFirst {
		out = append(out, list...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// probeTexts are strings GGUFMetadata encodes both ways before it trusts
// its result: spaces in every position, digits, punctuation,
// contractions, accents (composed and not), several scripts, emoji, and
// control characters.
var probeTexts = []string{
	"Hello world", " Hello", "Hello ", "  two  spaces  ", "\ttab\tand\nnew\n\nlines\r\n", " ",
	"don't I'll we've THEY'RE", "1 12 123 1234 12345 3.14159 1,000,000", "a+b=c; (x|y) ~z^ <html> $5 `q`",
	"café naïve Ünïcödé", "cafe\u0301", "Привет, мир!", "日本語のテキストと中文字符", "한국어 텍스트",
	"ﬁ ﬂ ² ½ ①", "🦙 emoji 👍🏽 👨‍👩‍👧", "\x00\x01\x7f", "e\u00a0f\u2003g", "Ġ Ċ",
}

// exportProbes returns the probe texts, with the vocabulary's special
// tokens put among words. U+2581 is left out for WordPiece, where
// llama.cpp's form cannot keep it apart from a word start.
func exportProbes(m *model, wordPiece bool) []string {
	out := slices.Clone(probeTexts)
	if !wordPiece {
		out = append(out, "▁x ▁▁y", "a▁b")
	}
	var specials []int
	for id, t := range m.types {
		if t == typeControl || t == typeUnknown || t == typeUserDefined {
			specials = append(specials, id)
		}
	}
	if len(specials) > 24 {
		specials = append(specials[:12], specials[len(specials)-12:]...)
	}
	for _, id := range specials {
		s := m.pieces[id]
		out = append(out, s+"x", "x"+s+" y "+s+" z", " "+s+s+"\n"+s)
	}
	return out
}
