// Package graph is weft's intermediate representation: a typed DAG of op
// applications over values whose shapes may carry symbolic dimensions
// (T, the tokens of a step). It is built from a spec, validated,
// shape-inferred, rewritten by passes (fusion, pruning) and exported for
// visualisation.
package graph

import (
	"fmt"
	"strings"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// Pos locates a construct in a spec file.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.File == "" {
		return "?"
	}
	if p.Col > 0 {
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Value is an edge of the graph: a graph input, a parameter or an op output.
type Value struct {
	ID       int
	Name     string
	Type     ops.Type
	Producer *Node  // nil for inputs and parameters
	Param    *Param // non-nil for parameters
	Input    bool   // a graph input (tokens, pos)
}

// Param is a graph parameter bound to a checkpoint tensor.
type Param struct {
	Key    string         // the spec's weight key, e.g. "wq"
	Layer  int            // layer index (-1 outside repeat)
	Vars   map[string]any // the loop variables it was bound under
	Source string         // the checkpoint tensor name it was bound to
	Tensor *tensor.Tensor
	Pos    Pos
}

// Node is one op application.
type Node struct {
	ID      int
	Op      *ops.Def
	Name    string   // the spec name of its (first) output
	Inputs  []*Value // nil entries for absent optional inputs
	Outputs []*Value
	Attrs   ops.Attrs
	Pos     Pos
	Layer   int    // layer index (-1 outside repeat)
	Block   string // the spec block it came from ("" at top level)
	// Fused lists the ops a fusion pass folded into this node.
	Fused []string
	// Device is where the scheduler placed the node ("cpu:1"; devices
	// joined by & for a collective); "" before placement.
	Device string
}

// Label is a short description: op name, plus plugin (with " (not
// started)" for a placeholder).
func (n *Node) Label() string {
	if n.NotStarted() {
		return n.Op.Name + " [" + n.Op.Plugin + ", not started]"
	}
	if n.Op.Plugin != "" {
		return n.Op.Name + " [" + n.Op.Plugin + "]"
	}
	return n.Op.Name
}

// NotStarted reports whether n applies a placeholder for an op of a plugin
// that was not started (a plugin op without a Host function: weft graph
// draws a spec's plugin ops without running them). Its output types are
// assumed, not inferred by the plugin.
func (n *Node) NotStarted() bool { return n.Op.Plugin != "" && n.Op.Host == nil }

// Graph is a model's computation for one scheduler step.
type Graph struct {
	Name    string
	Values  []*Value
	Nodes   []*Node // in a topological order
	Inputs  []*Value
	Outputs []*Value
	nextID  int
}

// New returns an empty graph.
func New(name string) *Graph { return &Graph{Name: name} }

// NewValue adds a value.
func (g *Graph) NewValue(name string, t ops.Type) *Value {
	v := &Value{ID: g.nextID, Name: name, Type: t}
	g.nextID++
	g.Values = append(g.Values, v)
	return v
}

// AddInput adds a graph input.
func (g *Graph) AddInput(name string, t ops.Type) *Value {
	v := g.NewValue(name, t)
	v.Input = true
	g.Inputs = append(g.Inputs, v)
	return v
}

// Input returns the named graph input.
func (g *Graph) Input(name string) *Value {
	for _, v := range g.Inputs {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// AddParam adds a parameter value.
func (g *Graph) AddParam(name string, t ops.Type, p *Param) *Value {
	v := g.NewValue(name, t)
	v.Param = p
	return v
}

// Apply adds a node applying op to inputs, infers its output types and
// returns the node. outNames names the outputs (may be shorter than the
// op's outputs; missing names are derived).
func (g *Graph) Apply(op *ops.Def, inputs []*Value, attrs ops.Attrs, outNames []string, pos Pos) (*Node, error) {
	in := make([]*ops.Type, len(inputs))
	for i, v := range inputs {
		if v != nil {
			t := v.Type
			in[i] = &t
		}
	}
	outs, err := op.Shape(in, attrs)
	if err != nil {
		return nil, err
	}
	n := &Node{ID: g.nextID, Op: op, Inputs: inputs, Attrs: attrs, Pos: pos, Layer: -1}
	g.nextID++
	for i, t := range outs {
		name := ""
		if i < len(outNames) {
			name = outNames[i]
		}
		if name == "" {
			name = fmt.Sprintf("%s_%d", op.Name, n.ID)
			if i > 0 {
				name += fmt.Sprintf(".%d", i)
			}
		}
		v := g.NewValue(name, t)
		v.Producer = n
		n.Outputs = append(n.Outputs, v)
	}
	if len(n.Outputs) > 0 {
		n.Name = n.Outputs[0].Name
	}
	g.Nodes = append(g.Nodes, n)
	return n, nil
}

// Params returns the parameter values in first-use order.
func (g *Graph) Params() []*Value {
	var out []*Value
	for _, v := range g.Values {
		if v.Param != nil {
			out = append(out, v)
		}
	}
	return out
}

// Users returns, for each value ID, the nodes that read it.
func (g *Graph) Users() map[int][]*Node {
	u := map[int][]*Node{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil {
				u[v.ID] = append(u[v.ID], n)
			}
		}
	}
	return u
}

// Validate checks that the graph is a DAG in topological order, that every
// node's inputs are defined before use, and that shapes are consistent
// with each op's shape function.
func (g *Graph) Validate() error {
	defined := map[int]bool{}
	for _, v := range g.Values {
		if v.Input || v.Param != nil {
			defined[v.ID] = true
		}
	}
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if v == nil {
				if i < len(n.Op.Inputs) && !n.Op.Inputs[i].Optional {
					return fmt.Errorf("%s: %s %q: missing input %s", n.Pos, n.Op.Name, n.Name, n.Op.Inputs[i].Name)
				}
				continue
			}
			if !defined[v.ID] {
				return fmt.Errorf("%s: %s %q: input %q is used before it is computed", n.Pos, n.Op.Name, n.Name, v.Name)
			}
		}
		in := make([]*ops.Type, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				t := v.Type
				in[i] = &t
			}
		}
		outs, err := n.Op.Shape(in, n.Attrs)
		if err != nil {
			return fmt.Errorf("%s: %s %q: %w", n.Pos, n.Op.Name, n.Name, err)
		}
		if len(outs) != len(n.Outputs) {
			return fmt.Errorf("%s: %s %q: %d outputs, shape function gives %d", n.Pos, n.Op.Name, n.Name, len(n.Outputs), len(outs))
		}
		for i, t := range outs {
			if t.DType != n.Outputs[i].Type.DType || !t.Shape.Equal(n.Outputs[i].Type.Shape) {
				return fmt.Errorf("%s: %s %q: output %d is %s, shape function gives %s", n.Pos, n.Op.Name, n.Name, i, n.Outputs[i].Type, t)
			}
			defined[n.Outputs[i].ID] = true
		}
	}
	for _, v := range g.Outputs {
		if !defined[v.ID] {
			return fmt.Errorf("graph output %q is never computed", v.Name)
		}
	}
	return nil
}

// Stats counts nodes per op.
func (g *Graph) Stats() map[string]int {
	m := map[string]int{}
	for _, n := range g.Nodes {
		m[n.Op.Name]++
	}
	return m
}

// KernelsPerLayer returns the number of nodes in layer l.
func (g *Graph) KernelsPerLayer(l int) int {
	c := 0
	for _, n := range g.Nodes {
		if n.Layer == l {
			c++
		}
	}
	return c
}

// String prints the graph one node per line.
func (g *Graph) String() string {
	var b strings.Builder
	for _, n := range g.Nodes {
		var outs, ins []string
		for _, v := range n.Outputs {
			outs = append(outs, v.Name+":"+v.Type.String())
		}
		for _, v := range n.Inputs {
			if v == nil {
				ins = append(ins, "_")
			} else {
				ins = append(ins, v.Name)
			}
		}
		fmt.Fprintf(&b, "%s = %s(%s)\n", strings.Join(outs, ", "), n.Label(), strings.Join(ins, ", "))
	}
	return b.String()
}
