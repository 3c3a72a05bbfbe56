//go:build amd64 && !noasm

package cpu

import (
	"sync"
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// Multi-token kernels for Inferflow's Q6_B64T1, Q5_B64T1, Q4_B32T1,
// Q3_B32T1 and Q2_B32T1 formats (ifgemm_amd64.s).

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

// ifgBufs holds the activations that ifGemm prepares, one buffer per
// concurrent ifGemm.
var ifgBufs = sync.Pool{New: func() any { return new([]byte) }}

// ifgRows is the number of rows ifGemm sweeps for every four tokens.
const ifgRows = 16

// hasIfGemm reports a multi-token kernel for the Inferflow weights of
// kind.
func (k Kernels) hasIfGemm(kind wkind) bool {
	switch kind {
	case wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3, wkIfQ2:
		return k.level >= AVX512VNNI
	}
	return false
}

// ifGemm computes, for n tokens t (rows of Q8_0 blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb blocks of the
// Inferflow format of kind (wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3 or wkIfQ2),
// ldw bytes apart, as ifMoreGemv does token by token, to the last bit.
// The activations of every four tokens are prepared once for all the
// rows; blocks of ifgRows rows are then swept for every four tokens, four
// rows unpacked once for the four. Rows left over by the 4-row groups go
// through kernels/quant, tokens left over by the 4-token groups (and all
// of them when a 32-value format has an odd nb) through ifMoreGemv.
func (k Kernels) ifGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	if rows == 0 || n == 0 {
		return
	}
	var (
		bb, elems int
		gemm      func(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
		dot       quant.DotFunc
	)
	switch kind {
	case wkIfQ6:
		bb, elems, gemm, dot = 52, 64, gemm4x4Q6_B64VNNI, quant.DotQ6_B64T1Q8_0
	case wkIfQ5:
		bb, elems, gemm, dot = 44, 64, gemm4x4Q5_B64VNNI, quant.DotQ5_B64T1Q8_0
	case wkIfQ4S:
		bb, elems, gemm, dot = 20, 32, gemm4x4Q4SVNNI, quant.DotQ4_B32T1Q8_0
	case wkIfQ3:
		bb, elems, gemm, dot = 16, 32, gemm4x4Q3SVNNI, quant.DotQ3_B32T1Q8_0
	case wkIfQ2:
		bb, elems, gemm, dot = 12, 32, gemm4x4Q2SVNNI, quant.DotQ2_B32T1Q8_0
	default:
		panic("cpu: ifGemm: not an Inferflow kind")
	}
	g := n / 4 // groups of 4 tokens through the kernels
	if nb == 0 || nb*elems%64 != 0 || rows < 4 {
		g = 0
	}
	if g > 0 {
		_ = w[(rows-1)*ldw+nb*bb-1]
		_ = a[(4*g-1)*lda+nb*elems/32*34-1]
		_ = dst[(4*g-1)*ldd+rows-1]
		ac := 0
		if acc {
			ac = 1
		}
		// Each group's activations: per 64 values, the four tokens'
		// 128 bytes side by side.
		np := nb * elems / 64
		size := g * np * 512
		bp := ifgBufs.Get().(*[]byte)
		if cap(*bp) < size+64 {
			*bp = make([]byte, size+64)
		}
		xp := alignedBytes((*bp)[:cap(*bp)], size)
		for t := range 4 * g {
			ifmPrep(unsafe.Pointer(&a[t*lda]), np, unsafe.Pointer(&xp[t/4*np*512+t%4*128]), 512)
		}
		for b0 := 0; b0 < rows; b0 += ifgRows {
			b1 := min(b0+ifgRows, rows)
			q := (b1 - b0) / 4
			if q == 0 {
				break
			}
			for i := range g {
				gemm(unsafe.Pointer(&w[b0*ldw]), uintptr(ldw), unsafe.Pointer(&xp[i*np*512]), nb,
					&dst[4*i*ldd+b0], uintptr(ldd*4), q, ac)
			}
		}
		ifgBufs.Put(bp)
		// Rows left over by the 4-row groups of the last block.
		for r := rows - rows%ifgRows%4; r < rows; r++ {
			for t := range 4 * g {
				put(dst, t*ldd+r, dot(w[r*ldw:], a[t*lda:], nb*elems), acc)
			}
		}
	}
	for t := 4 * g; t < n; t++ {
		k.ifMoreGemv(kind, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc)
	}
}
