package cpu

import (
	"math"
	"unsafe"
)

// KV is the keys and values one sequence can attend to, as a list of
// segments (a shared prompt segment, then the sequence's own): segment s
// holds Len[s] rows of kvHeads×headDim values, in K[s] and V[s] as float32
// or, for a cache that stores half precision, in K16[s] and V16[s] as IEEE
// binary16 bits. A KV whose K16 is non-empty is an f16 one: Attend reads
// K16 and V16 and ignores K and V.
type KV struct {
	K, V     [][]float32
	K16, V16 [][]uint16
	Len      []int
}

// Positions returns the total number of cached positions.
func (kv *KV) Positions() int {
	n := 0
	for _, l := range kv.Len {
		n += l
	}
	return n
}

// F16 reports whether kv holds half-precision segments.
func (kv *KV) F16() bool { return len(kv.K16) > 0 }

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
	// SoftCap > 0 soft-caps the scaled scores before the mask and the
	// softmax, each score s becoming SoftCap·tanh(s/SoftCap) (Gemma 2).
	SoftCap float32
	// Batched says the query is one of several tokens computed together.
	// Over an f16 KV, ggml sums the products of such a batch in another
	// order than a single token's, and so does Attend.
	Batched bool
}

// Attend computes scaled dot-product attention of one query token
// (Heads×HeadDim in q) over the cached keys/values, writing Heads×HeadDim
// into out. scratch must hold at least N floats.
//
// Over an f16 KV the arithmetic is ggml's for a half-precision cache
// (llama.cpp's default, without flash attention): the query is rounded to
// f16 before the K·q dot products, which accumulate in float32; the scores
// are scaled and go through a float32 softmax; the probabilities are
// rounded to f16 before the product with V, which accumulates in float32.
// The rounded query is held in out while the scores are computed, so out
// must not overlap q except where it is q itself.
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
	if kv.F16() {
		k.attendHeadsF16(out, q, kv, p, scratch, h0, h1)
		return
	}
	hd := p.HeadDim
	group := p.Heads / p.KVHeads
	kvStride := p.KVHeads * hd
	n := p.N
	sc := scratch[:n]
	var qbuf [256]float32
	for h := h0; h < h1; h++ {
		kh := h / group
		qh := q[h*hd : (h+1)*hd]
		// Fold the scale into the query when it fits the stack buffer
		// (not when soft-capping, which scales the scores).
		prescaled := hd <= len(qbuf) && p.SoftCap <= 0
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
		softCap(sc, p.SoftCap)
		mask(sc, p, h)
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

// attendHeadsF16 is AttendHeads over half-precision segments, with
// ggml's roundings and summation orders (see Attend).
func (k Kernels) attendHeadsF16(out, q []float32, kv *KV, p AttendParams, scratch []float32, h0, h1 int) {
	hd := p.HeadDim
	group := p.Heads / p.KVHeads
	kvStride := p.KVHeads * hd
	n := p.N
	sc := scratch[:n]
	for h := h0; h < h1; h++ {
		kh := h / group
		// The head's output row holds its query rounded to f16 until the
		// product with V overwrites it.
		o := out[h*hd : (h+1)*hd]
		k.roundF16(o, q[h*hd:(h+1)*hd])
		pos := 0
		for s := range kv.K16 {
			rows := min(kv.Len[s], n-pos)
			if rows <= 0 {
				break
			}
			k.dotRowsF16(sc[pos:pos+rows], o, kv.K16[s][kh*hd:], kvStride, p.Batched)
			pos += rows
		}
		k.scale(sc, sc, p.Scale)
		softCap(sc, p.SoftCap)
		mask(sc, p, h)
		k.softmaxGG(sc)
		k.roundF16(sc, sc)
		if lanes := scratch[n:]; k.hasAxpyRot(hd) && len(lanes) >= 68*hd {
			k.attendV16Lanes(o, sc, kv, kh*hd, kvStride, p.Batched, lanes)
		} else {
			k.attendV16(o, sc, kv, kh*hd, kvStride, p.Batched)
		}
	}
}

// AttendScratch returns how many floats of scratch AttendHeads wants for
// p: N for the scores, and room for the 64 rows of partial sums that
// ggml's order needs over an f16 cache. With less (but at least N) it
// computes the same values more slowly.
func AttendScratch(p AttendParams) int { return p.N + 68*p.HeadDim }

// attendV16Lanes is attendV16 on SIMD kernels: the lanes of ggml's sums
// become rows of partial sums (64·hd floats of scratch, then 2·hd for
// float64s), added row-wise.
func (k Kernels) attendV16Lanes(o, p []float32, kv *KV, off, stride int, batched bool, scratch []float32) {
	hd, n := len(o), len(p)
	if batched {
		acc := scratch[:16*hd]
		clear(acc)
		k.axpyRotRange(acc, 15, p, kv, off, stride, 0, n)
		k.foldRows16(o, acc)
		return
	}
	np := kvCells(n) &^ 63
	if nl := min(np, n); nl > 0 {
		acc := scratch[:64*hd]
		clear(acc)
		k.axpyRotRange(acc, 63, p, kv, off, stride, 0, nl)
		for l := range 16 {
			a0, a1 := acc[l*hd:(l+1)*hd], acc[(16+l)*hd:(17+l)*hd]
			k.add(a0, a0, acc[(32+l)*hd:(33+l)*hd])
			k.add(a1, a1, acc[(48+l)*hd:(49+l)*hd])
			k.add(a0, a0, a1)
		}
		k.foldRows16(o, acc[:16*hd])
	}
	if n <= np {
		return
	}
	d := unsafe.Slice((*float64)(unsafe.Pointer(&scratch[64*hd])), hd)
	for i := range d {
		d[i] = 0
		if np > 0 {
			d[i] = float64(o[i])
		}
	}
	j := 0
	for s := range kv.V16 {
		rows := min(kv.Len[s], n-j)
		if rows <= 0 {
			break
		}
		if lo := max(np-j, 0); lo < rows {
			k.axpyRowsD(d, p[j+lo:j+rows], kv.V16[s][lo*stride+off:], stride)
		}
		j += rows
	}
	for i := range d {
		o[i] = float32(d[i])
	}
}

// axpyRotRange runs axpyRot over cells [a, b) of kv's value rows.
func (k Kernels) axpyRotRange(acc []float32, mask int, p []float32, kv *KV, off, stride, a, b int) {
	hd := len(acc) / (mask + 1)
	j := 0
	for s := range kv.V16 {
		rows := min(kv.Len[s], b-j)
		if rows <= 0 {
			break
		}
		if lo := max(a-j, 0); lo < rows {
			k.axpyRot(acc, mask, j+lo, p[j+lo:j+rows], kv.V16[s][lo*stride+off:], stride, hd)
		}
		j += rows
	}
}

// foldRows16 sets o to the sum of the 16 rows of acc (len(o) each) in
// hsum16's order, row-wise; it overwrites acc.
func (k Kernels) foldRows16(o, acc []float32) {
	hd := len(o)
	row := func(i int) []float32 { return acc[i*hd : (i+1)*hd] }
	for i := range 8 {
		k.add(row(i), row(i+8), row(i))
	}
	for i := range 4 {
		k.add(row(i), row(i+4), row(i))
	}
	k.add(row(0), row(0), row(2))
	k.add(row(1), row(1), row(3))
	k.add(o, row(0), row(1))
}

// kvCells is how many cache cells ggml's attention spans for n positions:
// llama.cpp pads the cells it attends to a multiple of 32 (at least 32);
// the padding holds zeros, masked out.
func kvCells(n int) int { return max(32, (n+31)&^31) }

// softmaxGG normalises x in place as ggml's soft_max does, over a row
// padded with zeros to kvCells(len(x)): exponentials with expf, summed
// 16 at a time (hsum16) into a float64, then multiplied by the float32
// reciprocal of the sum.
func (k Kernels) softmaxGG(x []float32) {
	if len(x) == 0 {
		return
	}
	sum := k.expSumGG(x, k.max(x))
	inv := float32(1 / sum)
	k.scale(x, x, inv)
}

// attendV16 writes o[d] = Σ_j p[j]·V[j][off+d] over the f16 value rows of
// kv (row stride stride), in ggml's order: for a batch of queries,
// llamafile's: 16 lanes (cell j in lane j mod 16, added in order), then
// hsum16; for a single query, ggml_vec_dot_f16's over kvCells(len(p))
// cells: the first multiple of 64 in 4×16 lanes, the rest in float64.
func (k Kernels) attendV16(o, p []float32, kv *KV, off, stride int, batched bool) {
	n := len(p)
	var lanes [4][16]float32
	np := 0
	if !batched {
		np = kvCells(n) &^ 63
	}
	for d := range o {
		lanes = [4][16]float32{}
		var sum float64
		j := 0
		for s := range kv.V16 {
			rows := min(kv.Len[s], n-j)
			v := kv.V16[s][off+d:]
			for r := range max(rows, 0) {
				x := f16(v[r*stride]) * p[j] // exact
				switch {
				case batched:
					lanes[0][j%16] += x
				case j < np:
					lanes[j%64/16][j%16] += x
				default:
					if j == np && np > 0 {
						sum = foldLanes(&lanes)
					}
					sum += float64(x)
				}
				j++
			}
		}
		switch {
		case batched:
			o[d] = hsum16(&lanes[0])
		case np > 0 && j <= np:
			o[d] = float32(foldLanes(&lanes))
		default:
			o[d] = float32(sum)
		}
	}
}

// foldLanes sums ggml_vec_dot_f16's four 16-lane accumulators:
// (a0 + a2) + (a1 + a3) per lane, then hsum16.
func foldLanes(a *[4][16]float32) float64 {
	var u [16]float32
	for l := range u {
		u[l] = float32(a[0][l]+a[2][l]) + float32(a[1][l]+a[3][l])
	}
	return float64(hsum16(&u))
}

// dotF16GG returns q·k (k in half precision) as ggml sums it: for a batch
// (llamafile), 16 lanes each adding its elements i ≡ lane (mod 16) in
// order, then hsum16; for one query (ggml_vec_dot_f16), the first
// multiple of 64 elements in 4×16 lanes (foldLanes), the rest added to
// that in float64. The products of f16 values are exact in float32.
func dotF16GG(q []float32, k []uint16, batched bool) float32 {
	var lanes [4][16]float32
	n := len(q)
	if batched && n%16 == 0 {
		for i := range n {
			lanes[0][i%16] += q[i] * f16(k[i])
		}
		return hsum16(&lanes[0])
	}
	np := n &^ 63
	for i := range np {
		lanes[i%64/16][i%16] += q[i] * f16(k[i])
	}
	var sum float64
	if np > 0 {
		sum = foldLanes(&lanes)
	}
	for i := np; i < n; i++ {
		sum += float64(q[i] * f16(k[i]))
	}
	return float32(sum)
}

// softCap replaces each score s by c·tanh(s/c) when c > 0.
func softCap(sc []float32, c float32) {
	if c <= 0 {
		return
	}
	for i, v := range sc {
		sc[i] = c * float32(math.Tanh(float64(v/c)))
	}
}

// mask applies head h's ALiBi bias and the StreamingLLM window to its
// scaled scores.
func mask(sc []float32, p AttendParams, h int) {
	n := len(sc)
	if p.Slopes != nil {
		m := p.Slopes[h]
		qpos := n - 1
		for i := range sc {
			sc[i] -= m * float32(qpos-i)
		}
	}
	if p.Window > 0 {
		for i := p.Sink; i < n-p.Window; i++ {
			sc[i] = float32(math.Inf(-1))
		}
	}
}

// F32ToF16Bits converts src to IEEE half-precision bits in dst, rounding
// to nearest even (values beyond the f16 range become ±Inf), as a KV cache
// storing f16 does on write. dst must hold len(src) values.
func F32ToF16Bits(dst []uint16, src []float32) {
	detected.toF16Bits(dst[:len(src)], src)
}

// roundF16Go sets dst[i] to src[i] rounded to the nearest f16 value.
func roundF16Go(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = f16(toF16(v))
	}
}

// toF16BitsGo converts src to half-precision bits in dst.
func toF16BitsGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = toF16(v)
	}
}

// dotRowsF16Go sets out[r] = q·k[r*stride : r*stride+len(q)] for r <
// len(out), k in half precision, in ggml's order (dotF16GG).
func dotRowsF16Go(out, q []float32, k []uint16, stride int, batched bool) {
	for r := range out {
		out[r] = dotF16GG(q, k[r*stride:r*stride+len(q)], batched)
	}
}

// axpyRowsF16Go adds Σ_r p[r]·v[r*stride : r*stride+len(o)] to o, v in
// half precision.
func axpyRowsF16Go(o, p []float32, v []uint16, stride int) {
	for r, w := range p {
		if w == 0 {
			continue
		}
		row := v[r*stride : r*stride+len(o)]
		for i, h := range row {
			o[i] += w * f16(h)
		}
	}
}
