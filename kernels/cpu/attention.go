package cpu

import "math"

// KV is the keys and values one sequence can attend to, as a list of
// segments (a shared prompt segment, then the sequence's own): segment s
// holds Len[s] rows of kvHeads×headDim floats in K[s] and V[s].
type KV struct {
	K, V [][]float32
	Len  []int
}

// Positions returns the total number of cached positions.
func (kv *KV) Positions() int {
	n := 0
	for _, l := range kv.Len {
		n += l
	}
	return n
}

// AttendParams describes one attention computation.
type AttendParams struct {
	Heads, KVHeads, HeadDim int
	Scale                   float32
	// N is how many cached positions the query sees (causal: its own
	// position + 1). Sink > 0 with Window > 0 keeps the first Sink positions
	// and the last Window ones (StreamingLLM).
	N            int
	Sink, Window int
	// ALiBi slopes per head; nil for none.
	Slopes []float32
}

// Attend computes scaled dot-product attention of one query token
// (Heads×HeadDim in q) over the cached keys/values, writing Heads×HeadDim
// into out. scratch must hold at least N floats.
func Attend(out, q []float32, kv *KV, p AttendParams, scratch []float32) {
	hd := p.HeadDim
	group := p.Heads / p.KVHeads
	kvStride := p.KVHeads * hd
	n := p.N
	sc := scratch[:n]
	qpos := n - 1
	for h := 0; h < p.Heads; h++ {
		kh := h / group
		qh := q[h*hd : (h+1)*hd]
		// scores
		pos := 0
		for s := range kv.K {
			for r := 0; r < kv.Len[s] && pos < n; r++ {
				k := kv.K[s][r*kvStride+kh*hd : r*kvStride+kh*hd+hd]
				v := DotF32(qh, k) * p.Scale
				if p.Slopes != nil {
					v -= p.Slopes[h] * float32(qpos-pos)
				}
				if p.Window > 0 && pos >= p.Sink && pos < n-p.Window {
					v = float32(math.Inf(-1))
				}
				sc[pos] = v
				pos++
			}
		}
		Softmax(sc)
		o := out[h*hd : (h+1)*hd]
		for i := range o {
			o[i] = 0
		}
		pos = 0
		for s := range kv.V {
			for r := 0; r < kv.Len[s] && pos < n; r++ {
				w := sc[pos]
				pos++
				if w == 0 {
					continue
				}
				v := kv.V[s][r*kvStride+kh*hd : r*kvStride+kh*hd+hd]
				for i := range o {
					o[i] += w * v[i]
				}
			}
		}
	}
}
