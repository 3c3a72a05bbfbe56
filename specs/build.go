package specs

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/cel-go/interpreter"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// TensorSource supplies checkpoint tensors by name.
type TensorSource interface {
	Tensor(name string) (*tensor.Tensor, error)
	Has(name string) bool
}

// BuildOptions configures Build.
type BuildOptions struct {
	Registry *ops.Registry
	Params   Params
	// Format picks the weights' naming scheme (gguf, hf, llama2c).
	Format string
	// Source binds weights to checkpoint tensors; nil builds an unbound
	// graph (shapes from the spec, f32) for synthesis and shape checks.
	Source TensorSource
	// Outputs picks which of the spec's outputs the graph returns, in
	// this order (nil: the first, the one the engine samples from). The
	// ops only an unpicked output reads are left out, so a decoder's
	// graph built for logits does not compute its `hidden` output, nor
	// one built for `hidden` its LM head.
	Outputs []string
	// Encoder builds the spec's encoder (its encoder: graph, whose output
	// is the value `memory`) instead of its graph.
	Encoder bool
}

// TensorsVar is the CEL variable holding the names of the checkpoint's
// tensors (a list; empty for an unbound build), so that a spec can follow
// the tensors a checkpoint has, as llama.cpp does (e.g. T5's gated FFN
// when ffn_gate is present): `when: '"enc.blk.0.ffn_gate.weight" in tensors'`.
const TensorsVar = "tensors"

// EncoderOutput is the name of the value an encoder graph outputs.
const EncoderOutput = "memory"

// tensorLister is a TensorSource that can list its tensors' names.
type tensorLister interface {
	Names() []string
}

type builder struct {
	s       *Spec
	opt     BuildOptions
	g       *graph.Graph
	weights map[string]*graph.Value
	inputs  map[string]*graph.Value
	active  map[string]bool // blocks being expanded, to catch recursion
}

// MaxNodes bounds the size of a built graph, so that a runaway repeat is
// an error rather than an exhausted machine.
const MaxNodes = 1 << 18

type env struct {
	vals  map[string]*graph.Value
	vars  map[string]any // loop variables
	layer int
	block string
}

func (e *env) child() *env {
	vars := make(map[string]any, len(e.vars))
	for k, v := range e.vars {
		vars[k] = v
	}
	return &env{vals: e.vals, vars: vars, layer: e.layer, block: e.block}
}

// Build compiles the spec into a typed, shape-checked graph.
func (s *Spec) Build(opt BuildOptions) (*graph.Graph, error) {
	if opt.Registry == nil {
		return nil, fmt.Errorf("%s: build: no op registry", s.File)
	}
	if opt.Format == "" {
		opt.Format = "gguf"
	}
	if err := s.Check(opt.Registry); err != nil {
		return nil, err
	}
	b := &builder{s: s, opt: opt, g: graph.New(s.Name), weights: map[string]*graph.Value{}, inputs: map[string]*graph.Value{}, active: map[string]bool{}}
	for _, in := range s.Inputs {
		si, ok := ops.LookupStepInput(in)
		if !ok {
			return nil, fmt.Errorf("%s: unknown step input %q (known: %s)", s.File, in, strings.Join(ops.StepInputNames(), ", "))
		}
		b.inputs[in] = b.g.AddInput(in, si.Type)
	}
	top := &env{vals: map[string]*graph.Value{}, vars: map[string]any{}, layer: -1}
	if _, isParam := opt.Params[TensorsVar]; !isParam {
		names := []string{}
		if l, ok := opt.Source.(tensorLister); ok {
			names = l.Names()
		}
		top.vars[TensorsVar] = names
	}
	stmts, outputs := s.Graph, s.Outputs
	if opt.Encoder {
		if s.Encoder == nil {
			return nil, fmt.Errorf("%s: build: the spec has no encoder", s.File)
		}
		stmts, outputs = s.Encoder, []string{EncoderOutput}
		b.g.Name = s.Name + ".encoder"
	}
	if err := b.stmts(stmts, top); err != nil {
		return nil, err
	}
	for _, o := range outputs {
		v, ok := top.vals[o]
		if !ok && opt.Encoder {
			return nil, fmt.Errorf("%s: the encoder never assigns %q, its output", s.File, o)
		}
		if !ok {
			if s.outPos.File != "" {
				msg := fmt.Sprintf("output %q is never assigned", o)
				if s.defaultOut {
					msg += " (the default output; name others with outputs:)"
				}
				return nil, &Error{Pos: s.outPos, Msg: msg}
			}
			return nil, fmt.Errorf("%s: output %q is never assigned", s.File, o)
		}
		b.g.Outputs = append(b.g.Outputs, v)
	}
	if !opt.Encoder {
		picked := opt.Outputs
		if picked == nil && len(s.Outputs) > 0 {
			picked = s.Outputs[:1]
		}
		if err := b.pick(picked); err != nil {
			return nil, err
		}
	}
	if err := b.g.Validate(); err != nil {
		return nil, err
	}
	return b.g, nil
}

// Check verifies that every op a statement names exists (as a built-in,
// a plugin op in reg, a block, or a structure choice naming one).
func (s *Spec) Check(reg *ops.Registry) error {
	var walk func(stmts []*Stmt) error
	var checkCall func(c *call, pos graph.Pos) error
	checkCall = func(c *call, pos graph.Pos) error {
		pos = c.at(pos)
		name := c.Op
		if strings.HasPrefix(name, "$") {
			v, ok := s.choice(name[1:])
			if !ok {
				return &Error{Pos: pos, Msg: fmt.Sprintf("%s: no structure choice %q", name, name[1:])}
			}
			sv, ok := v.(string)
			if !ok {
				return &Error{Pos: pos, Msg: fmt.Sprintf("%s: structure choice is %v, not an op name", name, v)}
			}
			name = sv
		}
		if _, ok := s.Blocks[name]; !ok {
			if _, ok := reg.Lookup(name); !ok {
				return &Error{Pos: pos, Msg: fmt.Sprintf("unknown op %q", name)}
			}
		}
		for _, a := range c.Args {
			if a.Call != nil {
				if err := checkCall(a.Call, pos); err != nil {
					return err
				}
			}
		}
		return nil
	}
	walk = func(stmts []*Stmt) error {
		for _, st := range stmts {
			if st.Call != nil {
				if err := checkCall(st.Call, st.Pos); err != nil {
					return err
				}
			}
			if err := walk(st.Body); err != nil {
				return err
			}
		}
		return nil
	}
	for _, b := range s.Blocks {
		if _, ok := reg.Lookup(b.Name); ok {
			return &Error{Pos: b.Pos, Msg: fmt.Sprintf("block %q has the name of an op; rename it", b.Name)}
		}
	}
	if err := walk(s.Graph); err != nil {
		return err
	}
	if err := walk(s.Encoder); err != nil {
		return err
	}
	for _, b := range s.Blocks {
		if err := walk(b.Body); err != nil {
			return err
		}
	}
	return nil
}

// at returns the call's own position, or def when it has none.
func (c *call) at(def graph.Pos) graph.Pos {
	if c.pos.File != "" {
		return c.pos
	}
	return def
}

// linePos drops the column: checkpoint binding errors concern a whole
// weight declaration.
func linePos(p graph.Pos) graph.Pos {
	p.Col = 0
	return p
}

func (s *Spec) choice(name string) (any, bool) {
	for _, c := range s.Structure {
		if c.Name == name {
			return c.Value, true
		}
	}
	return nil, false
}

func (b *builder) act(e *env) interpreter.Activation {
	return &scope{vars: e.vars, lazy: func(n string) (any, bool) { v, ok := b.opt.Params[n]; return v, ok }}
}

func (b *builder) evalBool(x *celExpr, e *env, what string) (bool, error) {
	v, err := x.eval(b.act(e))
	if err != nil {
		return false, &Error{Pos: x.Pos, Msg: fmt.Sprintf("%s %s: %v", what, x.Src, err)}
	}
	bv, ok := v.(bool)
	if !ok {
		return false, &Error{Pos: x.Pos, Msg: fmt.Sprintf("%s %s: gives %v, want true or false", what, x.Src, v)}
	}
	return bv, nil
}

func (b *builder) evalInt(x *celExpr, e *env, what string) (int, error) {
	v, err := x.eval(b.act(e))
	if err != nil {
		return 0, &Error{Pos: x.Pos, Msg: fmt.Sprintf("%s %s: %v", what, x.Src, err)}
	}
	switch n := v.(type) {
	case int64:
		return int(n), nil
	case float64:
		if n == float64(int64(n)) {
			return int(n), nil
		}
	}
	return 0, &Error{Pos: x.Pos, Msg: fmt.Sprintf("%s %s: gives %v, want an integer", what, x.Src, v)}
}

func (b *builder) stmts(stmts []*Stmt, e *env) error {
	for _, st := range stmts {
		if st.When != nil {
			ok, err := b.evalBool(st.When, e, "when")
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		switch {
		case st.Repeat != nil:
			n, err := b.evalInt(st.Repeat, e, "repeat")
			if err != nil {
				return err
			}
			if n < 0 || n > 1<<16 {
				return &Error{Pos: st.Repeat.Pos, Msg: fmt.Sprintf("repeat %s: count %d out of range", st.Repeat.Src, n)}
			}
			for i := 0; i < n; i++ {
				inner := e.child()
				inner.vars[st.Var] = int64(i)
				inner.layer = i
				if err := b.stmts(st.Body, inner); err != nil {
					return err
				}
			}
		case st.Body != nil:
			if err := b.stmts(st.Body, e); err != nil {
				return err
			}
		default:
			outs, err := b.call(st.Call, st, e, st.Outs)
			if err != nil {
				return err
			}
			if len(outs) < len(st.Outs) {
				return &Error{Pos: st.Pos, Msg: fmt.Sprintf("%s gives %d outputs, %d names assigned", st.Call.Op, len(outs), len(st.Outs))}
			}
			for i, name := range st.Outs {
				if name != "_" {
					e.vals[name] = outs[i]
				}
			}
		}
	}
	return nil
}

// call applies an op or a block and returns its outputs.
func (b *builder) call(c *call, st *Stmt, e *env, names []string) ([]*graph.Value, error) {
	pos := c.at(st.Pos)
	opName := c.Op
	if strings.HasPrefix(opName, "$") {
		v, _ := b.opt.Params[opName[1:]]
		s, ok := v.(string)
		if !ok {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: structure choice is %v, not an op name", opName, v)}
		}
		opName = s
	}
	args := make([]*graph.Value, len(c.Args))
	for i, a := range c.Args {
		if a.Call != nil {
			outs, err := b.call(a.Call, st, e, nil)
			if err != nil {
				return nil, err
			}
			if len(outs) != 1 {
				return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: nested %s gives %d outputs, want 1", opName, a.Call.Op, len(outs))}
			}
			args[i] = outs[0]
			continue
		}
		apos := pos
		if a.pos.File != "" {
			apos = a.pos
		}
		v, err := b.lookup(a.Name, e, apos)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	if blk, ok := b.s.Blocks[opName]; ok {
		if len(c.Attrs) > 0 {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("block %s takes no attributes", opName)}
		}
		if len(args) != len(blk.In) {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("block %s takes %d inputs (%s), got %d", opName, len(blk.In), strings.Join(blk.In, ", "), len(args))}
		}
		if b.active[opName] {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("block %s calls itself", opName)}
		}
		b.active[opName] = true
		inner := &env{vals: map[string]*graph.Value{}, vars: e.vars, layer: e.layer, block: opName}
		for i, n := range blk.In {
			inner.vals[n] = args[i]
		}
		err := b.stmts(blk.Body, inner)
		delete(b.active, opName)
		if err != nil {
			return nil, err
		}
		outs := make([]*graph.Value, len(blk.Out))
		for i, n := range blk.Out {
			v, ok := inner.vals[n]
			if !ok {
				return nil, &Error{Pos: blk.Pos, Msg: fmt.Sprintf("block %s: output %q is never assigned", opName, n)}
			}
			outs[i] = v
		}
		return outs, nil
	}
	def, ok := b.opt.Registry.Lookup(opName)
	if !ok {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("unknown op %q", opName)}
	}
	variadic := len(def.Inputs) > 0 && def.Inputs[len(def.Inputs)-1].Variadic
	if len(args) > len(def.Inputs) && !variadic {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s takes at most %d inputs, got %d", opName, len(def.Inputs), len(args))}
	}
	for i := len(args); i < len(def.Inputs); i++ {
		if !def.Inputs[i].Optional {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: missing input %s", opName, def.Inputs[i].Name)}
		}
		args = append(args, nil)
	}
	attrs, err := b.attrs(def, c, e, pos)
	if err != nil {
		return nil, err
	}
	if len(b.g.Nodes) >= MaxNodes {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("the graph grows past %d nodes (a runaway repeat?)", MaxNodes)}
	}
	n, err := b.g.Apply(def, args, attrs, names, pos)
	if err != nil {
		what := opName
		if len(names) > 0 {
			what = names[0] + ": " + opName
		}
		if e.layer >= 0 {
			what += fmt.Sprintf(" (layer %d)", e.layer)
		}
		return nil, &Error{Pos: pos, Msg: what + ": " + err.Error()}
	}
	n.Layer = e.layer
	n.Block = e.block
	return n.Outputs, nil
}

func (b *builder) attrs(def *ops.Def, c *call, e *env, pos graph.Pos) (ops.Attrs, error) {
	out := ops.Attrs{}
	for _, a := range c.Attrs {
		apos := pos
		if a.pos.File != "" {
			apos = a.pos
		}
		ad, ok := def.Attr(a.Key)
		if !ok {
			var known []string
			for _, d := range def.Attrs {
				known = append(known, d.Name)
			}
			return nil, &Error{Pos: apos, Msg: fmt.Sprintf("%s: unknown attribute %q (known: %s)", def.Name, a.Key, strings.Join(known, ", "))}
		}
		var raw any
		if a.prog != nil {
			v, err := a.prog.eval(b.act(e))
			if err != nil {
				return nil, &Error{Pos: a.prog.Pos, Msg: fmt.Sprintf("%s: attribute %s = %s: %v", def.Name, a.Key, a.Src, err)}
			}
			raw = v
		} else {
			word := strings.TrimSpace(a.Src)
			if ad.Type != ops.AttrAny && (ad.Type != ops.AttrString || !contains(ad.Enum, word)) {
				return nil, &Error{Pos: apos, Msg: fmt.Sprintf("%s: attribute %s = %s: unknown name %q", def.Name, a.Key, a.Src, word)}
			}
			raw = word
		}
		v, err := ops.Coerce(ad, raw)
		if err != nil {
			return nil, &Error{Pos: apos, Msg: fmt.Sprintf("%s: %v", def.Name, err)}
		}
		out[a.Key] = v
	}
	for _, ad := range def.Attrs {
		if _, ok := out[ad.Name]; ok {
			continue
		}
		if ad.Required {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: missing attribute %s", def.Name, ad.Name)}
		}
		if ad.Default != nil {
			v, err := ops.Coerce(ad, ad.Default)
			if err != nil {
				return nil, fmt.Errorf("op %s: default of %s: %w", def.Name, ad.Name, err)
			}
			out[ad.Name] = v
		}
	}
	return out, nil
}

// lookup resolves a name: a value in scope, a graph input or a weight.
func (b *builder) lookup(name string, e *env, pos graph.Pos) (*graph.Value, error) {
	if name == "_" {
		return nil, nil
	}
	if v, ok := e.vals[name]; ok {
		return v, nil
	}
	if v, ok := b.inputs[name]; ok {
		return v, nil
	}
	if w, ok := b.s.Weights[name]; ok {
		return b.weight(w, e)
	}
	if si, ok := ops.LookupStepInput(name); ok {
		v := b.g.AddInput(name, si.Type)
		b.inputs[name] = v
		return v, nil
	}
	return nil, &Error{Pos: pos, Msg: fmt.Sprintf("unknown value or weight %q", name)}
}

// weight binds a weight declaration (in the current loop scope) to a
// graph parameter, checking the checkpoint tensor against the spec. Two
// uses that resolve to the same tensor, transforms and shape share one
// parameter (a weight referenced twice, or one shared by every layer).
func (b *builder) weight(w *WeightDecl, e *env) (*graph.Value, error) {
	act := b.act(e)
	shape := make([]int, len(w.Shape))
	for i, d := range w.Shape {
		n, err := b.evalInt(d, e, "weights."+w.Key+".shape")
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, &Error{Pos: d.Pos, Msg: fmt.Sprintf("weights.%s: dimension %s = %d", w.Key, d.Src, n)}
		}
		shape[i] = n
	}
	what := w.Key
	if e.layer >= 0 {
		what += fmt.Sprintf(" for layer %d", e.layer)
	}
	rules := w.Names[b.opt.Format]
	if len(rules) == 0 {
		return nil, &Error{Pos: linePos(w.Pos), Msg: fmt.Sprintf("%s: no tensor name for %s checkpoints", what, b.opt.Format)}
	}
	// A stacked rule is known by its first piece's name (e = 0).
	first := e.child()
	first.vars["e"] = int64(0)
	names := make([]string, len(rules))
	for i, r := range rules {
		a := act
		if r.Stack != nil {
			a = b.act(first)
		}
		n, err := r.tmpl.eval(a)
		if err != nil {
			return nil, &Error{Pos: w.Pos, Msg: fmt.Sprintf("%s: %v", what, err)}
		}
		names[i] = n
	}
	chosen := 0
	if b.opt.Source != nil {
		chosen = -1
		for i, n := range names {
			if b.opt.Source.Has(n) {
				chosen = i
				break
			}
		}
		if chosen < 0 {
			if w.Optional {
				return nil, nil
			}
			return nil, &Error{Pos: linePos(w.Pos), Msg: fmt.Sprintf("%s: checkpoint has no tensor %s", what, strings.Join(names, " or "))}
		}
	}
	rule := rules[chosen]
	targs := make([][]int, len(rule.Transforms))
	key := names[chosen]
	for i, tr := range rule.Transforms {
		for _, a := range tr.Args {
			n, err := b.evalInt(a, e, what+": "+tr.Op)
			if err != nil {
				return nil, err
			}
			targs[i] = append(targs[i], n)
		}
		key += fmt.Sprintf("|%s%v", tr.Op, targs[i])
	}
	stack := 0
	if rule.Stack != nil {
		n, err := b.evalInt(rule.Stack, e, what+": stack")
		if err != nil {
			return nil, err
		}
		if n < 1 || n > 1<<16 {
			return nil, &Error{Pos: rule.Stack.Pos, Msg: fmt.Sprintf("%s: stack %s = %d, want 1 to 65536", what, rule.Stack.Src, n)}
		}
		stack = n
		key += fmt.Sprintf("|stack%d", n)
	}
	key += fmt.Sprint("|", shape)
	if v, ok := b.weights[key]; ok {
		return v, nil
	}
	param := &graph.Param{Key: w.Key, Layer: e.layer, Vars: e.vars, Pos: w.Pos, Source: names[chosen]}
	var t *tensor.Tensor
	if b.opt.Source != nil {
		load := func(name string) (*tensor.Tensor, error) {
			t, err := b.opt.Source.Tensor(name)
			if err != nil {
				return nil, &Error{Pos: linePos(w.Pos), Msg: fmt.Sprintf("%s: %v", what, err)}
			}
			for i, tr := range rule.Transforms {
				if t, err = applyTransform(tr.Op, targs[i], t); err != nil {
					return nil, &Error{Pos: tr.Pos, Msg: fmt.Sprintf("%s: %s: %v", what, tr.Op, err)}
				}
			}
			return t, nil
		}
		if stack == 0 {
			var err error
			if t, err = load(names[chosen]); err != nil {
				return nil, err
			}
		} else {
			pieces := make([]*tensor.Tensor, stack)
			for k := range pieces {
				ek := e.child()
				ek.vars["e"] = int64(k)
				name, err := rule.tmpl.eval(b.act(ek))
				if err != nil {
					return nil, &Error{Pos: w.Pos, Msg: fmt.Sprintf("%s: %v", what, err)}
				}
				if !b.opt.Source.Has(name) {
					return nil, &Error{Pos: linePos(w.Pos), Msg: fmt.Sprintf("%s: checkpoint has no tensor %s (piece %d of %d)", what, name, k, stack)}
				}
				if pieces[k], err = load(name); err != nil {
					return nil, err
				}
			}
			var err error
			if t, err = Stack(names[chosen], pieces); err != nil {
				return nil, &Error{Pos: rule.Stack.Pos, Msg: fmt.Sprintf("%s: stack: %v", what, err)}
			}
		}
		if !sameDims(t.Shape, shape) {
			return nil, &Error{Pos: linePos(w.Pos), Msg: fmt.Sprintf("%s: checkpoint tensor %s is %v, spec expects %v", what, names[chosen], t.Shape, shape)}
		}
		param.Tensor = t
	}
	dt := tensor.F32
	if t != nil {
		dt = t.DType
	}
	v := b.g.AddParam(w.Key, ops.Type{DType: dt, Shape: ops.ConstShape(shape...)}, param)
	if e.layer >= 0 {
		v.Name = fmt.Sprintf("%s.%d", w.Key, e.layer)
	}
	b.weights[key] = v
	return v, nil
}

// TensorNames returns the candidate checkpoint names of weight key in the
// given naming scheme, evaluated under loop variables vars (see
// graph.Param.Vars): how `weft convert` renames tensors between formats.
func (s *Spec) TensorNames(key string, vars map[string]any, format string, params Params) ([]string, error) {
	w, ok := s.Weights[key]
	if !ok {
		return nil, fmt.Errorf("%s: no weight %q", s.File, key)
	}
	rules := w.Names[format]
	if len(rules) == 0 {
		return nil, &Error{Pos: w.Pos, Msg: fmt.Sprintf("%s: no tensor name for %s checkpoints", key, format)}
	}
	act := &scope{vars: vars, lazy: func(n string) (any, bool) { v, ok := params[n]; return v, ok }}
	out := make([]string, len(rules))
	for i, r := range rules {
		n, err := r.tmpl.eval(act)
		if err != nil {
			return nil, &Error{Pos: w.Pos, Msg: fmt.Sprintf("%s: %v", key, err)}
		}
		out[i] = n
	}
	return out, nil
}

// MetaKeys returns, for each param with a GGUF metadata key under arch,
// the key and the param's value typed as GGUF expects (uint32 for
// integers, float32 for floats). Keys outside the architecture's namespace
// (such as the tokenizer's) are left out, and so are optional params at
// their default.
func (s *Spec) MetaKeys(arch string, params Params) []MetaKV {
	var out []MetaKV
	for _, d := range s.Params {
		key, ok := d.From["gguf"]
		if !ok || !strings.HasPrefix(key, ".") {
			continue
		}
		if d.Optional && d.Literal != nil && params[d.Name] == d.Literal {
			continue // llama.cpp assumes the default when the key is absent
		}
		var v any
		_, isFloat := d.Literal.(float64)
		switch x := params[d.Name].(type) {
		case int64:
			if isFloat {
				v = float32(x)
			} else {
				v = uint32(x)
			}
		case float64:
			v = float32(x)
		case bool, string:
			v = x
		default:
			continue
		}
		out = append(out, MetaKV{Key: arch + key, Value: v})
	}
	return out
}

// MetaKV is one metadata entry.
type MetaKV struct {
	Key   string
	Value any
}

func sameDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func applyTransform(op string, args []int, t *tensor.Tensor) (*tensor.Tensor, error) {
	switch op {
	case "transpose":
		return Transpose(t)
	case "rope_permute":
		return RoPEPermute(t, args[0])
	case "rows":
		return Rows(t, args[0], args[1])
	case "add_one":
		return AddOne(t)
	case "flatten":
		return Flatten(t)
	case "qkv_groups":
		return QKVGroups(t, args[0], args[1])
	}
	return nil, fmt.Errorf("unknown transform")
}

// OpUse describes how a spec calls an op that is neither a block nor in
// a registry: the most inputs and outputs any call gives it, and the
// attributes calls set. Commands that draw a graph without starting the
// spec's plugins (weft graph) stand placeholders in for these ops.
type OpUse struct {
	Name    string
	Inputs  int
	Outputs int
	Attrs   []string // sorted
	Pos     graph.Pos
}

// UnknownOps lists, sorted by name, the ops the spec's statements call
// that are neither blocks nor in reg (structure choices resolved).
func (s *Spec) UnknownOps(reg *ops.Registry) []OpUse {
	uses := map[string]*OpUse{}
	attrs := map[string]map[string]bool{}
	var walkCall func(c *call, pos graph.Pos, outs int)
	walkCall = func(c *call, pos graph.Pos, outs int) {
		pos = c.at(pos)
		name := c.Op
		if strings.HasPrefix(name, "$") {
			if v, ok := s.choice(name[1:]); ok {
				name, _ = v.(string)
			}
		}
		_, isBlock := s.Blocks[name]
		_, isOp := reg.Lookup(name)
		if name != "" && !isBlock && !isOp {
			u := uses[name]
			if u == nil {
				u = &OpUse{Name: name, Pos: pos}
				uses[name] = u
				attrs[name] = map[string]bool{}
			}
			u.Inputs = max(u.Inputs, len(c.Args))
			u.Outputs = max(u.Outputs, outs, 1)
			for _, a := range c.Attrs {
				attrs[name][a.Key] = true
			}
		}
		for _, a := range c.Args {
			if a.Call != nil {
				walkCall(a.Call, pos, 1)
			}
		}
	}
	var walk func(stmts []*Stmt)
	walk = func(stmts []*Stmt) {
		for _, st := range stmts {
			if st.Call != nil {
				walkCall(st.Call, st.Pos, len(st.Outs))
			}
			walk(st.Body)
		}
	}
	walk(s.Graph)
	names := make([]string, 0, len(s.Blocks))
	for n := range s.Blocks {
		names = append(names, n)
	}
	sort.Strings(names) // a deterministic first position
	for _, n := range names {
		walk(s.Blocks[n].Body)
	}
	out := make([]OpUse, 0, len(uses))
	for _, u := range uses {
		for a := range attrs[u.Name] {
			u.Attrs = append(u.Attrs, a)
		}
		sort.Strings(u.Attrs)
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// pick keeps only the named graph outputs and drops the nodes that no
// kept output needs (stateful nodes, which write the KV cache, stay).
func (b *builder) pick(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("%s: build: no output picked (the spec has %s)", b.s.File, strings.Join(b.s.Outputs, ", "))
	}
	var outs []*graph.Value
	for _, n := range names {
		i := slices.Index(b.s.Outputs, n)
		if i < 0 {
			return fmt.Errorf("%s: no output %q (the spec has %s)", b.s.File, n, strings.Join(b.s.Outputs, ", "))
		}
		outs = append(outs, b.g.Outputs[i])
	}
	b.g.Outputs = outs
	live := map[int]bool{}
	for _, v := range outs {
		live[v.ID] = true
	}
	keep := make([]bool, len(b.g.Nodes))
	for i := len(b.g.Nodes) - 1; i >= 0; i-- {
		n := b.g.Nodes[i]
		k := n.Op.Stateful
		for _, o := range n.Outputs {
			k = k || live[o.ID]
		}
		if !k {
			continue
		}
		keep[i] = true
		for _, in := range n.Inputs {
			if in != nil {
				live[in.ID] = true
			}
		}
	}
	nodes := b.g.Nodes[:0]
	for i, n := range b.g.Nodes {
		if keep[i] {
			nodes = append(nodes, n)
		}
	}
	b.g.Nodes = nodes
	// Weights only the dropped nodes read are not the graph's any more.
	vals := b.g.Values[:0]
	for _, v := range b.g.Values {
		if v.Param == nil || live[v.ID] {
			vals = append(vals, v)
		}
	}
	b.g.Values = vals
	return nil
}
