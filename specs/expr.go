package specs

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/weftrun/weft/graph"
)

// call is a parsed op application: op(arg, arg, key=value).
type call struct {
	Op    string // op or block name; "$x" names a structure choice
	Args  []arg
	Attrs []attrArg
	Col   int       // column offset of the call within its source text
	pos   graph.Pos // where the op name is in the spec file
}

// arg is a positional argument: a value name or a nested call.
type arg struct {
	Name string
	Call *call
	Col  int
	pos  graph.Pos
}

// attrArg is key=CEL.
type attrArg struct {
	Key    string
	Src    string
	Col    int // column offset of the value
	KeyCol int // column offset of the key
	pos    graph.Pos
	prog   *celExpr
}

// parseCall parses `op(a, b(c), k=expr)`. Errors carry the 0-based column.
func parseCall(src string) (*call, error) {
	p := &callParser{s: src}
	p.skip()
	c, err := p.call()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i != len(p.s) {
		return nil, p.errf("unexpected %q after the call", p.s[p.i:])
	}
	return c, nil
}

type callParser struct {
	s string
	i int
}

type colError struct {
	col int
	msg string
}

func (e *colError) Error() string { return e.msg }

func (p *callParser) errf(format string, args ...any) error {
	return &colError{p.i, fmt.Sprintf(format, args...)}
}

func (p *callParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *callParser) ident() string {
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '$' {
		p.i++
	}
	for p.i < len(p.s) {
		r := rune(p.s[p.i])
		if r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *callParser) call() (*call, error) {
	col := p.i
	name := p.ident()
	if name == "" || name == "$" {
		return nil, p.errf("expected an op name")
	}
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != '(' {
		return nil, p.errf("expected '(' after %s", name)
	}
	p.i++
	c := &call{Op: name, Col: col}
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == ')' {
		p.i++
		return c, nil
	}
	for {
		p.skip()
		acol := p.i
		id := p.ident()
		if id == "" {
			return nil, p.errf("expected an argument")
		}
		p.skip()
		switch {
		case p.i < len(p.s) && p.s[p.i] == '=' && !strings.HasPrefix(p.s[p.i:], "=="):
			p.i++
			src, err := p.celText()
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(src) == "" {
				return nil, &colError{acol, fmt.Sprintf("attribute %s has no value", id)}
			}
			c.Attrs = append(c.Attrs, attrArg{Key: id, Src: src, Col: p.i - len(src), KeyCol: acol})
		case p.i < len(p.s) && p.s[p.i] == '(':
			p.i = acol
			sub, err := p.call()
			if err != nil {
				return nil, err
			}
			if len(c.Attrs) > 0 {
				return nil, &colError{acol, "positional argument after attributes"}
			}
			c.Args = append(c.Args, arg{Call: sub, Col: acol})
		default:
			if len(c.Attrs) > 0 {
				return nil, &colError{acol, "positional argument after attributes"}
			}
			c.Args = append(c.Args, arg{Name: id, Col: acol})
		}
		p.skip()
		if p.i >= len(p.s) {
			return nil, p.errf("missing ')'")
		}
		if p.s[p.i] == ')' {
			p.i++
			return c, nil
		}
		if p.s[p.i] != ',' {
			return nil, p.errf("expected ',' or ')', got %q", p.s[p.i])
		}
		p.i++
	}
}

// celText scans a CEL expression up to the next top-level ',' or ')'.
func (p *callParser) celText() (string, error) {
	start := p.i
	depth := 0
	var quote byte
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case quote != 0:
			if ch == '\\' {
				p.i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '(' || ch == '[' || ch == '{':
			depth++
		case ch == ')' || ch == ']' || ch == '}':
			if depth == 0 {
				return p.s[start:p.i], nil
			}
			depth--
		case ch == ',' && depth == 0:
			return p.s[start:p.i], nil
		}
		p.i++
	}
	if quote != 0 {
		return "", p.errf("unterminated string")
	}
	return p.s[start:p.i], nil
}
