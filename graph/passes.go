package graph

import (
	"fmt"

	"github.com/weftrun/weft/ops"
)

// Optimize runs the standard passes: output pruning, then fusion (fuse.go).
func Optimize(g *Graph, reg *ops.Registry) error {
	if err := PruneOutputs(g, reg); err != nil {
		return err
	}
	if err := Fuse(g, reg); err != nil {
		return err
	}
	return g.Validate()
}

// PruneOutputs inserts gather_rows before the trailing row-wise chain that
// produces each graph output, so that ops such as the final norm and the
// LM head run only on the rows whose outputs the step wants (the last
// prompt token of each sequence, not the whole prompt).
func PruneOutputs(g *Graph, reg *ops.Registry) error {
	gather, ok := reg.Lookup("gather_rows")
	if !ok {
		return fmt.Errorf("prune outputs: no gather_rows op")
	}
	users := g.readers()
	for _, out := range g.Outputs {
		// Walk up through row-wise producers whose activation input has
		// no other reader; v ends at the chain's input, reader at the
		// chain node that reads it.
		v := out
		var reader *Node
		for {
			n := v.Producer
			if n == nil || !n.Op.RowWise || len(n.Outputs) != 1 || activations(n) != 1 {
				break
			}
			act := firstActivation(n)
			if act.Producer == nil || len(users[act.ID]) != 1 || !isTokenRows(act) {
				break
			}
			v, reader = act, n
		}
		if reader == nil {
			continue // nothing row-wise to prune before this output
		}
		gn, err := g.Apply(gather, []*Value{v}, ops.Attrs{}, []string{v.Name + ".kept"}, v.Producer.Pos)
		if err != nil {
			return err
		}
		gn.Layer = -1
		kept := gn.Outputs[0]
		// Place the gather right after v's producer; only the chain reads it.
		g.Nodes = g.Nodes[:len(g.Nodes)-1]
		idx := indexOf(g.Nodes, v.Producer)
		g.Nodes = append(g.Nodes[:idx+1], append([]*Node{gn}, g.Nodes[idx+1:]...)...)
		for i, in := range reader.Inputs {
			if in == v {
				reader.Inputs[i] = kept
			}
		}
		// Re-infer the chain's shapes (the row dimension is now K).
		if err := reinfer(g, idx+2); err != nil {
			return err
		}
		users = g.readers()
	}
	return nil
}

func isTokenRows(v *Value) bool {
	return len(v.Type.Shape) == 2 && v.Type.Shape[0] == ops.Tokens
}

func firstActivation(n *Node) *Value {
	for _, in := range n.Inputs {
		if in != nil && in.Param == nil && !in.Input {
			return in
		}
	}
	return nil
}

func activations(n *Node) int {
	c := 0
	for _, in := range n.Inputs {
		if in != nil && in.Param == nil && !in.Input {
			c++
		}
	}
	return c
}

func indexOf(nodes []*Node, n *Node) int {
	for i, x := range nodes {
		if x == n {
			return i
		}
	}
	return -1
}

// reinfer recomputes output types from node index from onwards.
func reinfer(g *Graph, from int) error {
	for _, n := range g.Nodes[from:] {
		in := make([]*ops.Type, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				t := v.Type
				in[i] = &t
			}
		}
		outs, err := n.Op.Shape(in, n.Attrs)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", n.Pos, n.Op.Name, err)
		}
		for i, t := range outs {
			n.Outputs[i].Type = t
		}
	}
	return nil
}
