package cpudev

import (
	"fmt"
	"math"
	"sync"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
)

// encDecKernels are the CPU kernels of the encoder-decoder ops.
var encDecKernels = map[string]Kernel{
	"cross_attention": kCrossAttention,
}

// biasedTask is the reusable work of one attention call site with a
// relative-position bias, or of one cross_attention: item k of a step is
// head k%heads of token k/heads, spread over the pool's threads.
type biasedTask struct {
	p     cpu.AttendParams
	rb    *cpu.RelBias // nil for cross_attention
	qd    int
	q     []float32
	out   []float32
	views []biasedView // per token: its keys and values
	mu    sync.Mutex
	free  []*biasedScratch
}

// biasedView is one token's keys and values and its position.
type biasedView struct {
	kv   cpu.KV
	n    int
	qpos int
}

type biasedScratch struct{ s []float32 }

func newBiasedTask(a ops.Attrs, qd int, rb *cpu.RelBias) *biasedTask {
	heads := a.Int("heads")
	hd := qd / heads
	scale := float32(a.Float("scale"))
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	return &biasedTask{qd: qd, rb: rb, p: cpu.AttendParams{Heads: heads, KVHeads: ops.KVHeads(a), HeadDim: hd, Scale: scale}}
}

// prepare sizes the per-token views for n tokens.
func (t *biasedTask) prepare(q, out []float32, n int) {
	t.q, t.out = q, out
	for len(t.views) < n {
		t.views = append(t.views, biasedView{})
	}
}

// Run implements cpu.Task.
func (t *biasedTask) Run(lo, hi int) {
	t.mu.Lock()
	var sc *biasedScratch
	if k := len(t.free); k > 0 {
		sc, t.free = t.free[k-1], t.free[:k-1]
	} else {
		sc = &biasedScratch{}
	}
	t.mu.Unlock()
	for k := lo; k < hi; k++ {
		i, h := k/t.p.Heads, k%t.p.Heads
		v := &t.views[i]
		p := t.p
		p.N = v.n
		if need := cpu.AttendBiasScratch(p); cap(sc.s) < need {
			sc.s = make([]float32, need+256)
		}
		cpu.AttendBiased(t.out[i*t.qd:(i+1)*t.qd], t.q[i*t.qd:(i+1)*t.qd], &v.kv, p, t.rb, v.qpos, sc.s, h, h+1)
	}
	t.mu.Lock()
	t.free = append(t.free, sc)
	t.mu.Unlock()
}

// attendRelBias is attention with T5's relative-position bias (the
// attention op's rel_bias input): k and v go to the cache, and each token
// attends over its sequence's rows, which hold positions 0, 1, 2...
func attendRelBias(c *Call) error {
	st, kv := c.Step, c.KV
	if st == nil || kv == nil {
		return fmt.Errorf("attention needs a KV cache")
	}
	q, k, v := f32(c.In[0]), f32(c.In[1]), f32(c.In[2])
	qd, kd := c.In[0].Shape[1], c.In[1].Shape[1]
	n := ops.Rows(c.Out[0])
	if len(st.Loc) < n || len(st.View) < n || len(st.Len) < n {
		return fmt.Errorf("attention: the step addresses %d of its %d tokens in the KV cache", min(len(st.Loc), len(st.View), len(st.Len)), n)
	}
	for t := 0; t < n; t++ {
		if err := kv.Write(c.Slot, st.Loc[t], k[t*kd:(t+1)*kd], v[t*kd:(t+1)*kd]); err != nil {
			return err
		}
	}
	task, ok := c.State.(*biasedTask)
	if !ok {
		// The table (f16 in most T5 GGUFs) is widened to f32 once.
		m, err := cpu.MatrixOf(c.In[3])
		if err != nil {
			return err
		}
		table := make([]float32, m.Rows*m.Cols)
		for r := 0; r < m.Rows; r++ {
			if err := cpu.DequantizeRow(table[r*m.Cols:(r+1)*m.Cols], m, r); err != nil {
				return err
			}
		}
		task = newBiasedTask(c.Attrs, qd, cpu.NewRelBias(table, m.Rows, c.Attrs.Int("max_distance"), !c.Attrs.Bool("causal")))
		c.State = task
	}
	task.prepare(q, f32(c.Out[0]), n)
	bidi := task.rb.Bidirectional
	for t := 0; t < n; t++ {
		cnt := int(st.Len[t])
		if bidi {
			// Every token of a bidirectional step sees its whole view:
			// the most rows any token of the view sees.
			for u := 0; u < n; u++ {
				if st.View[u] == st.View[t] {
					cnt = max(cnt, int(st.Len[u]))
				}
			}
		}
		tv := &task.views[t]
		tv.n, tv.qpos = cnt, int(st.Pos[t])
		if err := kv.View(c.Slot, st.Views[st.View[t]], cnt, &tv.kv); err != nil {
			return err
		}
	}
	c.Pool.Run(n*task.p.Heads, 1, task)
	return nil
}

// crossKV is one cross_attention's key and value projections of one
// memory, rows × kv_heads·head_dim each.
type crossKV struct{ k, v []float32 }

// kCrossAttention attends each token over the encoder output of its
// sequence (the step's Memory). The memory's K/V projections are made on
// its first use by this call site and kept with the memory.
func kCrossAttention(c *Call) error {
	st := c.Step
	qd := c.In[0].Shape[1]
	n := ops.Rows(c.Out[0])
	if st == nil || len(st.Memory) < n {
		return fmt.Errorf("cross_attention needs the encoder output of every token's sequence (the step's memory): run the encoder first")
	}
	wk, err := cpu.MatrixOf(c.In[1])
	if err != nil {
		return err
	}
	wv, err := cpu.MatrixOf(c.In[2])
	if err != nil {
		return err
	}
	task, ok := c.State.(*biasedTask)
	if !ok {
		task = newBiasedTask(c.Attrs, qd, nil)
		c.State = task
	}
	task.prepare(f32(c.In[0]), f32(c.Out[0]), n)
	for t := 0; t < n; t++ {
		m := st.Memory[t]
		if m == nil {
			return fmt.Errorf("token %d has no encoder output to attend over", t)
		}
		if m.Cols != wk.Cols {
			return fmt.Errorf("the encoder output has %d features, wk reads %d", m.Cols, wk.Cols)
		}
		kv, err := crossProjections(c, m, wk, wv)
		if err != nil {
			return err
		}
		tv := &task.views[t]
		tv.kv.K, tv.kv.V, tv.kv.Len = append(tv.kv.K[:0], kv.k), append(tv.kv.V[:0], kv.v), append(tv.kv.Len[:0], m.Rows)
		tv.n, tv.qpos = m.Rows, 0
	}
	c.Pool.Run(n*task.p.Heads, 1, task)
	return nil
}

// crossProjections returns the K/V projections of memory m for call site
// c, computing them on the first call.
func crossProjections(c *Call, m *backend.Memory, wk, wv cpu.Matrix) (*crossKV, error) {
	d, err := m.Derived(c, func() (any, error) {
		kv := &crossKV{k: make([]float32, m.Rows*wk.Rows), v: make([]float32, m.Rows*wv.Rows)}
		if err := cpu.MatMul(c.Pool, kv.k, wk, m.Data, m.Rows); err != nil {
			return nil, err
		}
		if err := cpu.MatMul(c.Pool, kv.v, wv, m.Data, m.Rows); err != nil {
			return nil, err
		}
		return kv, nil
	})
	if err != nil {
		return nil, err
	}
	return d.(*crossKV), nil
}
