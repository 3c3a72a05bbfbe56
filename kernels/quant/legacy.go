package quant

import (
	"encoding/binary"
	"math"
)

// Block sizes in bytes of the 32-element formats.
const (
	blockQ4_0 = 18 // d f16 | qs[16]
	blockQ4_1 = 20 // d f16 | m f16 | qs[16]
	blockQ5_0 = 22 // d f16 | qh[4] | qs[16]
	blockQ5_1 = 24 // d f16 | m f16 | qh[4] | qs[16]
	blockQ8_0 = 34 // d f16 | qs[32] int8
	blockQ8_1 = 36 // d f16 | s f16 | qs[32] int8
)

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// roundAway rounds half away from zero, like C's roundf.
func roundAway(f float32) float32 { return float32(math.Round(float64(f))) }

// QuantizeRowQ4_0 quantizes src (a multiple of 32 values) to Q4_0 blocks in
// dst: per block d = max/-8, where max is the value of largest magnitude,
// and 4-bit quants q with x ≈ (q-8)·d. Byte j of a block's quants holds
// element j in its low nibble and element j+16 in its high nibble.
func QuantizeRowQ4_0(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ4_0]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ4_0 : i*blockQ4_0+blockQ4_0]
		var amax, max float32
		for _, v := range x {
			if a := abs32(v); amax < a {
				amax, max = a, v
			}
		}
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(y, d)
		for j := range qk / 2 {
			xi0 := min(15, int8(float32(x[j]*id)+8.5))
			xi1 := min(15, int8(float32(x[qk/2+j]*id)+8.5))
			y[2+j] = byte(xi0) | byte(xi1)<<4
		}
	}
}

// DequantizeRowQ4_0 expands len(dst) values (a multiple of 32) from Q4_0
// blocks in src.
func DequantizeRowQ4_0(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*blockQ4_0]
	for i := range nb {
		x := src[i*blockQ4_0 : i*blockQ4_0+blockQ4_0]
		y := dst[i*qk : i*qk+qk]
		d := f16(x)
		for j := range qk / 2 {
			y[j] = float32(int(x[2+j]&0x0f)-8) * d
			y[j+qk/2] = float32(int(x[2+j]>>4)-8) * d
		}
	}
}

// QuantizeRowQ4_1 quantizes src to Q4_1 blocks: d = (max-min)/15, m = min,
// x ≈ q·d + m, nibbles packed as in Q4_0.
func QuantizeRowQ4_1(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ4_1]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ4_1 : i*blockQ4_1+blockQ4_1]
		mn := float32(math.MaxFloat32)
		mx := float32(-math.MaxFloat32)
		for _, v := range x {
			if v < mn {
				mn = v
			}
			if v > mx {
				mx = v
			}
		}
		d := (mx - mn) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(y, d)
		putF16(y[2:], mn)
		for j := range qk / 2 {
			xi0 := min(15, int8(float32((x[j]-mn)*id)+0.5))
			xi1 := min(15, int8(float32((x[qk/2+j]-mn)*id)+0.5))
			y[4+j] = byte(xi0) | byte(xi1)<<4
		}
	}
}

// DequantizeRowQ4_1 expands len(dst) values from Q4_1 blocks in src.
func DequantizeRowQ4_1(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*blockQ4_1]
	for i := range nb {
		x := src[i*blockQ4_1 : i*blockQ4_1+blockQ4_1]
		y := dst[i*qk : i*qk+qk]
		d, m := f16(x), f16(x[2:])
		for j := range qk / 2 {
			y[j] = float32(float32(x[4+j]&0x0f)*d) + m
			y[j+qk/2] = float32(float32(x[4+j]>>4)*d) + m
		}
	}
}

// QuantizeRowQ5_0 quantizes src to Q5_0 blocks: d = max/-16, x ≈ (q-16)·d
// with 5-bit q. The low four bits are packed like Q4_0's nibbles; bit 4 of
// element j is bit j of the little-endian uint32 qh.
func QuantizeRowQ5_0(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ5_0]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ5_0 : i*blockQ5_0+blockQ5_0]
		var amax, max float32
		for _, v := range x {
			if a := abs32(v); amax < a {
				amax, max = a, v
			}
		}
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(y, d)
		var qh uint32
		for j := range qk / 2 {
			xi0 := uint8(min(31, int8(float32(x[j]*id)+16.5)))
			xi1 := uint8(min(31, int8(float32(x[qk/2+j]*id)+16.5)))
			y[6+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + qk/2)
		}
		binary.LittleEndian.PutUint32(y[2:], qh)
	}
}

// DequantizeRowQ5_0 expands len(dst) values from Q5_0 blocks in src.
func DequantizeRowQ5_0(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*blockQ5_0]
	for i := range nb {
		x := src[i*blockQ5_0 : i*blockQ5_0+blockQ5_0]
		y := dst[i*qk : i*qk+qk]
		d := f16(x)
		qh := binary.LittleEndian.Uint32(x[2:])
		for j := range qk / 2 {
			h0 := byte(qh>>j<<4) & 0x10
			h1 := byte(qh>>(j+12)) & 0x10
			y[j] = float32(int(x[6+j]&0x0f|h0)-16) * d
			y[j+qk/2] = float32(int(x[6+j]>>4|h1)-16) * d
		}
	}
}

// QuantizeRowQ5_1 quantizes src to Q5_1 blocks: d = (max-min)/31, m = min,
// x ≈ q·d + m, bits packed as in Q5_0.
func QuantizeRowQ5_1(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ5_1]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ5_1 : i*blockQ5_1+blockQ5_1]
		mn := float32(math.MaxFloat32)
		mx := float32(-math.MaxFloat32)
		for _, v := range x {
			if v < mn {
				mn = v
			}
			if v > mx {
				mx = v
			}
		}
		d := (mx - mn) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(y, d)
		putF16(y[2:], mn)
		var qh uint32
		for j := range qk / 2 {
			xi0 := uint8(float32((x[j]-mn)*id) + 0.5)
			xi1 := uint8(float32((x[qk/2+j]-mn)*id) + 0.5)
			y[8+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + qk/2)
		}
		binary.LittleEndian.PutUint32(y[4:], qh)
	}
}

// DequantizeRowQ5_1 expands len(dst) values from Q5_1 blocks in src.
func DequantizeRowQ5_1(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*blockQ5_1]
	for i := range nb {
		x := src[i*blockQ5_1 : i*blockQ5_1+blockQ5_1]
		y := dst[i*qk : i*qk+qk]
		d, m := f16(x), f16(x[2:])
		qh := binary.LittleEndian.Uint32(x[4:])
		for j := range qk / 2 {
			h0 := byte(qh>>j<<4) & 0x10
			h1 := byte(qh>>(j+12)) & 0x10
			y[j] = float32(float32(x[8+j]&0x0f|h0)*d) + m
			y[j+qk/2] = float32(float32(x[8+j]>>4|h1)*d) + m
		}
	}
}

// QuantizeRowQ8_0 quantizes src to Q8_0 blocks: d = amax/127 and
// q = round(x/d), rounding half away from zero, as ggml's reference
// quantizer (and so llama.cpp's quantize tool) does. Activations are
// quantized by QuantizeActivationQ8_0 instead.
func QuantizeRowQ8_0(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ8_0]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ8_0 : i*blockQ8_0+blockQ8_0]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(y, d)
		for j, v := range x {
			y[2+j] = byte(int8(roundAway(v * id)))
		}
	}
}

// QuantizeActivationQ8_0 quantizes an activation row to Q8_0 blocks the way
// ggml's x86 CPU backend does before a dot product with Q4_0, Q5_0 or Q8_0
// weights (the AVX paths of quantize_row_q8_0, which its repacked Q4_0
// kernels mirror): d = amax/127 stored as an f16, as in QuantizeRowQ8_0,
// but q = x·(127/amax) rounded half to even, where the reference
// multiplies by 1/d and rounds half away from zero.
//
// The two differ by one step on values whose x/d lies on or within an ulp
// of a half. Random inputs almost never do, but rows built from quantized
// weights do: an embedding row of a Q4_0 model after RMSNorm takes values
// k·g, and with amax = 8g every k = ±4 lands on 63.5 less or more an ulp,
// depending on how 127/amax is rounded. Matching the runtime there keeps
// weft's first-layer activations identical to llama.cpp's.
//
// A block whose 127/amax is not a finite float32 (amax = 0, or below
// 127/MaxFloat32, where the f16 scale is 0 anyway) gets zero quants.
func QuantizeActivationQ8_0(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ8_0]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ8_0 : i*blockQ8_0+blockQ8_0]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		putF16(y, amax/127)
		id := 127 / amax
		if id > math.MaxFloat32 {
			id = 0
		}
		for j, v := range x {
			y[2+j] = byte(int8(math.RoundToEven(float64(v * id))))
		}
	}
}

// DequantizeRowQ8_0 expands len(dst) values from Q8_0 blocks in src.
func DequantizeRowQ8_0(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*blockQ8_0]
	for i := range nb {
		x := src[i*blockQ8_0 : i*blockQ8_0+blockQ8_0]
		y := dst[i*qk : i*qk+qk]
		d := f16(x)
		for j := range y {
			y[j] = float32(int8(x[2+j])) * d
		}
	}
}

// QuantizeRowQ8_1 quantizes src to Q8_1 blocks: Q8_0's quants plus
// s = d·Σq stored as an f16 after d, as ggml's reference quantizer
// (quantize_row_q8_1_ref) writes them. Activations for Q4_1 and Q5_1
// weights are quantized by QuantizeActivationQ8_1 instead.
func QuantizeRowQ8_1(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ8_1]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ8_1 : i*blockQ8_1+blockQ8_1]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(y, d)
		sum := 0
		for j, v := range x {
			q := int8(roundAway(v * id))
			y[4+j] = byte(q)
			sum += int(q)
		}
		putF16(y[2:], float32(sum)*d)
	}
}

// QuantizeActivationQ8_1 quantizes an activation row to Q8_1 blocks the
// way ggml's x86 CPU backend does before a dot product with Q4_1 or Q5_1
// weights (the AVX2 path of quantize_row_q8_1): d and the quants as
// QuantizeActivationQ8_0 has them, and s = d·Σq, with d the float32
// amax/127 before its rounding to f16, rounded once to f16.
func QuantizeActivationQ8_1(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ8_1]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ8_1 : i*blockQ8_1+blockQ8_1]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		putF16(y, d)
		id := 127 / amax
		if id > math.MaxFloat32 {
			id = 0
		}
		sum := int32(0)
		for j, v := range x {
			q := int8(math.RoundToEven(float64(v * id)))
			y[4+j] = byte(q)
			sum += int32(q)
		}
		putF16(y[2:], d*float32(sum))
	}
}

// DequantizeRowQ8_1 expands len(dst) values from Q8_1 blocks in src.
func DequantizeRowQ8_1(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*blockQ8_1]
	for i := range nb {
		x := src[i*blockQ8_1 : i*blockQ8_1+blockQ8_1]
		y := dst[i*qk : i*qk+qk]
		d := f16(x)
		for j := range y {
			y[j] = float32(int8(x[4+j])) * d
		}
	}
}

// DotQ4_0Q8_0 returns the dot product of n values (a multiple of 32) of a
// Q4_0 weight row and a Q8_0 activation row.
func DotQ4_0Q8_0(w, act []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*blockQ4_0]
	act = act[:nb*blockQ8_0]
	var sumf float32
	for ib := range nb {
		x := w[ib*blockQ4_0 : ib*blockQ4_0+blockQ4_0]
		y := act[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		var s0, s1 int32
		for j := range qk / 2 {
			s0 += (int32(x[2+j]&0x0f) - 8) * int32(int8(y[2+j]))
			s1 += (int32(x[2+j]>>4) - 8) * int32(int8(y[2+qk/2+j]))
		}
		sumf = FMA32(float32(s0+s1), float32(f16(x)*f16(y)), sumf)
	}
	return sumf
}

// legacyLanes returns the eight exact int32 lanes of a 32-value block's
// products, lane e/4 holding element e, as ggml's x86 kernels sum them
// (VPMADDUBSW and VPMADDWD, or VPDPBUSD): v(e) is the weight's value of
// element e, q the activation block's 32 quants.
func legacyLanes(v func(e int) int32, q []byte) [8]int32 {
	var lanes [8]int32
	for e := range qk {
		lanes[e/4] += v(e) * int32(int8(q[e]))
	}
	return lanes
}

// DotQ4_1Q8_1 returns the dot product of n values (a multiple of 32) of a
// Q4_1 weight row and a Q8_1 activation row, in the order of ggml's x86
// kernel (the AVX2 ggml_vec_dot_q4_1_q8_1, which llama.cpp runs on every
// x86 level from AVX2 up, for any number of tokens): each block's exact
// integer products of the nibbles and the quants in eight lanes (lane
// e/4 holding element e), fused in turn into eight float32 accumulators
// with d = dx·dy; the minimums in a chain of fused multiply-adds
// summs = m·s + summs beside them; then hsum8 of the lanes plus summs.
func DotQ4_1Q8_1(w, act []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*blockQ4_1]
	act = act[:nb*blockQ8_1]
	var acc [8]float32
	var summs float32
	for ib := range nb {
		x := w[ib*blockQ4_1 : ib*blockQ4_1+blockQ4_1]
		y := act[ib*blockQ8_1 : ib*blockQ8_1+blockQ8_1]
		summs = FMA32(f16(x[2:]), f16(y[2:]), summs)
		lanes := legacyLanes(func(e int) int32 { return int32(x[4+e%16] >> (4 * (e / 16)) & 0x0f) }, y[4:])
		fmaLanes(&acc, f16(x)*f16(y), &lanes)
	}
	return hsum8(&acc) + summs
}

// q5Value returns the 5-bit value of element e of a Q5_0 or Q5_1 block
// whose qh field starts at h and quants at q.
func q5Value(h, q []byte, e int) int32 {
	hi := binary.LittleEndian.Uint32(h) >> e & 1
	return int32(q[e%16]>>(4*(e/16))&0x0f) | int32(hi)<<4
}

// DotQ5_0Q8_0 returns the dot product of n values of a Q5_0 weight row and a
// Q8_0 activation row, in the order of ggml's x86 kernel (the AVX2
// ggml_vec_dot_q5_0_q8_0, and llamafile's tinyBLAS, which ggml uses for
// matmuls of two or more tokens, sums the same way): each block's exact
// integer products of the values q-16 and the quants in eight lanes (lane
// e/4 holding element e), fused in turn into eight float32 accumulators
// with d = dx·dy, then reduced as hsum8 does.
func DotQ5_0Q8_0(w, act []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*blockQ5_0]
	act = act[:nb*blockQ8_0]
	var acc [8]float32
	for ib := range nb {
		x := w[ib*blockQ5_0 : ib*blockQ5_0+blockQ5_0]
		y := act[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		lanes := legacyLanes(func(e int) int32 { return q5Value(x[2:], x[6:], e) - 16 }, y[2:])
		fmaLanes(&acc, f16(x)*f16(y), &lanes)
	}
	return hsum8(&acc)
}

// DotQ5_1Q8_1 returns the dot product of n values of a Q5_1 weight row and a
// Q8_1 activation row, in DotQ4_1Q8_1's order (ggml's AVX2
// ggml_vec_dot_q5_1_q8_1) with the 5-bit values.
func DotQ5_1Q8_1(w, act []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*blockQ5_1]
	act = act[:nb*blockQ8_1]
	var acc [8]float32
	var summs float32
	for ib := range nb {
		x := w[ib*blockQ5_1 : ib*blockQ5_1+blockQ5_1]
		y := act[ib*blockQ8_1 : ib*blockQ8_1+blockQ8_1]
		summs = FMA32(f16(x[2:]), f16(y[2:]), summs)
		lanes := legacyLanes(func(e int) int32 { return q5Value(x[4:], x[8:], e) }, y[4:])
		fmaLanes(&acc, f16(x)*f16(y), &lanes)
	}
	return hsum8(&acc) + summs
}

// DotQ8_0Q8_0 returns the dot product of n values of two Q8_0 rows.
func DotQ8_0Q8_0(w, act []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*blockQ8_0]
	act = act[:nb*blockQ8_0]
	var sumf float32
	for ib := range nb {
		x := w[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		y := act[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		var s int32
		for j := range qk {
			s += int32(int8(x[2+j])) * int32(int8(y[2+j]))
		}
		sumf = FMA32(float32(s), float32(f16(x)*f16(y)), sumf)
	}
	return sumf
}

// FMA32 returns a·b + c rounded once to float32 (to nearest, ties to
// even), as C's fmaf does.
func FMA32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c) // p is exact (24+24 bits)
	r := p + q
	f := float32(r)
	// Rounding r again to float32 can differ from rounding p + q once
	// only where r is halfway between two float32s. Where float32s are
	// normal, those are the float64s whose 29 low mantissa bits are
	// 1<<28; r is rarely one of them, and this test is cheap.
	if b := math.Float64bits(r); b&(1<<29-1) != 1<<28 && b>>52&0x7ff >= 1023-126 {
		return f
	}
	if float64(f) == r || math.IsInf(r, 0) || math.IsNaN(r) {
		return f
	}
	// Rounding to float64 first changes the result only when r is exactly
	// halfway between two float32s while p + q is not: then the rounding
	// error of r (exact, by Knuth's TwoSum) picks the side.
	g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), r-float64(f))))
	if (float64(f)+float64(g))/2 != r {
		return f
	}
	v := r - p
	e := (p - (r - v)) + (q - v)
	if e == 0 || (e > 0) != (g > f) {
		return f
	}
	return g
}
