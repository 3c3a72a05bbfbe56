package graph

import (
	"fmt"
	"slices"

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
// prompt token of each sequence, not the whole prompt). When the chain
// starts at the last layer's residual block (x + f(x), see residualBlock),
// the gather moves in front of that block, so the last FFN runs only on
// those rows too, as in llama.cpp's graphs.
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
		// The chain's input may end a residual block x + f(x) whose f is
		// row-wise (the last layer's FFN): then x is gathered and the
		// block runs on the kept rows only, as llama.cpp does.
		readers, layer, blk := []*Node{reader}, -1, ""
		if r, block := residualBlock(v, users); r != nil {
			// Inside the last layer, and drawn and placed with it.
			v, readers, layer, blk = r, block, r.Producer.Layer, r.Producer.Block
		}
		gn, err := g.Apply(gather, []*Value{v}, ops.Attrs{}, []string{v.Name + ".kept"}, v.Producer.Pos)
		if err != nil {
			return err
		}
		gn.Layer, gn.Block = layer, blk
		kept := gn.Outputs[0]
		// Place the gather right after v's producer; only the chain, or
		// in the block case only the block, reads it.
		g.Nodes = g.Nodes[:len(g.Nodes)-1]
		idx := indexOf(g.Nodes, v.Producer)
		g.Nodes = append(g.Nodes[:idx+1], append([]*Node{gn}, g.Nodes[idx+1:]...)...)
		for _, rd := range readers {
			for i, in := range rd.Inputs {
				if in == v {
					rd.Inputs[i] = kept
				}
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

// residualBlock reports whether v, read once, is the output of a row-wise
// node of two activations, x and f(x) (an add for the residual connection
// around a transformer's last FFN; a mul, a gate or a linear with its
// residual input qualify as well), with f made of row-wise nodes read
// only inside it and x read only by f and that node. Gathering x's rows
// then gives every node of the block the same rows. It returns x and the
// nodes that read x (f's and the combining node), or nil.
func residualBlock(v *Value, users map[int][]*Node) (*Value, []*Node) {
	add := v.Producer
	if add == nil || !add.Op.RowWise || len(add.Outputs) != 1 || activations(add) != 2 || len(users[v.ID]) != 1 {
		return nil, nil
	}
	var acts []*Value
	for _, in := range add.Inputs {
		if in != nil && in.Param == nil && !in.Input {
			acts = append(acts, in)
		}
	}
	for i, x := range acts {
		if x.Producer == nil || !isTokenRows(x) {
			continue
		}
		// The nodes between x and the add's other input.
		block := map[*Node]bool{add: true}
		ok := true
		var walk func(u *Value)
		walk = func(u *Value) {
			if !ok || u == x {
				return
			}
			n := u.Producer
			if n == nil || !n.Op.RowWise || len(n.Outputs) != 1 || !isTokenRows(u) {
				ok = false
				return
			}
			if block[n] {
				return
			}
			block[n] = true
			for _, in := range n.Inputs {
				if in != nil && in.Param == nil && !in.Input {
					walk(in)
				}
			}
		}
		walk(acts[1-i])
		if !ok || len(block) < 2 {
			continue
		}
		// Nothing outside the block reads what it computes, or x.
		var readers []*Node
		for n := range block {
			if n != add && !readOnlyBy(users[n.Outputs[0].ID], block) {
				ok = false
			}
		}
		if !ok || !readOnlyBy(users[x.ID], block) {
			continue
		}
		for _, n := range users[x.ID] {
			if !slices.Contains(readers, n) {
				readers = append(readers, n)
			}
		}
		return x, readers
	}
	return nil, nil
}

// readOnlyBy reports whether every reader in rs (nil: a graph output) is
// in block.
func readOnlyBy(rs []*Node, block map[*Node]bool) bool {
	for _, n := range rs {
		if n == nil || !block[n] {
			return false
		}
	}
	return true
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
