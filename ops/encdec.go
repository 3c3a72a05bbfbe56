package ops

import (
	"fmt"

	"github.com/weftrun/weft/tensor"
)

// encDecDefs are the ops of encoder-decoder models (T5): attention from
// the decoder over the encoder's output.
func encDecDefs() []*Def {
	return []*Def{
		{Name: "cross_attention", Doc: "Attention of each decoder token over the encoder output of its sequence (the step's memory, computed once per request): out = Attn(q, M·W_kᵀ, M·W_vᵀ). The K/V projections of the memory are computed once per request and call site and held read-only with it.",
			Inputs: []Port{{Name: "q"}, {Name: "wk", Weight: true, Doc: "key projection [kv_heads·head_dim, memory features]"},
				{Name: "wv", Weight: true, Doc: "value projection [kv_heads·head_dim, memory features]"}},
			Outputs: outPort,
			Attrs: []AttrDef{
				{Name: "heads", Type: AttrInt, Required: true, Doc: "query heads"},
				{Name: "kv_heads", Type: AttrInt, Default: int64(0), Doc: "key/value heads (0: heads)"},
				{Name: "scale", Type: AttrFloat, Default: 0.0, Doc: "score scale (0: 1/sqrt(head_dim); T5: 1)"},
			},
			Shape: shapeCrossAttention},
	}
}

func shapeCrossAttention(in []*Type, a Attrs) ([]Type, error) {
	q, err := need(in, 0, "q")
	if err != nil {
		return nil, err
	}
	if err := act(q, "q"); err != nil {
		return nil, err
	}
	h, kvh := a.Int("heads"), KVHeads(a)
	if h <= 0 || q.Shape.Last()%h != 0 {
		return nil, fmt.Errorf("heads=%d does not divide q's %d features", h, q.Shape.Last())
	}
	if kvh <= 0 || h%kvh != 0 {
		return nil, fmt.Errorf("heads=%d is not a multiple of kv_heads=%d", h, kvh)
	}
	hd := q.Shape.Last() / h
	var width Dim
	for i, name := range []string{"wk", "wv"} {
		w, err := need(in, 1+i, name)
		if err != nil {
			return nil, err
		}
		if len(w.Shape) != 2 || w.Shape[0].N != kvh*hd {
			return nil, fmt.Errorf("%s is %s, want [kv_heads×head_dim = %d×%d, memory features]", name, w.Shape, kvh, hd)
		}
		if i == 1 && w.Shape[1] != width {
			return nil, fmt.Errorf("wk reads %s memory features, wv %s", width, w.Shape[1])
		}
		width = w.Shape[1]
	}
	return []Type{*q}, nil
}

// checkRelBias checks an attention's relative-position bias table
// against its attributes.
func checkRelBias(t *Type, a Attrs, heads int) error {
	if len(t.Shape) != 2 || t.Shape[1].N != heads {
		return fmt.Errorf("rel_bias is %s, want [buckets, %d]", t, heads)
	}
	if t.DType != tensor.F32 && t.DType != tensor.F16 && t.DType != tensor.BF16 {
		return fmt.Errorf("rel_bias is %s, want f32, f16 or bf16", t)
	}
	b := t.Shape[0].N
	half := b
	if !a.Bool("causal") {
		half = b / 2 // bidirectional: half the buckets for each direction
	}
	if half < 2 || (!a.Bool("causal") && b%2 != 0) {
		return fmt.Errorf("rel_bias has %d buckets: want at least 2 per direction (an even count for bidirectional attention)", b)
	}
	if md := a.Int("max_distance"); md <= half/2 {
		return fmt.Errorf("max_distance=%d must exceed the %d exactly-bucketed distances", md, half/2)
	}
	if a.Bool("alibi") || a.Int("window") > 0 || a.Int("sinks") > 0 || a.Float("softcap") != 0 {
		return fmt.Errorf("rel_bias does not combine with alibi, window, sinks or softcap")
	}
	return nil
}
