//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// Multi-token kernels for Inferflow's Q6_B64T1, Q5_B64T1, Q4_B32T1,
// Q3_B32T1 and Q2_B32T1 formats (ifgemm_amd64.s).

//go:noescape
func gemm4x8Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x8Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x8Q4SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x8Q3SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x8Q2SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x4Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x4Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x4Q4SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x4Q3SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x4Q2SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

type ifGemmFunc func(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x2Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x2Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x2Q4SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x2Q3SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x2Q2SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func ifgPrep(x unsafe.Pointer, lda uintptr, np int, xp unsafe.Pointer, rec uintptr)

// ifGemm sweeps blocks of ifgRows rows for every group of tokens, and
// prepares the activations of at most ifgTokens tokens (a multiple of 8)
// at a time.
const (
	ifgRows   = 16
	ifgTokens = 64
)

// hasIfGemm reports a multi-token kernel for the Inferflow weights of
// kind: AVX-512 VNNI's below (not for Q4_B64T1 and Q3H_B64T1, which go
// into strips), AVX2's (ifgemmy_amd64.go) on the levels under it.
func (k Kernels) hasIfGemm(kind wkind) bool {
	switch kind {
	case wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3, wkIfQ2:
		return k.level >= AVX512VNNI || k.hasIfGemmAVX2(kind)
	case wkIfQ4, wkIfQ3H:
		return k.hasIfGemmAVX2(kind)
	}
	return false
}

// ifGemm computes, for n tokens t (rows of Q8_0 blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb blocks of the
// Inferflow format of kind (wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3 or wkIfQ2),
// ldw bytes apart, as ifMoreGemv does token by token, to the last bit.
// The activations of every 8 tokens (then 4, then 2 for the last ones)
// are prepared once for all the rows; blocks of ifgRows rows are then
// swept for every group, four rows unpacked once for its tokens. Rows
// left over by the 4-row groups go through kernels/quant; a last odd
// token (and all of them when a 32-value format has an odd nb) through
// ifMoreGemv, block by block as kRows runs it. Below AVX512VNNI, ifGemm
// is ifGemmAVX2, for all seven formats. The prepared activations go in
// *buf (growScratch).
func (k Kernels) ifGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, buf *[]byte) {
	if k.level < AVX512VNNI {
		k.ifGemmAVX2(kind, w, ldw, a, lda, nb, n, dst, ldd, rows, acc, buf)
		return
	}
	if rows == 0 || n == 0 {
		return
	}
	var (
		bb, elems  int
		g8, g4, g2 ifGemmFunc
		dot        quant.DotFunc
	)
	switch kind {
	case wkIfQ6:
		bb, elems, g8, g4, g2, dot = 52, 64, gemm4x8Q6_B64VNNI, gemm4x4Q6_B64VNNI, gemm4x2Q6_B64VNNI, quant.DotQ6_B64T1Q8_0
	case wkIfQ5:
		bb, elems, g8, g4, g2, dot = 44, 64, gemm4x8Q5_B64VNNI, gemm4x4Q5_B64VNNI, gemm4x2Q5_B64VNNI, quant.DotQ5_B64T1Q8_0
	case wkIfQ4S:
		bb, elems, g8, g4, g2, dot = 20, 32, gemm4x8Q4SVNNI, gemm4x4Q4SVNNI, gemm4x2Q4SVNNI, quant.DotQ4_B32T1Q8_0
	case wkIfQ3:
		bb, elems, g8, g4, g2, dot = 16, 32, gemm4x8Q3SVNNI, gemm4x4Q3SVNNI, gemm4x2Q3SVNNI, quant.DotQ3_B32T1Q8_0
	case wkIfQ2:
		bb, elems, g8, g4, g2, dot = 12, 32, gemm4x8Q2SVNNI, gemm4x4Q2SVNNI, gemm4x2Q2SVNNI, quant.DotQ2_B32T1Q8_0
	default:
		panic("cpu: ifGemm: not an Inferflow kind")
	}
	m := n &^ 1 // tokens through the kernels: groups of 8, then of 4, 2
	if nb == 0 || nb*elems%64 != 0 || rows < 4 {
		m = 0
	}
	if m > 0 {
		_ = w[(rows-1)*ldw+nb*bb-1]
		_ = a[(m-1)*lda+nb*elems/32*34-1]
		_ = dst[(m-1)*ldd+rows-1]
		ac := 0
		if acc {
			ac = 1
		}
		// Each group's activations: per 64 values, its pairs of tokens'
		// 256 bytes side by side; at most ifgTokens tokens at a time.
		np := nb * elems / 64
		size := min(m, ifgTokens) * np * 128
		xp := alignedBytes(growScratch(buf, size+64), size)
		for c0 := 0; c0 < m; c0 += ifgTokens {
			c1 := min(c0+ifgTokens, m)
			for t := c0; t < c1; t += ifgGroup(c1 - t) {
				gs := ifgGroup(c1 - t)
				for u := 0; u < gs; u += 2 {
					ifgPrep(unsafe.Pointer(&a[(t+u)*lda]), uintptr(lda), np, unsafe.Pointer(&xp[(t-c0)*np*128+u*128]), uintptr(gs*128))
				}
			}
			for b0 := 0; b0 < rows; b0 += ifgRows {
				b1 := min(b0+ifgRows, rows)
				q := (b1 - b0) / 4
				if q == 0 {
					break
				}
				for t := c0; t < c1; t += ifgGroup(c1 - t) {
					gemm := g8
					switch ifgGroup(c1 - t) {
					case 4:
						gemm = g4
					case 2:
						gemm = g2
					}
					gemm(unsafe.Pointer(&w[b0*ldw]), uintptr(ldw), unsafe.Pointer(&xp[(t-c0)*np*128]), nb,
						&dst[t*ldd+b0], uintptr(ldd*4), q, ac)
				}
			}
		}
		// Rows left over by the 4-row groups of the last block.
		for r := rows - rows%ifgRows%4; r < rows; r++ {
			for t := range m {
				put(dst, t*ldd+r, dot(w[r*ldw:], a[t*lda:], nb*elems), acc)
			}
		}
	}
	if m == n {
		return
	}
	// The other tokens as kRows runs them: each block of rows for every
	// token while it stays in cache.
	for b0 := 0; b0 < rows; b0 += ifgRows {
		b1 := min(b0+ifgRows, rows)
		for t := m; t < n; t++ {
			k.ifMoreGemv(kind, w[b0*ldw:], ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd+b0:t*ldd+b1], acc, buf)
		}
	}
}

// ifgGroup returns the tokens of the next group when left tokens (even,
// at least 2) are left: 8, then 4, then 2.
func ifgGroup(left int) int {
	switch {
	case left >= 8:
		return 8
	case left >= 4:
		return 4
	}
	return 2
}
