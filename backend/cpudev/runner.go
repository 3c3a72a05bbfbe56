package cpudev

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/tensor"
)

// maxBuffer bounds one activation buffer (floats): 8 GiB.
const maxBuffer = 1 << 31

// runner is a split compiled for the CPU: nodes in order, each with its
// kernel and preallocated argument tensors in an arena reused by
// liveness.
type runner struct {
	b         *Backend
	steps     []runStep
	acts      []*actTensor // every activation tensor, resized per step
	arenaSize int64
	angles    ropeAngles // RoPE angles of the current step, shared by its layers
}

type runStep struct {
	node   *graph.Node
	kernel Kernel
	call   Call
	kept   bool // its outputs have a row per kept token: nothing to do when none is
}

// actTensor is an activation whose leading dimension follows the step.
type actTensor struct {
	t    *tensor.Tensor
	buf  []float32
	sym  string // "T", "K" or "" (constant rows)
	rows int    // constant rows
	cols int
}

// Compile implements backend.Backend.
func (b *Backend) Compile(nodes []*graph.Node, opt backend.CompileOptions) (backend.Runner, error) {
	maxTokens := opt.MaxTokens
	if maxTokens < 1 || maxTokens > 1<<20 {
		return nil, fmt.Errorf("%s: %d tokens per step (1 to %d)", b.name, maxTokens, 1<<20)
	}
	r := &runner{b: b}
	tensors := opt.Bind
	// Values read after the split (or never read: graph outputs) keep
	// their buffers; the others are freed after their last reader here.
	last := map[int]int{}
	for i, n := range nodes {
		for _, v := range n.Inputs {
			if v != nil {
				last[v.ID] = i
			}
		}
	}
	type buf struct {
		data []float32
		free bool
	}
	var bufs []*buf
	owner := map[int]*buf{}
	alloc := func(n int) *buf {
		var best *buf
		for _, b := range bufs {
			if b.free && len(b.data) >= n && (best == nil || len(b.data) < len(best.data)) {
				best = b
			}
		}
		if best == nil {
			best = &buf{data: make([]float32, n)}
			bufs = append(bufs, best)
			r.arenaSize += int64(n) * 4
		}
		best.free = false
		return best
	}
	for i, n := range nodes {
		kernel, ok := KernelFor(n.Op)
		if !ok {
			return nil, fmt.Errorf("%s: %s: op %s has no CPU kernel", n.Pos, b.name, n.Op.Name)
		}
		st := runStep{node: n, kernel: kernel}
		st.call.Name = n.Name
		st.call.Attrs = n.Attrs
		st.call.Slot = -1
		st.call.angles = &r.angles
		if n.Op.Stateful {
			s, ok := opt.Slots[n]
			if !ok {
				return nil, fmt.Errorf("%s: %s %q has no KV slot", n.Pos, n.Op.Name, n.Name)
			}
			st.call.Slot = s
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
			if v.Param != nil && n.Op.Name != "embedding" && n.Op.Name != "take" {
				b.pack(t) // a weight that a matmul may read
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
					st.kept = d.Sym == "K"
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
			bf := alloc(rows * a.cols)
			owner[v.ID] = bf
			a.buf = bf.data
			shape := []int{rows, a.cols}
			if len(v.Type.Shape) == 1 {
				shape = []int{a.cols}
			}
			a.t = &tensor.Tensor{Name: v.Name, DType: tensor.F32, Shape: shape, Data: tensor.F32ToBytes(a.buf[:rows*a.cols])}
			r.acts = append(r.acts, a)
			tensors[v.ID] = a.t
			st.call.Out = append(st.call.Out, a.t)
		}
		// Buffers are released only after all of a node's outputs are
		// allocated, so no two outputs (nor an output and an input) of one
		// node share memory.
		for _, v := range n.Outputs {
			if _, used := last[v.ID]; !used && !opt.Keep[v.ID] {
				owner[v.ID].free = true // dead output: reusable after this node
			}
		}
		for _, v := range n.Inputs {
			if v != nil && last[v.ID] == i && !opt.Keep[v.ID] {
				if bf, ok := owner[v.ID]; ok {
					bf.free = true
				}
			}
		}
		r.steps = append(r.steps, st)
	}
	return r, nil
}

// ArenaBytes implements backend.Runner.
func (r *runner) ArenaBytes() int64 { return r.arenaSize }

// Run implements backend.Runner. A panic in a kernel, on this goroutine
// or in a pool worker, becomes the step's error naming the node.
func (r *runner) Run(ctx context.Context, st *backend.Step, kv backend.KVStore, prof backend.Profiler) (err error) {
	var cache *KVCache
	if kv != nil {
		c, ok := kv.(*KVCache)
		if !ok {
			return fmt.Errorf("%s: KV store %T is not the CPU's", r.b.name, kv)
		}
		cache = c
	}
	n, keep := len(st.Tokens), len(st.Keep)
	for _, a := range r.acts {
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
	cur := -1
	// A fault on memory-mapped weights (the checkpoint truncated under a
	// running engine) panics here and in the pool's workers instead of
	// crashing the process, and becomes this step's error.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			where := r.b.name
			if cur >= 0 {
				s := &r.steps[cur]
				where = fmt.Sprintf("%s: %s %q on %s", s.node.Pos, s.node.Op.Name, s.node.Name, r.b.name)
			}
			if addr, ok := faultAddr(p); ok {
				err = fmt.Errorf("%s: memory fault at %#x: the model's memory-mapped checkpoint could not be read (was the file truncated or replaced while weft ran?)", where, addr)
				return
			}
			err = fmt.Errorf("%s: kernel panic: %v", where, p)
		}
	}()
	pool := r.b.pool
	for i := range r.steps {
		cur = i
		s := &r.steps[i]
		if s.kept && keep == 0 {
			continue // a micro-batch whose rows are all dropped
		}
		s.call.Ctx = ctx
		s.call.Step = st
		s.call.KV = cache
		s.call.Pool = pool
		var t0 time.Time
		if prof != nil {
			t0 = time.Now()
		}
		if err := s.kernel(&s.call); err != nil {
			return fmt.Errorf("%s: %s %q: %w", s.node.Pos, s.node.Op.Name, s.node.Name, err)
		}
		if prof != nil {
			prof.Add(s.node, int64(time.Since(t0)))
		}
	}
	return nil
}

// faultAddr returns the address of a memory fault raised under
// debug.SetPanicOnFault (a runtime error carrying the address), recovered
// directly or from a pool worker.
func faultAddr(p any) (uintptr, bool) {
	if w, ok := p.(interface{ Cause() any }); ok {
		p = w.Cause()
	}
	e, ok := p.(interface {
		error
		Addr() uintptr
	})
	if !ok {
		return 0, false
	}
	return e.Addr(), true
}
