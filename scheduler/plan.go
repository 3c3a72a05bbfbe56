// Package scheduler turns a graph into an executable plan over one or
// more devices and runs it: placement of layers and tensor shards on the
// devices (--devices), copies and all-reduces between them, KV stores per
// device, and an engine that batches many queries per step (continuous
// batching).
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// PlanOptions configures NewPlan.
type PlanOptions struct {
	// MaxTokens bounds the tokens of one step.
	MaxTokens int
	// Devices places the graph; the zero value is the first backend alone.
	Devices Devices
	// Backends run the devices, one per name in Devices.Names() order.
	Backends []backend.Backend
	// Registry holds the copy and all_reduce ops placement inserts (nil:
	// the built-ins).
	Registry *ops.Registry
	// MicroBatches overlaps the layer groups of a pipeline: a step of
	// several tokens is cut into up to this many token ranges that follow
	// each other through the groups (0 or 1: steps run whole). The
	// kernels then see fewer rows at a time, which can change the last
	// bits of a result; steps run whole give the one-device bits.
	MicroBatches int
}

// Plan is a graph placed on devices and compiled: a list of splits, each
// a run of nodes on one device, with the splits it waits for.
type Plan struct {
	// Graph is the placed graph: every node has its Device, with the
	// copies and all-reduces placement inserted.
	Graph     *graph.Graph
	MaxTokens int
	Devices   Devices
	backends  []backend.Backend
	splits    []split
	// Micro-batches (PlanOptions.MicroBatches): with several layer
	// groups, a step of several tokens is cut into up to mb token ranges
	// that flow through the groups one after another, so that group g
	// works on range i while group g+1 works on range i-1. Each range has its own runners (activation
	// buffers), inputs and outputs; outTs joins the outputs' rows.
	mb       int
	inputs   []map[string]*tensor.Tensor
	mbOuts   [][]*tensor.Tensor
	outTs    []*tensor.Tensor
	sub      []backend.Step
	slotDims [][]int // per device: K/V row width of each attention slot
	weights  []int64 // per device: bytes of weights it reads
	arena    int64
	exec     *executor // runs several devices' splits; made on first use
}

type split struct {
	dev     int
	runners []backend.Runner // one per micro-batch
	nodes   []*graph.Node
	deps    []int // earlier splits it reads from
}

// NewPlan places g on the devices and compiles one runner per split.
func NewPlan(g *graph.Graph, opt PlanOptions) (*Plan, error) {
	if opt.MaxTokens < 1 || opt.MaxTokens > 1<<20 {
		return nil, fmt.Errorf("plan: %d tokens per step (1 to %d)", opt.MaxTokens, 1<<20)
	}
	if len(opt.Backends) == 0 {
		return nil, errors.New("plan: no backend")
	}
	devs := opt.Devices
	if len(devs.Groups) == 0 {
		devs = Devices{Groups: []DeviceGroup{{Devices: []string{opt.Backends[0].Device()}}}}
	}
	names := devs.Names()
	if len(names) != len(opt.Backends) {
		return nil, fmt.Errorf("plan: %d devices (%s) but %d backends", len(names), devs, len(opt.Backends))
	}
	for i, b := range opt.Backends {
		if b.Device() != names[i] {
			return nil, fmt.Errorf("plan: backend %d is %s, the devices list %s", i, b.Device(), names[i])
		}
	}
	for _, v := range g.Params() {
		if v.Param.Tensor == nil {
			return nil, fmt.Errorf("plan: weight %s (%s) is not bound to a tensor", v.Name, v.Param.Source)
		}
	}
	for _, v := range g.Inputs {
		si, ok := ops.LookupStepInput(v.Name)
		if !ok {
			return nil, fmt.Errorf("plan: graph input %q is not a step input (known: %s)", v.Name, strings.Join(ops.StepInputNames(), ", "))
		}
		if v.Type.DType != si.Type.DType || !v.Type.Shape.Equal(si.Type.Shape) {
			return nil, fmt.Errorf("plan: graph input %s is %s, the step gives %s", v.Name, v.Type, si.Type)
		}
	}
	reg := opt.Registry
	if reg == nil {
		reg = ops.Builtins()
	}
	pl, err := place(g, reg, devs)
	if err != nil {
		return nil, err
	}
	p := &Plan{Graph: pl.g, MaxTokens: opt.MaxTokens, Devices: devs, backends: opt.Backends,
		slotDims: make([][]int, len(names)), weights: make([]int64, len(names)), mb: 1}
	if opt.MicroBatches < 0 || opt.MicroBatches > 64 {
		return nil, fmt.Errorf("plan: %d micro-batches (0 to 64)", opt.MicroBatches)
	}
	if len(devs.Groups) > 1 && opt.MaxTokens > 1 && opt.MicroBatches > 1 {
		p.mb = opt.MicroBatches
	}
	for _, n := range pl.g.Nodes {
		if b := opt.Backends[pl.exec[n]]; !b.Supports(n.Op) {
			return nil, fmt.Errorf("%s: op %s (node %q) cannot run on %s", n.Pos, n.Op.Name, n.Name, b.Device())
		}
	}
	// Splits: the earliest node not yet in a split starts one on its
	// device, which takes that device's following nodes for as long as
	// their inputs are computed by earlier splits or by itself.
	// A node that another device reads ends its split (an all-reduce, or
	// the last node of a layer group), so that the reader waits for it
	// and not for whatever its own device does next.
	crossReads := map[*graph.Node]bool{}
	for _, n := range pl.g.Nodes {
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil && pl.exec[v.Producer] != pl.exec[n] {
				crossReads[v.Producer] = true
			}
		}
	}
	splitOf := map[int]int{} // value ID → split computing it
	done := make([]bool, len(pl.g.Nodes))
	for i := range pl.g.Nodes {
		if done[i] {
			continue
		}
		dev := pl.exec[pl.g.Nodes[i]]
		s := split{dev: dev}
		ready := func(n *graph.Node) bool {
			for _, v := range n.Inputs {
				if v != nil && v.Producer != nil {
					if _, ok := splitOf[v.ID]; !ok {
						return false
					}
				}
			}
			return true
		}
		deps := map[int]bool{}
		for j := i; j < len(pl.g.Nodes); j++ {
			n := pl.g.Nodes[j]
			if done[j] || pl.exec[n] != dev {
				continue
			}
			if !ready(n) {
				break
			}
			for _, v := range n.Inputs {
				if v != nil && v.Producer != nil && splitOf[v.ID] != len(p.splits) {
					deps[splitOf[v.ID]] = true
				}
			}
			s.nodes = append(s.nodes, n)
			done[j] = true
			for _, o := range n.Outputs {
				splitOf[o.ID] = len(p.splits)
			}
			if crossReads[n] {
				break // another device waits for this node: let it start now
			}
		}
		for d := range deps {
			s.deps = append(s.deps, d)
		}
		p.splits = append(p.splits, s)
	}
	// Bindings: graph inputs in host memory (one set per micro-batch),
	// weights placed on each device.
	binds := make([]map[int]*tensor.Tensor, p.mb)
	for m := range binds {
		binds[m] = map[int]*tensor.Tensor{}
		in := map[string]*tensor.Tensor{}
		for _, v := range pl.g.Inputs {
			t := &tensor.Tensor{Name: v.Name, DType: v.Type.DType, Shape: []int{opt.MaxTokens}, Data: make([]byte, 4*opt.MaxTokens)}
			binds[m][v.ID] = t
			in[v.Name] = t
		}
		p.inputs = append(p.inputs, in)
	}
	bind := binds[0]
	keep := map[int]bool{}
	for _, v := range pl.g.Outputs {
		keep[v.ID] = true
	}
	for si, s := range p.splits {
		for _, n := range s.nodes {
			for _, v := range n.Inputs {
				if v != nil && v.Producer != nil && splitOf[v.ID] != si {
					keep[v.ID] = true
				}
			}
		}
	}
	counted := make([]map[*tensor.Tensor]bool, len(names))
	slots := map[*graph.Node]int{}
	for si := range p.splits {
		s := &p.splits[si]
		b := opt.Backends[s.dev]
		if counted[s.dev] == nil {
			counted[s.dev] = map[*tensor.Tensor]bool{}
		}
		for _, n := range s.nodes {
			for _, v := range n.Inputs {
				if v == nil || v.Param == nil {
					continue
				}
				if !counted[s.dev][v.Param.Tensor] {
					counted[s.dev][v.Param.Tensor] = true
					p.weights[s.dev] += int64(len(v.Param.Tensor.Data))
				}
				if _, ok := bind[v.ID]; !ok {
					wt, err := b.Weight(v.Param.Tensor)
					if err != nil {
						return nil, fmt.Errorf("%s: weight %s: %w", b.Device(), v.Param.Source, err)
					}
					for _, bd := range binds {
						bd[v.ID] = wt
					}
				}
			}
			if n.Op.Stateful {
				slots[n] = len(p.slotDims[s.dev])
				kd := 0
				if len(n.Inputs) > 1 && n.Inputs[1] != nil {
					kd = n.Inputs[1].Type.Shape.Last()
				}
				p.slotDims[s.dev] = append(p.slotDims[s.dev], kd)
			}
		}
		for _, bd := range binds {
			r, err := b.Compile(s.nodes, backend.CompileOptions{MaxTokens: opt.MaxTokens, Bind: bd, Keep: keep, Slots: slots})
			if err != nil {
				return nil, err
			}
			s.runners = append(s.runners, r)
			p.arena += r.ArenaBytes()
		}
	}
	for _, bd := range binds {
		var outs []*tensor.Tensor
		for _, v := range pl.g.Outputs {
			t, ok := bd[v.ID]
			if !ok || v.Producer == nil {
				return nil, fmt.Errorf("plan: output %s is not computed by an op", v.Name)
			}
			outs = append(outs, t)
		}
		p.mbOuts = append(p.mbOuts, outs)
	}
	p.outTs = p.mbOuts[0]
	if p.mb > 1 {
		// The joined outputs: as many rows as the step has, at most.
		p.outTs = nil
		for _, t := range p.mbOuts[0] {
			cols := t.Shape[len(t.Shape)-1]
			p.outTs = append(p.outTs, &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: append([]int(nil), t.Shape...),
				Data: make([]byte, 4*cols*opt.MaxTokens)})
		}
	}
	p.sub = make([]backend.Step, p.mb)
	return p, nil
}

// Kernels returns the number of kernel launches per step.
func (p *Plan) Kernels() int { return len(p.Graph.Nodes) }

// Splits returns the number of device splits per step.
func (p *Plan) Splits() int { return len(p.splits) }

// ArenaBytes returns the bytes of activation buffers over all devices.
func (p *Plan) ArenaBytes() int64 { return p.arena }

// Backends returns the plan's backends, in Devices.Names() order.
func (p *Plan) Backends() []backend.Backend { return p.backends }

// WeightBytes returns the bytes of weights each device reads, in
// Devices.Names() order; a tensor split holds only its shard.
func (p *Plan) WeightBytes() []int64 { return p.weights }

// NewKV makes the KV stores of every device and the block manager over
// them, holding at most budget bytes (0: no limit).
func (p *Plan) NewKV(budget int64, typ backend.KVType) (*KV, error) {
	var stores []backend.KVStore
	for i, b := range p.backends {
		s, err := b.NewKVStore(p.slotDims[i], typ)
		if err != nil {
			return nil, err
		}
		stores = append(stores, s)
	}
	return newKV(stores, typ, budget), nil
}

// Run executes one step over the tokens in st and returns the graph
// outputs (views valid until the next Run). The splits of different
// devices run concurrently as far as their dependencies allow.
func (p *Plan) Run(ctx context.Context, st *backend.Step, kv *KV, prof *Profile) ([]*tensor.Tensor, error) {
	n := len(st.Tokens)
	if n == 0 || n > p.MaxTokens {
		return nil, fmt.Errorf("step of %d tokens (plan holds 1..%d)", n, p.MaxTokens)
	}
	if len(kv.stores) != len(p.backends) {
		return nil, fmt.Errorf("plan: KV stores for %d devices, the plan has %d", len(kv.stores), len(p.backends))
	}
	var pr backend.Profiler
	if prof != nil {
		pr = prof
	}
	if len(p.splits) == 1 {
		p.setInputs(0, st)
		s := &p.splits[0]
		if err := s.runners[0].Run(ctx, st, kv.stores[s.dev], pr); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return p.outTs, nil
	}
	if p.exec == nil {
		p.exec = newExecutor(p)
	}
	subs := p.microBatches(st)
	for m := range subs {
		p.setInputs(m, &subs[m])
	}
	if err := p.exec.run(ctx, subs, kv, pr); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.mb == 1 {
		return p.outTs, nil
	}
	// Join the micro-batches' output rows, in step order.
	for o, t := range p.outTs {
		off, rows := 0, 0
		for m := range subs {
			mt := p.mbOuts[m][o]
			n := len(mt.Data)
			if len(mt.Shape) == 2 {
				rows += mt.Shape[0]
				n = mt.Shape[0] * mt.Shape[1] * 4
			}
			copy(t.Data[off:], mt.Data[:n])
			off += n
		}
		if len(t.Shape) == 2 {
			t.Shape[0] = rows
		}
	}
	return p.outTs, nil
}

// setInputs writes the tokens and positions of st into micro-batch m's
// input tensors.
func (p *Plan) setInputs(m int, st *backend.Step) {
	in := p.inputs[m]
	if tok, ok := in["tokens"]; ok {
		copy(tensor.BytesToI32(tok.Data), st.Tokens)
	}
	if pos, ok := in["pos"]; ok {
		copy(tensor.BytesToI32(pos.Data), st.Pos)
	}
	if seq, ok := in["seq"]; ok {
		copy(tensor.BytesToI32(seq.Data), st.Seq)
	}
	if typ, ok := in["token_types"]; ok {
		d := tensor.BytesToI32(typ.Data)[:len(st.Tokens)]
		if n := copy(d, st.Types); n < len(d) {
			clear(d[n:])
		}
	}
	for _, t := range in {
		t.Shape[0] = len(st.Tokens)
	}
}

// microBatches cuts st into up to p.mb contiguous token ranges (fewer
// when the step has fewer tokens), each with the rows it keeps
// renumbered from its start.
func (p *Plan) microBatches(st *backend.Step) []backend.Step {
	n := len(st.Tokens)
	m := min(p.mb, n)
	if m <= 1 {
		p.sub[0] = *st
		return p.sub[:1]
	}
	subs := p.sub[:m]
	k := 0
	for i := range subs {
		lo, hi := n*i/m, n*(i+1)/m
		sb := &subs[i]
		sb.Tokens, sb.Pos, sb.Seq = st.Tokens[lo:hi], st.Pos[lo:hi], st.Seq[lo:hi]
		sb.Types = nil
		if len(st.Types) >= hi {
			sb.Types = st.Types[lo:hi]
		}
		sb.Decode = nil
		if len(st.Decode) >= hi {
			sb.Decode = st.Decode[lo:hi]
		}
		sb.Memory = nil
		if len(st.Memory) >= hi {
			sb.Memory = st.Memory[lo:hi]
		}
		sb.Loc, sb.View, sb.Len, sb.Views = st.Loc[lo:hi], st.View[lo:hi], st.Len[lo:hi], st.Views
		sb.Shift = nil
		if i == 0 {
			sb.Shift = st.Shift // applied once, before any range attends
		}
		sb.Keep = sb.Keep[:0]
		for k < len(st.Keep) && int(st.Keep[k]) < hi {
			sb.Keep = append(sb.Keep, st.Keep[k]-int32(lo))
			k++
		}
	}
	return subs
}

// Close stops the goroutines that run the devices' splits. The plan's
// backends stay open: their owner closes them.
func (p *Plan) Close() {
	if p.exec != nil {
		p.exec.close()
		p.exec = nil
	}
}
