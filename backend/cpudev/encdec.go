package cpudev

import (
	"fmt"
	"math"

	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
)

// biasedState is the reusable work of one attention call site with a
// relative-position bias, or of one cross_attention.
type biasedState struct {
	p   cpu.AttendParams
	rb  *cpu.RelBias
	kv  cpu.KV
	s   []float32
	one [1]int // cross_attention's single KV segment length
}

func (s *biasedState) scratch(n int) []float32 {
	p := s.p
	p.N = n
	if need := cpu.AttendBiasScratch(p); cap(s.s) < need {
		s.s = make([]float32, need+256)
	}
	return s.s
}

func attendParams(a ops.Attrs, qd int) cpu.AttendParams {
	heads := a.Int("heads")
	hd := qd / heads
	scale := float32(a.Float("scale"))
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	return cpu.AttendParams{Heads: heads, KVHeads: ops.KVHeads(a), HeadDim: hd, Scale: scale}
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
	s, ok := c.State.(*biasedState)
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
		s = &biasedState{p: attendParams(c.Attrs, qd), rb: &cpu.RelBias{Table: table, Buckets: m.Rows,
			MaxDistance: c.Attrs.Int("max_distance"), Bidirectional: !c.Attrs.Bool("causal")}}
		c.State = s
	}
	out := f32(c.Out[0])
	for t := 0; t < n; t++ {
		cnt := int(st.Len[t])
		if s.rb.Bidirectional {
			// Every token of a bidirectional step sees its whole view.
			for u := 0; u < n; u++ {
				if st.View[u] == st.View[t] {
					cnt = max(cnt, int(st.Len[u]))
				}
			}
		}
		if err := kv.View(c.Slot, st.Views[st.View[t]], cnt, &s.kv); err != nil {
			return err
		}
		p := s.p
		p.N = cnt
		cpu.AttendBiased(out[t*qd:(t+1)*qd], q[t*qd:(t+1)*qd], &s.kv, p, s.rb, int(st.Pos[t]), s.scratch(cnt), 0, p.Heads)
	}
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
	q, out := f32(c.In[0]), f32(c.Out[0])
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
	s, ok := c.State.(*biasedState)
	if !ok {
		s = &biasedState{p: attendParams(c.Attrs, qd)}
		s.kv.K, s.kv.V, s.kv.Len = make([][]float32, 1), make([][]float32, 1), s.one[:]
		c.State = s
	}
	for t := 0; t < n; t++ {
		m := st.Memory[t]
		if m == nil {
			return fmt.Errorf("token %d has no encoder output to attend over", t)
		}
		if m.Cols != wk.Cols {
			return fmt.Errorf("the encoder output has %d features, wk reads %d", m.Cols, wk.Cols)
		}
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
			return err
		}
		kv := d.(*crossKV)
		s.kv.K[0], s.kv.V[0], s.kv.Len[0] = kv.k, kv.v, m.Rows
		p := s.p
		p.N = m.Rows
		cpu.AttendBiased(out[t*qd:(t+1)*qd], q[t*qd:(t+1)*qd], &s.kv, p, nil, 0, s.scratch(m.Rows), 0, p.Heads)
	}
	return nil
}
