package grammar

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is an error in a grammar's source, at a 1-based line and
// column (columns count characters, not bytes).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("grammar: %d:%d: %s", e.Line, e.Col, e.Msg)
}

// Parse compiles a grammar written in GBNF, llama.cpp's grammar format:
//
//	root   ::= "{" ws pair ("," ws pair)* "}"
//	pair   ::= [a-z]+ ":" ws value     # a comment
//	value  ::= [0-9]{1,3} | "null"
//	ws     ::= [ \t\n]*
//
// Rules are `name ::= alternatives`; names use letters, digits and '-'.
// A rule ends at a newline unless the newline follows '|' or '::=' or sits
// inside parentheses. Items are string literals, character classes
// ([a-z], [^"\\]), '.' (any character), rule names and parenthesized
// groups; an item may be followed by '*', '+', '?', '{m}', '{m,}' or
// '{m,n}'. Escapes are \x.., \u...., \U........, \t, \r, \n, \\, \", \[
// and \]. Generation starts at the rule named root.
//
// Errors are *SyntaxError values with the line and column and what was
// expected there; an undefined rule is reported at its first use, and a
// left-recursive rule (one that can reach itself without consuming input)
// is rejected with the chain of rules.
func Parse(src string) (*Grammar, error) {
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		p := &parser{src: src}
		return nil, p.errAt(i, "invalid UTF-8 in grammar")
	}
	p := &parser{src: src, byName: map[string]int32{}, classIdx: map[string]int32{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.compile()
}

type prule struct {
	name    string
	alts    [][]elem
	defined bool
	defPos  int // byte offset of the definition
	refPos  int // byte offset of the first reference, -1 if none
	origin  int32
	what    string // "" for a named rule; "group" or "repetition"
}

type parser struct {
	src      string
	pos      int
	rules    []*prule
	byName   map[string]int32
	classes  []class
	classIdx map[string]int32
	size     int // elements so far, for maxElems
	depth    int // nesting of parentheses
}

func (p *parser) lineCol(off int) (int, int) {
	line, col := 1, 1
	for i, r := range p.src {
		if i >= off {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (p *parser) errAt(off int, format string, args ...any) error {
	l, c := p.lineCol(off)
	return &SyntaxError{Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

// found describes the text at the current position for an error message.
func (p *parser) found() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	switch r {
	case '\n', '\r':
		return "end of line"
	}
	return strconv.QuoteRune(r)
}

func (p *parser) expected(what string) error {
	return p.errAt(p.pos, "expected %s, found %s", what, p.found())
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

// skipSpace skips blanks and comments, and newlines too when nl is set.
func (p *parser) skipSpace(nl bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		case nl && (c == '\n' || c == '\r'):
			p.pos++
		default:
			return
		}
	}
}

func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}

func (p *parser) name() string {
	start := p.pos
	for p.pos < len(p.src) && isNameChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *parser) ruleID(name string) int32 {
	if id, ok := p.byName[name]; ok {
		return id
	}
	id := int32(len(p.rules))
	p.rules = append(p.rules, &prule{name: name, refPos: -1, origin: id})
	p.byName[name] = id
	return id
}

func (p *parser) synth(owner int32, what string) int32 {
	id := int32(len(p.rules))
	o := p.rules[owner].origin
	p.rules = append(p.rules, &prule{
		name:    fmt.Sprintf("%s-%s%d", p.rules[o].name, what, id),
		defined: true, refPos: -1, origin: o, what: what,
	})
	return id
}

func (p *parser) grow(n int, at int) error {
	if n < 0 || n > maxElems-p.size {
		return p.errAt(at, "grammar too large: over %d elements once repetitions are expanded", maxElems)
	}
	p.size += n
	return nil
}

func (p *parser) parse() error {
	p.skipSpace(true)
	for !p.eof() {
		if err := p.rule(); err != nil {
			return err
		}
	}
	for _, r := range p.rules {
		if !r.defined {
			return p.errAt(r.refPos, "undefined rule %q", r.name)
		}
	}
	if _, ok := p.byName["root"]; !ok {
		return errors.New(`grammar: no "root" rule (generation starts at root)`)
	}
	return nil
}

func (p *parser) rule() error {
	start := p.pos
	name := p.name()
	if name == "" {
		return p.expected("a rule name")
	}
	p.skipSpace(false)
	if !strings.HasPrefix(p.src[p.pos:], "::=") {
		return p.expected(`"::=" after rule name ` + strconv.Quote(name))
	}
	p.pos += 3
	p.skipSpace(true)
	id := p.ruleID(name)
	r := p.rules[id]
	if r.defined {
		l, c := p.lineCol(r.defPos)
		return p.errAt(start, "rule %q is already defined at %d:%d", name, l, c)
	}
	r.defined, r.defPos = true, start
	alts, err := p.alternates(id, false)
	if err != nil {
		return err
	}
	r.alts = alts
	switch {
	case p.eof():
	case p.peek() == '\n' || p.peek() == '\r':
		p.pos++
	default:
		return p.expected(`an item, "|" or end of line`)
	}
	p.skipSpace(true)
	return nil
}

func (p *parser) alternates(owner int32, nested bool) ([][]elem, error) {
	var alts [][]elem
	for {
		seq, err := p.sequence(owner, nested)
		if err != nil {
			return nil, err
		}
		alts = append(alts, seq)
		if p.peek() != '|' {
			return alts, nil
		}
		p.pos++
		p.skipSpace(true)
	}
}

func (p *parser) term(c class) elem {
	k := c.key()
	id, ok := p.classIdx[k]
	if !ok {
		id = int32(len(p.classes))
		p.classes = append(p.classes, c)
		p.classIdx[k] = id
	}
	return elem{kTerm, id}
}

func (p *parser) sequence(owner int32, nested bool) ([]elem, error) {
	var seq []elem
	last := -1 // start of the last item in seq, -1 if none
	for !p.eof() {
		at := p.pos
		switch c := p.peek(); {
		case c == '"':
			p.pos++
			last = len(seq)
			for {
				if p.eof() {
					return nil, p.errAt(at, "unterminated string literal: expected a closing '\"', found end of input")
				}
				if p.peek() == '"' {
					p.pos++
					break
				}
				r, err := p.char()
				if err != nil {
					return nil, err
				}
				if err := p.grow(1, at); err != nil {
					return nil, err
				}
				seq = append(seq, p.term(newClass([]rng{{r, r}}, false)))
			}
			if last == len(seq) {
				last = -2 // an empty string: nothing to repeat
			}
		case c == '[':
			p.pos++
			negate := false
			if p.peek() == '^' {
				negate = true
				p.pos++
			}
			var rs []rng
			for {
				if p.eof() {
					return nil, p.errAt(at, "unterminated character class: expected ']', found end of input")
				}
				if p.peek() == ']' {
					p.pos++
					break
				}
				lo, err := p.char()
				if err != nil {
					return nil, err
				}
				hi := lo
				if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
					p.pos++
					rat := p.pos
					if hi, err = p.char(); err != nil {
						return nil, err
					}
					if hi < lo {
						return nil, p.errAt(rat, "invalid range: %s is before %s", quoteRune(hi), quoteRune(lo))
					}
				}
				rs = append(rs, rng{lo, hi})
			}
			if len(rs) == 0 && !negate {
				return nil, p.errAt(at, "empty character class [] matches nothing")
			}
			if err := p.grow(1, at); err != nil {
				return nil, err
			}
			last = len(seq)
			seq = append(seq, p.term(newClass(rs, negate)))
		case c == '.':
			p.pos++
			if err := p.grow(1, at); err != nil {
				return nil, err
			}
			last = len(seq)
			seq = append(seq, p.term(newClass([]rng{{0, maxRune}}, false)))
		case isNameChar(c):
			name := p.name()
			id := p.ruleID(name)
			if p.rules[id].refPos < 0 {
				p.rules[id].refPos = at
			}
			if err := p.grow(1, at); err != nil {
				return nil, err
			}
			last = len(seq)
			seq = append(seq, elem{kRef, id})
		case c == '(':
			if p.depth >= maxNesting {
				return nil, p.errAt(at, "parentheses nested deeper than %d", maxNesting)
			}
			p.depth++
			p.pos++
			p.skipSpace(true)
			id := p.synth(owner, "group")
			alts, err := p.alternates(id, true)
			if err != nil {
				return nil, err
			}
			p.rules[id].alts = alts
			if p.peek() != ')' {
				l, c := p.lineCol(at)
				return nil, p.expected(fmt.Sprintf(`")" to close "(" at %d:%d`, l, c))
			}
			p.pos++
			p.depth--
			if err := p.grow(1, at); err != nil {
				return nil, err
			}
			last = len(seq)
			seq = append(seq, elem{kRef, id})
		case c == '*' || c == '+' || c == '?' || c == '{':
			if last < 0 {
				if last == -2 {
					return nil, p.errAt(at, "cannot repeat an empty string")
				}
				return nil, p.errAt(at, "expected an item before %q", c)
			}
			min, max, err := p.repetition()
			if err != nil {
				return nil, err
			}
			if seq, err = p.repeat(owner, seq, last, min, max, at); err != nil {
				return nil, err
			}
		default:
			return seq, nil
		}
		p.skipSpace(nested)
	}
	return seq, nil
}

// repetition parses a repetition operator into its bounds (max -1: none).
func (p *parser) repetition() (min, max int, err error) {
	switch p.peek() {
	case '*':
		p.pos++
		return 0, -1, nil
	case '+':
		p.pos++
		return 1, -1, nil
	case '?':
		p.pos++
		return 0, 1, nil
	}
	p.pos++ // '{'
	p.skipSpace(false)
	if min, err = p.number(`a number after "{"`); err != nil {
		return 0, 0, err
	}
	p.skipSpace(false)
	switch p.peek() {
	case '}':
		p.pos++
		return min, min, nil
	case ',':
		p.pos++
		p.skipSpace(false)
		max = -1
		if c := p.peek(); '0' <= c && c <= '9' {
			at := p.pos
			if max, err = p.number("a number"); err != nil {
				return 0, 0, err
			}
			if max < min {
				return 0, 0, p.errAt(at, "repetition maximum %d is less than minimum %d", max, min)
			}
			p.skipSpace(false)
		}
		if p.peek() != '}' {
			return 0, 0, p.expected(`"}"`)
		}
		p.pos++
		return min, max, nil
	}
	return 0, 0, p.expected(`"," or "}"`)
}

func (p *parser) number(what string) (int, error) {
	start := p.pos
	for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return 0, p.expected(what)
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > maxRepeat {
		return 0, p.errAt(start, "repetition count %s is over the limit of %d", p.src[start:p.pos], maxRepeat)
	}
	return n, nil
}

// repeat rewrites seq[last:] (the item) into min copies followed by the
// optional part:
//
//	S{m,}  -> S ... S R    with R ::= S R | ε
//	S{m,n} -> S ... S R_k  with R_1 ::= S | ε, R_i ::= S R_(i-1) | ε, k = n-m
func (p *parser) repeat(owner int32, seq []elem, last, min, max, at int) ([]elem, error) {
	item := append([]elem(nil), seq[last:]...)
	seq = seq[:last]
	n := len(item)
	if min > 0 {
		if err := p.grow(n*(min-1), at); err != nil {
			return nil, err
		}
		for i := 0; i < min; i++ {
			seq = append(seq, item...)
		}
	} else {
		p.size -= n
	}
	if max < 0 {
		if err := p.grow(n+2, at); err != nil {
			return nil, err
		}
		id := p.synth(owner, "repeat")
		body := append(append([]elem(nil), item...), elem{kRef, id})
		p.rules[id].alts = [][]elem{body, nil}
		return append(seq, elem{kRef, id}), nil
	}
	opt := max - min
	if opt == 0 {
		return seq, nil
	}
	if err := p.grow(opt*(n+2), at); err != nil {
		return nil, err
	}
	prev := int32(-1)
	for i := 0; i < opt; i++ {
		id := p.synth(owner, "repeat")
		body := append([]elem(nil), item...)
		if prev >= 0 {
			body = append(body, elem{kRef, prev})
		}
		p.rules[id].alts = [][]elem{body, nil}
		prev = id
	}
	return append(seq, elem{kRef, prev}), nil
}

// char parses one character of a literal or class, with escapes.
func (p *parser) char() (rune, error) {
	at := p.pos
	if p.peek() != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return r, nil
	}
	p.pos++
	if p.eof() {
		return 0, p.expected("an escape after '\\'")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'x':
		return p.hex(2, at)
	case 'u':
		return p.hex(4, at)
	case 'U':
		return p.hex(8, at)
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'n':
		return '\n', nil
	case '\\', '"', '[', ']':
		return rune(c), nil
	}
	p.pos--
	return 0, p.errAt(at, `unknown escape "\%s": expected one of \x \u \U \t \r \n \\ \" \[ \]`, p.src[p.pos:p.pos+utf8RuneLen(p.src[p.pos:])])
}

func utf8RuneLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return n
}

func (p *parser) hex(n, at int) (rune, error) {
	var v uint32
	for i := 0; i < n; i++ {
		c := p.peek()
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.expected(fmt.Sprintf("%d hex digits in escape", n))
		}
		v = v<<4 | uint32(d)
		p.pos++
	}
	if v > maxRune {
		return 0, p.errAt(at, "escape %s is beyond U+10FFFF", p.src[at:p.pos])
	}
	return rune(v), nil
}

func quoteRune(r rune) string {
	if r < 0x20 || r == 0x7f || (r >= 0xd800 && r <= 0xdfff) {
		return fmt.Sprintf("U+%04X", r)
	}
	return strconv.QuoteRune(r)
}

// compile flattens the rules into the program and checks left recursion.
func (p *parser) compile() (*Grammar, error) {
	g := &Grammar{classes: p.classes, root: p.byName["root"]}
	g.elems = make([]elem, 0, p.size+len(p.rules)*2)
	g.rules = make([]crule, len(p.rules))
	for i, r := range p.rules {
		cr := crule{name: r.name, alts: make([]int32, len(r.alts))}
		for j, a := range r.alts {
			cr.alts[j] = int32(len(g.elems))
			g.elems = append(g.elems, a...)
			g.elems = append(g.elems, elem{kind: kEnd})
		}
		g.rules[i] = cr
	}
	if cyc := g.leftCycle(); cyc != nil {
		// Name the user's rules; synthesized ones stand for the rule they
		// were written in.
		var names []string
		first := p.rules[p.rules[cyc[0]].origin]
		rep := false
		for _, id := range cyc {
			r := p.rules[id]
			rep = rep || r.what == "repeat"
			n := p.rules[r.origin].name
			if r.what == "" || len(names) == 0 || names[len(names)-1] != n {
				names = append(names, n)
			}
		}
		msg := fmt.Sprintf("left recursion: rule %q can reach itself without consuming input (%s)",
			first.name, strings.Join(names, " -> "))
		if rep {
			msg += "; a repeated item must not match the empty string"
		}
		return nil, p.errAt(first.defPos, "%s", msg)
	}
	return g, nil
}
