package grammar

import (
	"errors"
	"math"
	"testing"
)

func mustParse(t *testing.T, src string) *Grammar {
	t.Helper()
	g, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// allowed returns the texts of the allowed tokens.
func allowed(t *testing.T, m *Matcher, toks [][]byte) ([]string, error) {
	t.Helper()
	mask := make([]bool, len(toks))
	n, err := m.Mask(mask)
	var out []string
	for id, ok := range mask {
		if ok {
			out = append(out, string(toks[id]))
		}
	}
	if len(out) != n {
		t.Fatalf("Mask returned %d, set %d", n, len(out))
	}
	return out, err
}

func TestMatcherTokens(t *testing.T) {
	// ids: 0 "a", 1 "ab", 2 "b", 3 nil (special), 4 "" (empty), 5 "</s>" (eog),
	// 6 "\xe3\x81", 7 "\x82", 8 "\x82b", 9 "\xe3", 10 "\x81\x82"
	toks := [][]byte{[]byte("a"), []byte("ab"), []byte("b"), nil, {}, []byte("</s>"),
		[]byte("\xe3\x81"), []byte("\x82"), []byte("\x82b"), []byte("\xe3"), []byte("\x81\x82")}
	v := NewVocab(toks, []int{5})
	g := mustParse(t, `root ::= "a" [ぁ-ゟ]+ "b"?`)
	m := g.NewMatcher(v)

	got, err := allowed(t, m, toks)
	if err != nil || len(got) != 1 || got[0] != "a" {
		t.Fatalf("start: allowed %q, %v", got, err)
	}
	if err := m.Accept(2); !errors.Is(err, ErrRejected) {
		t.Fatalf("Accept of a masked token: %v, want ErrRejected", err)
	}
	if err := m.Accept(3); !errors.Is(err, ErrRejected) {
		t.Fatalf("Accept of a special token: %v", err)
	}
	if err := m.Accept(5); !errors.Is(err, ErrRejected) {
		t.Fatalf("Accept of end of generation before the end: %v", err)
	}
	if err := m.Accept(0); err != nil {
		t.Fatal(err)
	}
	// A character split across tokens: "\xe3\x81" then "\x82" is U+3042.
	got, _ = allowed(t, m, toks)
	if want := []string{"\xe3\x81", "\xe3"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("after a: allowed %q, want %q", got, want)
	}
	if err := m.Accept(6); err != nil {
		t.Fatal(err)
	}
	if m.CanEnd() {
		t.Fatal("CanEnd inside a UTF-8 sequence")
	}
	got, _ = allowed(t, m, toks)
	if len(got) != 2 || got[0] != "\x82" || got[1] != "\x82b" {
		t.Fatalf("inside a character: allowed %q", got)
	}
	if err := m.Accept(7); err != nil {
		t.Fatal(err)
	}
	if !m.CanEnd() || m.Done() {
		t.Fatalf("after a character: CanEnd %v Done %v", m.CanEnd(), m.Done())
	}
	got, _ = allowed(t, m, toks)
	if want := []string{"b", "</s>", "\xe3\x81", "\xe3"}; len(got) != len(want) {
		t.Fatalf("allowed %q, want %q", got, want)
	}
	if err := m.Accept(2); err != nil {
		t.Fatal(err)
	}
	if !m.Done() || !m.CanEnd() {
		t.Fatalf("after b: Done %v CanEnd %v", m.Done(), m.CanEnd())
	}
	got, err = allowed(t, m, toks)
	if err != nil || len(got) != 1 || got[0] != "</s>" {
		t.Fatalf("at the end: allowed %q, %v", got, err)
	}
	if err := m.Accept(5); err != nil {
		t.Fatal(err)
	}
	if err := m.Accept(0); !errors.Is(err, ErrFinished) {
		t.Fatalf("Accept after the end: %v", err)
	}
	if _, err := allowed(t, m, toks); !errors.Is(err, ErrFinished) {
		t.Fatalf("Mask after the end: %v", err)
	}
	m.Reset()
	if got, _ := allowed(t, m, toks); len(got) != 1 {
		t.Fatalf("after Reset: %q", got)
	}
}

func TestMatcherDeadEnd(t *testing.T) {
	toks := [][]byte{[]byte("a"), []byte("\xc3"), []byte("</s>")}
	v := NewVocab(toks, []int{2})
	// No token spells "x".
	m := mustParse(t, `root ::= "a" "x"`).NewMatcher(v)
	if err := m.Accept(0); err != nil {
		t.Fatal(err)
	}
	if _, err := allowed(t, m, toks); !errors.Is(err, ErrDeadEnd) {
		t.Fatalf("got %v, want ErrDeadEnd", err)
	}
	bits := make([]uint64, 1)
	if n, err := m.FillMask(bits); n != 0 || !errors.Is(err, ErrDeadEnd) || bits[0] != 0 {
		t.Fatalf("FillMask = %d %v %b", n, err, bits[0])
	}
	// A UTF-8 sequence no token can finish.
	m = mustParse(t, `root ::= "é" | "a"`).NewMatcher(v)
	if err := m.Accept(1); err != nil {
		t.Fatal(err)
	}
	if _, err := allowed(t, m, toks); !errors.Is(err, ErrDeadEnd) {
		t.Fatalf("got %v, want ErrDeadEnd", err)
	}
	// Complete with nothing after it and no end token: not a dead end.
	m = mustParse(t, `root ::= "a"`).NewMatcher(NewVocab(toks[:2], nil))
	if err := m.Accept(0); err != nil {
		t.Fatal(err)
	}
	if n, err := m.Mask(make([]bool, 2)); n != 0 || err != nil || !m.Done() {
		t.Fatalf("Mask = %d, %v; Done %v", n, err, m.Done())
	}
}

func TestMatcherInvalidUTF8(t *testing.T) {
	v := byteVocab()
	g := mustParse(t, `root ::= .*`)
	for _, s := range []string{"\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80", "\xe0\x80\x80"} {
		m := g.NewMatcher(v)
		if err := m.AcceptBytes([]byte(s)); err == nil {
			t.Errorf("accepted invalid UTF-8 %q", s)
		}
	}
	for _, s := range []string{"\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0010FFFF"} {
		if !matches(g, v, s) {
			t.Errorf("rejected %q", s)
		}
	}
}

func TestMatcherTooComplex(t *testing.T) {
	// Exponentially many stacks: after n a's, 2^n ways to close.
	g := mustParse(t, "root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"\"")
	m := g.NewMatcher(byteVocab())
	m.limStacks = 64
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		err = m.AcceptBytes([]byte("a"))
	}
	if !errors.Is(err, ErrTooComplex) {
		t.Fatalf("got %v, want ErrTooComplex", err)
	}
	if _, err := m.Mask(make([]bool, 257)); !errors.Is(err, ErrTooComplex) {
		t.Fatalf("Mask: %v, want ErrTooComplex", err)
	}
}

func TestMatcherMaskSize(t *testing.T) {
	m := JSON().NewMatcher(byteVocab())
	if _, err := m.Mask(make([]bool, 10)); err == nil {
		t.Error("short []bool mask accepted")
	}
	if _, err := m.FillMask(make([]uint64, 4)); err == nil {
		t.Error("short bitset accepted")
	}
	if err := m.Accept(1000); err == nil {
		t.Error("out-of-range token accepted")
	}
}

// TestConcurrentMatchers shares one Grammar and one Vocab among
// goroutines, each with its own Matcher (run with -race).
func TestConcurrentMatchers(t *testing.T) {
	g := JSON()
	toks, eog := englishVocab(3000)
	v := NewVocab(toks, []int{eog})
	ids := tokenize(toks, []byte(benchDoc))
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			m := g.NewMatcher(v)
			mask := make([]uint64, (len(toks)+63)/64)
			for _, id := range ids {
				if _, err := m.FillMask(mask); err != nil {
					errs <- err
					return
				}
				if err := m.Accept(id); err != nil {
					errs <- err
					return
				}
			}
			if !m.CanEnd() {
				errs <- errors.New("document incomplete")
				return
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestMaskLogits(t *testing.T) {
	toks := [][]byte{[]byte("a"), []byte("b"), nil, []byte("</s>")}
	m := mustParse(t, `root ::= "a"+`).NewMatcher(NewVocab(toks, []int{3}))
	logits := []float32{1, 2, 3, 4}
	if n, err := m.MaskLogits(logits); n != 1 || err != nil {
		t.Fatalf("MaskLogits = %d, %v", n, err)
	}
	if logits[0] != 1 || !math.IsInf(float64(logits[1]), -1) || !math.IsInf(float64(logits[2]), -1) || !math.IsInf(float64(logits[3]), -1) {
		t.Fatalf("logits %v", logits)
	}
	if err := m.Accept(0); err != nil {
		t.Fatal(err)
	}
	logits = []float32{1, 2, 3, 4}
	if n, _ := m.MaskLogits(logits); n != 2 || logits[0] != 1 || logits[3] != 4 || !math.IsInf(float64(logits[1]), -1) {
		t.Fatalf("after a: %d %v", n, logits)
	}
	if _, err := m.MaskLogits(make([]float32, 2)); err == nil {
		t.Error("short logits accepted")
	}
}

func TestPool(t *testing.T) {
	toks, eog := englishVocab(2000)
	v := NewVocab(toks, []int{eog})
	p := NewPool(JSON(), v)
	ids := tokenize(toks, []byte(benchDoc))
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 3 {
				m := p.Get()
				if m.CanEnd() || m.Done() {
					errs <- errors.New("pooled matcher not at the start")
					return
				}
				for _, id := range ids {
					if err := m.Accept(id); err != nil {
						errs <- err
						return
					}
				}
				if err := m.Accept(eog); err != nil {
					errs <- err
					return
				}
				p.Put(m)
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	p.Put(JSON().NewMatcher(v)) // another grammar: dropped
}
