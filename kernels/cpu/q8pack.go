package cpu

import (
	"encoding/binary"
	"math"
)

// Activations for the SIMD Q4_0 and Q8_0 kernels are quantized to 8 bits
// exactly as ggml's x86 CPU backend quantizes them to Q8_0 (per block of
// 32: d = amax/127 stored as an f16, q = x·(127/amax) rounded half to
// even; quant.QuantizeActivationQ8_0), then laid out so the kernels load
// them with aligned full-width loads:
//
// Layout A (Q4_0 weights), 256 bytes per group of 4 blocks j = 0..3:
//
//	[  0, 64)  int8 q_j[0:16] for j = 0..3 (16 bytes each)
//	[ 64,128)  int8 q_j[16:32]
//	[128,192)  int32 lane l = 4j+i: -8·(Σ q_j[4i:4i+4] + Σ q_j[16+4i:20+4i])
//	[192,256)  float32 lane l = 4j+i: d_j
//
// A Q4_0 weight group's nibbles, gathered into 4×16 bytes, line up with
// the first two rows: low nibbles with [0,64), high with [64,128). The
// int32 lane sums of VPDPBUSD (unsigned nibbles × signed q) plus the third
// row give Σ (nibble-8)·q exactly, 4 lanes per block.
//
// Layout B (Q8_0 weights, AVX-512 VNNI) is layout A with -128 in place of
// -8: the kernels gather the first and the second halves of 4 weight
// blocks into two vectors and flip their sign bit (w+128, unsigned); the
// third row removes the 128·Σq the flip adds.
//
// Layout P (Q8_0 weights, AVX2), 192 bytes per pair of blocks j = 0, 1:
//
//	[  0, 64)  int8 q_0[0:32], q_1[0:32]
//	[ 64,128)  int32 lane l = 8j+i: -128·Σ q_j[4i:4i+4]
//	[128,192)  float32 lane l = 8j+i: d_j
//
// A row is padded with zero blocks to a whole group (pair): zero quants,
// corrections and scales contribute nothing.
const (
	q8aGroup = 256 // bytes per 4 blocks, layouts A and B
	q8bPair  = 192 // bytes per 2 blocks, layout P
)

// q8aRowBytes is the size of one row of cols activations in layout A,
// rounded up to a multiple of 64 bytes.
func q8aRowBytes(cols int) int { return (cols/32 + 3) / 4 * q8aGroup }

// q8pRowBytes is the size of one row of cols activations in layout P,
// rounded up to a multiple of 64 bytes.
func q8pRowBytes(cols int) int { return (cols/32 + 1) / 2 * q8bPair }

// quantBlockQ8 quantizes 32 values like quant.QuantizeActivationQ8_0 and
// returns the f16 bits of the scale.
func quantBlockQ8(q *[32]int8, x []float32) uint16 {
	x = x[:32]
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	id := 127 / amax
	if id > math.MaxFloat32 {
		id = 0
	}
	for i, v := range x {
		q[i] = int8(math.RoundToEven(float64(v * id)))
	}
	return toF16(amax / 127)
}

// quantizeQ8_0Go writes len(x)/32 ggml Q8_0 blocks to dst.
func quantizeQ8_0Go(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:nb*34]
	var q [32]int8
	for j := range nb {
		b := dst[34*j : 34*j+34]
		binary.LittleEndian.PutUint16(b, quantBlockQ8(&q, x[32*j:]))
		for i, v := range q {
			b[2+i] = byte(v)
		}
	}
}

// packQ8AGo quantizes x (a multiple of 32 values) into layout A.
func packQ8AGo(dst []byte, x []float32) { packQ8Go(dst, x, -8) }

// packQ8BGo quantizes x (a multiple of 32 values) into layout B.
func packQ8BGo(dst []byte, x []float32) { packQ8Go(dst, x, -128) }

// packQ8Go quantizes x into layout A (m = -8) or B (m = -128).
func packQ8Go(dst []byte, x []float32, m int32) {
	nb := len(x) / 32
	dst = dst[:q8aRowBytes(len(x))]
	clear(dst[nb/4*q8aGroup:])
	var q [32]int8
	for j := range nb {
		g := dst[j/4*q8aGroup : j/4*q8aGroup+q8aGroup]
		b := j % 4
		d := f16(quantBlockQ8(&q, x[32*j:]))
		for i := range 16 {
			g[16*b+i] = byte(q[i])
			g[64+16*b+i] = byte(q[16+i])
		}
		for l := range 4 {
			var s int32
			for i := range 4 {
				s += int32(q[4*l+i]) + int32(q[16+4*l+i])
			}
			binary.LittleEndian.PutUint32(g[128+4*(4*b+l):], uint32(m*s))
			binary.LittleEndian.PutUint32(g[192+4*(4*b+l):], math.Float32bits(d))
		}
	}
}

// packQ8PGo quantizes x (a multiple of 32 values) into layout P.
func packQ8PGo(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:q8pRowBytes(len(x))]
	clear(dst[nb/2*q8bPair:])
	var q [32]int8
	for j := range nb {
		p := dst[j/2*q8bPair : j/2*q8bPair+q8bPair]
		b := j % 2
		d := f16(quantBlockQ8(&q, x[32*j:]))
		for i, v := range q {
			p[32*b+i] = byte(v)
		}
		for l := range 8 {
			var s int32
			for i := range 4 {
				s += int32(q[4*l+i])
			}
			binary.LittleEndian.PutUint32(p[64+4*(8*b+l):], uint32(-128*s))
			binary.LittleEndian.PutUint32(p[128+4*(8*b+l):], math.Float32bits(d))
		}
	}
}

// Layout C (prefill, AVX-512 VNNI) holds the tokens in groups of 16: for
// each block b of a group, 16 records of 48 bytes, one per token:
//
//	[ 0,32)  int8 q[0:32]
//	[32,36)  int32 -8·Σq (for Q4_0 weights)
//	[36,40)  float32 d
//	[40,44)  int32 -128·Σq (for Q8_0 weights, stored as q+128)
//	[44,48)  float32 d
//
// so token t's record of block b is at (t/16·nb + b)·768 + t%16·48. The
// tile kernels broadcast each 4 bytes of quants of a record against a
// vector of 16 weight rows (q8ilv_amd64.s), and the correction and scale
// of their weight format with one 8-byte load. Tokens that pad the last
// group are zero.
const (
	q8cRecord = 48             // bytes per token and block
	q8cBlock  = 16 * q8cRecord // bytes per group of 16 tokens and block
	q8uBlock  = 8*64 + 64      // unpacked Q8_0 weights per 16 rows and block
	q8uBlock4 = 4*64 + 64      // unpacked Q4_0 weights (nibbles packed)
	q8Strip   = 16             // rows per unpacked strip, tokens per group
)

// q8uBlockOf is the size of an unpacked block of 16 rows of kind.
func q8uBlockOf(kind wkind) int {
	if kind == wkQ4_0 {
		return q8uBlock4
	}
	return q8uBlock
}

// q8cRowBytes is the size of one token's activations in layout C.
func q8cRowBytes(cols int) int { return cols / 32 * q8cRecord }
