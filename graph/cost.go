package graph

// Cost estimates what one node does for one token (one row of the step's
// T rows), the figures the graph page shows. The counts are written out
// per op below; an op not listed costs nothing but its weight bytes.
type Cost struct {
	// FLOPs are floating-point operations per token, multiply and add
	// counted apart (a multiply-accumulate is 2).
	FLOPs int64 `json:"flops"`
	// FLOPsPerPos is what attention adds per position of context: a
	// token at position P costs FLOPs + P·FLOPsPerPos (P ≤ Window when
	// Window > 0).
	FLOPsPerPos int64 `json:"flops_per_pos,omitempty"`
	Window      int   `json:"window,omitempty"`
	// WeightBytes are the bytes of the weights the node reads (all of
	// them for a step: a decode step reads each weight once).
	WeightBytes int64 `json:"weight_bytes"`
	// ActBytes are the activation bytes a token reads and writes (f32).
	ActBytes int64 `json:"act_bytes"`
	// KVBytesPerPos are the KV-cache bytes attention reads per position
	// (keys and values, f16).
	KVBytesPerPos int64 `json:"kv_bytes_per_pos,omitempty"`
	// Params counts the weight elements.
	Params int64 `json:"params"`
}

// width is the last dimension of v (its features per token): 1 for a
// value of one element per token ([T]: token ids, positions), 0 for none.
func width(v *Value) int64 {
	if v == nil || len(v.Type.Shape) == 0 {
		return 0
	}
	last := v.Type.Shape[len(v.Type.Shape)-1]
	if last.Sym != "" {
		return 1
	}
	return int64(last.N)
}

// elements counts the elements of a value with constant dimensions
// (symbolic ones, the step's rows, count 1).
func elements(v *Value) int64 {
	n := int64(1)
	for _, d := range v.Type.Shape {
		if d.Sym == "" {
			n *= int64(d.N)
		}
	}
	return n
}

// ValueBytes returns the bytes of a weight value of known shape (0 for a
// type whose rows cannot be sized).
func ValueBytes(v *Value) int64 {
	sh := v.Type.Shape
	if len(sh) == 0 {
		return 0
	}
	rows := int64(1)
	for _, d := range sh[:len(sh)-1] {
		rows *= int64(d.N)
	}
	rb, err := v.Type.DType.RowBytes(sh[len(sh)-1].N)
	if err != nil {
		return 0
	}
	return rows * int64(rb)
}

// perElement is the FLOPs per output element of elementwise and
// normalising ops:
//
//	add, mul, residual: 1 (one add or multiply)
//	rms_norm: 4 (square and sum, then scale by 1/rms and by the weight)
//	layer_norm: 7 (mean: 1, centre: 1, square and sum: 2, scale: 2, bias: 1)
//	swiglu, geglu: 4 (the activation's exp, add and divide, then × up)
//	rope: 3 (per element of a rotated pair: two multiplies and an add)
//	sinusoidal: 1
var perElement = map[string]int64{
	"add": 1, "mul": 1, "residual": 1,
	"rms_norm": 4, "layer_norm": 7,
	"swiglu": 4, "geglu": 4,
	"rope": 3, "sinusoidal": 1,
}

// NodeCost estimates n's cost per token:
//
//   - each 2-D weight [out, in] multiplies the token's row: 2·out·in
//     FLOPs (moe: only top_k of its experts run);
//   - embedding reads one row of its table and computes nothing;
//   - elementwise ops: perElement × the output width, plus that of the
//     ops fused into the node (fused linear + add: 2·out·in + out);
//   - attention at position P: q·kᵀ and the weighted sum of v are
//     2·Wq·P FLOPs each (Wq = heads · head_dim), the softmax 5·heads·P
//     (max, subtract, exp, sum, divide), so FLOPsPerPos = 4·Wq + 5·heads;
//     it reads 2·Wkv f16 values of the cache per position.
func NodeCost(n *Node) Cost {
	var c Cost
	op := n.Op.Name
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		if v.Param == nil {
			c.ActBytes += 4 * width(v)
			continue
		}
		el := elements(v)
		c.Params += el
		c.WeightBytes += ValueBytes(v)
		if len(v.Type.Shape) < 2 {
			continue
		}
		switch op {
		case "embedding":
			if rb, err := v.Type.DType.RowBytes(int(width(v))); err == nil && i == 0 {
				c.ActBytes += int64(rb) // one row of the table per token
			}
		case "moe":
			experts := int64(v.Type.Shape[0].N)
			k := int64(n.Attrs.Int("top_k"))
			if experts > 0 && k > 0 {
				c.FLOPs += 2 * el * k / experts
			}
		default:
			c.FLOPs += 2 * el
		}
	}
	for _, v := range n.Outputs {
		c.ActBytes += 4 * width(v)
	}
	ops := n.Fused // a fused node: the ops it stands for
	if len(ops) == 0 {
		ops = []string{op}
	}
	out := int64(0)
	if len(n.Outputs) > 0 {
		out = width(n.Outputs[0])
	}
	for _, o := range ops {
		if o != "rope" || op != "rope_attention" { // its ropes turn q and k, counted below
			c.FLOPs += perElement[o] * out
		}
	}
	switch op {
	case "attention", "rope_attention":
		heads := int64(n.Attrs.Int("heads"))
		wq, wkv := width(n.Inputs[0]), int64(0)
		if len(n.Inputs) > 1 {
			wkv = width(n.Inputs[1])
		}
		c.FLOPsPerPos = 4*wq + 5*heads
		c.KVBytesPerPos = 2 * wkv * 2 // keys and values, 2 bytes each
		c.Window = n.Attrs.Int("window")
		if op == "rope_attention" {
			c.FLOPs += perElement["rope"] * (wq + wkv)
		}
	}
	return c
}
