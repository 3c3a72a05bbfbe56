//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX2 kernels for Q5_0, Q4_1 and Q5_1 weights (legacyy_amd64.s), one
// to four tokens at a time.

//go:noescape
func gemvQ5_0x1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0x2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0x3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0x4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1x1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1x2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1x3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1x4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1x1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1x2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1x3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1x4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

// legacyKernels are the kernels of wkQ5_0, wkQ4_1 and wkQ5_1 by their
// number of tokens less one.
var legacyKernels = [3][4]func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int){
	{gemvQ5_0x1AVX2, gemvQ5_0x2AVX2, gemvQ5_0x3AVX2, gemvQ5_0x4AVX2},
	{gemvQ4_1x1AVX2, gemvQ4_1x2AVX2, gemvQ4_1x3AVX2, gemvQ4_1x4AVX2},
	{gemvQ5_1x1AVX2, gemvQ5_1x2AVX2, gemvQ5_1x3AVX2, gemvQ5_1x4AVX2},
}

// hasLegacyQ reports SIMD kernels for Q5_0, Q4_1 and Q5_1 weights.
func (k Kernels) hasLegacyQ() bool { return k.level >= AVX2 }

// legacyGemm computes, for n tokens t (rows of nb activation blocks in a,
// lda bytes apart: Q8_0 for wkQ5_0, Q8_1 for wkQ4_1 and wkQ5_1),
// dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb blocks of kind, ldw bytes
// apart: kernels/quant's dot products to the last bit, each weight block
// unpacked once for up to four tokens.
func (k Kernels) legacyGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	if rows == 0 || n == 0 {
		return
	}
	if nb == 0 {
		if !acc {
			for t := range n {
				clear(dst[t*ldd : t*ldd+rows])
			}
		}
		return
	}
	ab := 36
	if kind == wkQ5_0 {
		ab = 34
	}
	_ = w[(rows-1)*ldw+nb*legacyBlockBytes(kind)-1]
	_ = a[(n-1)*lda+nb*ab-1]
	_ = dst[(n-1)*ldd+rows-1]
	ac := 0
	if acc {
		ac = 1
	}
	ks := &legacyKernels[kind-wkQ5_0]
	for t := 0; t < n; t += 4 {
		g := min(4, n-t)
		ks[g-1](unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[t*lda]), uintptr(lda), nb,
			&dst[t*ldd], uintptr(4*ldd), rows, ac)
	}
}
