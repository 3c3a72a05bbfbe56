package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The decoder stage of a tokenizer.json pipeline: how pieces become text
// again.

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
