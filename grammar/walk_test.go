package grammar

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
)

// testVocab is a synthetic vocabulary: the 256 single bytes, merges of
// common JSON and text fragments, tokens that start or end inside a UTF-8
// sequence, a duplicate, three special tokens (nil) and an
// end-of-generation id (the last).
type testVocab struct {
	toks [][]byte
	eog  int
	v    *Vocab
}

func newTestVocab() *testVocab {
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	merges := []string{
		`": "`, `", "`, `{"`, `"}`, `"]`, `["`, `null`, `true`, `false`, "\n  ", "  ", `],`, `},`,
		` "`, `\n`, `\u00`, `\"`, `":`, `,"`, `0.`, `12`, `00`, `-1`, `e+`, `E-`,
		"ab", "the", " the", "abc", "é", "😀", "ぁ", "a\xc3", "\xa9b", "\xf0\x9f", "\x98\x80",
		"\xe3\x81", "\x81\x82", "-é", "\"é", "a\"", "\\\\", "\\\"", "[]", "{}", `{"a`, `a":`,
		"ab", // a duplicate
	}
	for _, m := range merges {
		toks = append(toks, []byte(m))
	}
	toks = append(toks, nil, nil, nil, []byte("</s>"))
	tv := &testVocab{toks: toks, eog: len(toks) - 1}
	tv.v = NewVocab(toks, []int{tv.eog})
	return tv
}

// walkResult is the outcome of one random walk.
type walkResult struct {
	out      []byte
	complete bool // ended with the end-of-generation token
	complex  bool // stopped on ErrTooComplex
}

// preferred are byte strings a walk favours more and more as it grows, so
// that most walks close their brackets and strings and finish.
var preferred = [][]byte{[]byte(`"`), []byte(`}`), []byte(`]`), []byte(`"}`), []byte(`"]`), []byte(`0`), []byte(`1`), []byte(`null`), []byte(`a`)}

// randomWalk drives m with tokens drawn among those its mask allows,
// checking on the way that the mask agrees with Allows for every token and
// that Accept takes what the mask allows.
func randomWalk(t *testing.T, r *rand.Rand, m *Matcher, tv *testVocab, maxLen int, checkMask bool) walkResult {
	t.Helper()
	mask := make([]bool, len(tv.toks))
	bits := make([]uint64, (len(tv.toks)+63)/64)
	var allowed []int
	var out []byte
	for steps := 0; ; steps++ {
		n, err := m.Mask(mask)
		if err != nil {
			if errors.Is(err, ErrTooComplex) {
				return walkResult{out: out, complex: true}
			}
			if errors.Is(err, ErrDeadEnd) {
				t.Fatalf("dead end after %q", out)
			}
			t.Fatalf("Mask after %q (step %d): %v", out, steps, err)
		}
		if checkMask || steps%16 == 0 {
			n2, err := m.FillMask(bits)
			if err != nil || n2 != n {
				t.Fatalf("FillMask = %d, %v; Mask = %d", n2, err, n)
			}
			for id := range mask {
				a := m.Allows(id)
				b := bits[id>>6]&(1<<(id&63)) != 0
				if mask[id] != a || mask[id] != b {
					t.Fatalf("after %q: token %d %q: mask %v, bitmask %v, Allows %v", out, id, tv.toks[id], mask[id], b, a)
				}
			}
		}
		allowed = allowed[:0]
		for id, ok := range mask {
			if ok {
				allowed = append(allowed, id)
			}
		}
		if len(allowed) != n {
			t.Fatalf("Mask counted %d, set %d", n, len(allowed))
		}
		if n == 0 {
			if !m.Done() {
				t.Fatalf("empty mask but not done after %q", out)
			}
			return walkResult{out: out, complete: m.CanEnd()}
		}
		id := allowed[r.Intn(len(allowed))]
		if mask[tv.eog] && (id == tv.eog || r.Intn(3) == 0 || len(out) > maxLen/2) {
			if err := m.Accept(tv.eog); err != nil {
				t.Fatalf("Accept(eog): %v", err)
			}
			if !m.Done() || m.CanEnd() {
				t.Fatalf("after eog: Done %v CanEnd %v", m.Done(), m.CanEnd())
			}
			return walkResult{out: out, complete: true}
		}
		if len(out) > maxLen {
			return walkResult{out: out}
		}
		if r.Intn(maxLen) < len(out)*2 || r.Intn(4) == 0 {
			for _, k := range r.Perm(len(preferred)) {
				if pid := findToken(tv, preferred[k]); pid >= 0 && mask[pid] {
					id = pid
					break
				}
			}
		}
		if err := m.Accept(id); err != nil {
			t.Fatalf("Accept(%d %q) of an allowed token after %q: %v", id, tv.toks[id], out, err)
		}
		out = append(out, tv.toks[id]...)
	}
}

func findToken(tv *testVocab, b []byte) int {
	for id, t := range tv.toks {
		if t != nil && bytes.Equal(t, b) && id != tv.eog {
			return id
		}
	}
	return -1
}
