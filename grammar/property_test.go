package grammar

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// This file checks the parser and matcher against a recognizer written
// independently of them: random grammars are generated as trees, printed
// as GBNF, parsed, and walked; the recognizer works on the generator's
// trees directly.

// gexpr is a generated grammar expression.
type gexpr struct {
	kind     byte   // 'l' literal, 'c' class, '.' any, 'r' rule, 's' sequence, 'a' alternation, '*' repetition
	lit      []rune // literal
	set      []rune // class members (before negation)
	neg      bool
	rule     int
	kids     []*gexpr
	min, max int // repetition; max -1: none
}

// alphabet is what generated literals and classes draw from: GBNF's
// special characters, control characters and multi-byte code points.
var alphabet = []rune{'a', 'b', 'c', '"', '\\', '\n', '-', '^', ']', '[', 'é', '😀', 'ぁ', '\x01', ' '}

type ggen struct {
	r     *rand.Rand
	rules int
}

// expr generates an expression of rule cur. guarded tells whether input
// has surely been consumed before this point of the rule, so that any
// rule may be referenced without left recursion; unguarded references
// only go to later rules.
func (g *ggen) expr(depth, cur int, guarded bool) *gexpr {
	k := g.r.Intn(10)
	if depth > 3 {
		k = g.r.Intn(4)
	}
	switch k {
	case 0, 1:
		n := 1 + g.r.Intn(3)
		e := &gexpr{kind: 'l'}
		for range n {
			e.lit = append(e.lit, alphabet[g.r.Intn(len(alphabet))])
		}
		return e
	case 2:
		e := &gexpr{kind: 'c', neg: g.r.Intn(4) == 0}
		for range 1 + g.r.Intn(4) {
			e.set = append(e.set, alphabet[g.r.Intn(len(alphabet))])
		}
		return e
	case 3:
		if g.r.Intn(3) == 0 {
			return &gexpr{kind: '.'}
		}
		var targets []int
		for i := 0; i < g.rules; i++ {
			if guarded || i > cur {
				targets = append(targets, i)
			}
		}
		if len(targets) == 0 {
			return &gexpr{kind: 'l', lit: []rune{'b'}}
		}
		return &gexpr{kind: 'r', rule: targets[g.r.Intn(len(targets))]}
	case 4, 5, 6:
		e := &gexpr{kind: 's'}
		for range 2 + g.r.Intn(2) {
			kid := g.expr(depth+1, cur, guarded)
			e.kids = append(e.kids, kid)
			guarded = guarded || consumes(kid)
		}
		return e
	case 7, 8:
		e := &gexpr{kind: 'a'}
		for range 2 + g.r.Intn(2) {
			e.kids = append(e.kids, g.expr(depth+1, cur, guarded))
		}
		if g.r.Intn(4) == 0 {
			e.kids = append(e.kids, &gexpr{kind: 's'}) // empty alternative
		}
		return e
	default:
		kid := g.expr(depth+1, cur, guarded)
		if !consumes(kid) {
			kid = &gexpr{kind: 's', kids: []*gexpr{&gexpr{kind: 'l', lit: []rune{'c'}}, kid}}
		}
		e := &gexpr{kind: '*', kids: []*gexpr{kid}}
		switch g.r.Intn(6) {
		case 0:
			e.min, e.max = 0, -1
		case 1:
			e.min, e.max = 1, -1
		case 2:
			e.min, e.max = 0, 1
		case 3:
			e.min = g.r.Intn(3)
			e.max = e.min
		case 4:
			e.min, e.max = g.r.Intn(3), -1
		default:
			e.min = g.r.Intn(3)
			e.max = e.min + g.r.Intn(3)
		}
		return e
	}
}

// consumes reports whether e surely consumes at least one character.
func consumes(e *gexpr) bool {
	switch e.kind {
	case 'l':
		return len(e.lit) > 0
	case 'c', '.':
		return true
	case 's':
		for _, k := range e.kids {
			if consumes(k) {
				return true
			}
		}
		return false
	case 'a':
		for _, k := range e.kids {
			if !consumes(k) {
				return false
			}
		}
		return true
	case '*':
		return e.min > 0 && consumes(e.kids[0])
	}
	return false // a rule may be empty
}

// print writes e as GBNF, picking among equivalent spellings at random.
func (g *ggen) print(b *strings.Builder, e *gexpr) {
	switch e.kind {
	case 'l':
		b.WriteByte('"')
		for _, r := range e.lit {
			g.char(b, r, r == '"' || r == '\\' || r == '\n' || r < 0x20)
		}
		b.WriteByte('"')
	case 'c':
		b.WriteByte('[')
		if e.neg {
			b.WriteByte('^')
		}
		for i, r := range e.set {
			g.char(b, r, r == ']' || r == '\\' || r == '\n' || r < 0x20 || r == '-' || r == '[' || (r == '^' && i == 0))
		}
		b.WriteByte(']')
	case '.':
		b.WriteByte('.')
	case 'r':
		fmt.Fprintf(b, "r%d", e.rule)
	case 's':
		if len(e.kids) == 0 {
			b.WriteString(`""`)
			return
		}
		b.WriteByte('(')
		for i, k := range e.kids {
			if i > 0 {
				b.WriteString([]string{" ", "  ", "\n ", " # c\n "}[g.r.Intn(4)])
			}
			g.print(b, k)
		}
		b.WriteByte(')')
	case 'a':
		b.WriteByte('(')
		for i, k := range e.kids {
			if i > 0 {
				b.WriteString([]string{" | ", "|", "\n| ", " |\n "}[g.r.Intn(4)])
			}
			g.print(b, k)
		}
		b.WriteByte(')')
	case '*':
		g.print(b, e.kids[0])
		switch {
		case e.min == 0 && e.max == -1 && g.r.Intn(2) == 0:
			b.WriteByte('*')
		case e.min == 1 && e.max == -1 && g.r.Intn(2) == 0:
			b.WriteByte('+')
		case e.min == 0 && e.max == 1 && g.r.Intn(2) == 0:
			b.WriteByte('?')
		case e.max == -1:
			fmt.Fprintf(b, "{%d,}", e.min)
		case e.min == e.max && g.r.Intn(2) == 0:
			fmt.Fprintf(b, "{%d}", e.min)
		default:
			fmt.Fprintf(b, "{ %d , %d }", e.min, e.max)
		}
	}
}

func (g *ggen) char(b *strings.Builder, r rune, must bool) {
	if !must && g.r.Intn(3) != 0 {
		b.WriteRune(r)
		return
	}
	switch {
	case r == '\n' && g.r.Intn(2) == 0:
		b.WriteString(`\n`)
	case (r == '"' || r == '\\' || r == '[' || r == ']') && g.r.Intn(2) == 0:
		b.WriteByte('\\')
		b.WriteRune(r)
	case r < 0x100 && g.r.Intn(2) == 0:
		fmt.Fprintf(b, `\x%02x`, r)
	case r < 0x10000 && g.r.Intn(2) == 0:
		fmt.Fprintf(b, `\u%04X`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

// recognizer decides membership by computing, for an expression and a
// start index, the set of indices where a match can end.
type recognizer struct {
	rules []*gexpr
	in    []rune
	memo  map[[2]int][]bool
	busy  map[[2]int]bool
}

func (rc *recognizer) accepts(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	rc.in = []rune(s)
	rc.memo = map[[2]int][]bool{}
	rc.busy = map[[2]int]bool{}
	return rc.match(rc.rules[0], 0)[len(rc.in)]
}

func (rc *recognizer) match(e *gexpr, i int) []bool {
	n := len(rc.in)
	out := make([]bool, n+1)
	switch e.kind {
	case 'l':
		if i+len(e.lit) <= n && string(rc.in[i:i+len(e.lit)]) == string(e.lit) {
			out[i+len(e.lit)] = true
		}
	case 'c':
		if i < n {
			in := false
			for _, r := range e.set {
				in = in || r == rc.in[i]
			}
			if in != e.neg {
				out[i+1] = true
			}
		}
	case '.':
		if i < n {
			out[i+1] = true
		}
	case 'r':
		k := [2]int{e.rule, i}
		if m, ok := rc.memo[k]; ok {
			return m
		}
		if rc.busy[k] {
			panic("recognizer: left recursion")
		}
		rc.busy[k] = true
		out = rc.match(rc.rules[e.rule], i)
		rc.memo[k] = out
	case 's':
		out[i] = true
		for _, kid := range e.kids {
			out = rc.step(kid, out)
		}
	case 'a':
		for _, kid := range e.kids {
			for j, ok := range rc.match(kid, i) {
				out[j] = out[j] || ok
			}
		}
	case '*':
		cur := make([]bool, n+1)
		cur[i] = true
		if e.min == 0 {
			out[i] = true
		}
		for k := 1; e.max < 0 || k <= e.max; k++ {
			cur = rc.step(e.kids[0], cur)
			fresh := false
			for j, ok := range cur {
				if ok && k >= e.min && !out[j] {
					out[j], fresh = true, true
				}
			}
			if !anyTrue(cur) || (e.max < 0 && k >= e.min && !fresh) {
				break
			}
		}
	}
	return out
}

// step returns the ends of e matched from every start in from.
func (rc *recognizer) step(e *gexpr, from []bool) []bool {
	out := make([]bool, len(from))
	for i, ok := range from {
		if ok {
			for j, ok := range rc.match(e, i) {
				out[j] = out[j] || ok
			}
		}
	}
	return out
}

func anyTrue(b []bool) bool {
	for _, x := range b {
		if x {
			return true
		}
	}
	return false
}

// randomGrammar returns a generated grammar and its GBNF source.
func randomGrammar(r *rand.Rand) ([]*gexpr, string) {
	g := &ggen{r: r, rules: 1 + r.Intn(4)}
	rules := make([]*gexpr, g.rules)
	var b strings.Builder
	for i := range rules {
		rules[i] = g.expr(0, i, false)
		name := fmt.Sprintf("r%d", i)
		if i == 0 {
			name = "root"
		}
		fmt.Fprintf(&b, "%s ::= ", name)
		g.print(&b, rules[i])
		b.WriteString("\n")
	}
	src := strings.ReplaceAll(b.String(), "r0", "root")
	return rules, src
}

// randomText draws a string from the alphabet, or mutates base.
func randomText(r *rand.Rand, base []rune) string {
	if len(base) > 0 && r.Intn(2) == 0 {
		s := append([]rune(nil), base...)
		i := r.Intn(len(s))
		switch r.Intn(3) {
		case 0:
			s = append(s[:i], s[i+1:]...)
		case 1:
			s[i] = alphabet[r.Intn(len(alphabet))]
		default:
			s = append(s[:i], append([]rune{alphabet[r.Intn(len(alphabet))]}, s[i:]...)...)
		}
		return string(s)
	}
	s := make([]rune, r.Intn(6))
	for i := range s {
		s[i] = alphabet[r.Intn(len(alphabet))]
	}
	return string(s)
}

func TestPropertyGBNF(t *testing.T) {
	tv := newTestVocab()
	n := 400
	if testing.Short() {
		n = 60
	}
	complete, total, agree, skipped := 0, 0, 0, 0
	for seed := range n {
		r := rand.New(rand.NewSource(int64(seed)))
		rules, src := randomGrammar(r)
		g, err := Parse(src)
		if err != nil {
			t.Fatalf("seed %d: Parse:\n%s\n%v", seed, src, err)
		}
		rc := &recognizer{rules: rules}
		m := g.NewMatcher(tv.v)
		m.limStacks = 256
		if seed%2 == 0 {
			m.limSkip = 1 // try to skip every subtree
		}
		if seed%3 == 0 {
			m.limStates, m.limNodes = 8, 64 // exercise cache compaction
		}
		var outs [][]rune
		for range 8 {
			m.Reset()
			w := randomWalk(t, r, m, tv, 200, seed%10 == 0)
			if w.complex {
				skipped++
				break
			}
			total++
			if !w.complete {
				continue
			}
			complete++
			if !rc.accepts(string(w.out)) {
				t.Fatalf("seed %d: grammar\n%s\nmatcher completed %q, recognizer rejects it", seed, src, w.out)
			}
			outs = append(outs, []rune(string(w.out)))
		}
		// Both ways: random and mutated strings.
		for k := range 40 {
			var base []rune
			if len(outs) > 0 {
				base = outs[k%len(outs)]
			}
			s := randomText(r, base)
			want := rc.accepts(s)
			m := g.NewMatcher(tv.v)
			m.limStacks = 256
			err := m.AcceptBytes([]byte(s))
			if errors.Is(err, ErrTooComplex) {
				continue
			}
			if got := err == nil && m.CanEnd(); got != want {
				t.Fatalf("seed %d: grammar\n%s\n%q: matcher %v, recognizer %v", seed, src, s, got, want)
			}
			if want {
				agree++
			}
		}
	}
	t.Logf("%d of %d walks completed; %d accepted strings compared; %d grammars too ambiguous", complete, total, agree, skipped)
	if complete < total/2 {
		t.Errorf("only %d of %d walks completed: the test checks too little", complete, total)
	}
}
