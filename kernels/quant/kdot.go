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

// DotQ2_KQ8_K returns the dot product of n values (a multiple of 256) of a
// Q2_K weight row and a Q8_K activation row.
func DotQ2_KQ8_K(w, act []byte, n int) float32 {
	nb := n / qkK
	w = w[:nb*blockQ2_K]
	act = act[:nb*blockQ8_K]
	var sumf float32
	for i := range nb {
		x := w[i*blockQ2_K : i*blockQ2_K+blockQ2_K]
		yd, q8, bsums := q8K(act[i*blockQ8_K : i*blockQ8_K+blockQ8_K])
		sc := x[:16]
		var summs int32
		for j := range 16 {
			summs += bsum(bsums, j) * int32(sc[j]>>4)
		}
		dall := yd * f16(x[80:])
		dmin := yd * f16(x[82:])
		var isum int32
		is := 0
		for k := range qkK / 128 {
			q2 := x[16+32*k : 16+32*k+32]
			for j := range 4 {
				shift := 2 * j
				p := q8[128*k+32*j : 128*k+32*j+32]
				for half := range 2 {
					var isuml int32
					for l := 16 * half; l < 16*half+16; l++ {
						isuml += int32(int8(p[l])) * int32(q2[l]>>shift&3)
					}
					isum += int32(sc[is]&0x0f) * isuml
					is++
				}
			}
		}
		sumf += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sumf
}

// laneSums adds scales[g]·q8[p]·a[p] into lane p%8 for each group g of
// qkK/len(scales) values, as ggml's generic K-quant dot products
// accumulate.
func laneSums(aux32 *[8]int32, q8 []byte, a *[qkK]int8, scales []int32) {
	gs := qkK / len(scales)
	for g, sc := range scales {
		for c := g * gs; c < (g+1)*gs; c += 8 {
			for l := range 8 {
				aux32[l] += sc * int32(int16(int8(q8[c+l]))*int16(a[c+l]))
			}
		}
	}
}

// DotQ3_KQ8_K returns the dot product of n values of a Q3_K weight row and a
// Q8_K activation row.
func DotQ3_KQ8_K(w, act []byte, n int) float32 {
	nb := n / qkK
	w = w[:nb*blockQ3_K]
	act = act[:nb*blockQ8_K]
	var sums [8]float32
	var a [qkK]int8
	var scales [16]int32
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
		var aux32 [8]int32
		laneSums(&aux32, q8, &a, scales[:])
		d := f16(x[108:]) * yd
		for l := range sums {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	var sumf float32
	for _, s := range sums {
		sumf += s
	}
	return sumf
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
	var sums [8]float32
	var sumf float32
	var a [qkK]int8
	for i := range nb {
		x := w[i*bs : i*bs+bs]
		yd, q8, bsums := q8K(act[i*blockQ8_K : i*blockQ8_K+blockQ8_K])
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
		var sumi int32
		for j := range qkK / 16 {
			sumi += bsum(bsums, j) * mins[j/2]
		}
		var aux32 [8]int32
		laneSums(&aux32, q8, &a, scales[:])
		d := f16(x) * yd
		for l := range sums {
			sums[l] += float32(d * float32(aux32[l]))
		}
		dmin := f16(x[2:]) * yd
		sumf -= float32(dmin * float32(sumi))
	}
	for _, s := range sums {
		sumf += s
	}
	return sumf
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
	var sums [8]float32
	var a [qkK]int8
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
		var scales [16]int32
		for j := range scales {
			scales[j] = int32(int8(x[192+j]))
		}
		var aux32 [8]int32
		laneSums(&aux32, q8, &a, scales[:])
		d := f16(x[208:]) * yd
		for l := range sums {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	var sumf float32
	for _, s := range sums {
		sumf += s
	}
	return sumf
}
