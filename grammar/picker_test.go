package grammar

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// scripted picks the given tokens in order, whatever the logits, and
// records what it was told.
type scripted struct {
	next     []int
	prompt   []int
	accepted []int
}

func (s *scripted) Sample(logits []float32) int {
	t := s.next[0]
	s.next = s.next[1:]
	s.accepted = append(s.accepted, t)
	return t
}

func (s *scripted) AcceptPrompt(tokens []int) { s.prompt = append(s.prompt, tokens...) }
func (s *scripted) Accept(token int)          { s.accepted = append(s.accepted, token) }

// chooser has Choose (no record) and Accept, like *sampling.Sampler.
type chooser struct {
	pick     int
	accepted []int
}

func (c *chooser) Sample(logits []float32) int { panic("Sample called on a Choose/Accept picker") }
func (c *chooser) Choose(logits []float32) int { return c.pick }
func (c *chooser) Accept(token int)            { c.accepted = append(c.accepted, token) }

func TestConstrained(t *testing.T) {
	// Tokens: 0 "a", 1 "b", 2 "ab", 3 "c", 4 EOG.
	toks := [][]byte{[]byte("a"), []byte("b"), []byte("ab"), []byte("c"), nil}
	v := NewVocab(toks, []int{4})
	g, err := Parse(`root ::= "a" "b"+`)
	if err != nil {
		t.Fatal(err)
	}
	logits := []float32{1, 2, 3, 4, 5}
	orig := slices.Clone(logits)

	// The inner picker's choices pass when allowed; a masked one (3 "c")
	// is overruled by the best allowed token; the prompt passes through.
	in := &scripted{next: []int{2, 3, 4}}
	c := NewConstrained(in, g.NewMatcher(v))
	c.AcceptPrompt([]int{9, 9})
	if got := c.Sample(logits); got != 2 {
		t.Fatalf("step 1: %d, want 2", got)
	}
	if got := c.Sample(logits); got != 4 {
		t.Fatalf("step 2: the masked choice 3 gave %d, want the best allowed, 4 (EOG: \"ab\" is complete)", got)
	}
	if !slices.Equal(logits, orig) {
		t.Errorf("logits modified: %v", logits)
	}
	if !slices.Equal(in.prompt, []int{9, 9}) || !slices.Equal(in.accepted, []int{2, 3}) {
		t.Errorf("inner got prompt %v, accepted %v", in.prompt, in.accepted)
	}
	if c.Finish() != "" {
		t.Errorf("finish %q before the end", c.Finish())
	}

	// A Choose/Accept picker records only the final token.
	ch := &chooser{pick: 3}
	c = NewConstrained(ch, g.NewMatcher(v))
	if got := c.Sample([]float32{9, 1, 1, 10, 1}); got != 0 {
		t.Fatalf("overruled choice: %d, want 0", got)
	}
	if !slices.Equal(ch.accepted, []int{0}) {
		t.Errorf("accepted %v, want [0]", ch.accepted)
	}

	// A forced token advances the matcher; a forbidden one ends it.
	c = NewConstrained(&scripted{next: []int{1}}, g.NewMatcher(v))
	c.Accept(0)
	if got := c.Sample(logits); got != 1 || c.Finish() != "" {
		t.Fatalf("after forced \"a\": %d, finish %q", got, c.Finish())
	}
	c.Accept(3)
	if c.Finish() != FinishError || !errors.Is(c.Err(), ErrRejected) {
		t.Errorf("forced \"c\": finish %q, err %v", c.Finish(), c.Err())
	}

	// A dead end: after "a" only "b" may follow, and the vocabulary
	// without it has nothing.
	toks2 := [][]byte{[]byte("a"), []byte("c"), nil}
	c = NewConstrained(&scripted{next: []int{0, 0}}, g.NewMatcher(NewVocab(toks2, []int{2})))
	if got := c.Sample([]float32{0, 0, 0}); got != 0 {
		t.Fatalf("first token %d", got)
	}
	if got := c.Sample([]float32{0, 0, 0}); got != -1 || c.Finish() != FinishDeadEnd || !errors.Is(c.Err(), ErrDeadEnd) {
		t.Errorf("dead end: token %d, finish %q, err %v", got, c.Finish(), c.Err())
	}

	// Complete with nothing after it and no EOG in the vocabulary: stop.
	g2, _ := Parse(`root ::= "a"`)
	c = NewConstrained(&scripted{next: []int{0}}, g2.NewMatcher(NewVocab([][]byte{[]byte("a")}, nil)))
	c.Sample([]float32{0})
	if got := c.Sample([]float32{0}); got != -1 || c.Finish() != FinishComplete {
		t.Errorf("complete: token %d, finish %q", got, c.Finish())
	}
}

// docPicker picks the tokens of a document in order, checking that each
// is allowed (not -Inf): the grammar overhead without a sampler's.
type docPicker struct {
	ids []int
	i   int
	tb  testing.TB
}

func (d *docPicker) Sample(logits []float32) int {
	t := d.ids[d.i]
	d.i++
	if math.IsInf(float64(logits[t]), -1) {
		d.tb.Fatalf("token %d masked out", t)
	}
	return t
}

// BenchmarkConstrained is the per-token cost a grammar adds to decoding:
// copy the row, mask it (cached per state after the first document) and
// advance the matcher, for each token of benchDoc under the any-JSON
// grammar, at vocabularies of 32000 and 150000 tokens.
func BenchmarkConstrained(b *testing.B) {
	for _, n := range []int{32000, 150000} {
		toks, eog := englishVocab(n)
		v := NewVocab(toks, []int{eog})
		ids := tokenize(toks, []byte(benchDoc))
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(i%97) / 10
		}
		d := &docPicker{ids: ids, tb: b}
		c := NewConstrained(d, JSON().NewMatcher(v))
		run := func() {
			c.Reset()
			d.i = 0
			for range ids {
				if c.Sample(logits) < 0 {
					b.Fatalf("finished early: %s %v", c.Finish(), c.Err())
				}
			}
		}
		b.Run(map[int]string{32000: "32k", 150000: "150k"}[n], func(b *testing.B) {
			d.tb = b
			run() // warm the pool's matcher
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/token")
		})
	}
}
