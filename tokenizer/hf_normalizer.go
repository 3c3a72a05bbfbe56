package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The normalizer stage of a tokenizer.json pipeline: what text becomes
// before it is split.

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
