package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer stage of a tokenizer.json pipeline: how normalized
// text is split into the pieces the model encodes.

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
