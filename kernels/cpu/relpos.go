package cpu

import (
	"math"

	"github.com/weftrun/weft/kernels/quant"
)

// RelPosBucket returns the bucket of T5's relative-position bias (Raffel
// et al., 2020, §2.1) for a key at distance rel = key − query from its
// query. Half the buckets (all of them when causal) hold the distances
// 0..exact−1 one by one, exact = buckets/2 (of the half); the rest cover
// exact..maxDistance on a log scale, and farther keys share the last
// bucket. Bidirectional attention (an encoder) gives keys after the query
// the upper half of the buckets; causal attention (a decoder) sees only
// keys at or before the query, and later keys fall in bucket 0.
//
// The log-scale bucket is computed as llama.cpp computes it (a float32
// log of the float32 ratio, the rest in float64), so that distances on a
// bucket boundary land where they land there.
func RelPosBucket(rel, buckets, maxDistance int, bidirectional bool) int {
	n := buckets
	bucket := 0
	if bidirectional {
		n /= 2
		if rel > 0 {
			bucket = n
		}
		if rel < 0 {
			rel = -rel
		}
	} else {
		rel = -min(rel, 0)
	}
	exact := n / 2
	if rel < exact {
		return bucket + rel
	}
	l := float64(float32(math.Log(float64(float32(float64(rel) / float64(exact))))))
	large := int(math.Floor(float64(float32(float64(exact) + l*float64(n-exact)/math.Log(float64(maxDistance)/float64(exact))))))
	return bucket + min(large, n-1)
}

// RelBias is T5's learned relative-position bias: a table of Buckets rows
// of one value per head (row-major [buckets, heads]), read at the bucket
// of each key's distance from the query. Make one with NewRelBias.
type RelBias struct {
	Table         []float32
	Buckets       int
	MaxDistance   int
	Bidirectional bool
	// lut is the bucket of every distance in [-MaxDistance, MaxDistance]
	// (farther keys share the bucket of ±MaxDistance).
	lut []int32
}

// NewRelBias prepares a bias table: the bucket of each distance is
// computed once.
func NewRelBias(table []float32, buckets, maxDistance int, bidirectional bool) *RelBias {
	rb := &RelBias{Table: table, Buckets: buckets, MaxDistance: maxDistance, Bidirectional: bidirectional,
		lut: make([]int32, 2*maxDistance+1)}
	for d := -maxDistance; d <= maxDistance; d++ {
		rb.lut[d+maxDistance] = int32(RelPosBucket(d, buckets, maxDistance, bidirectional))
	}
	return rb
}

// bucket returns RelPosBucket(rel, ...) from the table of distances.
func (rb *RelBias) bucket(rel int) int {
	rel = max(-rb.MaxDistance, min(rel, rb.MaxDistance))
	return int(rb.lut[rel+rb.MaxDistance])
}

// AttendBiasScratch returns the scratch floats AttendBiased needs.
func AttendBiasScratch(p AttendParams) int { return p.N + p.HeadDim }

// AttendBiased computes the attention of one query token at position qpos
// (Heads×HeadDim in q) over the first p.N cached positions of kv, which
// are positions 0..N−1 of its sequence, adding to each score the learned
// bias of rb when rb is non-nil (T5's relative-position bias; nil for T5's
// cross-attention over the encoder output). The scores are q·k·p.Scale
// (T5 uses 1: no 1/√d), plus the bias, through a softmax, and out is the
// probability-weighted sum of the values. Heads h0..h1−1 are computed.
// ALiBi, windows and soft-capping are not applied. Over an f16 kv the
// cached rows are widened to float32. scratch holds AttendBiasScratch(p)
// floats.
func AttendBiased(out, q []float32, kv *KV, p AttendParams, rb *RelBias, qpos int, scratch []float32, h0, h1 int) {
	hd, group := p.HeadDim, p.Heads/p.KVHeads
	stride := p.KVHeads * hd
	sc, row := scratch[:p.N], scratch[p.N:p.N+hd]
	f16 := kv.F16()
	for h := h0; h < h1; h++ {
		qh := q[h*hd : (h+1)*hd]
		off := (h / group) * hd
		j := 0
		for s, n := range kv.Len {
			for r := 0; r < n && j < p.N; r++ {
				var k []float32
				if f16 {
					widenF16(row, kv.K16[s][r*stride+off:r*stride+off+hd])
					k = row
				} else {
					k = kv.K[s][r*stride+off : r*stride+off+hd]
				}
				sc[j] = DotF32(qh, k) * p.Scale
				if rb != nil {
					sc[j] += rb.Table[rb.bucket(j-qpos)*p.Heads+h]
				}
				j++
			}
		}
		Softmax(sc)
		oh := out[h*hd : (h+1)*hd]
		clear(oh)
		j = 0
		for s, n := range kv.Len {
			for r := 0; r < n && j < p.N; r++ {
				var v []float32
				if f16 {
					widenF16(row, kv.V16[s][r*stride+off:r*stride+off+hd])
					v = row
				} else {
					v = kv.V[s][r*stride+off : r*stride+off+hd]
				}
				Axpy(oh, v, sc[j])
				j++
			}
		}
	}
}

func widenF16(dst []float32, src []uint16) {
	for i, h := range src {
		dst[i] = quant.FromF16(h)
	}
}
