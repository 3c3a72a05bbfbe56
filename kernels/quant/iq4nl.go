package quant

import (
	"encoding/binary"
	"math"
)

// IQ4_NL: ggml's 4-bit non-linear format (ggml type id 20). A block of 32
// values is an f16 scale d and 16 bytes of 4-bit indices into a fixed table
// of 16 levels; byte j holds value j in its low nibble and value j+16 in
// its high nibble (Q4_0's order), and value i decodes to d·table[index].

const blockIQ4_NL = 18 // d f16 | qs[16]

// iq4nlLevels is ggml's kvalues_iq4nl, the 16 levels of IQ4_NL (and
// IQ4_XS), returned by value so that no caller can change it.
func iq4nlLevels() [16]int8 {
	return [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
}

// bestIndexInt8 returns the index of the level of the increasing table
// val nearest to x, as ggml's best_index_int8 does: below the first or
// above the last level it clamps, and a tie goes to the upper level.
func bestIndexInt8(val *[16]int8, x float32) int {
	n := len(val)
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[n-1]) {
		return n - 1
	}
	ml, mu := 0, n-1
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if float32(x-float32(val[mu-1])) < float32(float32(val[mu])-x) {
		return mu - 1
	}
	return mu
}

// QuantizeRowIQ4_NL quantizes src (a multiple of 32 values) to IQ4_NL
// blocks as llama.cpp's quantize tool does without an importance matrix
// (ggml's quantize_iq4_nl with no quant weights): per block, the errors
// are weighted by x², a first scale max/127 (max the value of largest
// magnitude) is refined by least squares and by trying 15 more candidate
// scales (-127±7)/max, and the indices are finally chosen for the best
// scale before it is rounded to f16. A block whose largest magnitude is
// below 1e-15 gets d = 0 and every index 8 (level 1).
//
// ggml's quantize_row_iq4_nl_ref skips the candidate search and the final
// re-indexing (and leaves the indices of such a zero block unset), so
// files written by the quantize tool do not come from it; this function
// reproduces the tool's bytes.
func QuantizeRowIQ4_NL(dst []byte, src []float32) {
	const ntry = 7
	values := iq4nlLevels()
	nb := len(src) / qk
	dst = dst[:nb*blockIQ4_NL]
	var (
		L      [qk]uint8
		weight [qk]float32
	)
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockIQ4_NL : i*blockIQ4_NL+blockIQ4_NL]
		for j, v := range x {
			weight[j] = v * v
		}
		var amax, mx float32
		for _, v := range x {
			if ax := abs32(v); ax > amax {
				amax, mx = ax, v
			}
		}
		var scale float32
		if amax >= groupMaxEps {
			d := -mx / float32(values[0])
			sumqx, sumq2 := iq4nlSums(&values, x, &weight, 1/d, &L)
			d = 0
			if sumq2 > 0 {
				d = sumqx / sumq2
			}
			best := d * sumqx
			for itry := -ntry; itry <= ntry; itry++ {
				id := float32(itry+int(values[0])) / mx
				sumqx, sumq2 := iq4nlSums(&values, x, &weight, id, nil)
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					d = sumqx / sumq2
					best = d * sumqx
				}
			}
			scale = d
		}
		putF16(y, scale)
		var id float32
		if scale != 0 {
			id = 1 / scale
		}
		for j, v := range x {
			L[j] = uint8(bestIndexInt8(&values, float32(id*v)))
		}
		for j := range qk / 2 {
			y[2+j] = L[j] | L[j+qk/2]<<4
		}
	}
}

// iq4nlSums indexes x·id into the levels and returns the weighted sums
// Σw·q·x and Σw·q² that fit a scale to them, storing the indices in L when
// L is not nil.
func iq4nlSums(values *[16]int8, x []float32, weight *[qk]float32, id float32, L *[qk]uint8) (sumqx, sumq2 float32) {
	for j, v := range x {
		l := bestIndexInt8(values, float32(id*v))
		if L != nil {
			L[j] = uint8(l)
		}
		q := float32(values[l])
		wq := float32(weight[j] * q)
		sumqx += float32(wq * v)
		sumq2 += float32(wq * q)
	}
	return sumqx, sumq2
}

// DequantizeRowIQ4_NL expands len(dst) values (a multiple of 32) from
// IQ4_NL blocks in src.
func DequantizeRowIQ4_NL(dst []float32, src []byte) {
	values := iq4nlLevels()
	nb := len(dst) / qk
	src = src[:nb*blockIQ4_NL]
	for i := range nb {
		x := src[i*blockIQ4_NL : i*blockIQ4_NL+blockIQ4_NL]
		y := dst[i*qk : i*qk+qk]
		d := f16(x)
		for j := range qk / 2 {
			y[j] = d * float32(values[x[2+j]&0x0f])
			y[j+qk/2] = d * float32(values[x[2+j]>>4])
		}
	}
}

// DotIQ4_NLQ8_0 returns the dot product of n values (a multiple of 32) of
// an IQ4_NL weight row and a Q8_0 activation row, in the order of ggml's
// x86 kernel (the AVX2 ggml_vec_dot_iq4_nl_q8_0, which llama.cpp runs on
// every x86 level from AVX2 up): blocks in pairs, each block's exact
// integer products in eight lanes (lane (e mod 32)/4 holding element e),
// the first block of a pair fused into one set of eight float32
// accumulators and the second into another, d = dy·dx; then the two sets
// added lane by lane and reduced as hsum8 does; an odd last block is
// added as one fused multiply-add of d and its integer sum.
func DotIQ4_NLQ8_0(w, act []byte, n int) float32 {
	values := iq4nlLevels()
	nb := n / qk
	w = w[:nb*blockIQ4_NL]
	act = act[:nb*blockQ8_0]
	var acc [2][8]float32
	sums := func(ib int) (float32, [8]int32, int32) {
		x := w[ib*blockIQ4_NL : ib*blockIQ4_NL+blockIQ4_NL]
		y := act[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		var lanes [8]int32
		var s int32
		for e := range qk {
			v := values[x[2+e%16]>>(4*(e/16))&0x0f]
			p := int32(v) * int32(int8(y[2+e]))
			lanes[e/4] += p
			s += p
		}
		return f16(y) * f16(x), lanes, s
	}
	ib := 0
	for ; ib+1 < nb; ib += 2 {
		for k := range 2 {
			d, lanes, _ := sums(ib + k)
			fmaLanes(&acc[k], d, &lanes)
		}
	}
	var sum [8]float32
	for l := range sum {
		sum[l] = acc[0][l] + acc[1][l]
	}
	sumf := hsum8(&sum)
	if ib < nb {
		d, _, s := sums(ib)
		sumf = FMA32(d, float32(s), sumf)
	}
	return sumf
}

// DotIQ4_NLQ8_0Batch returns the dot product of n values (a multiple of
// 32) of an IQ4_NL weight row and a Q8_0 activation row in the order ggml
// uses when a matmul has two or more tokens (llamafile's tinyBLAS on x86):
// each block's exact integer products in eight lanes as DotIQ4_NLQ8_0
// has them, every block fused in turn into one set of eight float32
// accumulators with d = dx·dy, then reduced as hsum8 does.
func DotIQ4_NLQ8_0Batch(w, act []byte, n int) float32 {
	values := iq4nlLevels()
	nb := n / qk
	w = w[:nb*blockIQ4_NL]
	act = act[:nb*blockQ8_0]
	var acc [8]float32
	for ib := range nb {
		x := w[ib*blockIQ4_NL : ib*blockIQ4_NL+blockIQ4_NL]
		y := act[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		var lanes [8]int32
		for e := range qk {
			v := values[x[2+e%16]>>(4*(e/16))&0x0f]
			lanes[e/4] += int32(v) * int32(int8(y[2+e]))
		}
		fmaLanes(&acc, f16(x)*f16(y), &lanes)
	}
	return hsum8(&acc)
}

// DotIQ4_NLF32 returns the dot product of n values of an IQ4_NL weight row
// and a little-endian F32 activation row, products rounded to float32 and
// accumulated in float64.
func DotIQ4_NLF32(w, act []byte, n int) float32 {
	values := iq4nlLevels()
	nb := n / qk
	w = w[:nb*blockIQ4_NL]
	act = act[:4*nb*qk]
	var sum float64
	for ib := range nb {
		x := w[ib*blockIQ4_NL : ib*blockIQ4_NL+blockIQ4_NL]
		d := f16(x)
		for j := range qk {
			q := x[2+j%16] >> (4 * (j / 16)) & 0x0f
			av := math.Float32frombits(binary.LittleEndian.Uint32(act[4*(ib*qk+j):]))
			sum += float64(float32(d*float32(values[q])) * av)
		}
	}
	return float32(sum)
}
