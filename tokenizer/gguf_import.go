package tokenizer

import (
	"fmt"
	"strings"

	"github.com/weftrun/weft/gguf"
)

// GGUF metadata keys of the tokenizer.
const (
	keyModel       = "tokenizer.ggml.model"
	keyPre         = "tokenizer.ggml.pre"
	keyTokens      = "tokenizer.ggml.tokens"
	keyScores      = "tokenizer.ggml.scores"
	keyTypes       = "tokenizer.ggml.token_type"
	keyMerges      = "tokenizer.ggml.merges"
	keyAddBOS      = "tokenizer.ggml.add_bos_token"
	keyAddEOS      = "tokenizer.ggml.add_eos_token"
	keySpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyLowercase   = "tokenizer.ggml.normalizer.lowercase"
	keyStripAcc    = "tokenizer.ggml.normalizer.strip_accents"
)

// ggufSpecial are the special-token id keys, with the field each sets.
var ggufSpecialKeys = []string{
	"tokenizer.ggml.bos_token_id",
	"tokenizer.ggml.eos_token_id",
	"tokenizer.ggml.unknown_token_id",
	"tokenizer.ggml.seperator_token_id",
	"tokenizer.ggml.padding_token_id",
	"tokenizer.ggml.mask_token_id",
	"tokenizer.ggml.cls_token_id",
	"tokenizer.ggml.eot_token_id",
	"tokenizer.ggml.eom_token_id",
}

// FromGGUF builds the tokenizer a GGUF file's metadata describes
// (tokenizer.ggml.*). Supported models are "llama" (SentencePiece BPE),
// "gpt2" (byte-level BPE with the pre-tokenizer tokenizer.ggml.pre) and
// "bert" (WordPiece). Malformed metadata is an error naming the key.
func FromGGUF(meta gguf.Metadata) (Tokenizer, error) {
	kind, ok := meta.String(keyModel)
	if !ok {
		return nil, fmt.Errorf("gguf tokenizer: missing %s", keyModel)
	}
	pieces, ok := meta.Strings(keyTokens)
	if !ok {
		return nil, fmt.Errorf("gguf tokenizer: missing %s (a string array)", keyTokens)
	}
	if len(pieces) == 0 {
		return nil, fmt.Errorf("gguf tokenizer: %s is empty", keyTokens)
	}
	pieces = append([]string(nil), pieces...)
	var scores []float32
	if _, present := meta[keyScores]; present {
		s, ok := meta.Float32s(keyScores)
		if !ok {
			is, ok2 := meta.Ints(keyScores)
			if !ok2 {
				return nil, fmt.Errorf("gguf tokenizer: %s is %T, want a float32 array", keyScores, meta[keyScores])
			}
			s = make([]float32, len(is))
			for i, x := range is {
				s[i] = float32(x)
			}
		}
		if len(s) != len(pieces) {
			return nil, fmt.Errorf("gguf tokenizer: %s has %d entries for %d tokens", keyScores, len(s), len(pieces))
		}
		scores = s
	}
	var types []uint8
	if _, present := meta[keyTypes]; present {
		t, ok := meta.Ints(keyTypes)
		if !ok {
			return nil, fmt.Errorf("gguf tokenizer: %s is %T, want an int32 array", keyTypes, meta[keyTypes])
		}
		if len(t) != len(pieces) {
			return nil, fmt.Errorf("gguf tokenizer: %s has %d entries for %d tokens", keyTypes, len(t), len(pieces))
		}
		types = make([]uint8, len(t))
		for i, x := range t {
			if x < typeUndefined || x > typeByte {
				return nil, fmt.Errorf("gguf tokenizer: %s[%d] = %d (token %q) is not a token type (0..6)", keyTypes, i, x, pieces[i])
			}
			types[i] = uint8(x)
		}
	}
	v, err := newVocab(pieces, types, scores)
	if err != nil {
		return nil, fmt.Errorf("gguf tokenizer: %w", err)
	}

	ids := map[string]int{}
	for _, k := range ggufSpecialKeys {
		if _, present := meta[k]; !present {
			continue
		}
		x, ok := meta.Int(k)
		if !ok {
			return nil, fmt.Errorf("gguf tokenizer: %s is %T, want an integer", k, meta[k])
		}
		if x == -1 || x == 0xFFFFFFFF {
			ids[k] = -1 // explicitly none
			continue
		}
		if x < 0 || x >= int64(len(pieces)) {
			return nil, fmt.Errorf("gguf tokenizer: %s = %d is out of range (vocabulary of %d)", k, x, len(pieces))
		}
		ids[k] = int(x)
	}
	get := func(k string, def int) int {
		if id, ok := ids[k]; ok {
			return id
		}
		if def >= len(pieces) {
			return -1
		}
		return def
	}
	boolKey := func(k string, def bool) (bool, error) {
		if _, present := meta[k]; !present {
			return def, nil
		}
		b, ok := meta.Bool(k)
		if !ok {
			return false, fmt.Errorf("gguf tokenizer: %s is %T, want a bool", k, meta[k])
		}
		return b, nil
	}

	m := &model{vocab: v}
	var addBOS, addEOS bool
	sep := get("tokenizer.ggml.seperator_token_id", -1)
	var preName string
	switch kind {
	case "llama":
		m.family = "spm"
		m.bos = get("tokenizer.ggml.bos_token_id", 1)
		m.eos = get("tokenizer.ggml.eos_token_id", 2)
		unk := get("tokenizer.ggml.unknown_token_id", 0)
		addBOS = true
		if types == nil {
			// Without token types, recognise byte tokens and the special
			// tokens by id, as a SentencePiece model would type them.
			for i, p := range m.pieces {
				if isByteToken(p) {
					m.types[i] = typeByte
				}
			}
			for _, id := range []int{m.bos, m.eos} {
				if id >= 0 {
					m.types[id] = typeControl
				}
			}
			if unk >= 0 {
				m.types[unk] = typeUnknown
			}
		}
		spacePrefix, err := boolKey(keySpacePrefix, true)
		if err != nil {
			return nil, err
		}
		m.enc = newSPMEncoder(&m.vocab, spacePrefix, unk)
		m.stripLeading = spacePrefix
		m.setDecoded(spmPiece(&m.vocab))
	case "gpt2":
		m.family = "bpe"
		m.bos = get("tokenizer.ggml.bos_token_id", 11)
		m.eos = get("tokenizer.ggml.eos_token_id", 11)
		merges, ok := meta.Strings(keyMerges)
		if !ok {
			if _, present := meta[keyMerges]; present {
				return nil, fmt.Errorf("gguf tokenizer: %s is %T, want a string array", keyMerges, meta[keyMerges])
			}
			return nil, fmt.Errorf("gguf tokenizer: model gpt2 needs %s, which is missing", keyMerges)
		}
		preName, _ = meta.String(keyPre)
		if preName == "" {
			preName = "default" // what llama.cpp assumes for files from before the key existed
		}
		pre, err := lookupPreTokenizer(preName)
		if err != nil {
			return nil, fmt.Errorf("gguf tokenizer: %s: %w", keyPre, err)
		}
		if pre.noBOS {
			m.bos = -1
		}
		addBOS = pre.addBOS
		enc, err := newByteBPEEncoder(&m.vocab, merges, pre)
		if err != nil {
			return nil, fmt.Errorf("gguf tokenizer: %s: %w", keyMerges, err)
		}
		m.enc = enc
		m.setDecoded(byteLevelPiece(&m.vocab))
	case "bert":
		m.family = "wpm"
		m.bos = get("tokenizer.ggml.bos_token_id", 101)
		m.eos = get("tokenizer.ggml.eos_token_id", -1)
		unk := get("tokenizer.ggml.unknown_token_id", 100)
		sep = get("tokenizer.ggml.seperator_token_id", 102)
		lower, err := boolKey(keyLowercase, true)
		if err != nil {
			return nil, err
		}
		strip, err := boolKey(keyStripAcc, lower)
		if err != nil {
			return nil, err
		}
		if unk < 0 {
			return nil, fmt.Errorf("gguf tokenizer: model bert needs an unknown token")
		}
		m.enc = newWordPieceEncoder(&m.vocab, wordPieceOptions{
			initPrefix: spaceMark, unk: unk, lowercase: lower, stripAccents: strip,
			maxChars: -1, bertPre: true, cleanText: true, chinese: true,
		})
		if m.bos < 0 || sep < 0 {
			return nil, fmt.Errorf("gguf tokenizer: model bert needs BOS ([CLS]) and separator ([SEP]) tokens")
		}
		m.stripLeading = true
		m.setDecoded(spmPiece(&m.vocab))
	case "t5":
		// A SentencePiece unigram model (T5): llama.cpp's defaults are
		// EOS 1, unknown 2, padding 0, no BOS; add_eos is on.
		m.family = "ugm"
		m.bos = get("tokenizer.ggml.bos_token_id", -1)
		m.eos = get("tokenizer.ggml.eos_token_id", 1)
		unk := get("tokenizer.ggml.unknown_token_id", 2)
		addEOS = true
		if v.scores == nil {
			return nil, fmt.Errorf("gguf tokenizer: model t5 needs %s", keyScores)
		}
		spacePrefix, err := boolKey(keySpacePrefix, false)
		if err != nil {
			return nil, err
		}
		merge, err := boolKey(keyRemoveExtraWS, false)
		if err != nil {
			return nil, err
		}
		var charsmap []byte
		if raw, present := meta[keyCharsMap]; present {
			cm, ok := meta.Ints(keyCharsMap)
			if !ok {
				return nil, fmt.Errorf("gguf tokenizer: %s is %T, want a byte array", keyCharsMap, raw)
			}
			charsmap = make([]byte, len(cm))
			for i, b := range cm {
				charsmap[i] = byte(b)
			}
		}
		enc, err := newUGMEncoder(&m.vocab, unk, spacePrefix, merge, charsmap)
		if err != nil {
			return nil, fmt.Errorf("gguf tokenizer: %w", err)
		}
		m.enc = enc
		m.stripLeading = spacePrefix
		m.setDecoded(spmPiece(&m.vocab))
	default:
		return nil, fmt.Errorf("gguf tokenizer: %s = %q is not supported (want llama, gpt2, bert or t5)", keyModel, kind)
	}

	if m.family == "wpm" {
		// llama.cpp's BERT always brackets the text with [CLS] ... [SEP].
		m.prefix = []int{m.bos}
		m.suffix = []int{sep}
		m.pair = bertPair(m.bos, sep)
	} else {
		if addBOS, err = boolKey(keyAddBOS, addBOS); err != nil {
			return nil, err
		}
		if addEOS, err = boolKey(keyAddEOS, addEOS); err != nil {
			return nil, err
		}
		if addBOS {
			if m.bos < 0 {
				return nil, fmt.Errorf("gguf tokenizer: %s is true but there is no BOS token", keyAddBOS)
			}
			m.prefix = []int{m.bos}
		}
		if addEOS {
			if m.eos < 0 {
				return nil, fmt.Errorf("gguf tokenizer: %s is true but there is no EOS token", keyAddEOS)
			}
			m.suffix = []int{m.eos}
		}
	}

	extra := eogByText(&m.vocab)
	extra = append(extra, get("tokenizer.ggml.eot_token_id", -1), get("tokenizer.ggml.eom_token_id", -1))
	m.finish(extra...)
	m.special = newSpecialMatcher(&m.vocab, ggufSpecialAttrs(meta, &m.vocab, preName))
	m.src = ggufSource(meta)
	return m, nil
}

// ggufSpecialAttrs applies llama.cpp's per-model whitespace stripping around
// special tokens, which GGUF files do not record: Phi-3 eats whitespace
// after its special tokens, jina-v2 eats it before <mask>.
func ggufSpecialAttrs(meta gguf.Metadata, v *vocab, pre string) map[int]specialToken {
	name, _ := meta.String("general.name")
	name = strings.ToLower(name)
	attrs := map[int]specialToken{}
	switch {
	case strings.Contains(pre, "jina-v2-de") || strings.Contains(pre, "jina-v2-es") || strings.Contains(pre, "jina-v2-code"):
		if id, ok := v.ids["<mask>"]; ok {
			attrs[int(id)] = specialToken{lstrip: true}
		}
	case strings.Contains(name, "phi-3") || strings.Contains(name, "phi3"):
		for id, t := range v.types {
			if t == typeControl || t == typeUserDefined || t == typeUnknown {
				attrs[id] = specialToken{rstrip: true}
			}
		}
		if id, ok := v.ids["</s>"]; ok {
			attrs[int(id)] = specialToken{rstrip: true}
		}
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			if id, ok := v.ids[s]; ok {
				delete(attrs, int(id))
			}
		}
	}
	return attrs
}

// spmPiece decodes SentencePiece-style pieces: U+2581 is a space, <0xNN>
// byte tokens are that byte, user-defined tokens are their text.
func spmPiece(v *vocab) func(id int) []byte {
	return func(id int) []byte {
		p := v.pieces[id]
		switch v.types[id] {
		case typeByte:
			if b, ok := parseByteToken(p); ok {
				return []byte{b}
			}
			return []byte(p)
		case typeUserDefined:
			return []byte(p)
		}
		return []byte(strings.ReplaceAll(p, spaceMark, " "))
	}
}

// parseByteToken parses "<0xNN>".
func parseByteToken(p string) (byte, bool) {
	if len(p) != 6 || p[:3] != "<0x" || p[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(p[3])
	lo, ok2 := hexVal(p[4])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
