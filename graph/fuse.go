package graph

import (
	"fmt"

	"github.com/weftrun/weft/ops"
)

// Fuse rewrites the graph into fewer, larger kernels:
//   - rope(q), rope(k) feeding attention → rope_attention;
//   - act(linear(x, Wg)) ⊙ linear(x, Wu) (swiglu/geglu) → gated_ffn;
//   - linears sharing one input (Q, K, V) → linear_multi;
//   - add(r, linear(a, W)) → linear(a, W, residual=r) (residual epilogue).
//
// A llama layer goes from 15 kernels to 7.
func Fuse(g *Graph, reg *ops.Registry) error { return RunPasses(g, reg, Fusions()) }

// Pass is a graph rewrite. A backend lists the passes whose resulting ops
// its kernels implement (backend.Backend.Passes).
type Pass struct {
	Name string // the op a fusion produces, or the pass's job
	Run  func(*Graph, *ops.Registry) error
}

// Fusions returns the fusion passes, in the order they must run, each
// named after the fused op it produces.
func Fusions() []Pass {
	return []Pass{
		{"rope_attention", fuseRoPEAttention},
		{"gated_ffn", fuseGatedFFN},
		{"linear_multi", fuseLinearMulti},
		{"linear+residual", fuseResidual},
	}
}

// RunPasses runs passes in order, dropping dead nodes after each.
func RunPasses(g *Graph, reg *ops.Registry, passes []Pass) error {
	for _, p := range passes {
		if err := p.Run(g, reg); err != nil {
			return fmt.Errorf("pass %s: %w", p.Name, err)
		}
		g.removeDead()
	}
	return nil
}

func lookup(reg *ops.Registry, name string) (*ops.Def, error) {
	d, ok := reg.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("fuse: no %s op", name)
	}
	return d, nil
}

// replaceUses makes every reader of old read new.
func (g *Graph) replaceUses(old, new *Value) {
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if v == old {
				n.Inputs[i] = new
			}
		}
	}
	for i, v := range g.Outputs {
		if v == old {
			g.Outputs[i] = new
		}
	}
}

// newNode makes a node (not yet placed in g.Nodes) whose outputs take the
// names of the values they replace.
func (g *Graph) newNode(op *ops.Def, inputs []*Value, attrs ops.Attrs, like *Node, replaces []*Value) (*Node, error) {
	n, err := g.Apply(op, inputs, attrs, nil, like.Pos)
	if err != nil {
		return nil, fmt.Errorf("%s: fuse into %s: %w", like.Pos, op.Name, err)
	}
	g.Nodes = g.Nodes[:len(g.Nodes)-1] // the caller places it
	n.Layer, n.Block = like.Layer, like.Block
	for i, v := range replaces {
		if i < len(n.Outputs) {
			n.Outputs[i].Name = v.Name
		}
	}
	if len(n.Outputs) > 0 {
		n.Name = n.Outputs[0].Name
	}
	return n, nil
}

// removeDead drops nodes none of whose outputs are read.
func (g *Graph) removeDead() {
	for {
		users := g.readers()
		out := map[int]bool{}
		for _, v := range g.Outputs {
			out[v.ID] = true
		}
		kept := g.Nodes[:0]
		removed := false
		for _, n := range g.Nodes {
			live := n.Op.Stateful
			for _, v := range n.Outputs {
				if len(users[v.ID]) > 0 || out[v.ID] {
					live = true
				}
			}
			if live {
				kept = append(kept, n)
			} else {
				removed = true
			}
		}
		g.Nodes = kept
		if !removed {
			return
		}
	}
}

// readers maps each value ID to the nodes that read it, with a nil entry
// for each time the value is a graph output, so that a fusion never
// swallows a value someone outside the pattern still needs.
func (g *Graph) readers() map[int][]*Node {
	u := g.Users()
	for _, v := range g.Outputs {
		u[v.ID] = append(u[v.ID], nil)
	}
	return u
}

func single(users map[int][]*Node, v *Value) bool { return len(users[v.ID]) == 1 }

// nameAfter gives v, a value the spec left unnamed (linear_9) and one node
// reads, the spec's name for what it became, and its producer too when
// that was named after it.
func nameAfter(v *Value, name string, users map[int][]*Node) {
	if v == nil || name == "" || AutoNamed(name) || !AutoNamed(v.Name) || !single(users, v) {
		return
	}
	if p := v.Producer; p != nil && p.Name == v.Name && len(p.Outputs) == 1 {
		p.Name = name
	}
	v.Name = name
}

func isOp(v *Value, name string) bool {
	return v != nil && v.Producer != nil && v.Producer.Op.Name == name
}

// plainLinear reports whether n is a linear with no bias or residual.
func plainLinear(n *Node) bool {
	if n.Op.Name != "linear" {
		return false
	}
	for _, v := range n.Inputs[2:] {
		if v != nil {
			return false
		}
	}
	return true
}

func fuseRoPEAttention(g *Graph, reg *ops.Registry) error {
	def, err := lookup(reg, "rope_attention")
	if err != nil {
		return err
	}
	users := g.readers()
	for i, n := range g.Nodes {
		if n.Op.Name != "attention" {
			continue
		}
		q, k := n.Inputs[0], n.Inputs[1]
		if len(n.Inputs) > 3 && n.Inputs[3] != nil {
			continue // a relative-position bias: rope_attention has none
		}
		if !isOp(q, "rope") || !isOp(k, "rope") || !single(users, q) || !single(users, k) {
			continue
		}
		rq, rk := q.Producer, k.Producer
		if scaledRoPE(rq) || scaledRoPE(rk) {
			continue // rope_attention has plain RoPE only
		}
		if rq.Inputs[1] != rk.Inputs[1] || rq.Attrs.Int("dim") != rk.Attrs.Int("dim") ||
			rq.Attrs.Float("base") != rk.Attrs.Float("base") || rq.Attrs.String("pairing") != rk.Attrs.String("pairing") {
			continue
		}
		kvh := n.Attrs.Int("kv_heads")
		if kvh == 0 {
			kvh = n.Attrs.Int("heads")
		}
		if rq.Attrs.Int("heads") != n.Attrs.Int("heads") || rk.Attrs.Int("heads") != kvh {
			continue
		}
		attrs := ops.Attrs{}
		for k, v := range n.Attrs {
			attrs[k] = v
		}
		attrs["rope_dim"] = int64(rq.Attrs.Int("dim"))
		attrs["rope_base"] = rq.Attrs.Float("base")
		attrs["pairing"] = rq.Attrs.String("pairing")
		nn, err := g.newNode(def, []*Value{rq.Inputs[0], rk.Inputs[0], n.Inputs[2], rq.Inputs[1]}, attrs, n, n.Outputs)
		if err != nil {
			return err
		}
		nn.Fused = []string{"rope", "rope", "attention"}
		// The ropes' results were the spec's q and k: the values that now
		// feed rope_attention in their place take those names where the
		// spec left them unnamed (q: rope(linear(h, wq), …)), and an
		// unnamed v takes the port's.
		nameAfter(rq.Inputs[0], q.Name, users)
		nameAfter(rk.Inputs[0], k.Name, users)
		nameAfter(n.Inputs[2], def.Inputs[2].Name, users)
		g.Nodes[i] = nn
		g.replaceUses(n.Outputs[0], nn.Outputs[0])
	}
	return nil
}

// scaledRoPE reports whether a rope node scales its angles (factors or
// non-default scaling attributes).
func scaledRoPE(n *Node) bool {
	if len(n.Inputs) > 2 && n.Inputs[2] != nil {
		return true
	}
	a := n.Attrs
	has := func(k string) bool { _, ok := a[k]; return ok }
	return has("freq_scale") && a.Float("freq_scale") != 1 || has("ext_factor") && a.Float("ext_factor") != 0 ||
		has("attn_factor") && a.Float("attn_factor") != 1 || has("llama3_factor") && a.Float("llama3_factor") != 0
}

func fuseGatedFFN(g *Graph, reg *ops.Registry) error {
	def, err := lookup(reg, "gated_ffn")
	if err != nil {
		return err
	}
	users := g.readers()
	for i, n := range g.Nodes {
		act := map[string]string{"swiglu": "silu", "geglu": "gelu"}[n.Op.Name]
		if act == "" {
			continue
		}
		if act == "gelu" && n.Attrs.String("gelu") == "tanh" {
			act = "gelu_tanh"
		}
		gv, uv := n.Inputs[0], n.Inputs[1]
		if !isOp(gv, "linear") || !isOp(uv, "linear") || !single(users, gv) || !single(users, uv) {
			continue
		}
		gl, ul := gv.Producer, uv.Producer
		if !plainLinear(gl) || !plainLinear(ul) || gl.Inputs[0] != ul.Inputs[0] {
			continue
		}
		nn, err := g.newNode(def, []*Value{gl.Inputs[0], gl.Inputs[1], ul.Inputs[1]}, ops.Attrs{"act": act}, n, n.Outputs)
		if err != nil {
			return err
		}
		nn.Fused = []string{"linear", "linear", n.Op.Name}
		g.Nodes[i] = nn
		g.replaceUses(n.Outputs[0], nn.Outputs[0])
	}
	return nil
}

func fuseLinearMulti(g *Graph, reg *ops.Registry) error {
	def, err := lookup(reg, "linear_multi")
	if err != nil {
		return err
	}
	groups := map[*Value][]int{}
	var order []*Value
	for i, n := range g.Nodes {
		if plainLinear(n) {
			x := n.Inputs[0]
			if groups[x] == nil {
				order = append(order, x)
			}
			groups[x] = append(groups[x], i)
		}
	}
	replace := map[int]*Node{}
	drop := map[int]bool{}
	for _, x := range order {
		idx := groups[x]
		if len(idx) < 2 {
			continue
		}
		inputs := []*Value{x}
		var outs []*Value
		for _, i := range idx {
			inputs = append(inputs, g.Nodes[i].Inputs[1])
			outs = append(outs, g.Nodes[i].Outputs[0])
		}
		first := g.Nodes[idx[0]]
		nn, err := g.newNode(def, inputs, ops.Attrs{}, first, outs)
		if err != nil {
			return err
		}
		for range idx {
			nn.Fused = append(nn.Fused, "linear")
		}
		for k, i := range idx {
			g.replaceUses(g.Nodes[i].Outputs[0], nn.Outputs[k])
			drop[i] = true
		}
		replace[idx[0]] = nn
	}
	var nodes []*Node
	for i, n := range g.Nodes {
		if nn, ok := replace[i]; ok {
			nodes = append(nodes, nn)
		} else if !drop[i] {
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	return nil
}

func fuseResidual(g *Graph, reg *ops.Registry) error {
	users := g.readers()
	index := map[*Node]int{}
	for i, n := range g.Nodes {
		index[n] = i
	}
	defined := func(v *Value, before int) bool {
		if v.Producer == nil {
			return true
		}
		i, ok := index[v.Producer]
		return ok && i < before
	}
	for i, n := range g.Nodes {
		if n.Op.Name != "add" {
			continue
		}
		for side := 0; side < 2; side++ {
			lv, r := n.Inputs[side], n.Inputs[1-side]
			if !isOp(lv, "linear") || !single(users, lv) || !lv.Type.Shape.Equal(r.Type.Shape) {
				continue
			}
			l := lv.Producer
			if (len(l.Inputs) > 3 && l.Inputs[3] != nil) || !defined(r, index[l]) {
				continue
			}
			ins := append([]*Value(nil), l.Inputs...)
			for len(ins) < 4 {
				ins = append(ins, nil)
			}
			ins[3] = r
			nn, err := g.newNode(l.Op, ins, l.Attrs, l, n.Outputs)
			if err != nil {
				return err
			}
			nn.Fused = append(append([]string{}, l.Fused...), "linear", "add")
			g.Nodes[index[l]] = nn
			index[nn] = index[l]
			g.replaceUses(n.Outputs[0], nn.Outputs[0])
			g.Nodes[i] = &Node{ID: -1, Op: n.Op, Outputs: []*Value{}} // dead placeholder
			break
		}
	}
	nodes := g.Nodes[:0]
	for _, n := range g.Nodes {
		if n.ID != -1 {
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	return nil
}
