//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// Multi-token K-quant kernels (kqgemm_amd64.s).

//go:noescape
func gemm2x8Q4_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x4Q4_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x8Q6_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x4Q6_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x8Q5_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x4Q5_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x8Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x4Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x8Q2_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm2x4Q2_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm1x16Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

type kqGemmFunc func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

// hasKQGemm reports a multi-token kernel for K-quant weights of kind.
func (k Kernels) hasKQGemm(kind wkind) bool {
	switch kind {
	case wkQ2_K, wkQ3_K, wkQ4_K, wkQ5_K, wkQ6_K:
		return k.level >= AVX512VNNI
	}
	return false
}

// kqGemm computes, for n tokens t (rows of Q8_K blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb K-quant blocks of
// kind, ldw bytes apart, as kGemv does token by token, to the last bit:
// for Q3_K each row unpacked once for 16 tokens, then (and for the other
// kinds) pairs of rows unpacked once for 8 tokens (4 for the last 4..7),
// the tokens left over through kGemv (with buf), a last odd row through
// kernels/quant.
func (k Kernels) kqGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, buf *[]byte) {
	if rows == 0 || n == 0 {
		return
	}
	var (
		bb          int
		g16, g8, g4 kqGemmFunc
		dot         quant.DotFunc
	)
	switch kind {
	case wkQ4_K:
		bb, g8, g4, dot = 144, gemm2x8Q4_KVNNI, gemm2x4Q4_KVNNI, quant.DotQ4_KQ8_K
	case wkQ6_K:
		bb, g8, g4, dot = 210, gemm2x8Q6_KVNNI, gemm2x4Q6_KVNNI, quant.DotQ6_KQ8_K
	case wkQ5_K:
		bb, g8, g4, dot = 176, gemm2x8Q5_KVNNI, gemm2x4Q5_KVNNI, quant.DotQ5_KQ8_K
	case wkQ3_K:
		bb, g16, g8, g4, dot = 110, gemm1x16Q3_KVNNI, gemm2x8Q3_KVNNI, gemm2x4Q3_KVNNI, quant.DotQ3_KQ8_K
	case wkQ2_K:
		bb, g8, g4, dot = 84, gemm2x8Q2_KVNNI, gemm2x4Q2_KVNNI, quant.DotQ2_KQ8_K
	default:
		panic("cpu: no multi-token kernel for this K-quant")
	}
	t := 0
	if g16 != nil && nb > 0 && n >= 16 {
		// 16 tokens at a time, one row at a time.
		_ = w[(rows-1)*ldw+nb*bb-1]
		ac := 0
		if acc {
			ac = 1
		}
		for ; t+16 <= n; t += 16 {
			_ = a[(t+15)*lda+nb*292-1]
			_ = dst[(t+15)*ldd+rows-1]
			g16(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[t*lda]), uintptr(lda), nb,
				&dst[t*ldd], uintptr(ldd*4), rows, ac)
		}
	}
	if q := rows / 2; q > 0 && nb > 0 && n-t >= 4 {
		_ = w[(rows-1)*ldw+nb*bb-1]
		ac := 0
		if acc {
			ac = 1
		}
		for t+4 <= n {
			g, gemm := 8, g8
			if t+8 > n {
				g, gemm = 4, g4
			}
			_ = a[(t+g-1)*lda+nb*292-1]
			_ = dst[(t+g-1)*ldd+rows-1]
			gemm(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[t*lda]), uintptr(lda), nb,
				&dst[t*ldd], uintptr(ldd*4), q, ac)
			if r := rows - 1; rows%2 != 0 {
				for u := t; u < t+g; u++ {
					put(dst, u*ldd+r, dot(w[r*ldw:], a[u*lda:], nb*256), acc)
				}
			}
			t += g
		}
	}
	for ; t < n; t++ {
		k.kGemv(kind, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc, buf)
	}
}
