package cpu

import (
	"encoding/binary"
	"math"
)

// BF16 weights times bfloat16 activations, in ggml's order.
//
// On a CPU with AVX512_BF16 and no AMX, ggml's x86 CPU backend (llama.cpp
// c392e50) multiplies BF16 weights by activations rounded to bfloat16
// (GGML_FP32_TO_BF16, scalar: ggml-base is built without -march) with
// VDPBF16PS, and weft does the same (wkBF16DP) so that its logits are
// llama.cpp's. Two orders occur, per matmul:
//
//   - llamafile's tinyBLAS, for 2 or more tokens when the reduction length
//     k is a multiple of 32 and the rows a multiple of 4: one 16-lane
//     accumulator per output over all of k, reduced at the end
//     (bf16dpGemmRef);
//   - ggml_vec_dot_bf16 otherwise (one token, or the shapes tinyBLAS
//     declines): two accumulators, for the even and odd 32-element steps
//     of each whole 64, each reduced, then added in float64 with the
//     products of the elements left over (bf16dpVecRef).
//
// VDPBF16PS adds, per float32 lane i, the product of elements 2i+1 and
// then that of elements 2i, each sum rounded to nearest even; bfloat16
// subnormal inputs count as zero and subnormal sums are flushed to zero
// (dpbf16Lane; TestVDPBF16PS and TestDPBF16Lane pin both on the
// hardware). A reduction is GCC's expansion of _mm512_reduce_add_ps: the
// high 8 lanes onto the low 8, the high 4 of those onto the low 4, lanes 2
// and 3 onto 0 and 1, lane 1 onto lane 0 (hsum16, ggmlmath.go).

// bf16dpLanes is the float32 lanes of one accumulator.
const bf16dpLanes = 16

// dazBF16 is the float64 value of bfloat16 h, zero for a subnormal.
func dazBF16(h uint16) float64 {
	if h&0x7f80 == 0 {
		return 0
	}
	return float64(math.Float32frombits(uint32(h) << 16))
}

// ftz rounds s to float32 and flushes a subnormal result to zero.
func ftz(s float64) float32 {
	f := float32(s)
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}

// dpbf16Lane is one lane of VDPBF16PS: acc + w1·x1 + w0·x0, the odd pair
// first. The products of two bfloat16s and their sum with a float32 are
// exact in float64 when it matters (a sum needing more bits is one whose
// smaller term lies below half an ulp of the larger in float32), so each
// float64 sum rounded to float32 is the instruction's single rounding.
func dpbf16Lane(acc float32, w0, w1, x0, x1 uint16) float32 {
	a := float64(acc)
	if math.Float32bits(acc)&0x7f800000 == 0 {
		a = 0
	}
	s := ftz(a + dazBF16(w1)*dazBF16(x1))
	return ftz(float64(s) + dazBF16(w0)*dazBF16(x0))
}

// dpbf16Step is one VDPBF16PS on the 32 elements of w (BF16 bytes) and x.
func dpbf16Step(acc *[bf16dpLanes]float32, w []byte, x []uint16) {
	for i := range acc {
		acc[i] = dpbf16Lane(acc[i], binary.LittleEndian.Uint16(w[4*i:]), binary.LittleEndian.Uint16(w[4*i+2:]), x[2*i], x[2*i+1])
	}
}

// bf16dpGemmRef is tinyBLAS's dot product of a BF16 row w with bfloat16
// activations x (len(x) a multiple of 32).
func bf16dpGemmRef(w []byte, x []uint16) float32 {
	var acc [bf16dpLanes]float32
	for i := 0; i+32 <= len(x); i += 32 {
		dpbf16Step(&acc, w[2*i:], x[i:])
	}
	return hsum16(&acc)
}

// bf16dpVecRef is ggml_vec_dot_bf16 of a BF16 row w with bfloat16
// activations x.
func bf16dpVecRef(w []byte, x []uint16) float32 {
	var c1, c2 [bf16dpLanes]float32
	i := 0
	for ; i+64 <= len(x); i += 64 {
		dpbf16Step(&c1, w[2*i:], x[i:])
		dpbf16Step(&c2, w[2*i+64:], x[i+32:])
	}
	return bf16dpFinish(hsum16(&c1), hsum16(&c2), w[2*i:], x[i:])
}

// bf16dpFinish is the end of ggml_vec_dot_bf16: the two reduced
// accumulators and then the products of the elements left over (each
// rounded to float32) added in float64.
func bf16dpFinish(s1, s2 float32, w []byte, x []uint16) float32 {
	s := 0.0
	s += float64(s1)
	s += float64(s2)
	for i, h := range x {
		s += float64(bf16(binary.LittleEndian.Uint16(w[2*i:])) * bf16(h))
	}
	return float32(s)
}

// toBF16RowGo rounds src to bfloat16 in dst as ggml's GGML_FP32_TO_BF16.
func toBF16RowGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = toBF16(v)
	}
}

// bf16dpTileOrder reports whether ggml multiplies n tokens by rows×k BF16
// weights with tinyBLAS (bf16dpGemmRef's order) rather than
// ggml_vec_dot_bf16.
func bf16dpTileOrder(n, rows, k int) bool {
	return n >= 2 && k%32 == 0 && rows%4 == 0
}

// bf16dpRows computes rows [r0, r1) of a wkBF16DP job for all tokens, on
// thread w; its activations (j.act) are bfloat16, j.ldx bytes per token.
func (t *mmTask) bf16dpRows(w int, j *mmJob, r0, r1 int) {
	k, n, cols, rb, ldd := t.k, t.n, j.w.Cols, j.rb, j.w.Rows
	wd, dst := j.w.Data, j.dst
	xs := bytesAsU16(j.act)
	ldx := j.ldx / 2
	if !bf16dpTileOrder(n, j.w.Rows, cols) {
		// ggml_vec_dot_bf16, four rows at a time: for one token a quarter
		// of the range apart (four streams through memory), for more
		// tokens four neighbours swept by every token. A row left over
		// runs as four copies of itself (a row stride of 0).
		nb := cols / 64
		var y [8]float32
		gemv := func(r, ldw, tok int) {
			x := xs[tok*ldx : tok*ldx+cols]
			k.bf16dpGemv4(wd[r*rb:], ldw, x, nb, &y)
			for i := range 4 {
				ri := r + i*ldw/rb
				v := bf16dpFinish(y[2*i], y[2*i+1], wd[ri*rb+nb*128:(ri+1)*rb], x[nb*64:])
				put(dst, tok*ldd+ri, v, t.acc)
				if ldw == 0 {
					break
				}
			}
		}
		r, q := r0, 1
		if n == 1 {
			q = (r1 - r0) / 4
			for ; r < r0+q; r++ {
				gemv(r, q*rb, 0)
			}
			r = r0 + 4*q
		}
		for ; r+4 <= r1; r += 4 {
			for tok := range n {
				gemv(r, rb, tok)
			}
		}
		for ; r < r1; r++ {
			for tok := range n {
				gemv(r, 0, tok)
			}
		}
		return
	}
	// tinyBLAS: 4 rows × up to 6 tokens per tile, over blocks of rows
	// that stay in cache while every token passes. A long reduction is cut
	// into parts of at most bf16dpKC (the tiles keep their accumulators in
	// buf in between) so that 6 tokens' part of x stays in L1.
	nb := cols / 32
	parts := (nb + bf16dpKC/32 - 1) / (bf16dpKC / 32)
	pb := (nb + parts - 1) / parts // steps per part
	var buf []float32
	rbk := bf16dpRB
	if parts > 1 {
		rbk = bf16dpRBParts
		b := t.scratchFor(w, 4*64*bf16dpMaxTokens*rbk/4)
		buf = bytesAsF32(b)
	}
	for b0 := r0; b0 < r1; b0 += rbk {
		b1 := min(b0+rbk, r1)
		for tok := 0; tok < n; tok += bf16dpMaxTokens {
			nt := min(bf16dpMaxTokens, n-tok)
			for s0 := 0; s0 < nb; s0 += pb {
				s1 := min(s0+pb, nb)
				mode := 0
				if s0 > 0 {
					mode |= bf16dpResume
				}
				if s1 < nb {
					mode |= bf16dpKeep
				}
				for r := b0; r < b1; r += 4 {
					var tb []float32
					if buf != nil {
						tb = buf[(r-b0)/4*64*bf16dpMaxTokens:]
					}
					k.bf16dpTile(nt, wd[r*rb+64*s0:], rb, xs[tok*ldx+32*s0:], j.ldx, s1-s0, dst[tok*ldd+r:], ldd, t.acc, tb, mode)
				}
			}
		}
	}
}

// bf16dpKC is the longest part of a reduction the tiles take at once.
const bf16dpKC = 2048

// bf16dpRB and bf16dpRBParts are the rows of a block of the tiles' loop,
// for a reduction taken whole and one cut into parts. One thread, thread
// CPU time, 128 tokens (GEMMPeak/bf16 and 2048×5632): 32-row blocks ran
// at 382–416 and 368–384 GFLOP/s, 128-row ones at 429–450 and 339–357.
const (
	bf16dpRB      = 128
	bf16dpRBParts = 32
)

// bf16dpMaxTokens is the most tokens of one tile.
const bf16dpMaxTokens = 6

// bf16dpGemv4Go is the pure-Go bf16dpGemv4Z.
func bf16dpGemv4Go(w []byte, ldw int, x []uint16, nb int, y *[8]float32) {
	for r := range 4 {
		var c1, c2 [bf16dpLanes]float32
		for b := range nb {
			dpbf16Step(&c1, w[r*ldw+128*b:], x[64*b:])
			dpbf16Step(&c2, w[r*ldw+128*b+64:], x[64*b+32:])
		}
		y[2*r], y[2*r+1] = hsum16(&c1), hsum16(&c2)
	}
}

// Modes of bf16dpTile: the accumulators start from buf (else zero); they
// are left in buf (else reduced into dst).
const (
	bf16dpResume = 1
	bf16dpKeep   = 2
)

// bf16dpTileGo is the pure-Go bf16dpTile: dst[t·ldd+r] (+)= row r · token
// t for 4 rows (ldw bytes apart) and nt tokens (ldx bytes apart), over nb
// 32-element steps; under mode, the accumulators (16 floats each, token
// t's row r at 16·(4t+r) in buf) start from buf and stay there.
func bf16dpTileGo(nt int, w []byte, ldw int, x []uint16, ldx, nb int, dst []float32, ldd int, acc bool, buf []float32, mode int) {
	for t := range nt {
		for r := range 4 {
			var a [bf16dpLanes]float32
			i := 16 * (4*t + r)
			if mode&bf16dpResume != 0 {
				copy(a[:], buf[i:i+16])
			}
			for b := range nb {
				dpbf16Step(&a, w[r*ldw+64*b:], x[t*ldx/2+32*b:])
			}
			if mode&bf16dpKeep != 0 {
				copy(buf[i:i+16], a[:])
				continue
			}
			put(dst, t*ldd+r, hsum16(&a), acc)
		}
	}
}
