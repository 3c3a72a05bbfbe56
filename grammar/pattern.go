package grammar

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// patternGBNF translates a JSON Schema "pattern" (an ECMA-262 regular
// expression; the supported subset is below) into a GBNF expression for
// the text between a JSON string's quotes: characters the regex matches
// come out raw where JSON allows and escaped where it does not. A pattern
// matches anywhere in the string unless anchored with ^ and $, as the
// specification says.
//
// Supported: literals, ., [...] and [^...] with ranges, the escapes \d \D \w
// \W \s \S \t \n \r \f \v \0 \xHH \uHHHH and escaped punctuation, groups
// (...) and (?:...), alternation, the quantifiers * + ? {m} {m,} {m,n}
// (lazy forms too: they match the same strings), ^ at the start and $ at
// the end. Not supported: backreferences, lookaround, named groups, word
// boundaries, and anchors elsewhere.
func patternGBNF(re string) (string, error) {
	if !utf8.ValidString(re) {
		return "", fmt.Errorf("invalid UTF-8")
	}
	p := &reParser{src: []rune(re)}
	start := len(p.src) > 0 && p.src[0] == '^'
	if start {
		p.pos++
	}
	end := len(p.src) > p.pos && p.src[len(p.src)-1] == '$' && !escapedAt(p.src, len(p.src)-1)
	if end {
		p.src = p.src[:len(p.src)-1]
	}
	var alts []*reNode
	for {
		seq, err := p.sequence()
		if err != nil {
			return "", err
		}
		alts = append(alts, seq)
		if p.peek() != '|' {
			break
		}
		p.pos++
	}
	if p.pos < len(p.src) {
		return "", p.errorf("unexpected %q", p.src[p.pos])
	}
	if len(alts) > 1 && (start || end) {
		return "", fmt.Errorf("anchors around a top-level alternation are ambiguous: write ^(a|b)$")
	}
	root := altOf(alts)
	body, err := root.gbnf()
	if err != nil {
		return "", err
	}
	if !start {
		body = "json-char* " + body
	}
	if !end {
		body += " json-char*"
	}
	return body, nil
}

// reNode is a parsed regular expression.
type reNode struct {
	kind     byte // reChars, reSeq, reAlt, reRep
	set      class
	kids     []*reNode
	min, max int // reRep; max -1: no limit
}

const (
	reChars = 'c'
	reSeq   = 's'
	reAlt   = 'a'
	reRep   = 'r'
)

func (n *reNode) nullable() bool {
	switch n.kind {
	case reChars:
		return false
	case reSeq:
		for _, k := range n.kids {
			if !k.nullable() {
				return false
			}
		}
		return true
	case reAlt:
		for _, k := range n.kids {
			if k.nullable() {
				return true
			}
		}
		return false
	}
	return n.min == 0 || n.kids[0].nullable()
}

// nonEmpty returns an expression for the non-empty strings n matches, or
// nil if there are none.
func (n *reNode) nonEmpty() *reNode {
	if !n.nullable() {
		return n
	}
	switch n.kind {
	case reSeq:
		// X Y..., X nullable: X' Y... | Y...'
		if len(n.kids) == 0 {
			return nil
		}
		rest := &reNode{kind: reSeq, kids: n.kids[1:]}
		var alts []*reNode
		if x := n.kids[0].nonEmpty(); x != nil {
			alts = append(alts, &reNode{kind: reSeq, kids: append([]*reNode{x}, n.kids[1:]...)})
		}
		if y := rest.nonEmpty(); y != nil {
			alts = append(alts, y)
		}
		return altOf(alts)
	case reAlt:
		var alts []*reNode
		for _, k := range n.kids {
			if x := k.nonEmpty(); x != nil {
				alts = append(alts, x)
			}
		}
		return altOf(alts)
	}
	// A{m,n} with A nullable matches what A{0,n} does: some non-empty A'
	// then A{0,n-1}.
	x := n.kids[0].nonEmpty()
	if x == nil || n.max == 0 {
		return nil
	}
	if n.max < 0 {
		return &reNode{kind: reRep, kids: []*reNode{x}, min: 1, max: -1}
	}
	return &reNode{kind: reSeq, kids: []*reNode{x, {kind: reRep, kids: n.kids, min: 0, max: n.max - 1}}}
}

func altOf(alts []*reNode) *reNode {
	switch len(alts) {
	case 0:
		return nil
	case 1:
		return alts[0]
	}
	return &reNode{kind: reAlt, kids: alts}
}

// gbnf writes n as a GBNF expression. An unbounded repetition of a
// nullable expression (GBNF would reject it as left recursive) repeats its
// non-empty part instead: (A)* = (A - "")*.
func (n *reNode) gbnf() (string, error) {
	switch n.kind {
	case reChars:
		return charsGBNF(n.set)
	case reSeq:
		if len(n.kids) == 0 {
			return `""`, nil
		}
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			var err error
			if parts[i], err = k.gbnf(); err != nil {
				return "", err
			}
		}
		return "(" + strings.Join(parts, " ") + ")", nil
	case reAlt:
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			var err error
			if parts[i], err = k.gbnf(); err != nil {
				return "", err
			}
		}
		return "(" + strings.Join(parts, " | ") + ")", nil
	}
	kid := n.kids[0]
	min, max := n.min, n.max
	if kid.nullable() && (max < 0 || min > 0) {
		if max < 0 {
			// (A){m,} = (A')*
			if kid = kid.nonEmpty(); kid == nil {
				return `""`, nil
			}
			min = 0
		} else {
			min = 0 // A{m,n} = A{0,n}: A can match empty
		}
	}
	body, err := kid.gbnf()
	if err != nil {
		return "", err
	}
	switch {
	case max < 0:
		return fmt.Sprintf("%s{%d,}", body, min), nil
	case min == max:
		return fmt.Sprintf("%s{%d}", body, min), nil
	}
	return fmt.Sprintf("%s{%d,%d}", body, min, max), nil
}

// escapedAt reports whether src[i] is preceded by an odd number of
// backslashes.
func escapedAt(src []rune, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

type reParser struct {
	src   []rune
	pos   int
	depth int
}

func (p *reParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *reParser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return -1
}

func (p *reParser) alternation() (*reNode, error) {
	var alts []*reNode
	for {
		seq, err := p.sequence()
		if err != nil {
			return nil, err
		}
		alts = append(alts, seq)
		if p.peek() != '|' {
			return altOf(alts), nil
		}
		p.pos++
	}
}

func (p *reParser) sequence() (*reNode, error) {
	seq := &reNode{kind: reSeq}
	for p.pos < len(p.src) && p.peek() != '|' && p.peek() != ')' {
		atom, err := p.atom()
		if err != nil {
			return nil, err
		}
		if atom, err = p.quantified(atom); err != nil {
			return nil, err
		}
		seq.kids = append(seq.kids, atom)
	}
	if len(seq.kids) == 1 {
		return seq.kids[0], nil
	}
	return seq, nil
}

func chars(c class) *reNode { return &reNode{kind: reChars, set: c} }

func (p *reParser) atom() (*reNode, error) {
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '(':
		if p.depth >= maxNesting {
			return nil, p.errorf("groups nested too deeply")
		}
		if p.peek() == '?' {
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == ':' {
				p.pos += 2
			} else {
				return nil, p.errorf("unsupported group (lookaround or named group)")
			}
		}
		p.depth++
		n, err := p.alternation()
		p.depth--
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.errorf("missing )")
		}
		p.pos++
		return n, nil
	case '[':
		return p.class()
	case '.':
		return chars(newClass([]rng{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true)), nil
	case '\\':
		rs, neg, err := p.escape(false)
		if err != nil {
			return nil, err
		}
		return chars(newClass(rs, neg)), nil
	case '^', '$':
		return nil, p.errorf("unsupported anchor %q inside the pattern", c)
	case '*', '+', '?', '{':
		return nil, p.errorf("nothing to repeat before %q", c)
	case ')':
		return nil, p.errorf("unmatched )")
	}
	return chars(newClass([]rng{{c, c}}, false)), nil
}

// quantified applies any quantifiers after an atom.
func (p *reParser) quantified(atom *reNode) (*reNode, error) {
	for {
		min, max := 0, 0
		switch p.peek() {
		case '*':
			min, max = 0, -1
			p.pos++
		case '+':
			min, max = 1, -1
			p.pos++
		case '?':
			min, max = 0, 1
			p.pos++
		case '{':
			p.pos++
			var ok bool
			if min, ok = p.number(); !ok {
				return nil, p.errorf("expected a number after {")
			}
			max = min
			if p.peek() == ',' {
				p.pos++
				max = -1
				if n, ok := p.number(); ok {
					max = n
				}
			}
			if p.peek() != '}' {
				return nil, p.errorf("expected }")
			}
			p.pos++
			if min > maxRepeat || max > maxRepeat {
				return nil, p.errorf("repetition count over %d", maxRepeat)
			}
			if max >= 0 && max < min {
				return nil, p.errorf("repetition {%d,%d} has maximum below minimum", min, max)
			}
		default:
			return atom, nil
		}
		if p.peek() == '?' { // lazy: the same strings
			p.pos++
		}
		atom = &reNode{kind: reRep, kids: []*reNode{atom}, min: min, max: max}
	}
}

func (p *reParser) number() (int, bool) {
	start, n := p.pos, 0
	for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
		if n <= maxRepeat {
			n = n*10 + int(p.src[p.pos]-'0')
		}
		p.pos++
	}
	return n, p.pos > start
}

var (
	reDigit = []rng{{'0', '9'}}
	reWord  = []rng{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// ECMA-262 white space and line terminators.
	reSpace = []rng{{'\t', '\r'}, {' ', ' '}, {0xa0, 0xa0}, {0x1680, 0x1680}, {0x2000, 0x200a},
		{0x2028, 0x2029}, {0x202f, 0x202f}, {0x205f, 0x205f}, {0x3000, 0x3000}, {0xfeff, 0xfeff}}
)

// escape parses the escape after a backslash into a set of code points.
// In a class, \b is a backspace.
func (p *reParser) escape(inClass bool) (rs []rng, neg bool, err error) {
	if p.pos >= len(p.src) {
		return nil, false, p.errorf("pattern ends with \\")
	}
	c := p.src[p.pos]
	p.pos++
	one := func(r rune) ([]rng, bool, error) { return []rng{{r, r}}, false, nil }
	switch c {
	case 'd':
		return reDigit, false, nil
	case 'D':
		return reDigit, true, nil
	case 'w':
		return reWord, false, nil
	case 'W':
		return reWord, true, nil
	case 's':
		return reSpace, false, nil
	case 'S':
		return reSpace, true, nil
	case 't':
		return one('\t')
	case 'n':
		return one('\n')
	case 'r':
		return one('\r')
	case 'f':
		return one('\f')
	case 'v':
		return one('\v')
	case '0':
		return one(0)
	case 'b':
		if inClass {
			return one('\b')
		}
		return nil, false, p.errorf(`unsupported word boundary \b`)
	case 'x', 'u':
		n := 2
		if c == 'u' {
			n = 4
		}
		if p.pos+n > len(p.src) {
			return nil, false, p.errorf(`expected %d hex digits after \%c`, n, c)
		}
		var v rune
		for _, h := range p.src[p.pos : p.pos+n] {
			var d rune
			switch {
			case '0' <= h && h <= '9':
				d = h - '0'
			case 'a' <= h && h <= 'f':
				d = h - 'a' + 10
			case 'A' <= h && h <= 'F':
				d = h - 'A' + 10
			default:
				return nil, false, p.errorf(`expected %d hex digits after \%c`, n, c)
			}
			v = v<<4 | d
		}
		p.pos += n
		return one(v)
	}
	if c >= '1' && c <= '9' {
		return nil, false, p.errorf("unsupported backreference")
	}
	if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return nil, false, p.errorf(`unsupported escape \%c`, c)
	}
	return one(c) // escaped punctuation or other character
}

// class parses [...] (after the '[').
func (p *reParser) class() (*reNode, error) {
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	var rs []rng
	first := true
	for {
		if p.pos >= len(p.src) {
			return nil, p.errorf("missing ]")
		}
		c := p.src[p.pos]
		if c == ']' && !first {
			p.pos++
			break
		}
		if c == ']' { // "[]" matches nothing, "[^]" anything
			p.pos++
			break
		}
		first = false
		lo, set, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if set != nil {
			rs = append(rs, set...)
			continue
		}
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, set, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if set != nil {
				return nil, p.errorf("a range cannot end in a class escape")
			}
			if hi < lo {
				return nil, p.errorf("range out of order")
			}
			rs = append(rs, rng{lo, hi})
			continue
		}
		rs = append(rs, rng{lo, lo})
	}
	return chars(newClass(rs, neg)), nil
}

// classAtom is one character of a class, or a class escape's set (its
// complement taken within the class: only \D \W \S are negated).
func (p *reParser) classAtom() (rune, []rng, error) {
	c := p.src[p.pos]
	p.pos++
	if c != '\\' {
		return c, nil, nil
	}
	rs, neg, err := p.escape(true)
	if err != nil {
		return 0, nil, err
	}
	if neg {
		return 0, newClass(rs, true).ranges, nil
	}
	if len(rs) == 1 && rs[0].lo == rs[0].hi {
		return rs[0].lo, nil, nil
	}
	return 0, rs, nil
}

// jsonEscapes are how characters that may not appear raw in a JSON string
// are written.
var jsonEscapes = map[rune]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

// charsGBNF is a GBNF expression for one character of the set, as JSON
// string content: raw where allowed, else escaped.
func charsGBNF(c class) (string, error) {
	raw := newClass(intersect(c.ranges, []rng{{0x20, 0x21}, {0x23, 0x5b}, {0x5d, 0x7e}, {0x80, 0xd7ff}, {0xe000, maxRune}}), false)
	var alts []string
	if len(raw.ranges) > 0 {
		var b strings.Builder
		b.WriteByte('[')
		for _, r := range raw.ranges {
			b.WriteString(gbnfClassChar(r.lo))
			if r.hi != r.lo {
				b.WriteByte('-')
				b.WriteString(gbnfClassChar(r.hi))
			}
		}
		b.WriteByte(']')
		alts = append(alts, b.String())
	}
	for _, r := range intersect(c.ranges, []rng{{0, 0x1f}, {'"', '"'}, {'\\', '\\'}, {0x7f, 0x7f}}) {
		for x := r.lo; x <= r.hi; x++ {
			e, ok := jsonEscapes[x]
			if !ok {
				e = fmt.Sprintf(`\u%04x`, x)
			}
			alts = append(alts, gbnfLiteral(e))
		}
	}
	switch len(alts) {
	case 0:
		return "", fmt.Errorf("a character class matches nothing")
	case 1:
		return alts[0], nil
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

func gbnfClassChar(r rune) string {
	switch {
	case r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
		return string(r)
	case r <= 0xff:
		return fmt.Sprintf(`\x%02X`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04X`, r)
	}
	return fmt.Sprintf(`\U%08X`, r)
}

// intersect returns the code points in both sorted range lists.
func intersect(a, b []rng) []rng {
	var out []rng
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo <= hi {
			out = append(out, rng{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}
