package tokenizer

import (
	"fmt"
	"sort"
	"strings"
)

// vocab is the token table shared by all families.
type vocab struct {
	pieces []string
	types  []uint8
	scores []float32 // nil when the model has none
	ids    map[string]int32
}

// newVocab indexes pieces. Empty pieces are renamed "[EMPTY_i]" as llama.cpp
// does; a duplicate piece is an error. types may be nil (all normal).
func newVocab(pieces []string, types []uint8, scores []float32) (vocab, error) {
	v := vocab{pieces: pieces, types: types, scores: scores, ids: make(map[string]int32, len(pieces))}
	if v.types == nil {
		v.types = make([]uint8, len(pieces))
		for i := range v.types {
			v.types[i] = typeNormal
		}
	}
	if len(v.types) != len(pieces) {
		return vocab{}, fmt.Errorf("%d token types for %d tokens", len(v.types), len(pieces))
	}
	if scores != nil && len(scores) != len(pieces) {
		return vocab{}, fmt.Errorf("%d scores for %d tokens", len(scores), len(pieces))
	}
	for i, p := range pieces {
		if v.types[i] > typeByte {
			return vocab{}, fmt.Errorf("token %d (%q): bad token type %d", i, p, v.types[i])
		}
		if p == "" {
			p = fmt.Sprintf("[EMPTY_%d]", i)
			pieces[i] = p
		}
		if j, dup := v.ids[p]; dup {
			return vocab{}, fmt.Errorf("duplicate token %q: ids %d and %d", p, j, i)
		}
		v.ids[p] = int32(i)
	}
	return v, nil
}

// byteTokens maps every byte to its <0xNN> token, -1 where there is none.
func (v *vocab) byteTokens() [256]int32 {
	var t [256]int32
	for b := range t {
		t[b] = -1
		if id, ok := v.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			t[b] = id
		}
	}
	return t
}

// specialMatcher finds special tokens in text before it is split: control
// and unknown tokens when parsing special text, user-defined ones always.
// Matching is leftmost-longest, as in Hugging Face tokenizers.
type specialMatcher struct {
	// byFirst lists candidates by their first byte, longest first.
	byFirst [256][]specialToken
	// anyUser and anyCtrl report whether there are user-defined and
	// control tokens at all, so that text without candidates is not scanned.
	anyUser bool
	anyCtrl bool
}

type specialToken struct {
	text       string
	id         int
	control    bool // matched only when parsing special text
	lstrip     bool // eat whitespace before the token
	rstrip     bool // eat whitespace after the token
	singleWord bool // only when not inside a word
}

// newSpecialMatcher collects the control, unknown and user-defined tokens
// of v. attrs may override lstrip/rstrip per id.
func newSpecialMatcher(v *vocab, attrs map[int]specialToken) specialMatcher {
	var m specialMatcher
	for id, p := range v.pieces {
		t := v.types[id]
		if t != typeControl && t != typeUnknown && t != typeUserDefined {
			continue
		}
		st := specialToken{text: p, id: id, control: t != typeUserDefined}
		if a, ok := attrs[id]; ok {
			st.lstrip, st.rstrip, st.singleWord = a.lstrip, a.rstrip, a.singleWord
		}
		m.add(st)
	}
	return m
}

func (m *specialMatcher) add(st specialToken) {
	if st.text == "" {
		return
	}
	b := st.text[0]
	m.byFirst[b] = append(m.byFirst[b], st)
	sort.SliceStable(m.byFirst[b], func(i, j int) bool { return len(m.byFirst[b][i].text) > len(m.byFirst[b][j].text) })
	if st.control {
		m.anyCtrl = true
	} else {
		m.anyUser = true
	}
}

// next finds the first special token at or after pos. It returns the span
// of text the token replaces (including whitespace eaten by lstrip/rstrip)
// and the token id.
func (m *specialMatcher) next(text string, pos int, parseSpecial bool) (start, end, id int, ok bool) {
	if !m.anyUser && !(parseSpecial && m.anyCtrl) {
		return 0, 0, 0, false
	}
	for i := pos; i < len(text); i++ {
		cands := m.byFirst[text[i]]
		if len(cands) == 0 {
			continue
		}
		for _, c := range cands {
			if c.control && !parseSpecial {
				continue
			}
			if !strings.HasPrefix(text[i:], c.text) {
				continue
			}
			e := i + len(c.text)
			if c.singleWord && (isWordByteBefore(text, i) || isWordByteAfter(text, e)) {
				continue
			}
			s := i
			if c.lstrip {
				for s > pos && isSpaceByte(text[s-1]) {
					s--
				}
			}
			if c.rstrip {
				for e < len(text) && isSpaceByte(text[e]) {
					e++
				}
			}
			return s, e, c.id, true
		}
	}
	return 0, 0, 0, false
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isWordByte(c byte) bool {
	return c >= 0x80 || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWordByteBefore(s string, i int) bool { return i > 0 && isWordByte(s[i-1]) }
func isWordByteAfter(s string, i int) bool  { return i < len(s) && isWordByte(s[i]) }
