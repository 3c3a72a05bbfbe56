package ops

import (
	"fmt"

	"github.com/weftrun/weft/tensor"
)

// Fused ops are introduced by graph passes (graph/fuse.go); a spec may
// also name them directly.
func fusedDefs() []*Def {
	return []*Def{
		{Name: "linear_multi", Doc: "Several linear maps of one input in one kernel (merged QKV): out_i = x·W_iᵀ; x is quantized once.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true, Variadic: true}}, RowWise: true,
			Shape: shapeLinearMulti},
		{Name: "gated_ffn", Doc: "Gate and up projections with the gated activation as epilogue: act(x·W_gᵀ) ⊙ (x·W_uᵀ).",
			Inputs: []Port{{Name: "x"}, {Name: "w_gate", Weight: true}, {Name: "w_up", Weight: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "act", Type: AttrString, Default: "silu", Enum: []string{"silu", "gelu", "gelu_tanh"}, Doc: "gate activation: silu (SwiGLU), gelu (GEGLU) or gelu_tanh (GEGLU with the tanh GELU)"}},
			Shape: shapeGatedFFN},
		{Name: "rope_attention", Doc: "RoPE on q and k, then attention: the fusion of rope, rope and attention.",
			Inputs: []Port{{Name: "q"}, {Name: "k"}, {Name: "v"}, {Name: "pos"}}, Outputs: outPort, Stateful: true,
			Attrs: append(append([]AttrDef(nil), attentionAttrs...),
				AttrDef{Name: "rope_dim", Type: AttrInt, Default: int64(0), Doc: "rotated features per head (0: the whole head)"},
				AttrDef{Name: "rope_base", Type: AttrFloat, Default: 10000.0, Doc: "RoPE frequency base"},
				AttrDef{Name: "pairing", Type: AttrString, Default: "adjacent", Enum: []string{"adjacent", "rotate_half"}, Doc: "RoPE pairing"}),
			Shape: shapeRoPEAttention},
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
