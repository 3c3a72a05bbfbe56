package quant

import (
	"encoding/binary"
	"math"
)

// q8K splits a Q8_K block into its scale, quants and block sums.
func q8K(y []byte) (d float32, qs []byte, bsums []byte) {
	return math.Float32frombits(binary.LittleEndian.Uint32(y)), y[4 : 4+qkK], y[4+qkK : blockQ8_K]
}

func bsum(bsums []byte, j int) int32 { return int32(int16(binary.LittleEndian.Uint16(bsums[2*j:]))) }

// The K-quant dot products sum in the order of ggml's x86 CPU kernels
// (the AVX2 ggml_vec_dot_q*_K_q8_K, which llama.cpp runs on every x86
// level from AVX2 up, AVX-512 and AMX included): per super-block, exact
// integer sums in eight lanes, lane (e mod 32)/4 holding element e's
// products; each lane's float32 accumulator gains d·lane in one fused
// multiply-add (and, for Q2_K, first dmin times the lane's sum of block
// mins); the eight accumulators are reduced as hsum8 does. Q4_K keeps its
// mins in four more lanes and Q5_K in one fused scalar; both add them last.
// With the activation quantizer and dequantizers equal to ggml's, this
// makes a K-quant matmul's output llama.cpp's bit for bit.

// x86Lanes adds scales[e/g]·a[e]·q8[e] into lane (e%32)/4 for the 256
// elements e of a block, g = 256/len(scales): the integer sums of ggml's
// AVX2 kernels (exact: no intermediate overflows there or here).
func x86Lanes(lanes *[8]int32, q8 []byte, a *[qkK]int8, scales []int32) {
	q8 = q8[:qkK]
	gs := qkK / len(scales)
	for g, sc := range scales {
		for e := g * gs; e < (g+1)*gs; e += 4 {
			l := (e % 32) / 4
			p := int32(a[e])*int32(int8(q8[e])) + int32(a[e+1])*int32(int8(q8[e+1])) +
				int32(a[e+2])*int32(int8(q8[e+2])) + int32(a[e+3])*int32(int8(q8[e+3]))
			lanes[l] += sc * p
		}
	}
}

// fmaLanes sets acc[l] = d·lanes[l] + acc[l], each rounded once.
func fmaLanes(acc *[8]float32, d float32, lanes *[8]int32) {
	for l := range acc {
		acc[l] = FMA32(d, float32(lanes[l]), acc[l])
	}
}

// hsum8 reduces eight float32 lanes as ggml's hsum_float_8: the upper four
// onto the lower, then lanes 2,3 onto 0,1, then lane 1 onto 0.
func hsum8(acc *[8]float32) float32 {
	r0, r1, r2, r3 := acc[4]+acc[0], acc[5]+acc[1], acc[6]+acc[2], acc[7]+acc[3]
	return (r0 + r2) + (r1 + r3)
}

// minSums4 returns ggml's four Q4_K/Q5_K min products: lane k is
// m[2k]·(sum of sub-block 2k) + m[2k+1]·(sum of sub-block 2k+1), a
// sub-block's sum being two of the block's 16 bsums.
func minSums4(bsums []byte, m *[8]int32) [4]int32 {
	var p [4]int32
	for k := range p {
		s0 := bsum(bsums, 4*k) + bsum(bsums, 4*k+1)
		s1 := bsum(bsums, 4*k+2) + bsum(bsums, 4*k+3)
		p[k] = m[2*k]*s0 + m[2*k+1]*s1
	}
	return p
}

// DotQ2_KQ8_K returns the dot product of n values (a multiple of 256) of a
// Q2_K weight row and a Q8_K activation row.
func DotQ2_KQ8_K(w, act []byte, n int) float32 {
	nb := n / qkK
	w = w[:nb*blockQ2_K]
	act = act[:nb*blockQ8_K]
	var (
		acc    [8]float32
		a      [qkK]int8
		scales [16]int32
	)
	for i := range nb {
		x := w[i*blockQ2_K : i*blockQ2_K+blockQ2_K]
		yd, q8, bsums := q8K(act[i*blockQ8_K : i*blockQ8_K+blockQ8_K])
		d := yd * f16(x[80:])
		dmin := -yd * f16(x[82:])
		sc := x[:16]
		for k := range acc {
			p := int32(sc[2*k]>>4)*bsum(bsums, 2*k) + int32(sc[2*k+1]>>4)*bsum(bsums, 2*k+1)
			acc[k] = FMA32(dmin, float32(p), acc[k])
		}
		for j := range scales {
			scales[j] = int32(sc[j] & 0x0f)
		}
		for c := range 2 {
			q2 := x[16+32*c : 16+32*c+32]
			for s := range 4 {
				out := a[128*c+32*s : 128*c+32*s+32]
				for l := range out {
					out[l] = int8(q2[l] >> (2 * s) & 3)
				}
			}
		}
		var lanes [8]int32
		x86Lanes(&lanes, q8, &a, scales[:])
		fmaLanes(&acc, d, &lanes)
	}
	return hsum8(&acc)
}

// DotQ3_KQ8_K returns the dot product of n values of a Q3_K weight row and a
// Q8_K activation row.
func DotQ3_KQ8_K(w, act []byte, n int) float32 {
	nb := n / qkK
	w = w[:nb*blockQ3_K]
	act = act[:nb*blockQ8_K]
	var (
		acc    [8]float32
		a      [qkK]int8
		scales [16]int32
	)
	for i := range nb {
		x := w[i*blockQ3_K : i*blockQ3_K+blockQ3_K]
		yd, q8, _ := q8K(act[i*blockQ8_K : i*blockQ8_K+blockQ8_K])
		hm := x[:32]
		// Element 128c + 32s + l: bit pair s of qs[32c+l], minus 4 unless
		// bit 4c+s of hmask[l] is set.
		for c := range 2 {
			q3 := x[32+32*c : 32+32*c+32]
			for s := range 4 {
				m := uint8(1) << (4*c + s)
				out := a[128*c+32*s : 128*c+32*s+32]
				for l := range out {
					v := int8(q3[l] >> (2 * s) & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					out[l] = v
				}
			}
		}
		for j := range scales {
			scales[j] = int32(q3Scale(x[96:108], j))
		}
		var lanes [8]int32
		x86Lanes(&lanes, q8, &a, scales[:])
		fmaLanes(&acc, yd*f16(x[108:]), &lanes)
	}
	return hsum8(&acc)
}

// dotKX is the shared body of the Q4_K and Q5_K dot products.
func dotKX(w, act []byte, n int, q5 bool) float32 {
	bs := blockQ4_K
	if q5 {
		bs = blockQ5_K
	}
	nb := n / qkK
	w = w[:nb*bs]
	act = act[:nb*blockQ8_K]
	var (
		acc   [8]float32
		accM  [4]float32 // Q4_K's min lanes
		summs float32    // Q5_K's min sum
		a     [qkK]int8
	)
	for i := range nb {
		x := w[i*bs : i*bs+bs]
		yd, q8, bsums := q8K(act[i*blockQ8_K : i*blockQ8_K+blockQ8_K])
		d := yd * f16(x)
		dmin := -yd * f16(x[2:])
		if q5 {
			unpackQ5K(&a, x)
		} else {
			unpackQ4K(&a, x)
		}
		var scales, mins [8]int32
		for j := range 8 {
			sc, m := scaleMinK4(j, x[4:16])
			scales[j], mins[j] = int32(sc), int32(m)
		}
		p := minSums4(bsums, &mins)
		if q5 {
			summs = FMA32(dmin, float32((p[0]+p[1])+(p[2]+p[3])), summs)
		} else {
			for k := range accM {
				accM[k] = FMA32(dmin, float32(p[k]), accM[k])
			}
		}
		var lanes [8]int32
		x86Lanes(&lanes, q8, &a, scales[:])
		fmaLanes(&acc, d, &lanes)
	}
	if q5 {
		return hsum8(&acc) + summs
	}
	return hsum8(&acc) + ((accM[0] + accM[2]) + (accM[1] + accM[3]))
}

// unpackQ4K writes the 4-bit quants of a Q4_K block: each 32 bytes of qs
// hold 64 values, the first 32 in the low nibbles.
func unpackQ4K(a *[qkK]int8, x []byte) {
	qs := x[16:144]
	for j := range 4 {
		q := qs[32*j : 32*j+32]
		for l, b := range q {
			a[64*j+l] = int8(b & 0x0f)
			a[64*j+32+l] = int8(b >> 4)
		}
	}
}

// unpackQ5K writes the 5-bit quants of a Q5_K block: Q4_K's nibbles plus
// bit p/32 of qh[p%32] as bit 4 of value p.
func unpackQ5K(a *[qkK]int8, x []byte) {
	qh, qs := x[16:48], x[48:176]
	for j := range 4 {
		q := qs[32*j : 32*j+32]
		m1, m2 := uint8(1)<<(2*j), uint8(2)<<(2*j)
		for l, b := range q {
			v1, v2 := int8(b&0x0f), int8(b>>4)
			if qh[l]&m1 != 0 {
				v1 += 16
			}
			if qh[l]&m2 != 0 {
				v2 += 16
			}
			a[64*j+l] = v1
			a[64*j+32+l] = v2
		}
	}
}

// DotQ4_KQ8_K returns the dot product of n values of a Q4_K weight row and a
// Q8_K activation row.
func DotQ4_KQ8_K(w, act []byte, n int) float32 { return dotKX(w, act, n, false) }

// DotQ5_KQ8_K returns the dot product of n values of a Q5_K weight row and a
// Q8_K activation row.
func DotQ5_KQ8_K(w, act []byte, n int) float32 { return dotKX(w, act, n, true) }

// DotQ6_KQ8_K returns the dot product of n values of a Q6_K weight row and a
// Q8_K activation row.
func DotQ6_KQ8_K(w, act []byte, n int) float32 {
	nb := n / qkK
	w = w[:nb*blockQ6_K]
	act = act[:nb*blockQ8_K]
	var (
		acc    [8]float32
		a      [qkK]int8
		scales [16]int32
	)
	for i := range nb {
		x := w[i*blockQ6_K : i*blockQ6_K+blockQ6_K]
		yd, q8, _ := q8K(act[i*blockQ8_K : i*blockQ8_K+blockQ8_K])
		for h := range 2 {
			ql, qh := x[64*h:64*h+64], x[128+32*h:128+32*h+32]
			for l := range 32 {
				a[128*h+l] = int8(ql[l]&0x0f|(qh[l]&3)<<4) - 32
				a[128*h+32+l] = int8(ql[l+32]&0x0f|(qh[l]>>2&3)<<4) - 32
				a[128*h+64+l] = int8(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				a[128*h+96+l] = int8(ql[l+32]>>4|(qh[l]>>6)<<4) - 32
			}
		}
		for j := range scales {
			scales[j] = int32(int8(x[192+j]))
		}
		var lanes [8]int32
		x86Lanes(&lanes, q8, &a, scales[:])
		fmaLanes(&acc, yd*f16(x[208:]), &lanes)
	}
	return hsum8(&acc)
}
