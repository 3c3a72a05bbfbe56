package quant

import (
	"encoding/binary"
	"math"
)

// Block sizes in bytes of the 256-element K-quant super-blocks.
const (
	blockQ2_K = 84  // scales[16] | qs[64] | d f16 | dmin f16
	blockQ3_K = 110 // hmask[32] | qs[64] | scales[12] | d f16
	blockQ4_K = 144 // d f16 | dmin f16 | scales[12] | qs[128]
	blockQ5_K = 176 // d f16 | dmin f16 | scales[12] | qh[32] | qs[128]
	blockQ6_K = 210 // ql[128] | qh[64] | scales[16] int8 | d f16
	blockQ8_K = 292 // d f32 | qs[256] int8 | bsums[16] int16
)

// groupMaxEps is ggml's threshold below which a group counts as all zero.
const groupMaxEps = 1e-15

func sqrt32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }

// makeQXQuants finds a symmetric scale for x with levels -nmax..nmax-1,
// weighting errors by x², by trying 19 candidate scales around -nmax/max
// (ggml's make_qx_quants with rmse_type 1). It stores L = level+nmax and
// returns the scale.
func makeQXQuants(nmax int, x []float32, L []int8) float32 {
	L = L[:len(x)]
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := v * v
		sumlx += float32(w * v * float32(l))
		suml2 += float32(w * float32(l) * float32(l))
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / mx
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := clamp(nearestInt(iscale*v), -nmax, nmax-1)
			w := v * v
			sumlx += float32(w * v * float32(l))
			suml2 += float32(w * float32(l) * float32(l))
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(nmax + clamp(nearestInt(iscale*v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: a symmetric scale for
// levels -nmax..nmax-1 refined by up to five rounds of coordinate descent on
// the x²-weighted error. It stores L = level+nmax and returns the scale.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	L = L[:len(x)]
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w := v * v
		sumlx += float32(w * v * float32(l))
		suml2 += float32(w * float32(l) * float32(l))
	}
	for range 5 {
		changed := 0
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(w*v*li)
			if slx > 0 {
				sl2 := suml2 - float32(w*li*li)
				nl := clamp(nearestInt(v*sl2/slx), -nmax, nmax-1)
				if nl != int(L[i]) {
					slx += float32(w * v * float32(nl))
					sl2 += float32(w * float32(nl) * float32(nl))
					if sl2 > 0 && float32(slx*slx)*suml2 > float32(sumlx*sumlx)*sl2 {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is ggml's make_qkx2_quants: an asymmetric fit
// x ≈ scale·L - min with L in 0..nmax, searching nstep+1 candidate scales
// and solving weighted least squares for scale and min at each. It stores L,
// returns the scale and sets *theMin to the (non-negative) min.
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8, theMin *float32,
	rmin, rdelta float32, nstep int, useMAD bool) float32 {
	n := len(x)
	L, Laux, weights = L[:n], Laux[:n], weights[:n]
	mn, mx := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < mn {
			mn = x[i]
		}
		if x[i] > mx {
			mx = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(L)
		*theMin = -mn
		return 0
	}
	errOf := func(diff float32) float32 {
		if useMAD {
			return abs32(diff)
		}
		return diff * diff
	}
	iscale := float32(nmax) / (mx - mn)
	scale := 1 / iscale
	var bestErr float32
	for i, v := range x {
		L[i] = uint8(clamp(nearestInt(iscale*(v-mn)), 0, nmax))
		diff := float32(scale*float32(L[i])) + mn - v
		bestErr += float32(weights[i] * errOf(diff))
	}
	if nstep < 1 {
		*theMin = -mn
		return scale
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clamp(nearestInt(iscale*(v-mn)), 0, nmax)
			Laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curErr float32
			for i, v := range x {
				diff := float32(thisScale*float32(Laux[i])) + thisMin - v
				curErr += float32(weights[i] * errOf(diff))
			}
			if curErr < bestErr {
				copy(L, Laux)
				bestErr = curErr
				scale = thisScale
				mn = thisMin
			}
		}
	}
	*theMin = -mn
	return scale
}

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed bytes q of a Q4_K or Q5_K block: bytes 0..3 hold scales 0..3
// and bytes 4..7 mins 0..3 in their low six bits; scales and mins 4..7 keep
// their low four bits in the nibbles of bytes 8..11 and their top two bits
// in the top bits of bytes 0..3 (scales) and 4..7 (mins).
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | q[j-4]>>6<<4, q[j+4]>>4 | q[j]>>6<<4
}

// putScaleMinK4 packs 6-bit scales and mins as scaleMinK4 reads them.
func putScaleMinK4(q []byte, ls, lm *[8]uint8) {
	q = q[:12]
	clear(q)
	for j := range 8 {
		if j < 4 {
			q[j] = ls[j]
			q[j+4] = lm[j]
		} else {
			q[j+4] = ls[j]&0x0f | lm[j]&0x0f<<4
			q[j-4] |= ls[j] >> 4 << 6
			q[j] |= lm[j] >> 4 << 6
		}
	}
}

// q3Scale returns the 6-bit scale j (0..15) of a Q3_K block's 12 packed
// scale bytes, minus 32: the low four bits are nibbles of bytes 0..7
// (scales 0..7 low nibbles, 8..15 high nibbles), the top two bits are bit
// pair j/4 of byte 8 + j%4.
func q3Scale(sc []byte, j int) int {
	var lo byte
	if j < 8 {
		lo = sc[j] & 0x0f
	} else {
		lo = sc[j-8] >> 4
	}
	hi := sc[8+j%4] >> (2 * (j / 4)) & 3
	return int(lo|hi<<4) - 32
}

// QuantizeRowQ8_K quantizes src (a multiple of 256 values) to Q8_K blocks:
// a float32 d = max/-127 (max the value of largest magnitude), 256 int8
// quants and the sums of each 16 quants. It prepares activations for the
// K-quant dot products.
func QuantizeRowQ8_K(dst []byte, src []float32) {
	nb := len(src) / qkK
	dst = dst[:nb*blockQ8_K]
	for i := range nb {
		x := src[i*qkK : i*qkK+qkK]
		y := dst[i*blockQ8_K : i*blockQ8_K+blockQ8_K]
		var mx, amax float32
		for _, v := range x {
			if ax := abs32(v); ax > amax {
				amax, mx = ax, v
			}
		}
		if amax == 0 {
			clear(y)
			continue
		}
		iscale := -127 / mx
		qs := y[4 : 4+qkK]
		for j, v := range x {
			qs[j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := range qkK / 16 {
			sum := 0
			for _, q := range qs[16*j : 16*j+16] {
				sum += int(int8(q))
			}
			binary.LittleEndian.PutUint16(y[4+qkK+2*j:], uint16(int16(sum)))
		}
		binary.LittleEndian.PutUint32(y, math.Float32bits(1/iscale))
	}
}

// DequantizeRowQ8_K expands len(dst) values from Q8_K blocks in src.
func DequantizeRowQ8_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	src = src[:nb*blockQ8_K]
	for i := range nb {
		x := src[i*blockQ8_K : i*blockQ8_K+blockQ8_K]
		y := dst[i*qkK : i*qkK+qkK]
		d := math.Float32frombits(binary.LittleEndian.Uint32(x))
		for j := range y {
			y[j] = d * float32(int8(x[4+j]))
		}
	}
}

// packQ2 packs 2-bit values L[0:256] as Q2_K and Q3_K store them: byte l of
// each 32-byte group g holds elements 128g+l, +32, +64, +96 in bit pairs
// 0, 2, 4, 6.
func packQ2(qs []byte, L []int8) {
	for j := 0; j < qkK; j += 128 {
		for l := range 32 {
			qs[j/4+l] = byte(L[j+l]) | byte(L[j+l+32])<<2 | byte(L[j+l+64])<<4 | byte(L[j+l+96])<<6
		}
	}
}

// QuantizeRowQ2_K quantizes src (a multiple of 256 values) to Q2_K: 16
// sub-blocks of 16 with 2-bit quants, x ≈ d·sc·q - dmin·m, where the 4-bit
// sc and m share a byte (sc low) and d, dmin are the f16 super-block scales.
func QuantizeRowQ2_K(dst []byte, src []float32) {
	const q4scale = 15
	nb := len(src) / qkK
	dst = dst[:nb*blockQ2_K]
	var (
		L       [qkK]int8
		Lu      [16]uint8
		Laux    [16]uint8
		weights [16]float32
		mins    [qkK / 16]float32
		scales  [qkK / 16]float32
	)
	for i := range nb {
		x := src[i*qkK : i*qkK+qkK]
		y := dst[i*blockQ2_K : i*blockQ2_K+blockQ2_K]
		sc := y[:16]
		var maxScale, maxMin float32
		for j := range qkK / 16 {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = abs32(v)
			}
			scales[j] = makeQKX2Quants(3, xs, weights[:], Lu[:], Laux[:], &mins[j], -0.5, 0.1, 15, true)
			for l, q := range Lu {
				L[16*j+l] = int8(q)
			}
			maxScale = max(maxScale, scales[j])
			maxMin = max(maxMin, mins[j])
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(y[80:], maxScale/q4scale)
		} else {
			clear(sc)
			putF16(y[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(y[82:], maxMin/q4scale)
		} else {
			putF16(y[82:], 0)
		}
		d, dmin := f16(y[80:]), f16(y[82:])
		for j := range qkK / 16 {
			dl := d * float32(sc[j]&0x0f)
			if dl == 0 {
				continue
			}
			dm := dmin * float32(sc[j]>>4)
			for ii := range 16 {
				L[16*j+ii] = int8(clamp(nearestInt((x[16*j+ii]+dm)/dl), 0, 3))
			}
		}
		packQ2(y[16:80], L[:])
	}
}

// DequantizeRowQ2_K expands len(dst) values from Q2_K blocks in src.
func DequantizeRowQ2_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	src = src[:nb*blockQ2_K]
	for i := range nb {
		x := src[i*blockQ2_K : i*blockQ2_K+blockQ2_K]
		y := dst[i*qkK : i*qkK+qkK]
		d, dmin := f16(x[80:]), f16(x[82:])
		sc := x[:16]
		is := 0
		for n := 0; n < qkK; n += 128 {
			q := x[16+n/4 : 16+n/4+32]
			for j := range 4 {
				shift := 2 * j
				for half := range 2 {
					s := sc[is]
					is++
					dl, ml := d*float32(s&0x0f), dmin*float32(s>>4)
					out := y[n+32*j+16*half : n+32*j+16*half+16]
					for l := range out {
						out[l] = float32(dl*float32(q[16*half+l]>>shift&3)) - ml
					}
				}
			}
		}
	}
}

// QuantizeRowQ3_K quantizes src to Q3_K: 16 sub-blocks of 16 with 3-bit
// quants x ≈ d·(sc-32)·(q-4), the 6-bit sc packed into 12 bytes (see
// q3Scale); the low two bits of q are packed like Q2_K's and the high bit
// of element 32k+l is bit k of hmask[l].
func QuantizeRowQ3_K(dst []byte, src []float32) {
	nb := len(src) / qkK
	dst = dst[:nb*blockQ3_K]
	var (
		L      [qkK]int8
		scales [qkK / 16]float32
	)
	for i := range nb {
		x := src[i*qkK : i*qkK+qkK]
		y := dst[i*blockQ3_K : i*blockQ3_K+blockQ3_K]
		hmask, sc := y[:32], y[96:108]
		var maxScale, amax float32
		for j := range qkK / 16 {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range qkK / 16 {
				l := uint8(clamp(int(int8(nearestInt(iscale*scales[j]))), -32, 31) + 32)
				if j < 8 {
					sc[j] = l & 0x0f
				} else {
					sc[j-8] |= (l & 0x0f) << 4
				}
				sc[j%4+8] |= l >> 4 << (2 * (j / 4))
			}
			putF16(y[108:], 1/iscale)
		} else {
			putF16(y[108:], 0)
		}
		d := f16(y[108:])
		for j := range qkK / 16 {
			dl := d * float32(q3Scale(sc, j))
			if dl == 0 {
				continue
			}
			for ii := range 16 {
				L[16*j+ii] = int8(clamp(nearestInt(x[16*j+ii]/dl), -4, 3) + 4)
			}
		}
		clear(hmask)
		m, hm := 0, uint8(1)
		for j := range qkK {
			if L[j] > 3 {
				hmask[m] |= hm
				L[j] -= 4
			}
			if m++; m == qkK/8 {
				m, hm = 0, hm<<1
			}
		}
		packQ2(y[32:96], L[:])
	}
}

// DequantizeRowQ3_K expands len(dst) values from Q3_K blocks in src.
func DequantizeRowQ3_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	src = src[:nb*blockQ3_K]
	for i := range nb {
		x := src[i*blockQ3_K : i*blockQ3_K+blockQ3_K]
		y := dst[i*qkK : i*qkK+qkK]
		d := f16(x[108:])
		hm, sc := x[:32], x[96:108]
		is := 0
		m := uint8(1)
		for n := 0; n < qkK; n += 128 {
			q := x[32+n/4 : 32+n/4+32]
			for j := range 4 {
				shift := 2 * j
				for half := range 2 {
					dl := d * float32(q3Scale(sc, is))
					is++
					out := y[n+32*j+16*half : n+32*j+16*half+16]
					for l := range out {
						v := int(q[16*half+l] >> shift & 3)
						if hm[16*half+l]&m == 0 {
							v -= 4
						}
						out[l] = dl * float32(v)
					}
				}
				m <<= 1
			}
		}
	}
}

// quantizeKX2 fits the eight 32-element sub-blocks of one Q4_K or Q5_K
// super-block (levels 0..nmax) and packs d, dmin and the 6-bit scales into
// y[0:16]. It leaves the final levels in L.
func quantizeKX2(y []byte, x []float32, L *[qkK]uint8, nmax int, rmin float32, nstep int) {
	var (
		Laux    [32]uint8
		weights [32]float32
		mins    [8]float32
		scales  [8]float32
	)
	var maxScale, maxMin float32
	for j := range qkK / 32 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], Laux[:], &mins[j], rmin, 0.1, nstep, false)
		maxScale = max(maxScale, scales[j])
		maxMin = max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := range 8 {
		ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
	}
	putScaleMinK4(y[4:16], &ls, &lm)
	putF16(y, maxScale/63)
	putF16(y[2:], maxMin/63)
	d, dmin := f16(y), f16(y[2:])
	for j := range qkK / 32 {
		sc, m := scaleMinK4(j, y[4:16])
		dl := d * float32(sc)
		if dl == 0 {
			continue
		}
		dm := dmin * float32(m)
		for ii := range 32 {
			L[32*j+ii] = uint8(clamp(nearestInt((x[32*j+ii]+dm)/dl), 0, nmax))
		}
	}
}

// QuantizeRowQ4_K quantizes src to Q4_K: 8 sub-blocks of 32 with 4-bit
// quants, x ≈ d·sc·q - dmin·m with 6-bit sc and m (see scaleMinK4). Each 32
// bytes of qs hold two sub-blocks: the first in the low nibbles, the second
// in the high nibbles.
func QuantizeRowQ4_K(dst []byte, src []float32) {
	nb := len(src) / qkK
	dst = dst[:nb*blockQ4_K]
	var L [qkK]uint8
	for i := range nb {
		x := src[i*qkK : i*qkK+qkK]
		y := dst[i*blockQ4_K : i*blockQ4_K+blockQ4_K]
		quantizeKX2(y, x, &L, 15, -1, 20)
		q := y[16:]
		for j := 0; j < qkK; j += 64 {
			for l := range 32 {
				q[j/2+l] = L[j+l] | L[j+l+32]<<4
			}
		}
	}
}

// DequantizeRowQ4_K expands len(dst) values from Q4_K blocks in src.
func DequantizeRowQ4_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	src = src[:nb*blockQ4_K]
	for i := range nb {
		x := src[i*blockQ4_K : i*blockQ4_K+blockQ4_K]
		y := dst[i*qkK : i*qkK+qkK]
		d, dmin := f16(x), f16(x[2:])
		for j := 0; j < qkK; j += 64 {
			q := x[16+j/2 : 16+j/2+32]
			sc1, m1 := scaleMinK4(j/32, x[4:16])
			sc2, m2 := scaleMinK4(j/32+1, x[4:16])
			d1, dm1 := d*float32(sc1), dmin*float32(m1)
			d2, dm2 := d*float32(sc2), dmin*float32(m2)
			for l := range 32 {
				y[j+l] = float32(d1*float32(q[l]&0x0f)) - dm1
				y[j+32+l] = float32(d2*float32(q[l]>>4)) - dm2
			}
		}
	}
}

// QuantizeRowQ5_K quantizes src to Q5_K: Q4_K's layout with 5-bit quants;
// the high bit of element 32k+l is bit k of qh[l].
func QuantizeRowQ5_K(dst []byte, src []float32) {
	nb := len(src) / qkK
	dst = dst[:nb*blockQ5_K]
	var L [qkK]uint8
	for i := range nb {
		x := src[i*qkK : i*qkK+qkK]
		y := dst[i*blockQ5_K : i*blockQ5_K+blockQ5_K]
		quantizeKX2(y, x, &L, 31, -0.5, 15)
		qh, ql := y[16:48], y[48:176]
		clear(qh)
		m1, m2 := uint8(1), uint8(2)
		for n := 0; n < qkK; n += 64 {
			for j := range 32 {
				l1, l2 := L[n+j], L[n+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[n/2+j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
		}
	}
}

// DequantizeRowQ5_K expands len(dst) values from Q5_K blocks in src.
func DequantizeRowQ5_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	src = src[:nb*blockQ5_K]
	for i := range nb {
		x := src[i*blockQ5_K : i*blockQ5_K+blockQ5_K]
		y := dst[i*qkK : i*qkK+qkK]
		d, dmin := f16(x), f16(x[2:])
		qh := x[16:48]
		u1, u2 := uint8(1), uint8(2)
		for j := 0; j < qkK; j += 64 {
			ql := x[48+j/2 : 48+j/2+32]
			sc1, m1 := scaleMinK4(j/32, x[4:16])
			sc2, m2 := scaleMinK4(j/32+1, x[4:16])
			d1, dm1 := d*float32(sc1), dmin*float32(m1)
			d2, dm2 := d*float32(sc2), dmin*float32(m2)
			for l := range 32 {
				v1, v2 := ql[l]&0x0f, ql[l]>>4
				if qh[l]&u1 != 0 {
					v1 += 16
				}
				if qh[l]&u2 != 0 {
					v2 += 16
				}
				y[j+l] = float32(d1*float32(v1)) - dm1
				y[j+32+l] = float32(d2*float32(v2)) - dm2
			}
			u1 <<= 2
			u2 <<= 2
		}
	}
}

// QuantizeRowQ6_K quantizes src to Q6_K: 16 sub-blocks of 16 with 6-bit
// quants x ≈ d·sc·(q-32), sc an int8. In each 128-element half, ql[l] holds
// elements l (low nibble) and l+64 (high), ql[l+32] elements l+32 and l+96,
// and qh[l] the top two bits of elements l, l+32, l+64, l+96 in bit pairs
// 0, 2, 4, 6.
func QuantizeRowQ6_K(dst []byte, src []float32) {
	nb := len(src) / qkK
	dst = dst[:nb*blockQ6_K]
	var (
		L      [qkK]int8
		scales [qkK / 16]float32
	)
	for i := range nb {
		x := src[i*qkK : i*qkK+qkK]
		y := dst[i*blockQ6_K : i*blockQ6_K+blockQ6_K]
		var maxScale, maxAbsScale float32
		for ib := range qkK / 16 {
			scales[ib] = makeQXQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
			if a := abs32(scales[ib]); a > maxAbsScale {
				maxAbsScale, maxScale = a, scales[ib]
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(y)
			continue
		}
		iscale := -128 / maxScale
		putF16(y[208:], 1/iscale)
		sc := y[192:208]
		for ib := range sc {
			sc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		d := f16(y[208:])
		for j := range qkK / 16 {
			dl := d * float32(int8(sc[j]))
			if dl == 0 {
				continue
			}
			for ii := range 16 {
				L[16*j+ii] = int8(clamp(nearestInt(x[16*j+ii]/dl), -32, 31) + 32)
			}
		}
		ql, qh := y[:128], y[128:192]
		for j := 0; j < qkK; j += 128 {
			for l := range 32 {
				q1, q2 := byte(L[j+l])&0x0f, byte(L[j+l+32])&0x0f
				q3, q4 := byte(L[j+l+64])&0x0f, byte(L[j+l+96])&0x0f
				ql[j/2+l] = q1 | q3<<4
				ql[j/2+l+32] = q2 | q4<<4
				qh[j/4+l] = byte(L[j+l])>>4 | byte(L[j+l+32])>>4<<2 | byte(L[j+l+64])>>4<<4 | byte(L[j+l+96])>>4<<6
			}
		}
	}
}

// q6 returns the 6-bit quant (minus 32) of element l+32k (k 0..3, l 0..31)
// of a 128-element half of a Q6_K block, given its ql[0:64] and qh[0:32].
func q6(ql, qh []byte, k, l int) int {
	lo := ql[l+32*(k&1)]
	if k >= 2 {
		lo >>= 4
	}
	return int(lo&0x0f|(qh[l]>>(2*k)&3)<<4) - 32
}

// DequantizeRowQ6_K expands len(dst) values from Q6_K blocks in src.
func DequantizeRowQ6_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	src = src[:nb*blockQ6_K]
	for i := range nb {
		x := src[i*blockQ6_K : i*blockQ6_K+blockQ6_K]
		y := dst[i*qkK : i*qkK+qkK]
		d := f16(x[208:])
		for n := 0; n < qkK; n += 128 {
			ql, qh, sc := x[n/2:n/2+64], x[128+n/4:128+n/4+32], x[192+n/16:192+n/16+8]
			for l := range 32 {
				is := l / 16
				for k := range 4 {
					y[n+32*k+l] = d * float32(int8(sc[is+2*k])) * float32(q6(ql, qh, k, l))
				}
			}
		}
	}
}
