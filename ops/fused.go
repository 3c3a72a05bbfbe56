package ops

import (
	"fmt"

	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/tensor"
)

// Fused ops are introduced by graph passes (graph/fuse.go); a spec may
// also name them directly.
func fusedDefs() []*Def {
	return []*Def{
		{Name: "linear_multi", Doc: "Several linear maps of one input in one kernel (merged QKV): out_i = x·W_iᵀ; x is quantized once.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true, Variadic: true}}, RowWise: true,
			Shape: shapeLinearMulti, Kernels: map[string]Kernel{CPU: kLinearMulti}},
		{Name: "gated_ffn", Doc: "Gate and up projections with the gated activation as epilogue: act(x·W_gᵀ) ⊙ (x·W_uᵀ).",
			Inputs: []Port{{Name: "x"}, {Name: "w_gate", Weight: true}, {Name: "w_up", Weight: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "act", Type: AttrString, Default: "silu", Enum: []string{"silu", "gelu"}, Doc: "gate activation: silu (SwiGLU) or gelu (GEGLU)"}},
			Shape: shapeGatedFFN, Kernels: map[string]Kernel{CPU: kGatedFFN}},
		{Name: "rope_attention", Doc: "RoPE on q and k, then attention: the fusion of rope, rope and attention.",
			Inputs: []Port{{Name: "q"}, {Name: "k"}, {Name: "v"}, {Name: "pos"}}, Outputs: outPort, Stateful: true,
			Attrs: append(append([]AttrDef(nil), attentionAttrs...),
				AttrDef{Name: "rope_dim", Type: AttrInt, Default: int64(0), Doc: "rotated features per head (0: the whole head)"},
				AttrDef{Name: "rope_base", Type: AttrFloat, Default: 10000.0, Doc: "RoPE frequency base"},
				AttrDef{Name: "pairing", Type: AttrString, Default: "adjacent", Enum: []string{"adjacent", "rotate_half"}, Doc: "RoPE pairing"}),
			Shape: shapeRoPEAttention, Kernels: map[string]Kernel{CPU: kRoPEAttention}},
	}
}

func shapeLinearMulti(in []*Type, _ Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	if len(in) < 2 {
		return nil, fmt.Errorf("linear_multi needs at least one weight")
	}
	out := make([]Type, 0, len(in)-1)
	for i, w := range in[1:] {
		if w == nil || len(w.Shape) != 2 || w.Shape[1] != x.Shape[1] {
			return nil, fmt.Errorf("weight %d must be [out, %s]", i, x.Shape[1])
		}
		out = append(out, Type{tensor.F32, Shape{x.Shape[0], w.Shape[0]}})
	}
	return out, nil
}

func shapeGatedFFN(in []*Type, a Attrs) ([]Type, error) {
	outs, err := shapeLinearMulti(in, a)
	if err != nil {
		return nil, err
	}
	if len(outs) != 2 || !outs[0].Shape.Equal(outs[1].Shape) {
		return nil, fmt.Errorf("gate and up weights must have the same shape")
	}
	return outs[:1], nil
}

func shapeRoPEAttention(in []*Type, a Attrs) ([]Type, error) {
	p, err := need(in, 3, "pos")
	if err != nil {
		return nil, err
	}
	if err := positions(p); err != nil {
		return nil, err
	}
	return shapeAttention(in[:3], a)
}

func matrices(ts []*tensor.Tensor) ([]cpu.Matrix, error) {
	ms := make([]cpu.Matrix, len(ts))
	for i, t := range ts {
		m, err := cpu.MatrixOf(t)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return ms, nil
}

// multiState caches the weight views and output slices of a multi-matmul
// call site.
type multiState struct {
	ws   []cpu.Matrix
	dsts [][]float32
}

func multi(c *Call, weights []*tensor.Tensor, outs int) (*multiState, error) {
	if s, ok := c.State.(*multiState); ok {
		return s, nil
	}
	ws, err := matrices(weights)
	if err != nil {
		return nil, err
	}
	s := &multiState{ws: ws, dsts: make([][]float32, outs)}
	c.State = s
	return s, nil
}

func kLinearMulti(c *Call) error {
	s, err := multi(c, c.In[1:], len(c.Out))
	if err != nil {
		return err
	}
	for i, o := range c.Out {
		s.dsts[i] = f32(o)
	}
	return cpu.MatMulMulti(c.Pool, s.dsts, s.ws, f32(c.In[0]), Rows(c.In[0]))
}

func kGatedFFN(c *Call) error {
	s, err := multi(c, c.In[1:3], 2)
	if err != nil {
		return err
	}
	n := Rows(c.In[0])
	out := f32(c.Out[0])
	// The up projection goes to the output; the gate to scratch.
	gate := c.scratch(n * s.ws[0].Rows)
	s.dsts[0], s.dsts[1] = gate, out
	if err := cpu.MatMulMulti(c.Pool, s.dsts, s.ws, f32(c.In[0]), n); err != nil {
		return err
	}
	m := n * s.ws[0].Rows
	if c.Attrs.String("act") == "gelu" {
		// out holds up: GELU the gate (scratch) in place, then multiply.
		cpu.GELU(gate[:m])
		cpu.Mul(out[:m], gate[:m], out[:m])
	} else {
		cpu.SwiGLU(out[:m], gate[:m], out[:m])
	}
	return nil
}

func kRoPEAttention(c *Call) error {
	// Rotate q and k in scratch copies, then attend.
	qd, kd := c.In[0].Shape[1], c.In[1].Shape[1]
	n := Rows(c.In[0])
	buf := c.scratch(n * (qd + kd))
	q, k := buf[:n*qd], buf[n*qd:n*(qd+kd)]
	copy(q, f32(c.In[0])[:n*qd])
	copy(k, f32(c.In[1])[:n*kd])
	pos := i32(c.In[3])
	heads := c.Attrs.Int("heads")
	r := ropeOf(c.Attrs, qd/heads, "rope_dim", "rope_base")
	r.apply(q, n, heads, pos)
	r.apply(k, n, kvHeads(c.Attrs), pos)
	return attend(c, q, k, f32(c.In[2]), qd, kd)
}

// scratch returns a float buffer owned by the call, grown as needed.
func (c *Call) scratch(n int) []float32 {
	if cap(c.Scratch) < n {
		c.Scratch = make([]float32, n)
	}
	return c.Scratch[:n]
}
