package scheduler

import (
	"fmt"
	"strings"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// placement is a graph split over devices: every node has a Device, and
// exec gives the index (in names) of the device that runs it.
type placement struct {
	g     *graph.Graph
	names []string
	exec  map[*graph.Node]int
}

// span is a half-open range of rows or columns.
type span struct{ lo, hi int }

// shard is how one node of a tensor-split group is cut across its
// devices.
type shard struct {
	attrs  ops.Attrs      // attributes for each shard (heads), or nil
	rows   map[int][]span // weight input → each device's rows (column parallel)
	cols   []span         // each device's columns of weight input 1 (row parallel)
	closer bool           // the output is a partial sum: an all-reduce follows
}

// place assigns the nodes of g to devs: layers to groups, and within a
// group of several devices, attention heads and FFN rows to each device
// (Megatron-style: column-parallel projections, row-parallel output
// projections closed by an all-reduce), with copy nodes where a value
// crosses a device boundary. One device leaves g as it is.
func place(g *graph.Graph, reg *ops.Registry, devs Devices) (*placement, error) {
	names := devs.Names()
	if len(names) == 1 {
		p := &placement{g: g, names: names, exec: map[*graph.Node]int{}}
		for _, n := range g.Nodes {
			n.Device = names[0]
			p.exec[n] = 0
		}
		return p, nil
	}
	copyDef, ok1 := reg.Lookup("copy")
	arDef, ok2 := reg.Lookup("all_reduce")
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("place: the registry lacks the copy and all_reduce ops")
	}
	layers, first, last := 0, -1, -1
	for i, n := range g.Nodes {
		if n.Layer >= 0 {
			layers = max(layers, n.Layer+1)
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	ranges, err := devs.layerRanges(layers)
	if err != nil {
		return nil, err
	}
	devIndex := map[string]int{}
	for i, n := range names {
		devIndex[n] = i
	}
	groupDevs := make([][]int, len(devs.Groups))
	for gi, gr := range devs.Groups {
		for _, n := range gr.Devices {
			groupDevs[gi] = append(groupDevs[gi], devIndex[n])
		}
	}
	groupOf := func(i int, n *graph.Node) int {
		if n.Layer >= 0 {
			for gi, r := range ranges {
				if n.Layer >= r[0] && n.Layer < r[1] {
					return gi
				}
			}
		}
		if i < first {
			return 0
		}
		return len(ranges) - 1
	}
	shards := map[*graph.Node]*shard{}
	for gi, gr := range devs.Groups {
		if len(gr.Devices) > 1 {
			var in []*graph.Node
			for i, n := range g.Nodes {
				if groupOf(i, n) == gi {
					in = append(in, n)
				}
			}
			if err := planShards(g, in, len(gr.Devices), devs, shards); err != nil {
				return nil, err
			}
		}
	}

	p := &placement{g: graph.New(g.Name), names: names, exec: map[*graph.Node]int{}}
	g2 := p.g
	inMap := map[int]*graph.Value{}
	for _, v := range g.Inputs {
		inMap[v.ID] = g2.AddInput(v.Name, v.Type)
	}
	vmap := make([]map[int]*graph.Value, len(names))
	for i := range vmap {
		vmap[i] = map[int]*graph.Value{}
	}
	holders := map[int][]int{} // value ID → devices that hold it
	type pkey struct {
		id, lo, hi int
		col        bool
	}
	params := map[pkey]*graph.Value{}
	param := func(v *graph.Value, sp *span, col bool) (*graph.Value, error) {
		k := pkey{id: v.ID, col: col}
		if sp != nil {
			k.lo, k.hi = sp.lo, sp.hi
		}
		if pv, ok := params[k]; ok {
			return pv, nil
		}
		t, typ := v.Param.Tensor, v.Type
		if sp != nil {
			shape := append(ops.Shape(nil), typ.Shape...)
			if len(shape) == 1 && col {
				return nil, fmt.Errorf("--devices %s: weight %s (%s): a vector has no columns to split", devs, v.Param.Source, v.Name)
			}
			if col {
				shape[len(shape)-1] = ops.D(sp.hi - sp.lo)
			} else {
				shape[0] = ops.D(sp.hi - sp.lo)
			}
			typ.Shape = shape
			if t != nil { // an unbound graph (weft graph -s) is placed by shape alone
				var err error
				if t, err = sliceWeight(t, *sp, col); err != nil {
					return nil, fmt.Errorf("--devices %s: weight %s (%s): %w", devs, v.Param.Source, v.Name, err)
				}
			}
		}
		pp := *v.Param
		pp.Tensor = t
		pv := g2.AddParam(v.Name, typ, &pp)
		params[k] = pv
		return pv, nil
	}
	valueOn := func(v *graph.Value, d int) (*graph.Value, error) {
		if nv, ok := vmap[d][v.ID]; ok {
			return nv, nil
		}
		hs := holders[v.ID]
		if len(hs) == 0 {
			return nil, fmt.Errorf("place: value %s is read before any device computes it", v.Name)
		}
		src := hs[0]
		cn, err := g2.Apply(copyDef, []*graph.Value{vmap[src][v.ID]}, ops.Attrs{"from": names[src], "to": names[d]}, []string{v.Name}, v.Producer.Pos)
		if err != nil {
			return nil, fmt.Errorf("place: copy %s: %w", v.Name, err)
		}
		cn.Layer, cn.Device = v.Producer.Layer, names[d]
		p.exec[cn] = d
		vmap[d][v.ID] = cn.Outputs[0]
		return cn.Outputs[0], nil
	}
	emit := func(n *graph.Node, d, k int, sh *shard) (*graph.Node, error) {
		ins := make([]*graph.Value, len(n.Inputs))
		for i, v := range n.Inputs {
			if v == nil {
				continue
			}
			if sh != nil && sh.closer && k > 0 && i >= 2 {
				continue // bias and residual join the sum once, on the first device
			}
			var err error
			switch {
			case v.Input:
				ins[i] = inMap[v.ID]
			case v.Param != nil:
				var sp *span
				col := false
				if sh != nil {
					if s, ok := sh.rows[i]; ok {
						sp = &s[k]
					} else if sh.cols != nil && i == 1 {
						sp, col = &sh.cols[k], true
					}
				}
				ins[i], err = param(v, sp, col)
			default:
				ins[i], err = valueOn(v, d)
			}
			if err != nil {
				return nil, err
			}
		}
		attrs := n.Attrs
		if sh != nil && sh.attrs != nil {
			attrs = sh.attrs
		}
		outNames := make([]string, len(n.Outputs))
		for i, o := range n.Outputs {
			outNames[i] = o.Name
		}
		nn, err := g2.Apply(n.Op, ins, attrs, outNames, n.Pos)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q on %s: %w", n.Pos, n.Op.Name, n.Name, names[d], err)
		}
		nn.Name, nn.Layer, nn.Block, nn.Fused, nn.Device = n.Name, n.Layer, n.Block, n.Fused, names[d]
		p.exec[nn] = d
		for i, o := range n.Outputs {
			vmap[d][o.ID] = nn.Outputs[i]
			holders[o.ID] = append(holders[o.ID], d)
		}
		return nn, nil
	}
	for i, n := range g.Nodes {
		gi := groupOf(i, n)
		ds := groupDevs[gi]
		if i > last && n.Layer < 0 {
			ds = ds[:1] // after the last layer: the first device of the last group alone
		}
		sh := shards[n]
		var parts []*graph.Value
		for k, d := range ds {
			nn, err := emit(n, d, k, sh)
			if err != nil {
				return nil, err
			}
			if sh != nil && sh.closer {
				parts = append(parts, nn.Outputs[0])
			}
		}
		if len(parts) > 0 {
			devNames := make([]string, len(ds))
			outNames := make([]string, len(ds))
			for k, d := range ds {
				devNames[k], outNames[k] = names[d], n.Outputs[0].Name
			}
			joined := strings.Join(devNames, "&")
			ar, err := g2.Apply(arDef, parts, ops.Attrs{"devices": joined}, outNames, n.Pos)
			if err != nil {
				return nil, fmt.Errorf("%s: all-reduce of %q: %w", n.Pos, n.Name, err)
			}
			ar.Layer, ar.Block, ar.Device = n.Layer, n.Block, joined
			p.exec[ar] = ds[0]
			for k, d := range ds {
				vmap[d][n.Outputs[0].ID] = ar.Outputs[k]
			}
		}
	}
	lastDev := groupDevs[len(groupDevs)-1][0]
	for _, o := range g.Outputs {
		v, err := valueOn(o, lastDev)
		if err != nil {
			return nil, err
		}
		g2.Outputs = append(g2.Outputs, v)
	}
	if err := g2.Validate(); err != nil {
		return nil, fmt.Errorf("place on %s: %w", devs, err)
	}
	return p, nil
}

// Place returns g placed on devs, as NewPlan places it: each node's
// Device set, tensor-split sub-layers cut across their group, and the
// copies and all-reduces inserted. g may be unbound (a spec's graph with
// no checkpoint): weights are then split by shape alone.
func Place(g *graph.Graph, reg *ops.Registry, devs Devices) (*graph.Graph, error) {
	p, err := place(g, reg, devs)
	if err != nil {
		return nil, err
	}
	return p.g, nil
}

// sliceWeight returns rows (or, with col, columns) [sp.lo, sp.hi) of a
// weight. Rows of a 2-D weight, or elements of a vector, are a view of the
// same bytes; columns are copied, whole quantization blocks at a time.
func sliceWeight(t *tensor.Tensor, sp span, col bool) (*tensor.Tensor, error) {
	if t == nil {
		return nil, fmt.Errorf("not bound to a tensor")
	}
	switch {
	case len(t.Shape) == 1 && !col:
		es := t.DType.TypeSize() / max(t.DType.BlockSize(), 1)
		if t.DType.Quantized() {
			return nil, fmt.Errorf("a quantized vector cannot be split")
		}
		return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{sp.hi - sp.lo}, Data: t.Data[sp.lo*es : sp.hi*es]}, nil
	case len(t.Shape) == 2 && !col:
		rb, err := t.DType.RowBytes(t.Shape[1])
		if err != nil {
			return nil, err
		}
		return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{sp.hi - sp.lo, t.Shape[1]}, Data: t.Data[sp.lo*rb : sp.hi*rb]}, nil
	case len(t.Shape) == 2:
		bs := t.DType.BlockSize()
		if sp.lo%bs != 0 || sp.hi%bs != 0 {
			return nil, fmt.Errorf("columns %d..%d are not whole %s blocks of %d", sp.lo, sp.hi, t.DType, bs)
		}
		rb, err := t.DType.RowBytes(t.Shape[1])
		if err != nil {
			return nil, err
		}
		b0, _ := t.DType.RowBytes(sp.lo)
		b1, _ := t.DType.RowBytes(sp.hi)
		out := make([]byte, 0, t.Shape[0]*(b1-b0))
		for r := 0; r < t.Shape[0]; r++ {
			out = append(out, t.Data[r*rb+b0:r*rb+b1]...)
		}
		return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{t.Shape[0], sp.hi - sp.lo}, Data: out}, nil
	}
	return nil, fmt.Errorf("a %d-D weight cannot be split", len(t.Shape))
}

// evenSpans cuts n units of size unit into parts nearly equal spans.
func evenSpans(n, unit, parts int) []span {
	out := make([]span, parts)
	for k := range out {
		out[k] = span{n * k / parts * unit, n * (k + 1) / parts * unit}
	}
	return out
}

// planShards finds, among the nodes of one tensor-split group (in order),
// the sub-layers that can be cut across its d devices, and records how.
// Every other node runs whole on each device of the group.
func planShards(g *graph.Graph, nodes []*graph.Node, d int, devs Devices, out map[*graph.Node]*shard) error {
	users := g.Users()
	isOutput := map[int]bool{}
	for _, v := range g.Outputs {
		isOutput[v.ID] = true
	}
	single := func(v *graph.Value) bool { return len(users[v.ID]) == 1 && !isOutput[v.ID] }
	// closer returns the linear that alone reads v as its input x.
	closer := func(v *graph.Value) *graph.Node {
		if !single(v) {
			return nil
		}
		l := users[v.ID][0]
		if l.Op.Name != "linear" || l.Inputs[0] != v || out[l] != nil || l.Inputs[1].Param == nil || len(l.Inputs[1].Type.Shape) != 2 {
			return nil
		}
		return l
	}
	// columnLinear reports whether n is a linear whose rows can be split:
	// a weight matrix, maybe a bias, no residual.
	columnLinear := func(n *graph.Node) bool {
		if n == nil || n.Op.Name != "linear" || out[n] != nil || n.Inputs[1].Param == nil || len(n.Inputs[1].Type.Shape) != 2 {
			return false
		}
		if len(n.Inputs) > 3 && n.Inputs[3] != nil {
			return false
		}
		return len(n.Inputs) < 3 || n.Inputs[2] == nil || n.Inputs[2].Param != nil
	}
	rowsOf := func(sh *shard, n *graph.Node, out int, sp []span) {
		if n.Op.Name == "linear_multi" {
			sh.rows[1+out] = sp
			return
		}
		sh.rows[1] = sp
		if len(n.Inputs) > 2 && n.Inputs[2] != nil {
			sh.rows[2] = sp
		}
	}
	closeWith := func(l *graph.Node, sp []span) error {
		bs := l.Inputs[1].Type.DType.BlockSize()
		for _, s := range sp {
			if s.lo%bs != 0 || s.hi%bs != 0 {
				return fmt.Errorf("--devices %s: %s %q: the %d-way split of %s's columns (%d..%d) does not fall on %s blocks of %d",
					devs, l.Op.Name, l.Name, d, l.Inputs[1].Param.Source, s.lo, s.hi, l.Inputs[1].Type.DType, bs)
			}
		}
		out[l] = &shard{cols: sp, closer: true}
		return nil
	}
	withAttrs := func(a ops.Attrs, kv ...any) ops.Attrs {
		c := ops.Attrs{}
		for k, v := range a {
			c[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return c
	}
	for _, n := range nodes {
		if out[n] != nil {
			continue
		}
		switch {
		case n.Op.Stateful && n.Attrs.Int("heads") > 0 && len(n.Inputs) >= 3:
			h, kvh := n.Attrs.Int("heads"), ops.KVHeads(n.Attrs)
			if n.Attrs.Bool("alibi") || (n.Op.Name == "attention" && len(n.Inputs) > 3 && n.Inputs[3] != nil) {
				continue // ALiBi's slopes and a rel_bias table depend on the head index: runs whole
			}
			l := closer(n.Outputs[0])
			if l == nil {
				continue
			}
			if h%d != 0 || kvh%d != 0 {
				return fmt.Errorf("--devices %s: %s: %s %q has %d heads and %d KV heads, which a %d-way tensor split cannot divide",
					devs, n.Pos, n.Op.Name, n.Name, h, kvh, d)
			}
			hd := n.Inputs[0].Type.Shape.Last() / h
			qsp, kvsp := evenSpans(h, hd, d), evenSpans(kvh, hd, d)
			// Each of q, k, v: maybe a rope, then a column-split linear.
			type src struct {
				rope, lin *graph.Node
				out       int
			}
			var srcs [3]src
			ok := true
			for i := 0; i < 3 && ok; i++ {
				v := n.Inputs[i]
				if v.Producer != nil && v.Producer.Op.Name == "rope" && single(v) {
					srcs[i].rope = v.Producer
					v = v.Producer.Inputs[0]
				}
				pn := v.Producer
				if pn == nil || !single(v) || (pn.Op.Name != "linear_multi" && !columnLinear(pn)) || (out[pn] != nil && pn.Op.Name != "linear_multi") {
					ok = false
					break
				}
				srcs[i].lin = pn
				for j, o := range pn.Outputs {
					if o == v {
						srcs[i].out = j
					}
				}
			}
			if !ok {
				continue
			}
			// A merged projection must feed this attention alone.
			for _, s := range srcs {
				if s.lin.Op.Name == "linear_multi" {
					for _, o := range s.lin.Outputs {
						reads := false
						for _, t := range srcs {
							reads = reads || (t.lin == s.lin && s.lin.Outputs[t.out] == o)
						}
						ok = ok && reads
					}
				}
			}
			if !ok {
				continue
			}
			if err := closeWith(l, qsp); err != nil {
				return err
			}
			for i, s := range srcs {
				sp, heads := qsp, h/d
				if i > 0 {
					sp, heads = kvsp, kvh/d
				}
				sh := out[s.lin]
				if sh == nil {
					sh = &shard{rows: map[int][]span{}}
					out[s.lin] = sh
				}
				rowsOf(sh, s.lin, s.out, sp)
				if s.rope != nil {
					out[s.rope] = &shard{attrs: withAttrs(s.rope.Attrs, "heads", int64(heads))}
				}
			}
			out[n] = &shard{attrs: withAttrs(n.Attrs, "heads", int64(h/d), "kv_heads", int64(kvh/d))}
		case n.Op.Name == "gated_ffn":
			l := closer(n.Outputs[0])
			if l == nil || n.Inputs[1].Param == nil || n.Inputs[2].Param == nil {
				continue
			}
			f, unit := n.Inputs[1].Type.Shape[0].N, l.Inputs[1].Type.DType.BlockSize()
			if f%unit != 0 || f/unit < d {
				continue
			}
			sp := evenSpans(f/unit, unit, d)
			if err := closeWith(l, sp); err != nil {
				return err
			}
			out[n] = &shard{rows: map[int][]span{1: sp, 2: sp}}
		case n.Op.Name == "swiglu" || n.Op.Name == "geglu" || n.Op.Name == "silu" || n.Op.Name == "gelu" || n.Op.Name == "gelu_tanh" || n.Op.Name == "relu":
			l := closer(n.Outputs[0])
			if l == nil {
				continue
			}
			var lins []*graph.Node
			ok := true
			for _, v := range n.Inputs {
				if v == nil || v.Producer == nil || !single(v) || !columnLinear(v.Producer) {
					ok = false
					break
				}
				lins = append(lins, v.Producer)
			}
			if !ok || (len(lins) == 2 && lins[0].Inputs[1].Type.Shape[0] != lins[1].Inputs[1].Type.Shape[0]) {
				continue
			}
			f, unit := lins[0].Inputs[1].Type.Shape[0].N, l.Inputs[1].Type.DType.BlockSize()
			if f%unit != 0 || f/unit < d {
				continue
			}
			sp := evenSpans(f/unit, unit, d)
			if err := closeWith(l, sp); err != nil {
				return err
			}
			for _, ln := range lins {
				sh := &shard{rows: map[int][]span{}}
				rowsOf(sh, ln, 0, sp)
				out[ln] = sh
			}
			out[n] = &shard{}
		}
	}
	return nil
}
