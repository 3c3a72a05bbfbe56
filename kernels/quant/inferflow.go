package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weftrun/weft/tensor"
)

// Inferflow's block formats
//
// Inferflow (github.com/inferflow/inferflow, src/common/quant_types.h and
// quantization.h) stores weights in blocks of 32 or 64 values. All but
// Q8_B32T2 are asymmetric: a block holds an f16 base and an f16 scale, and
// value i decodes to q_i·scale + base with unsigned quants q_i. Q8_B32T2 is
// symmetric (q_i·scale, q_i an int8) and byte-for-byte a ggml Q8_0 block.
// Every multi-byte field is little-endian and the header comes first, base
// before scale.
//
// Inferflow's quantizers take the block's min and max, a float32 scale
// (max−min)/div, and q = trunc((x−min)·(1/scale) + 0.5) clamped to the top
// code (round half up). The divisor is not always the top code: the 64-value
// formats use one level fewer than their bits allow (Q4_B64T1: 15 levels
// 0..14 with scale (max−min)/14, Q5_B64T1 31, Q6_B64T1 63), so the top code
// is written only when rounding overshoots. Q3_B32T1 and Q2_B32T1 (and the
// optional Q4_B32T1 "B" rule) default to a mid-rise rule instead: scale
// (max−min)/2^bits, base min + scale/2, q = trunc((x−min)/scale + 0.0001),
// so each code stands for the centre of its bin. A scale below 1e-5 (or
// NaN) gives 1/scale = 0 and every quant 0: the block decodes to its base.
//
// The reference here evaluates every float32 operation separately rounded,
// which is C's semantics without contraction. Inferflow's x86 build passes
// -mfma and nvcc contracts by default, so its binaries may fuse
// (x−min)·inv + 0.5 or q·scale + base into one FMA; that moves a quant only
// when the value lies within an ulp of a rounding boundary, and a decoded
// value by at most an ulp. Inferflow quantizes from f16 weights; for
// float32 inputs that are f16 values the results are the same.

// Weft's GGUF type ids for Inferflow's block formats. ggml numbers its own
// types from 0 (under 50 in 2025) and the ik_llama.cpp fork uses ids up to
// about 400, so these start at 4096, well clear of both. llama.cpp and
// other ggml-based readers cannot read a GGUF file that holds a tensor of
// one of these types: they reject the unknown type id. Q8_B32T2 blocks are
// valid Q8_0 blocks, so a converter that wants such files to stay readable
// by llama.cpp should store them as Q8_0 (id 8) instead.
const (
	// Q8_B32T2: 32 values, f16 scale, int8 quants (8.5 bits per weight).
	Q8_B32T2 = tensor.Q8_B32T2
	// Q6_B64T1: 64 values, f16 base and scale, 6-bit quants (6.5 bits per weight).
	Q6_B64T1 = tensor.Q6_B64T1
	// Q5_B64T1: 64 values, f16 base and scale, 5-bit quants (5.5 bits per weight).
	Q5_B64T1 = tensor.Q5_B64T1
	// Q4_B32T1: 32 values, f16 base and scale, 4-bit quants (5 bits per weight).
	Q4_B32T1 = tensor.Q4_B32T1
	// Q4_B64T1: 64 values, f16 base and scale, 4-bit quants (4.5 bits per weight).
	Q4_B64T1 = tensor.Q4_B64T1
	// Q3H_B64T1: Inferflow's "3.5-bit" format: 64 values, f16 base and
	// scale, 11 levels, two values per 7-bit code (4 bits per weight).
	Q3H_B64T1 = tensor.Q3H_B64T1
	// Q3_B32T1: 32 values, f16 base and scale, 3-bit quants (4 bits per weight).
	Q3_B32T1 = tensor.Q3_B32T1
	// Q2_B32T1: 32 values, f16 base and scale, 2-bit quants (3 bits per weight).
	Q2_B32T1 = tensor.Q2_B32T1
)

// Block sizes in bytes of Inferflow's formats.
const (
	blockQ8_B32T2  = 34 // scale f16 | qs[32] int8
	blockQ6_B64T1  = 52 // base f16 | scale f16 | qh[16] | qs[32]
	blockQ5_B64T1  = 44 // base f16 | scale f16 | qh[8] | qs[32]
	blockQ4_B32T1  = 20 // base f16 | scale f16 | qs[16]
	blockQ4_B64T1  = 36 // base f16 | scale f16 | qs[32]
	blockQ3H_B64T1 = 32 // base f16 | scale f16 | qh[4] | qm[8] | qs[16]
	blockQ3_B32T1  = 16 // base f16 | scale f16 | qh[4] | qs[8]
	blockQ2_B32T1  = 12 // base f16 | scale f16 | qs[8]
)

// ifMinScale is the smallest scale Inferflow's quantizers divide by: below
// it (and for a NaN scale) they use 1/scale = 0, so every quant is 0.
const ifMinScale = float32(0.00001)

// ifRule is one of Inferflow's asymmetric quantization rules: scale =
// (max−min)/div and quants clamped to qmax; with midRise the base is
// min + scale/2 and quants are truncated after adding 0.0001 instead of
// rounded half up.
type ifRule struct {
	div     float32
	qmax    int
	midRise bool
}

// ifRange returns the min and max of x as Inferflow's GetValueRange finds
// them: by float comparisons from x[0], so a NaN is skipped unless it is
// first.
func ifRange(x []float32) (mn, mx float32) {
	mn, mx = x[0], x[0]
	for _, v := range x[1:] {
		if mn > v {
			mn = v
		}
		if mx < v {
			mx = v
		}
	}
	return mn, mx
}

// ifInv returns 1/scale, or 0 when scale is below ifMinScale or NaN.
func ifInv(scale float32) float32 {
	if scale >= ifMinScale {
		return 1 / scale
	}
	return 0
}

// ifTrunc is C's (uint32_t)(v + add) clamped to qmax. v is never negative
// for finite inputs; a NaN (undefined in C) gives 0 and +Inf gives qmax.
func ifTrunc(v, add float32, qmax int) uint8 {
	r := float32(v + add)
	switch {
	case !(r >= 0):
		return 0
	case r >= float32(qmax):
		return uint8(qmax)
	}
	return uint8(r)
}

// ifQuantizeRow quantizes src (whole blocks of elems values) with an
// asymmetric rule into blocks of size bytes.
func ifQuantizeRow(dst []byte, src []float32, elems, size int, rule ifRule, kind tensor.DType) {
	nb := len(src) / elems
	dst = dst[:nb*size]
	var q [64]uint8
	for i := range nb {
		x := src[i*elems : i*elems+elems]
		y := dst[i*size : i*size+size]
		mn, mx := ifRange(x)
		scale := float32(mx-mn) / rule.div
		inv := ifInv(scale)
		base, add := mn, float32(0.5)
		if rule.midRise {
			base, add = mn+float32(0.5*scale), 0.0001
		}
		putF16(y, base)
		putF16(y[2:], scale)
		for j, v := range x {
			q[j] = ifTrunc(float32(float32(v-mn)*inv), add, rule.qmax)
		}
		clear(y[4:])
		ifPack(kind, y, &q)
	}
}

// ifDequantizeRow expands len(dst) values from asymmetric blocks:
// q·scale + base, the product rounded before the sum.
func ifDequantizeRow(dst []float32, src []byte, elems, size int, kind tensor.DType) {
	nb := len(dst) / elems
	src = src[:nb*size]
	var q [64]uint8
	for i := range nb {
		x := src[i*size : i*size+size]
		y := dst[i*elems : i*elems+elems]
		base, scale := f16(x), f16(x[2:])
		ifUnpack(kind, &q, x)
		for j := range y {
			y[j] = float32(float32(q[j])*scale) + base
		}
	}
}

// ifDotF32 returns the dot product of n values of an asymmetric weight row
// and a little-endian F32 activation row: each weight decoded as
// DequantizeRow does, each product rounded to float32 and accumulated in
// float64.
func ifDotF32(w, act []byte, n, elems, size int, kind tensor.DType) float32 {
	nb := n / elems
	w = w[:nb*size]
	act = act[:4*nb*elems]
	var q [64]uint8
	var sum float64
	for i := range nb {
		x := w[i*size : i*size+size]
		a := act[4*i*elems:]
		base, scale := f16(x), f16(x[2:])
		ifUnpack(kind, &q, x)
		for j := range elems {
			wv := float32(float32(q[j])*scale) + base
			av := math.Float32frombits(binary.LittleEndian.Uint32(a[4*j:]))
			sum += float64(wv * av)
		}
	}
	return float32(sum)
}

// ifDotQ8_0 returns the dot product of n values of an asymmetric weight row
// and a Q8_0 activation row, as an integer kernel computes it (Inferflow's
// dp4a GEMV with Q8_B32T2 activations, which are Q8_0 blocks): per
// 32-value activation block with scale dy, the exact sums S = Σq·qy and
// Y = Σqy give (scale·dy)·S + base·(Y·dy). A 64-value weight block spans
// two activation blocks.
func ifDotQ8_0(w, act []byte, n, elems, size int, kind tensor.DType) float32 {
	nb := n / elems
	w = w[:nb*size]
	act = act[:n/qk*blockQ8_0]
	var q [64]uint8
	var sumf float32
	for i := range nb {
		x := w[i*size : i*size+size]
		base, scale := f16(x), f16(x[2:])
		ifUnpack(kind, &q, x)
		for h := 0; h < elems; h += qk {
			ab := (i*elems + h) / qk
			y := act[ab*blockQ8_0 : ab*blockQ8_0+blockQ8_0]
			var s, sy int32
			for j := range qk {
				qy := int32(int8(y[2+j]))
				s += int32(q[h+j]) * qy
				sy += qy
			}
			dy := f16(y)
			sumf += float32(float32(scale*dy)*float32(s)) + float32(base*float32(float32(sy)*dy))
		}
	}
	return sumf
}

// Packing of each layout. Element indices are within the block; b is the
// whole block, header included.

// packQ6_B64T1: element i's low four bits are nibble i%2 of qs[i/2] (low
// nibble first), its top two bits are bit pair i%4 of qh[i/4].
func packQ6_B64T1(b []byte, q *[64]uint8) {
	qh, qs := b[4:20], b[20:52]
	for i, v := range q[:64] {
		qs[i/2] |= (v & 15) << (4 * (i % 2))
		qh[i/4] |= (v >> 4 & 3) << (2 * (i % 4))
	}
}

func unpackQ6_B64T1(q *[64]uint8, b []byte) {
	qh, qs := b[4:20], b[20:52]
	for i := range q[:64] {
		q[i] = qs[i/2]>>(4*(i%2))&15 | (qh[i/4]>>(2*(i%4))&3)<<4
	}
}

// packQ5_B64T1: low four bits as in Q6_B64T1, bit 4 of element i is bit
// i%8 of qh[i/8].
func packQ5_B64T1(b []byte, q *[64]uint8) {
	qh, qs := b[4:12], b[12:44]
	for i, v := range q[:64] {
		qs[i/2] |= (v & 15) << (4 * (i % 2))
		qh[i/8] |= (v >> 4 & 1) << (i % 8)
	}
}

func unpackQ5_B64T1(q *[64]uint8, b []byte) {
	qh, qs := b[4:12], b[12:44]
	for i := range q[:64] {
		q[i] = qs[i/2]>>(4*(i%2))&15 | (qh[i/8]>>(i%8)&1)<<4
	}
}

// packNibbles stores n 4-bit quants two to a byte from b[4], element i in
// nibble i%2 (low first): consecutive elements share a byte, unlike ggml's
// Q4_0, which pairs element j with j+16.
func packNibbles(b []byte, q *[64]uint8, n int) {
	qs := b[4 : 4+n/2]
	for i, v := range q[:n] {
		qs[i/2] |= (v & 15) << (4 * (i % 2))
	}
}

func unpackNibbles(q *[64]uint8, b []byte, n int) {
	qs := b[4 : 4+n/2]
	for i := range q[:n] {
		q[i] = qs[i/2] >> (4 * (i % 2)) & 15
	}
}

func packQ4_B32T1(b []byte, q *[64]uint8)   { packNibbles(b, q, 32) }
func unpackQ4_B32T1(q *[64]uint8, b []byte) { unpackNibbles(q, b, 32) }
func packQ4_B64T1(b []byte, q *[64]uint8)   { packNibbles(b, q, 64) }
func unpackQ4_B64T1(q *[64]uint8, b []byte) { unpackNibbles(q, b, 64) }

// packQ3H_B64T1: values 2k and 2k+1 (each 0..10) form the 7-bit code
// p = q[2k] + 11·q[2k+1]. Its low four bits are nibble k%2 of qs[k/2], bits
// 4-5 are bit pair k%4 of qm[k/4], and bit 6 is bit k%8 of qh[k/8].
func packQ3H_B64T1(b []byte, q *[64]uint8) {
	qh, qm, qs := b[4:8], b[8:16], b[16:32]
	for k := range 32 {
		p := q[2*k] + 11*q[2*k+1]
		qs[k/2] |= (p & 15) << (4 * (k % 2))
		qm[k/4] |= (p >> 4 & 3) << (2 * (k % 4))
		qh[k/8] |= (p >> 6 & 1) << (k % 8)
	}
}

// unpackQ3H_B64T1 splits each 7-bit code p into p%11 and p/11. The
// quantizer writes codes up to 120; codes 121..127 decode by the same
// arithmetic (to a second value of 11).
func unpackQ3H_B64T1(q *[64]uint8, b []byte) {
	qh, qm, qs := b[4:8], b[8:16], b[16:32]
	for k := range 32 {
		p := qs[k/2]>>(4*(k%2))&15 | (qm[k/4]>>(2*(k%4))&3)<<4 | (qh[k/8]>>(k%8)&1)<<6
		q[2*k], q[2*k+1] = p%11, p/11
	}
}

// packQ3_B32T1: the low two bits of element i are bit pair i%4 of qs[i/4],
// bit 2 is bit i%8 of qh[i/8].
func packQ3_B32T1(b []byte, q *[64]uint8) {
	qh, qs := b[4:8], b[8:16]
	for i, v := range q[:32] {
		qs[i/4] |= (v & 3) << (2 * (i % 4))
		qh[i/8] |= (v >> 2 & 1) << (i % 8)
	}
}

func unpackQ3_B32T1(q *[64]uint8, b []byte) {
	qh, qs := b[4:8], b[8:16]
	for i := range q[:32] {
		q[i] = qs[i/4]>>(2*(i%4))&3 | (qh[i/8]>>(i%8)&1)<<2
	}
}

// packQ2_B32T1: element i is bit pair i%4 of qs[i/4].
func packQ2_B32T1(b []byte, q *[64]uint8) {
	qs := b[4:12]
	for i, v := range q[:32] {
		qs[i/4] |= (v & 3) << (2 * (i % 4))
	}
}

func unpackQ2_B32T1(q *[64]uint8, b []byte) {
	qs := b[4:12]
	for i := range q[:32] {
		q[i] = qs[i/4] >> (2 * (i % 4)) & 3
	}
}

// Q8_B32T2

// QuantizeRowQ8_B32T2 quantizes src (a multiple of 32 values) to Q8_B32T2
// blocks: scale = amax/127 as an f16 and q = round(x/scale), half away
// from zero, clamped to -128..127. This is ggml's Q8_0 reference quantizer
// except that a block with amax/127 below 1e-5 gets zero quants (its scale
// is still stored).
func QuantizeRowQ8_B32T2(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*blockQ8_B32T2]
	for i := range nb {
		x := src[i*qk : i*qk+qk]
		y := dst[i*blockQ8_B32T2 : i*blockQ8_B32T2+blockQ8_B32T2]
		mn, mx := ifRange(x)
		m1, m2 := abs32(mx), abs32(mn)
		m0 := m2
		if m1 > m2 {
			m0 = m1
		}
		scale := m0 / 127
		inv := ifInv(scale)
		putF16(y, scale)
		for j, v := range x {
			r := roundAway(float32(v * inv))
			var q int8
			switch {
			case r >= 127:
				q = 127
			case r <= -128:
				q = -128
			case r == r: // not NaN
				q = int8(r)
			}
			y[2+j] = byte(q)
		}
	}
}

// DequantizeRowQ8_B32T2 expands len(dst) values (a multiple of 32) from
// Q8_B32T2 blocks: q·scale.
func DequantizeRowQ8_B32T2(dst []float32, src []byte) { DequantizeRowQ8_0(dst, src) }

// DotQ8_B32T2F32 returns the dot product of n values of a Q8_B32T2 weight
// row and a little-endian F32 activation row, products rounded to float32
// and accumulated in float64.
func DotQ8_B32T2F32(w, act []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*blockQ8_B32T2]
	act = act[:4*nb*qk]
	var sum float64
	for i := range nb {
		x := w[i*blockQ8_B32T2 : i*blockQ8_B32T2+blockQ8_B32T2]
		d := f16(x)
		for j := range qk {
			av := math.Float32frombits(binary.LittleEndian.Uint32(act[4*(i*qk+j):]))
			sum += float64(float32(float32(int8(x[2+j]))*d) * av)
		}
	}
	return float32(sum)
}

// DotQ8_B32T2Q8_0 returns the dot product of n values of a Q8_B32T2 weight
// row and a Q8_0 activation row; the layouts are the same, so this is
// DotQ8_0Q8_0.
func DotQ8_B32T2Q8_0(w, act []byte, n int) float32 { return DotQ8_0Q8_0(w, act, n) }

// Divisors and top codes of the 64-value formats: one level fewer than
// their bits allow.
const (
	ifQ6Div, ifQ6Max       = 62, 63
	ifQ5Div, ifQ5Max       = 30, 31
	ifQ4B64Div, ifQ4B64Max = 14, 15
	ifQ3HDiv, ifQ3HMax     = 10, 10
)

// Q6_B64T1

// QuantizeRowQ6_B64T1 quantizes src (a multiple of 64 values) to Q6_B64T1
// blocks: base = min, scale = (max−min)/62, 6-bit q rounded half up and
// clamped to 63 (reached only by rounding overshoot).
func QuantizeRowQ6_B64T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 64, blockQ6_B64T1, ifRule{div: ifQ6Div, qmax: ifQ6Max}, Q6_B64T1)
}

// DequantizeRowQ6_B64T1 expands len(dst) values (a multiple of 64) from
// Q6_B64T1 blocks.
func DequantizeRowQ6_B64T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 64, blockQ6_B64T1, Q6_B64T1)
}

// DotQ6_B64T1F32 returns the dot product of n values of a Q6_B64T1 weight
// row and a little-endian F32 activation row.
func DotQ6_B64T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 64, blockQ6_B64T1, Q6_B64T1)
}

// DotQ6_B64T1Q8_0 returns the dot product of n values of a Q6_B64T1 weight
// row and a Q8_0 activation row.
func DotQ6_B64T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 64, blockQ6_B64T1, Q6_B64T1)
}

// Q5_B64T1

// QuantizeRowQ5_B64T1 quantizes src (a multiple of 64 values) to Q5_B64T1
// blocks: base = min, scale = (max−min)/30, 5-bit q rounded half up and
// clamped to 31.
func QuantizeRowQ5_B64T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 64, blockQ5_B64T1, ifRule{div: ifQ5Div, qmax: ifQ5Max}, Q5_B64T1)
}

// DequantizeRowQ5_B64T1 expands len(dst) values from Q5_B64T1 blocks.
func DequantizeRowQ5_B64T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 64, blockQ5_B64T1, Q5_B64T1)
}

// DotQ5_B64T1F32 returns the dot product of n values of a Q5_B64T1 weight
// row and a little-endian F32 activation row.
func DotQ5_B64T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 64, blockQ5_B64T1, Q5_B64T1)
}

// DotQ5_B64T1Q8_0 returns the dot product of n values of a Q5_B64T1 weight
// row and a Q8_0 activation row.
func DotQ5_B64T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 64, blockQ5_B64T1, Q5_B64T1)
}

// Q4_B32T1

// QuantizeRowQ4_B32T1 quantizes src (a multiple of 32 values) to Q4_B32T1
// blocks with Inferflow's default rule for the layout ("A", used for "q4"
// and "q4_b32t1"): base = min, scale = (max−min)/15, 4-bit q rounded half
// up.
func QuantizeRowQ4_B32T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 32, blockQ4_B32T1, ifRule{div: 15, qmax: 15}, Q4_B32T1)
}

// QuantizeRowQ4_B32T1B quantizes src to Q4_B32T1 blocks with Inferflow's
// mid-rise rule "B" ("q4_b32t1b"): scale = (max−min)/16, base = min +
// scale/2, q = trunc((x−min)/scale + 0.0001) clamped to 15.
func QuantizeRowQ4_B32T1B(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 32, blockQ4_B32T1, ifRule{div: 16, qmax: 15, midRise: true}, Q4_B32T1)
}

// DequantizeRowQ4_B32T1 expands len(dst) values (a multiple of 32) from
// Q4_B32T1 blocks.
func DequantizeRowQ4_B32T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 32, blockQ4_B32T1, Q4_B32T1)
}

// DotQ4_B32T1F32 returns the dot product of n values of a Q4_B32T1 weight
// row and a little-endian F32 activation row.
func DotQ4_B32T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 32, blockQ4_B32T1, Q4_B32T1)
}

// DotQ4_B32T1Q8_0 returns the dot product of n values of a Q4_B32T1 weight
// row and a Q8_0 activation row.
func DotQ4_B32T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 32, blockQ4_B32T1, Q4_B32T1)
}

// Q4_B64T1

// QuantizeRowQ4_B64T1 quantizes src (a multiple of 64 values) to Q4_B64T1
// blocks: base = min, scale = (max−min)/14, 4-bit q rounded half up and
// clamped to 15; 15 levels are used.
func QuantizeRowQ4_B64T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 64, blockQ4_B64T1, ifRule{div: ifQ4B64Div, qmax: ifQ4B64Max}, Q4_B64T1)
}

// DequantizeRowQ4_B64T1 expands len(dst) values from Q4_B64T1 blocks.
func DequantizeRowQ4_B64T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 64, blockQ4_B64T1, Q4_B64T1)
}

// DotQ4_B64T1F32 returns the dot product of n values of a Q4_B64T1 weight
// row and a little-endian F32 activation row.
func DotQ4_B64T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 64, blockQ4_B64T1, Q4_B64T1)
}

// DotQ4_B64T1Q8_0 returns the dot product of n values of a Q4_B64T1 weight
// row and a Q8_0 activation row.
func DotQ4_B64T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 64, blockQ4_B64T1, Q4_B64T1)
}

// Q3H_B64T1

// QuantizeRowQ3H_B64T1 quantizes src (a multiple of 64 values) to
// Q3H_B64T1 blocks: base = min, scale = (max−min)/10, q rounded half up to
// 0..10, and each pair of values stored as one 7-bit code (see
// packQ3H_B64T1): log2(11) ≈ 3.46 bits of information in 3.5 bits, 4 bits
// per weight with the header.
func QuantizeRowQ3H_B64T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 64, blockQ3H_B64T1, ifRule{div: ifQ3HDiv, qmax: ifQ3HMax}, Q3H_B64T1)
}

// DequantizeRowQ3H_B64T1 expands len(dst) values from Q3H_B64T1 blocks.
func DequantizeRowQ3H_B64T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 64, blockQ3H_B64T1, Q3H_B64T1)
}

// DotQ3H_B64T1F32 returns the dot product of n values of a Q3H_B64T1
// weight row and a little-endian F32 activation row.
func DotQ3H_B64T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 64, blockQ3H_B64T1, Q3H_B64T1)
}

// DotQ3H_B64T1Q8_0 returns the dot product of n values of a Q3H_B64T1
// weight row and a Q8_0 activation row.
func DotQ3H_B64T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 64, blockQ3H_B64T1, Q3H_B64T1)
}

// Q3_B32T1

// QuantizeRowQ3_B32T1 quantizes src (a multiple of 32 values) to Q3_B32T1
// blocks with Inferflow's default rule for the layout ("B", used for "q3"
// and "q3_b32t1"): scale = (max−min)/8, base = min + scale/2,
// q = trunc((x−min)/scale + 0.0001) clamped to 7.
func QuantizeRowQ3_B32T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 32, blockQ3_B32T1, ifRule{div: 8, qmax: 7, midRise: true}, Q3_B32T1)
}

// QuantizeRowQ3_B32T1A quantizes src to Q3_B32T1 blocks with Inferflow's
// rule "A" ("q3_b32t1a"): base = min, scale = (max−min)/7, q rounded half
// up.
func QuantizeRowQ3_B32T1A(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 32, blockQ3_B32T1, ifRule{div: 7, qmax: 7}, Q3_B32T1)
}

// DequantizeRowQ3_B32T1 expands len(dst) values from Q3_B32T1 blocks.
func DequantizeRowQ3_B32T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 32, blockQ3_B32T1, Q3_B32T1)
}

// DotQ3_B32T1F32 returns the dot product of n values of a Q3_B32T1 weight
// row and a little-endian F32 activation row.
func DotQ3_B32T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 32, blockQ3_B32T1, Q3_B32T1)
}

// DotQ3_B32T1Q8_0 returns the dot product of n values of a Q3_B32T1 weight
// row and a Q8_0 activation row.
func DotQ3_B32T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 32, blockQ3_B32T1, Q3_B32T1)
}

// Q2_B32T1

// QuantizeRowQ2_B32T1 quantizes src (a multiple of 32 values) to Q2_B32T1
// blocks with Inferflow's default rule for the layout ("B", used for "q2"
// and "q2_b32t1"): scale = (max−min)/4, base = min + scale/2,
// q = trunc((x−min)/scale + 0.0001) clamped to 3.
func QuantizeRowQ2_B32T1(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 32, blockQ2_B32T1, ifRule{div: 4, qmax: 3, midRise: true}, Q2_B32T1)
}

// QuantizeRowQ2_B32T1A quantizes src to Q2_B32T1 blocks with Inferflow's
// rule "A" ("q2_b32t1a"): base = min, scale = (max−min)/3, q rounded half
// up.
func QuantizeRowQ2_B32T1A(dst []byte, src []float32) {
	ifQuantizeRow(dst, src, 32, blockQ2_B32T1, ifRule{div: 3, qmax: 3}, Q2_B32T1)
}

// DequantizeRowQ2_B32T1 expands len(dst) values from Q2_B32T1 blocks.
func DequantizeRowQ2_B32T1(dst []float32, src []byte) {
	ifDequantizeRow(dst, src, 32, blockQ2_B32T1, Q2_B32T1)
}

// DotQ2_B32T1F32 returns the dot product of n values of a Q2_B32T1 weight
// row and a little-endian F32 activation row.
func DotQ2_B32T1F32(w, act []byte, n int) float32 {
	return ifDotF32(w, act, n, 32, blockQ2_B32T1, Q2_B32T1)
}

// DotQ2_B32T1Q8_0 returns the dot product of n values of a Q2_B32T1 weight
// row and a Q8_0 activation row.
func DotQ2_B32T1Q8_0(w, act []byte, n int) float32 {
	return ifDotQ8_0(w, act, n, 32, blockQ2_B32T1, Q2_B32T1)
}

// InferflowFormat describes one of Inferflow's block formats and its
// reference functions. The row functions follow the package conventions:
// no allocation, no argument checks (see QuantizeInferflow and
// DequantizeInferflow for checked entry points).
type InferflowFormat struct {
	Type       tensor.DType // weft's GGUF type id
	Name       string       // Inferflow's name, lower case ("q3h_b64t1")
	BlockElems int          // values per block
	BlockBytes int          // bytes per block
	// Quantize is Inferflow's default quantizer for the layout.
	Quantize   func(dst []byte, src []float32)
	Dequantize func(dst []float32, src []byte)
	// DotF32 multiplies a weight row by a little-endian F32 activation row.
	DotF32 DotFunc
	// DotQ8_0 multiplies a weight row by a Q8_0 activation row (the
	// integer kernel's pairing; Inferflow's Q8_B32T2 activations are Q8_0
	// blocks).
	DotQ8_0 DotFunc
}

// BitsPerWeight returns the storage cost of the format in bits per value,
// headers included.
func (f InferflowFormat) BitsPerWeight() float64 {
	return float64(8*f.BlockBytes) / float64(f.BlockElems)
}

// RowBytes returns the bytes taken by n values, or an error when n is not a
// whole number of blocks.
func (f InferflowFormat) RowBytes(n int) (int, error) {
	if n < 0 || n%f.BlockElems != 0 {
		return 0, fmt.Errorf("%s: %d values is not a multiple of the block size %d", f.Name, n, f.BlockElems)
	}
	return n / f.BlockElems * f.BlockBytes, nil
}

// LookupInferflow returns the format with weft type id dt.
func LookupInferflow(dt tensor.DType) (InferflowFormat, bool) {
	switch dt {
	case Q8_B32T2:
		return InferflowFormat{dt, "q8_b32t2", 32, blockQ8_B32T2, QuantizeRowQ8_B32T2, DequantizeRowQ8_B32T2, DotQ8_B32T2F32, DotQ8_B32T2Q8_0}, true
	case Q6_B64T1:
		return InferflowFormat{dt, "q6_b64t1", 64, blockQ6_B64T1, QuantizeRowQ6_B64T1, DequantizeRowQ6_B64T1, DotQ6_B64T1F32, DotQ6_B64T1Q8_0}, true
	case Q5_B64T1:
		return InferflowFormat{dt, "q5_b64t1", 64, blockQ5_B64T1, QuantizeRowQ5_B64T1, DequantizeRowQ5_B64T1, DotQ5_B64T1F32, DotQ5_B64T1Q8_0}, true
	case Q4_B32T1:
		return InferflowFormat{dt, "q4_b32t1", 32, blockQ4_B32T1, QuantizeRowQ4_B32T1, DequantizeRowQ4_B32T1, DotQ4_B32T1F32, DotQ4_B32T1Q8_0}, true
	case Q4_B64T1:
		return InferflowFormat{dt, "q4_b64t1", 64, blockQ4_B64T1, QuantizeRowQ4_B64T1, DequantizeRowQ4_B64T1, DotQ4_B64T1F32, DotQ4_B64T1Q8_0}, true
	case Q3H_B64T1:
		return InferflowFormat{dt, "q3h_b64t1", 64, blockQ3H_B64T1, QuantizeRowQ3H_B64T1, DequantizeRowQ3H_B64T1, DotQ3H_B64T1F32, DotQ3H_B64T1Q8_0}, true
	case Q3_B32T1:
		return InferflowFormat{dt, "q3_b32t1", 32, blockQ3_B32T1, QuantizeRowQ3_B32T1, DequantizeRowQ3_B32T1, DotQ3_B32T1F32, DotQ3_B32T1Q8_0}, true
	case Q2_B32T1:
		return InferflowFormat{dt, "q2_b32t1", 32, blockQ2_B32T1, QuantizeRowQ2_B32T1, DequantizeRowQ2_B32T1, DotQ2_B32T1F32, DotQ2_B32T1Q8_0}, true
	}
	return InferflowFormat{}, false
}

// InferflowFormats returns every Inferflow format, in type id order.
func InferflowFormats() []InferflowFormat {
	fs := make([]InferflowFormat, 0, 8)
	for dt := Q8_B32T2; dt <= Q2_B32T1; dt++ {
		f, _ := LookupInferflow(dt)
		fs = append(fs, f)
	}
	return fs
}

func inferflowSizes(op string, dt tensor.DType, n, nbytes int) (InferflowFormat, error) {
	f, ok := LookupInferflow(dt)
	if !ok {
		return f, fmt.Errorf("quant: %s: %s is not an Inferflow type", op, dt)
	}
	want, err := f.RowBytes(n)
	if err != nil {
		return f, fmt.Errorf("quant: %s: %w", op, err)
	}
	if nbytes != want {
		return f, fmt.Errorf("quant: %s: %d %s values take %d bytes, have %d", op, n, f.Name, want, nbytes)
	}
	return f, nil
}

// QuantizeInferflow encodes src as the Inferflow type dt with its default
// quantizer. dst must be exactly as long as the format's RowBytes(len(src)).
// Unlike the row functions, it rejects inputs the format cannot hold: a
// NaN or infinite value, or a block whose base or scale overflows an f16
// (|x| or a block's range beyond about 65504·div). dst's contents are
// unspecified after an error.
func QuantizeInferflow(dt tensor.DType, dst []byte, src []float32) error {
	f, err := inferflowSizes("quantize", dt, len(src), len(dst))
	if err != nil {
		return err
	}
	for i, v := range src {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("quant: quantize %s: value %d is %v", f.Name, i, v)
		}
	}
	f.Quantize(dst, src)
	for b := 0; b < len(dst); b += f.BlockBytes {
		hdr := dst[b : b+4]
		if dt == Q8_B32T2 {
			hdr = dst[b : b+2]
		}
		for h := 0; h < len(hdr); h += 2 {
			if v := f16(hdr[h:]); math.IsInf(float64(v), 0) {
				return fmt.Errorf("quant: quantize %s: block %d (values %d..%d): header overflows f16",
					f.Name, b/f.BlockBytes, b/f.BlockBytes*f.BlockElems, (b/f.BlockBytes+1)*f.BlockElems-1)
			}
		}
	}
	return nil
}

// DequantizeInferflow decodes len(dst) values of the Inferflow type dt from
// src, whose length must be exactly the format's RowBytes(len(dst)).
func DequantizeInferflow(dt tensor.DType, dst []float32, src []byte) error {
	f, err := inferflowSizes("dequantize", dt, len(dst), len(src))
	if err != nil {
		return err
	}
	f.Dequantize(dst, src)
	return nil
}

// ifPack and ifUnpack dispatch on the format with static calls, so that
// the block scratch of the row functions stays on the stack.
func ifPack(kind tensor.DType, b []byte, q *[64]uint8) {
	switch kind {
	case Q6_B64T1:
		packQ6_B64T1(b, q)
	case Q5_B64T1:
		packQ5_B64T1(b, q)
	case Q4_B32T1:
		packQ4_B32T1(b, q)
	case Q4_B64T1:
		packQ4_B64T1(b, q)
	case Q3H_B64T1:
		packQ3H_B64T1(b, q)
	case Q3_B32T1:
		packQ3_B32T1(b, q)
	case Q2_B32T1:
		packQ2_B32T1(b, q)
	}
}

func ifUnpack(kind tensor.DType, q *[64]uint8, b []byte) {
	switch kind {
	case Q6_B64T1:
		unpackQ6_B64T1(q, b)
	case Q5_B64T1:
		unpackQ5_B64T1(q, b)
	case Q4_B32T1:
		unpackQ4_B32T1(q, b)
	case Q4_B64T1:
		unpackQ4_B64T1(q, b)
	case Q3H_B64T1:
		unpackQ3H_B64T1(q, b)
	case Q3_B32T1:
		unpackQ3_B32T1(q, b)
	case Q2_B32T1:
		unpackQ2_B32T1(q, b)
	}
}
