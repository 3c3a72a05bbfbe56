package specs

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"github.com/weftrun/weft/graph"
)

// celExpr is a CEL expression compiled once, when the spec loads.
type celExpr struct {
	Src  string
	Pos  graph.Pos
	prog cel.Program
}

// Limits on spec expressions: a spec may come from anywhere, and opening
// one must not hang weft (TestExprLimits holds inputs that did).
const (
	// MaxExprChars bounds one expression's length in code points.
	MaxExprChars = 4096
	// MaxExprCost bounds the work of one evaluation in CEL's cost units
	// (about one per operation or element visited): nested list macros
	// such as l.map(x, l.map(y, …)) grow as a power of the lists' length.
	MaxExprCost = 1_000_000
	// MaxValueLen bounds the elements of a list or the bytes of a string an
	// expression gives: list concatenation costs CEL nothing, so params
	// that each double the last (b: a + a, c: b + b, …) grow without
	// bound otherwise.
	MaxValueLen = 1 << 16
)

// newEnv declares every name a spec expression may use as a dynamic
// variable: params, structure choices and loop variables.
func newEnv(names []string) (*cel.Env, error) {
	sort.Strings(names)
	opts := make([]cel.EnvOption, 0, len(names))
	for _, n := range names {
		opts = append(opts, cel.Variable(n, cel.DynType))
	}
	// ext.Math gives math.sqrt, math.pow-free roots, rounding and
	// min/max (e.g. gemma's scale by math.sqrt(hidden)).
	opts = append(opts, ext.Math(), cel.ParserExpressionSizeLimit(MaxExprChars))
	return cel.NewEnv(opts...)
}

// commentAt returns the offset of a "//" outside string literals in src,
// or -1. CEL reads "//" as the start of a comment, so "hidden // heads"
// would silently mean "hidden".
func commentAt(src string) int {
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			return i
		}
	}
	return -1
}

// compile compiles src; a failure shows the YAML position and CEL's caret.
func compile(env *cel.Env, src string, pos graph.Pos, what string) (*celExpr, error) {
	if i := commentAt(src); i >= 0 {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: %q: \"//\" starts a CEL comment (the rest of the expression would be ignored); integer division is \"/\"", what, src)}
	}
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: bad expression %q:\n%s", what, src, indent(iss.Err().Error()))}
	}
	prg, err := env.Program(ast, cel.CostLimit(MaxExprCost))
	if err != nil {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: %v", what, err)}
	}
	return &celExpr{Src: src, Pos: pos, prog: prg}, nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// eval evaluates e against act and converts the result to a plain Go
// value: int64, float64, bool, string or []any.
func (e *celExpr) eval(act interpreter.Activation) (any, error) {
	out, _, err := e.prog.Eval(act)
	if err != nil {
		if strings.Contains(err.Error(), "cost limit exceeded") {
			return nil, fmt.Errorf("%v: the expression does more than %d units of work (a spec expression's limit)", err, MaxExprCost)
		}
		return nil, err
	}
	return native(out)
}

func native(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return int64(x), nil
	case types.Double:
		return float64(x), nil
	case types.Bool:
		return bool(x), nil
	case types.String:
		if len(x) > MaxValueLen {
			return nil, fmt.Errorf("expression gives a string of %d bytes; a spec's limit is %d", len(x), MaxValueLen)
		}
		return string(x), nil
	}
	if v.Type() == types.ListType {
		if sz, ok := v.(traits.Sizer); ok {
			if n, ok := sz.Size().(types.Int); ok && n > MaxValueLen {
				return nil, fmt.Errorf("expression gives a list of %d elements; a spec's limit is %d", n, MaxValueLen)
			}
		}
		raw, err := v.ConvertToNative(reflect.TypeOf([]any{}))
		if err != nil {
			return nil, err
		}
		return raw, nil
	}
	return nil, fmt.Errorf("expression gives %s, want a number, bool, string or list", v.Type().TypeName())
}

// scope is a CEL activation over resolved values and lazily-evaluated params.
type scope struct {
	vars   map[string]any
	lazy   func(name string) (any, bool)
	parent interpreter.Activation
}

func (s *scope) ResolveName(name string) (any, bool) {
	if v, ok := s.vars[name]; ok {
		return v, true
	}
	if s.lazy != nil {
		return s.lazy(name)
	}
	return nil, false
}

func (s *scope) Parent() interpreter.Activation { return s.parent }

// template is a tensor-name template: literal text with {CEL} holes, or a
// whole CEL expression when it starts with '='.
type template struct {
	Src   string
	parts []any // string or *celExpr
}

func compileTemplate(env *cel.Env, src string, pos graph.Pos, what string) (*template, error) {
	t := &template{Src: src}
	if strings.HasPrefix(src, "=") {
		e, err := compile(env, src[1:], pos, what)
		if err != nil {
			return nil, err
		}
		t.parts = []any{e}
		return t, nil
	}
	rest := src
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.parts = append(t.parts, rest)
			break
		}
		if i > 0 {
			t.parts = append(t.parts, rest[:i])
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: unclosed '{' in %q", what, src)}
		}
		e, err := compile(env, rest[i+1:i+j], pos, what)
		if err != nil {
			return nil, err
		}
		t.parts = append(t.parts, e)
		rest = rest[i+j+1:]
	}
	return t, nil
}

func (t *template) eval(act interpreter.Activation) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		switch x := p.(type) {
		case string:
			b.WriteString(x)
		case *celExpr:
			v, err := x.eval(act)
			if err != nil {
				return "", fmt.Errorf("%q: %w", t.Src, err)
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String(), nil
}
