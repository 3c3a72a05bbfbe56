// Package specs is weft's model-specification language. A spec is a short
// YAML file that reads like a paper's diagram of the model: hyperparameters
// (CEL expressions over each other, overridden by checkpoint metadata and
// the command line), atomic-block choices, the checkpoint tensors the model
// needs (named per format by CEL templates), reusable blocks and the graph
// that wires them. Every expression is compiled once, when the spec loads;
// every error names file:line:col.
package specs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"gopkg.in/yaml.v3"
)

// Formats are the checkpoint naming schemes a weight may be mapped from.
var Formats = []string{"gguf", "hf", "llama2c"}

// Spec is a parsed, compiled model specification.
type Spec struct {
	File          string
	Name          string
	Doc           string
	Architectures []string
	Params        []*ParamDecl
	Structure     []*Choice
	Weights       map[string]*WeightDecl
	WeightOrder   []string
	Blocks        map[string]*Block
	Graph         []*Stmt
	Outputs       []string
	Plugins       []*PluginDecl
	// Inputs are the step inputs (ops.StepInputs) the graph always has;
	// any other step input the graph names is added when it is used.
	Inputs []string
	// Encoder, when set, is an encoder-decoder model's encoder: a graph
	// run once per request over the prompt whose value `memory` (its
	// output) the decoder's cross_attention ops attend over. Graph is then
	// the decoder.
	Encoder []*Stmt
	// Detect, when set, decides whether the spec serves a checkpoint of
	// one of its architectures (CEL over arch and meta).
	Detect     *celExpr
	env        *cel.Env
	outPos     graph.Pos // the outputs list, or the graph key when there is none
	defaultOut bool      // no outputs list: the output is logits
}

// ParamDecl is a hyperparameter: a default (literal or CEL over other
// params) and the checkpoint metadata keys that override it.
type ParamDecl struct {
	Name    string
	Literal any      // set when the default is a literal
	Expr    *celExpr // set when the default is an expression
	From    map[string]string
	// Also holds further keys per format, tried in order when From's is
	// absent (an HF config that says rope_scaling.type where newer ones
	// say rope_scaling.rope_type).
	Also map[string][]string
	// Optional marks a key that checkpoints may leave out (llama.cpp
	// assumes the default then): weft synth writes it only when the
	// value differs from the default literal.
	Optional bool
	Pos      graph.Pos
}

// Choice is an atomic-block choice (e.g. norm: rms_norm).
type Choice struct {
	Name  string
	Value any
	Pos   graph.Pos
}

// WeightDecl maps a graph parameter onto checkpoint tensors.
type WeightDecl struct {
	Key      string
	Shape    []*celExpr
	Names    map[string][]*NameRule // format → candidates, tried in order
	Optional bool
	Pos      graph.Pos
}

// NameRule is one candidate checkpoint name with load-time transforms.
type NameRule struct {
	tmpl       *template
	Transforms []*Transform
	// Stack, when set, is a count n: the name (a template over e) is read
	// for e = 0..n-1, each tensor transformed, and the n tensors stacked
	// along a new first dimension (HF's per-expert MoE weights).
	Stack *celExpr
}

// Transform is a load-time rewrite of a checkpoint tensor.
type Transform struct {
	Op   string
	Args []*celExpr
	Pos  graph.Pos
}

// Block is a reusable sub-graph with named inputs and outputs.
type Block struct {
	Name string
	In   []string
	Out  []string
	Body []*Stmt
	Pos  graph.Pos
}

// Stmt is one graph statement: an assignment, a repeat or a conditional
// group.
type Stmt struct {
	Pos    graph.Pos
	Outs   []string
	Call   *call
	When   *celExpr
	Repeat *celExpr
	Var    string
	Body   []*Stmt
}

// PluginDecl names an out-of-process op plugin the spec uses.
type PluginDecl struct {
	Name   string
	Path   string
	SHA256 string
	Pos    graph.Pos
}

// Detects reports whether the spec's detect condition holds for a
// checkpoint (true when the spec has none).
func (s *Spec) Detects(arch string, meta map[string]any) (bool, error) {
	if s.Detect == nil {
		return true, nil
	}
	if meta == nil {
		meta = map[string]any{}
	}
	v, err := s.Detect.eval(&scope{vars: map[string]any{"arch": arch, "meta": meta}})
	if err != nil {
		return false, &Error{Pos: s.Detect.Pos, Msg: fmt.Sprintf("detect %s: %v", s.Detect.Src, err)}
	}
	b, ok := v.(bool)
	if !ok {
		return false, &Error{Pos: s.Detect.Pos, Msg: fmt.Sprintf("detect %s: gives %v, want true or false", s.Detect.Src, v)}
	}
	return b, nil
}

// Load reads and compiles a spec file.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(filepath.Base(path), data)
}

var transformArity = map[string]int{"transpose": 0, "rope_permute": 1, "rows": 2, "add_one": 0, "flatten": 0, "qkv_groups": 2}

// Parse compiles a spec from YAML bytes; name labels error positions.
func Parse(name string, data []byte) (*Spec, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		// yaml.v3's "line N" is approximate (for an unclosed bracket it
		// may name a line before the construct): keep its wording.
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{file: name, lines: strings.Split(string(data), "\n")}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty spec", name)
	}
	root := doc.Content[0]
	top, err := p.mapping(root, "spec", "name", "doc", "architectures", "detect", "params", "structure", "inputs", "weights", "blocks", "encoder", "graph", "outputs", "plugins")
	if err != nil {
		return nil, err
	}
	s := &Spec{File: name, Weights: map[string]*WeightDecl{}, Blocks: map[string]*Block{}, Inputs: []string{"tokens", "pos"}}
	nodes := map[string]pair{}
	for _, kv := range top {
		nodes[kv.key] = kv
	}
	for _, req := range []string{"name", "graph"} {
		if _, ok := nodes[req]; !ok {
			return nil, p.errf(root, "spec: missing key %q", req)
		}
	}
	if s.Name, err = p.str(nodes["name"].v, "name"); err != nil {
		return nil, err
	}
	if kv, ok := nodes["doc"]; ok {
		if s.Doc, err = p.str(kv.v, "doc"); err != nil {
			return nil, err
		}
	}
	if kv, ok := nodes["architectures"]; ok {
		if s.Architectures, err = p.strList(kv.v, "architectures"); err != nil {
			return nil, err
		}
	}
	if kv, ok := nodes["detect"]; ok {
		src, err := p.str(kv.v, "detect")
		if err != nil {
			return nil, err
		}
		denv, err := cel.NewEnv(cel.Variable("arch", cel.StringType), cel.Variable("meta", cel.MapType(cel.StringType, cel.DynType)))
		if err != nil {
			return nil, err
		}
		if s.Detect, err = compile(denv, src, p.pos(kv.v), "detect"); err != nil {
			return nil, err
		}
	}
	if kv, ok := nodes["inputs"]; ok {
		if s.Inputs, err = p.strList(kv.v, "inputs"); err != nil {
			return nil, err
		}
		for i, in := range s.Inputs {
			if _, ok := ops.LookupStepInput(in); !ok {
				return nil, p.errf(kv.v.Content[i], "inputs: unknown step input %q (known: %s)", in, strings.Join(ops.StepInputNames(), ", "))
			}
		}
	}
	if kv, ok := nodes["outputs"]; ok {
		if s.Outputs, err = p.strList(kv.v, "outputs"); err != nil {
			return nil, err
		}
		s.outPos = p.pos(kv.v)
	} else {
		s.Outputs = []string{"logits"}
		s.defaultOut = true
		if kv, ok := nodes["graph"]; ok {
			s.outPos = p.pos(kv.kn)
		}
	}
	// Collect every name a CEL expression may reference before compiling.
	names := map[string]bool{}
	var paramPairs, choicePairs []pair
	if kv, ok := nodes["params"]; ok {
		if paramPairs, err = p.mapping(kv.v, "params"); err != nil {
			return nil, err
		}
		for _, pp := range paramPairs {
			names[pp.key] = true
		}
	}
	if kv, ok := nodes["structure"]; ok {
		if choicePairs, err = p.mapping(kv.v, "structure"); err != nil {
			return nil, err
		}
		for _, cp := range choicePairs {
			if names[cp.key] {
				return nil, p.errf(cp.kn, "structure: %q is also a param", cp.key)
			}
			names[cp.key] = true
		}
	}
	collectLoopVars(nodes, names)
	var all []string
	for n := range names {
		all = append(all, n)
	}
	if s.env, err = newEnv(all); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, pp := range paramPairs {
		d, err := p.param(s.env, pp)
		if err != nil {
			return nil, err
		}
		s.Params = append(s.Params, d)
	}
	for _, cp := range choicePairs {
		if cp.v.Kind != yaml.ScalarNode {
			return nil, p.errf(cp.v, "structure.%s: want a plain value, got %s", cp.key, kindName(cp.v))
		}
		v, err := literal(cp.v)
		if err != nil {
			return nil, p.errf(cp.v, "structure.%s: %v", cp.key, err)
		}
		s.Structure = append(s.Structure, &Choice{Name: cp.key, Value: v, Pos: p.pos(cp.kn)})
	}
	if kv, ok := nodes["weights"]; ok {
		wps, err := p.mapping(kv.v, "weights")
		if err != nil {
			return nil, err
		}
		for _, wp := range wps {
			w, err := p.weight(s.env, wp)
			if err != nil {
				return nil, err
			}
			s.Weights[w.Key] = w
			s.WeightOrder = append(s.WeightOrder, w.Key)
		}
	}
	if kv, ok := nodes["blocks"]; ok {
		bps, err := p.mapping(kv.v, "blocks")
		if err != nil {
			return nil, err
		}
		for _, bp := range bps {
			b, err := p.block(s.env, bp)
			if err != nil {
				return nil, err
			}
			s.Blocks[b.Name] = b
		}
	}
	if s.Graph, err = p.stmts(s.env, nodes["graph"].v, "graph"); err != nil {
		return nil, err
	}
	if kv, ok := nodes["encoder"]; ok {
		if s.Encoder, err = p.stmts(s.env, kv.v, "encoder"); err != nil {
			return nil, err
		}
	}
	if kv, ok := nodes["plugins"]; ok {
		if s.Plugins, err = p.plugins(kv.v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func collectLoopVars(nodes map[string]pair, names map[string]bool) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			isRepeat := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "repeat" {
					isRepeat = true
				}
			}
			if isRepeat {
				v := "i"
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == "as" {
						v = n.Content[i+1].Value
					}
				}
				names[v] = true
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, k := range []string{"graph", "blocks", "encoder"} {
		if kv, ok := nodes[k]; ok {
			walk(kv.v)
		}
	}
	names[TensorsVar] = true
	names["i"] = true
	names["e"] = true // the expert index of a stacked weight's name
}

func (p *parser) param(env *cel.Env, pp pair) (*ParamDecl, error) {
	d := &ParamDecl{Name: pp.key, Pos: p.pos(pp.kn), From: map[string]string{}}
	v := pp.v
	if v.Kind == yaml.MappingNode {
		fields, err := p.mapping(v, "params."+pp.key, "value", "optional", "gguf", "hf", "llama2c")
		if err != nil {
			return nil, err
		}
		v = nil
		for _, f := range fields {
			if f.key == "value" {
				v = f.v
				continue
			}
			if f.key == "optional" {
				if f.v.Kind != yaml.ScalarNode || (f.v.Value != "true" && f.v.Value != "false") {
					return nil, p.errf(f.v, "params.%s.optional: want true or false", pp.key)
				}
				d.Optional = f.v.Value == "true"
				continue
			}
			if f.v.Kind == yaml.SequenceNode {
				keys, err := p.strList(f.v, "params."+pp.key+"."+f.key)
				if err != nil {
					return nil, err
				}
				if len(keys) == 0 {
					return nil, p.errf(f.v, "params.%s.%s: an empty list", pp.key, f.key)
				}
				d.From[f.key] = keys[0]
				if len(keys) > 1 {
					if d.Also == nil {
						d.Also = map[string][]string{}
					}
					d.Also[f.key] = keys[1:]
				}
				continue
			}
			if d.From[f.key], err = p.str(f.v, "params."+pp.key+"."+f.key); err != nil {
				return nil, err
			}
		}
		if v == nil {
			return nil, p.errf(pp.kn, "params.%s: missing value", pp.key)
		}
	}
	if v.Kind != yaml.ScalarNode {
		return nil, p.errf(v, "params.%s: want a number, bool or CEL expression, got %s", pp.key, kindName(v))
	}
	if v.ShortTag() == "!!str" {
		e, err := compile(env, v.Value, p.pos(v), "params."+pp.key)
		if err != nil {
			return nil, err
		}
		if str, ok := quoted(v.Value); ok {
			d.Literal = str // a string constant ('linear'): typed like a literal for --set and synth
			return d, nil
		}
		d.Expr = e
		return d, nil
	}
	lit, err := literal(v)
	if err != nil {
		return nil, p.errf(v, "params.%s: %v", pp.key, err)
	}
	d.Literal = lit
	return d, nil
}

func (p *parser) weight(env *cel.Env, wp pair) (*WeightDecl, error) {
	what := "weights." + wp.key
	fields, err := p.mapping(wp.v, what, append([]string{"shape", "optional"}, Formats...)...)
	if err != nil {
		return nil, err
	}
	w := &WeightDecl{Key: wp.key, Names: map[string][]*NameRule{}, Pos: p.pos(wp.kn)}
	for _, f := range fields {
		switch f.key {
		case "shape":
			if f.v.Kind != yaml.SequenceNode {
				return nil, p.errf(f.v, "%s.shape: want a list, got %s", what, kindName(f.v))
			}
			for _, d := range f.v.Content {
				if d.Kind != yaml.ScalarNode {
					return nil, p.errf(d, "%s.shape: want a dimension, got %s", what, kindName(d))
				}
				e, err := compile(env, d.Value, p.pos(d), what+".shape")
				if err != nil {
					return nil, err
				}
				w.Shape = append(w.Shape, e)
			}
		case "optional":
			if f.v.ShortTag() != "!!bool" {
				return nil, p.errf(f.v, "%s.optional: want true or false", what)
			}
			w.Optional = f.v.Value == "true"
		default:
			rules, err := p.nameRules(env, f.v, what+"."+f.key)
			if err != nil {
				return nil, err
			}
			w.Names[f.key] = rules
		}
	}
	if w.Shape == nil {
		return nil, p.errf(wp.kn, "%s: missing shape", what)
	}
	return w, nil
}

func (p *parser) nameRules(env *cel.Env, n *yaml.Node, what string) ([]*NameRule, error) {
	switch n.Kind {
	case yaml.SequenceNode:
		var out []*NameRule
		for _, c := range n.Content {
			r, err := p.nameRules(env, c, what)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
		return out, nil
	case yaml.ScalarNode:
		s, err := p.str(n, what)
		if err != nil {
			return nil, err
		}
		t, err := compileTemplate(env, s, p.pos(n), what)
		if err != nil {
			return nil, err
		}
		return []*NameRule{{tmpl: t}}, nil
	case yaml.MappingNode:
		fields, err := p.mapping(n, what, "name", "transform", "stack")
		if err != nil {
			return nil, err
		}
		r := &NameRule{}
		for _, f := range fields {
			switch f.key {
			case "name":
				s, err := p.str(f.v, what+".name")
				if err != nil {
					return nil, err
				}
				if r.tmpl, err = compileTemplate(env, s, p.pos(f.v), what); err != nil {
					return nil, err
				}
			case "stack":
				if f.v.Kind != yaml.ScalarNode {
					return nil, p.errf(f.v, "%s.stack: want a count, got %s", what, kindName(f.v))
				}
				if r.Stack, err = compile(env, f.v.Value, p.pos(f.v), what+".stack"); err != nil {
					return nil, err
				}
			case "transform":
				srcs, err := p.strList(f.v, what+".transform")
				if err != nil {
					return nil, err
				}
				for _, src := range srcs {
					t, err := p.transform(env, src, f.v, what)
					if err != nil {
						return nil, err
					}
					r.Transforms = append(r.Transforms, t)
				}
			}
		}
		if r.tmpl == nil {
			return nil, p.errf(n, "%s: missing name", what)
		}
		return []*NameRule{r}, nil
	}
	return nil, p.errf(n, "%s: want a tensor name, got %s", what, kindName(n))
}

func (p *parser) transform(env *cel.Env, src string, n *yaml.Node, what string) (*Transform, error) {
	open := strings.IndexByte(src, '(')
	if open < 0 || !strings.HasSuffix(strings.TrimSpace(src), ")") {
		return nil, p.errf(n, "%s: transform %q: want name(args)", what, src)
	}
	t := &Transform{Op: strings.TrimSpace(src[:open]), Pos: p.pos(n)}
	arity, ok := transformArity[t.Op]
	if !ok {
		return nil, p.errf(n, "%s: unknown transform %q (known: transpose(), rope_permute(heads), rows(start, count), add_one(), flatten(), qkv_groups(groups, heads))", what, t.Op)
	}
	body := strings.TrimSpace(src[open+1 : strings.LastIndexByte(src, ')')])
	if body != "" {
		cp := &callParser{s: body}
		for cp.i < len(cp.s) {
			text, err := cp.celText()
			if err != nil {
				return nil, p.errf(n, "%s: transform %q: %v", what, src, err)
			}
			e, err := compile(env, text, p.pos(n), what+" transform")
			if err != nil {
				return nil, err
			}
			t.Args = append(t.Args, e)
			if cp.i < len(cp.s) {
				cp.i++ // ','
			}
		}
	}
	if len(t.Args) != arity {
		return nil, p.errf(n, "%s: transform %s takes %d arguments, got %d", what, t.Op, arity, len(t.Args))
	}
	return t, nil
}

func (p *parser) block(env *cel.Env, bp pair) (*Block, error) {
	what := "blocks." + bp.key
	fields, err := p.mapping(bp.v, what, "in", "out", "body", "doc")
	if err != nil {
		return nil, err
	}
	b := &Block{Name: bp.key, Pos: p.pos(bp.kn)}
	for _, f := range fields {
		switch f.key {
		case "in":
			b.In, err = p.strList(f.v, what+".in")
		case "out":
			b.Out, err = p.strList(f.v, what+".out")
		case "body":
			b.Body, err = p.stmts(env, f.v, what+".body")
		}
		if err != nil {
			return nil, err
		}
	}
	if b.Body == nil {
		return nil, p.errf(bp.kn, "%s: missing body", what)
	}
	if b.Out == nil {
		return nil, p.errf(bp.kn, "%s: missing out", what)
	}
	return b, nil
}

func (p *parser) stmts(env *cel.Env, n *yaml.Node, what string) ([]*Stmt, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s: want a list of statements, got %s", what, kindName(n))
	}
	var out []*Stmt
	for _, c := range n.Content {
		st, err := p.stmt(env, c, what)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (p *parser) stmt(env *cel.Env, n *yaml.Node, what string) (*Stmt, error) {
	fields, err := p.mapping(n, what)
	if err != nil {
		return nil, err
	}
	st := &Stmt{Pos: p.pos(n)}
	var assign *pair
	var body *yaml.Node
	for i := range fields {
		f := fields[i]
		switch f.key {
		case "when":
			s, err := p.str(f.v, "when")
			if err != nil {
				return nil, err
			}
			if st.When, err = compile(env, s, p.pos(f.v), "when"); err != nil {
				return nil, err
			}
		case "repeat":
			if f.v.Kind != yaml.ScalarNode {
				return nil, p.errf(f.v, "repeat: want a count, got %s", kindName(f.v))
			}
			if st.Repeat, err = compile(env, f.v.Value, p.pos(f.v), "repeat"); err != nil {
				return nil, err
			}
		case "as":
			if st.Var, err = p.str(f.v, "as"); err != nil {
				return nil, err
			}
		case "body":
			body = f.v
		default:
			if assign != nil {
				return nil, p.errf(f.kn, "%s: one assignment per statement (found %q and %q)", what, assign.key, f.key)
			}
			assign = &fields[i]
		}
	}
	switch {
	case st.Repeat != nil || body != nil:
		if assign != nil {
			return nil, p.errf(assign.kn, "%s: a repeat or when-group cannot also assign %q", what, assign.key)
		}
		if body == nil {
			return nil, p.errf(n, "%s: repeat needs a body", what)
		}
		if st.Repeat == nil && st.When == nil {
			return nil, p.errf(n, "%s: body needs repeat or when", what)
		}
		if st.Repeat != nil && st.Var == "" {
			st.Var = "i"
		}
		if st.Body, err = p.stmts(env, body, what); err != nil {
			return nil, err
		}
	case assign != nil:
		for _, o := range strings.Split(assign.key, ",") {
			st.Outs = append(st.Outs, strings.TrimSpace(o))
		}
		src, err := p.str(assign.v, assign.key)
		if err != nil {
			return nil, err
		}
		c, err := parseCall(src)
		if err != nil {
			col := 0
			var ce *colError
			if errors.As(err, &ce) {
				col = ce.col
			}
			return nil, &Error{Pos: p.colPos(assign.v, col), Msg: fmt.Sprintf("%s: %v in %q", assign.key, err, src)}
		}
		p.place(c, assign.v)
		if err := p.compileAttrs(env, c, assign.v); err != nil {
			return nil, err
		}
		st.Call = c
		st.Pos = p.pos(assign.kn)
	default:
		return nil, p.errf(n, "%s: empty statement", what)
	}
	return st, nil
}

// colPos offsets a scalar's position by col characters of its value. The
// offset is used only where the file's text matches the value up to col
// (a one-line plain or quoted scalar without escapes); otherwise the
// scalar's own position is returned.
func (p *parser) colPos(n *yaml.Node, col int) graph.Pos {
	pos := p.pos(n)
	start := n.Column - 1
	if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		start++
	}
	if col <= 0 || col > len(n.Value) || n.Line < 1 || n.Line > len(p.lines) {
		return pos
	}
	line := p.lines[n.Line-1]
	if start < 0 || start > len(line) || !strings.HasPrefix(line[start:], n.Value[:col]) {
		return pos
	}
	pos.Col = start + col + 1
	return pos
}

// place records the file position of a parsed call, its arguments and
// attributes, so that build errors point at the op, not the statement.
func (p *parser) place(c *call, n *yaml.Node) {
	c.pos = p.colPos(n, c.Col)
	for i := range c.Args {
		a := &c.Args[i]
		a.pos = p.colPos(n, a.Col)
		if a.Call != nil {
			p.place(a.Call, n)
		}
	}
	for i := range c.Attrs {
		c.Attrs[i].pos = p.colPos(n, c.Attrs[i].KeyCol)
	}
}

func (p *parser) compileAttrs(env *cel.Env, c *call, n *yaml.Node) error {
	for i := range c.Attrs {
		a := &c.Attrs[i]
		e, err := compile(env, a.Src, p.colPos(n, a.Col), "attribute "+a.Key)
		if err != nil {
			// A bare word may be an enum literal, checked when the graph is built.
			if isIdent(strings.TrimSpace(a.Src)) {
				continue
			}
			return err
		}
		a.prog = e
	}
	for i := range c.Args {
		if c.Args[i].Call != nil {
			if err := p.compileAttrs(env, c.Args[i].Call, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (p *parser) plugins(n *yaml.Node) ([]*PluginDecl, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "plugins: want a list, got %s", kindName(n))
	}
	var out []*PluginDecl
	for _, c := range n.Content {
		fields, err := p.mapping(c, "plugins", "name", "path", "sha256")
		if err != nil {
			return nil, err
		}
		d := &PluginDecl{Pos: p.pos(c)}
		for _, f := range fields {
			v, err := p.str(f.v, "plugins."+f.key)
			if err != nil {
				return nil, err
			}
			switch f.key {
			case "name":
				d.Name = v
			case "path":
				d.Path = v
			case "sha256":
				d.SHA256 = strings.ToLower(v)
			}
		}
		if d.Name == "" {
			return nil, p.errf(c, "plugins: entry without a name")
		}
		out = append(out, d)
	}
	return out, nil
}

// quoted returns the text of a CEL string constant written in single or
// double quotes with no escapes or inner quotes ('linear').
func quoted(src string) (string, bool) {
	src = strings.TrimSpace(src)
	if len(src) < 2 || (src[0] != '\'' && src[0] != '"') || src[len(src)-1] != src[0] {
		return "", false
	}
	in := src[1 : len(src)-1]
	if strings.ContainsAny(in, "'\"\\") {
		return "", false
	}
	return in, true
}
