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
	inputs    map[string]*tensor.Tensor
	outTs     []*tensor.Tensor
	slotDims  [][]int // per device: K/V row width of each attention slot
	weights   []int64 // per device: bytes of weights it reads
	arena     int64
	exec      *executor // runs several devices' splits; made on first use
}

type split struct {
	dev    int
	runner backend.Runner
	nodes  []*graph.Node
	deps   []int // earlier splits it reads from
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
	reg := opt.Registry
	if reg == nil {
		reg = ops.Builtins()
	}
	pl, err := place(g, reg, devs)
	if err != nil {
		return nil, err
	}
	p := &Plan{Graph: pl.g, MaxTokens: opt.MaxTokens, Devices: devs, backends: opt.Backends, inputs: map[string]*tensor.Tensor{},
		slotDims: make([][]int, len(names)), weights: make([]int64, len(names))}
	for _, n := range pl.g.Nodes {
		if b := opt.Backends[pl.exec[n]]; !b.Supports(n.Op) {
			return nil, fmt.Errorf("%s: op %s (node %q) cannot run on %s", n.Pos, n.Op.Name, n.Name, b.Device())
		}
	}
	// Splits: the earliest node not yet in a split starts one on its
	// device, which takes that device's following nodes for as long as
	// their inputs are computed by earlier splits or by itself.
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
		}
		for d := range deps {
			s.deps = append(s.deps, d)
		}
		p.splits = append(p.splits, s)
	}
	// Bindings: graph inputs in host memory, weights placed on each device.
	bind := map[int]*tensor.Tensor{}
	for _, v := range pl.g.Inputs {
		t := &tensor.Tensor{Name: v.Name, DType: v.Type.DType, Shape: []int{opt.MaxTokens}, Data: make([]byte, 4*opt.MaxTokens)}
		bind[v.ID] = t
		p.inputs[v.Name] = t
	}
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
					bind[v.ID] = wt
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
		r, err := b.Compile(s.nodes, backend.CompileOptions{MaxTokens: opt.MaxTokens, Bind: bind, Keep: keep, Slots: slots})
		if err != nil {
			return nil, err
		}
		s.runner = r
		p.arena += r.ArenaBytes()
	}
	for _, v := range pl.g.Outputs {
		t, ok := bind[v.ID]
		if !ok || v.Producer == nil {
			return nil, fmt.Errorf("plan: output %s is not computed by an op", v.Name)
		}
		p.outTs = append(p.outTs, t)
	}
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

// NewKV makes the KV stores of every device for sequences of at most
// maxPositions positions (0: no limit).
func (p *Plan) NewKV(maxPositions int, typ backend.KVType) (*KV, error) {
	kv := &KV{limit: maxPositions, typ: typ}
	for i, b := range p.backends {
		s, err := b.NewKVStore(p.slotDims[i], maxPositions, typ)
		if err != nil {
			return nil, err
		}
		kv.stores = append(kv.stores, s)
	}
	return kv, nil
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
	if tok, ok := p.inputs["tokens"]; ok {
		copy(tensor.BytesToI32(tok.Data), st.Tokens)
	}
	if pos, ok := p.inputs["pos"]; ok {
		copy(tensor.BytesToI32(pos.Data), st.Pos)
	}
	for _, t := range p.inputs {
		t.Shape[0] = n
	}
	var pr backend.Profiler
	if prof != nil {
		pr = prof
	}
	if len(p.splits) == 1 {
		s := &p.splits[0]
		if err := s.runner.Run(ctx, st, kv.stores[s.dev], pr); err != nil {
			return nil, err
		}
	} else {
		if p.exec == nil {
			p.exec = newExecutor(p)
		}
		if err := p.exec.run(ctx, st, kv, pr); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.outTs, nil
}

// Close stops the goroutines that run the devices' splits. The plan's
// backends stay open: their owner closes them.
func (p *Plan) Close() {
	if p.exec != nil {
		p.exec.close()
		p.exec = nil
	}
}

// KV is the KV cache of a plan: one store per device, holding that
// device's attention slots. Sequences are managed on all stores at once.
type KV struct {
	stores []backend.KVStore
	limit  int
	typ    backend.KVType
}

// Type returns the element type.
func (c *KV) Type() backend.KVType { return c.typ }

// Limit returns the most positions a sequence may hold (0: no limit).
func (c *KV) Limit() int { return c.limit }

// Reserve sizes the next segment of seq for n more positions.
func (c *KV) Reserve(seq, n int) {
	for _, s := range c.stores {
		s.Reserve(seq, n)
	}
}

// Len returns the positions cached for seq.
func (c *KV) Len(seq int) int { return c.stores[0].Len(seq) }

// Fork makes child share parent's cached positions.
func (c *KV) Fork(parent, child int) error {
	for _, s := range c.stores {
		if err := s.Fork(parent, child); err != nil {
			return err
		}
	}
	return nil
}

// Truncate drops positions ≥ n of seq.
func (c *KV) Truncate(seq, n int) {
	for _, s := range c.stores {
		s.Truncate(seq, n)
	}
}

// Drop forgets seq.
func (c *KV) Drop(seq int) {
	for _, s := range c.stores {
		s.Drop(seq)
	}
}

// Bytes returns the memory held by cached positions on all devices.
func (c *KV) Bytes() int64 {
	var n int64
	for _, s := range c.stores {
		n += s.Bytes()
	}
	return n
}

// PositionBytes returns the memory one position of one sequence takes,
// over all devices.
func (c *KV) PositionBytes() int64 {
	var n int64
	for _, s := range c.stores {
		n += s.PositionBytes()
	}
	return n
}
