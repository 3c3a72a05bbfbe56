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
	detected.AttendHeads(out, q, kv, p, scratch, 0, p.Heads)
}

// AttendHeads is Attend restricted to the query heads [h0, h1): it writes
// only their outputs, so that callers can split the heads of one token
// over threads (each with its own scratch of N floats).
func AttendHeads(out, q []float32, kv *KV, p AttendParams, scratch []float32, h0, h1 int) {
	detected.AttendHeads(out, q, kv, p, scratch, h0, h1)
}

// AttendHeads is the package function AttendHeads with the set k.
func (k Kernels) AttendHeads(out, q []float32, kv *KV, p AttendParams, scratch []float32, h0, h1 int) {
	hd := p.HeadDim
	group := p.Heads / p.KVHeads
	kvStride := p.KVHeads * hd
	n := p.N
	sc := scratch[:n]
	qpos := n - 1
	var qbuf [256]float32
	for h := h0; h < h1; h++ {
		kh := h / group
		qh := q[h*hd : (h+1)*hd]
		// Fold the scale into the query when it fits the stack buffer.
		prescaled := hd <= len(qbuf)
		if prescaled {
			k.scale(qbuf[:hd], qh, p.Scale)
			qh = qbuf[:hd]
		}
		pos := 0
		for s := range kv.K {
			rows := min(kv.Len[s], n-pos)
			if rows <= 0 {
				break
			}
			k.dotRows(sc[pos:pos+rows], qh, kv.K[s][kh*hd:], kvStride)
			pos += rows
		}
		if !prescaled {
			k.scale(sc, sc, p.Scale)
		}
		if p.Slopes != nil {
			m := p.Slopes[h]
			for i := range sc {
				sc[i] -= m * float32(qpos-i)
			}
		}
		if p.Window > 0 {
			for i := p.Sink; i < n-p.Window; i++ {
				sc[i] = float32(math.Inf(-1))
			}
		}
		k.Softmax(sc)
		o := out[h*hd : (h+1)*hd]
		clear(o)
		pos = 0
		for s := range kv.V {
			rows := min(kv.Len[s], n-pos)
			if rows <= 0 {
				break
			}
			k.axpyRows(o, sc[pos:pos+rows], kv.V[s][kh*hd:], kvStride)
			pos += rows
		}
	}
}
