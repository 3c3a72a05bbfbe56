// Package scheduler turns a graph into an executable plan and runs it:
// buffers preallocated and reused by liveness, a segment KV cache, and an
// engine that batches many queries per step (continuous batching).
package scheduler

import (
	"context"
	"fmt"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// maxBuffer bounds one activation buffer (floats): 8 GiB.
const maxBuffer = 1 << 31

// Plan is a graph compiled for one device: nodes in topological order,
// each with its kernel and preallocated argument tensors.
type Plan struct {
	Graph     *graph.Graph
	MaxTokens int
	steps     []planStep
	acts      []*actTensor // every activation tensor, resized per step
	inputs    map[string]*tensor.Tensor
	outputs   []*actTensor
	outTs     []*tensor.Tensor
	slotDims  []int
	arena     [][]float32
	ArenaSize int64 // bytes of activation buffers
}

type planStep struct {
	node   *graph.Node
	kernel ops.Kernel
	call   ops.Call
}

// actTensor is an activation whose leading dimension follows the step.
type actTensor struct {
	t    *tensor.Tensor
	buf  []float32
	sym  string // "T", "K" or "" (constant rows)
	rows int    // constant rows
	cols int
}

// NewPlan compiles g for the CPU with room for maxTokens tokens per step.
func NewPlan(g *graph.Graph, maxTokens int) (*Plan, error) {
	if maxTokens < 1 || maxTokens > 1<<20 {
		return nil, fmt.Errorf("plan: %d tokens per step (1 to %d)", maxTokens, 1<<20)
	}
	p := &Plan{Graph: g, MaxTokens: maxTokens, inputs: map[string]*tensor.Tensor{}}
	last := map[int]int{} // value ID → index of last reading node
	for i, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil {
				last[v.ID] = i
			}
		}
	}
	for _, v := range g.Outputs {
		last[v.ID] = len(g.Nodes)
	}
	tensors := map[int]*tensor.Tensor{}
	for _, v := range g.Inputs {
		t := &tensor.Tensor{Name: v.Name, DType: v.Type.DType, Shape: []int{maxTokens}, Data: make([]byte, 4*maxTokens)}
		tensors[v.ID] = t
		p.inputs[v.Name] = t
	}
	for _, v := range g.Params() {
		if v.Param.Tensor == nil {
			return nil, fmt.Errorf("plan: weight %s (%s) is not bound to a tensor", v.Name, v.Param.Source)
		}
		tensors[v.ID] = v.Param.Tensor
	}
	// Buffers by liveness: a free list of arena buffers, best fit.
	type buf struct {
		data []float32
		free bool
	}
	var bufs []*buf
	owner := map[int]*buf{}
	acts := map[int]*actTensor{}
	alloc := func(n int) *buf {
		if n < 0 || n > maxBuffer {
			return nil
		}
		var best *buf
		for _, b := range bufs {
			if b.free && len(b.data) >= n && (best == nil || len(b.data) < len(best.data)) {
				best = b
			}
		}
		if best == nil {
			best = &buf{data: make([]float32, n)}
			bufs = append(bufs, best)
			p.ArenaSize += int64(n) * 4
		}
		best.free = false
		return best
	}
	slot := 0
	for i, n := range g.Nodes {
		kernel := n.Op.Kernels[ops.CPU]
		if kernel == nil {
			return nil, fmt.Errorf("%s: op %s has no CPU kernel", n.Pos, n.Op.Name)
		}
		st := planStep{node: n, kernel: kernel}
		st.call.Name = n.Name
		st.call.Attrs = n.Attrs
		st.call.Slot = -1
		if n.Op.Stateful {
			st.call.Slot = slot
			slot++
			kd := 0
			if len(n.Inputs) > 1 && n.Inputs[1] != nil {
				kd = n.Inputs[1].Type.Shape.Last()
			}
			p.slotDims = append(p.slotDims, kd)
		}
		for _, v := range n.Inputs {
			if v == nil {
				st.call.In = append(st.call.In, nil)
				continue
			}
			t, ok := tensors[v.ID]
			if !ok {
				return nil, fmt.Errorf("%s: %s: input %s has no buffer", n.Pos, n.Name, v.Name)
			}
			st.call.In = append(st.call.In, t)
		}
		for _, v := range n.Outputs {
			if v.Type.DType != tensor.F32 {
				return nil, fmt.Errorf("%s: %s: output %s is %s; activations must be f32", n.Pos, n.Name, v.Name, v.Type.DType)
			}
			a := &actTensor{cols: v.Type.Shape.Last()}
			rows := 1
			if len(v.Type.Shape) >= 2 {
				d := v.Type.Shape[0]
				if d.Sym != "" {
					a.sym = d.Sym
					rows = maxTokens
				} else {
					a.rows, rows = d.N, d.N
				}
			} else {
				a.rows = 1
			}
			if a.cols <= 0 || rows > maxBuffer/max(a.cols, 1) {
				return nil, fmt.Errorf("%s: %s: output %s of %d×%d floats is too large", n.Pos, n.Name, v.Name, rows, a.cols)
			}
			b := alloc(rows * a.cols)
			if b == nil {
				return nil, fmt.Errorf("%s: %s: output %s of %d×%d floats is too large", n.Pos, n.Name, v.Name, rows, a.cols)
			}
			owner[v.ID] = b
			a.buf = b.data
			shape := []int{rows, a.cols}
			if len(v.Type.Shape) == 1 {
				shape = []int{a.cols}
			}
			a.t = &tensor.Tensor{Name: v.Name, DType: tensor.F32, Shape: shape, Data: tensor.F32ToBytes(a.buf[:rows*a.cols])}
			acts[v.ID] = a
			p.acts = append(p.acts, a)
			tensors[v.ID] = a.t
			st.call.Out = append(st.call.Out, a.t)
		}
		// Buffers are released only after all of a node's outputs are
		// allocated, so no two outputs (nor an output and an input) of one
		// node share memory.
		for _, v := range n.Outputs {
			if _, used := last[v.ID]; !used {
				owner[v.ID].free = true // dead output: reusable after this node
			}
		}
		for _, v := range n.Inputs {
			if v != nil && last[v.ID] == i {
				if b, ok := owner[v.ID]; ok {
					b.free = true
				}
			}
		}
		p.steps = append(p.steps, st)
	}
	for _, v := range g.Outputs {
		a, ok := acts[v.ID]
		if !ok {
			return nil, fmt.Errorf("plan: output %s is not computed by an op", v.Name)
		}
		p.outputs = append(p.outputs, a)
	}
	for _, b := range bufs {
		p.arena = append(p.arena, b.data)
	}
	for _, a := range p.outputs {
		p.outTs = append(p.outTs, a.t)
	}
	return p, nil
}

// SlotDims returns the K/V row width of each attention slot.
func (p *Plan) SlotDims() []int { return p.slotDims }

// Kernels returns the number of kernel launches per step.
func (p *Plan) Kernels() int { return len(p.steps) }

// Run executes one step over the tokens in st and returns the graph
// outputs (views valid until the next Run).
func (p *Plan) Run(ctx context.Context, pool *cpu.Pool, st *ops.Step, prof *Profile) ([]*tensor.Tensor, error) {
	n := len(st.Tokens)
	if n == 0 || n > p.MaxTokens {
		return nil, fmt.Errorf("step of %d tokens (plan holds 1..%d)", n, p.MaxTokens)
	}
	if tok, ok := p.inputs["tokens"]; ok {
		copy(tensor.BytesToI32(tok.Data), st.Tokens)
		tok.Shape[0] = n
	}
	if pos, ok := p.inputs["pos"]; ok {
		copy(tensor.BytesToI32(pos.Data), st.Pos)
		pos.Shape[0] = n
	}
	for _, t := range p.inputs {
		t.Shape[0] = n
	}
	keep := len(st.Keep)
	for _, a := range p.acts {
		rows := a.rows
		switch a.sym {
		case "T":
			rows = n
		case "K":
			rows = keep
		}
		if len(a.t.Shape) == 2 {
			a.t.Shape[0] = rows
		}
		a.t.Data = tensor.F32ToBytes(a.buf[:max(rows, 1)*a.cols])
	}
	for i := range p.steps {
		s := &p.steps[i]
		s.call.Ctx = ctx
		s.call.Step = st
		s.call.Pool = pool
		var t0 int64
		if prof != nil {
			t0 = nanotime()
		}
		if err := s.kernel(&s.call); err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", s.node.Pos, s.node.Op.Name, s.node.Name, err)
		}
		if prof != nil {
			prof.add(s.node, nanotime()-t0)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.outTs, nil
}
