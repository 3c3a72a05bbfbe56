package specs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weftrun/weft/graph"
	"gopkg.in/yaml.v3"
)

// Error is a spec error located at file:line:col.
type Error struct {
	Pos graph.Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

type parser struct {
	file  string
	lines []string // the spec's text, for column offsets inside scalars
}

func (p *parser) pos(n *yaml.Node) graph.Pos {
	return graph.Pos{File: p.file, Line: n.Line, Col: n.Column}
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return &Error{Pos: p.pos(n), Msg: fmt.Sprintf(format, args...)}
}

type pair struct {
	key   string
	kn, v *yaml.Node
}

// mapping returns the key/value pairs of a mapping node, rejecting keys
// outside allowed (when allowed is non-nil) and duplicates.
func (p *parser) mapping(n *yaml.Node, what string, allowed ...string) ([]pair, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s: want a mapping, got %s", what, kindName(n))
	}
	seen := map[string]bool{}
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, "%s: keys must be plain names", what)
		}
		if seen[k.Value] {
			return nil, p.errf(k, "%s: duplicate key %q", what, k.Value)
		}
		seen[k.Value] = true
		if allowed != nil && !contains(allowed, k.Value) {
			return nil, p.errf(k, "%s: unknown key %q (allowed: %v)", what, k.Value, allowed)
		}
		out = append(out, pair{k.Value, k, v})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", scalarTag(n), n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

func scalarTag(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!int":
		return "int"
	case "!!float":
		return "float"
	case "!!bool":
		return "bool"
	case "!!null":
		return "null"
	}
	return "string"
}

func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", p.errf(n, "%s: want a string, got %s", what, kindName(n))
	}
	return n.Value, nil
}

func (p *parser) strList(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := p.str(n, what)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s: want a list of strings, got %s", what, kindName(n))
	}
	out := make([]string, len(n.Content))
	for i, c := range n.Content {
		s, err := p.str(c, what)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// literal converts a scalar node to a Go value: int64, float64, bool or string.
func literal(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!int":
		return strconv.ParseInt(n.Value, 0, 64)
	case "!!float":
		return strconv.ParseFloat(n.Value, 64)
	case "!!bool":
		return strconv.ParseBool(n.Value)
	case "!!str":
		return n.Value, nil
	}
	return nil, fmt.Errorf("unsupported value %s", kindName(n))
}

// ParseValue parses a command-line value: an integer (decimal, or with a
// 0x, 0o or 0b prefix; "010" is ten), a float, a bool or else a string.
func ParseValue(s string) any {
	base := 10
	if l := strings.ToLower(strings.TrimPrefix(s, "-")); strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0o") || strings.HasPrefix(l, "0b") {
		base = 0
	}
	if i, err := strconv.ParseInt(s, base, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b
	}
	return s
}
