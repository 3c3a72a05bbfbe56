//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX2 and AVX-512 VNNI kernels for Q5_0, Q4_1 and Q5_1 weights
// (legacyy_amd64.s), one to four tokens at a time.

//go:noescape
func gemvQ5_0r4t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r2t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r4t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r2t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r4t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r2t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r4t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r2t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r4t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r2t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r4t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r2t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

// legacyKernel is the signature of the kernels.
type legacyKernel func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

// legacyKernels are the kernels of wkQ5_0, wkQ4_1 and wkQ5_1 by level
// (AVX2, AVX-512 VNNI) and shape, rows × tokens: 4×1, 1×1, 2×2, 1×2, 1×3,
// 1×4.
var legacyKernels = [2][3][6]legacyKernel{{
	{gemvQ5_0r4t1AVX2, gemvQ5_0r1t1AVX2, gemvQ5_0r2t2AVX2, gemvQ5_0r1t2AVX2, gemvQ5_0r1t3AVX2, gemvQ5_0r1t4AVX2},
	{gemvQ4_1r4t1AVX2, gemvQ4_1r1t1AVX2, gemvQ4_1r2t2AVX2, gemvQ4_1r1t2AVX2, gemvQ4_1r1t3AVX2, gemvQ4_1r1t4AVX2},
	{gemvQ5_1r4t1AVX2, gemvQ5_1r1t1AVX2, gemvQ5_1r2t2AVX2, gemvQ5_1r1t2AVX2, gemvQ5_1r1t3AVX2, gemvQ5_1r1t4AVX2},
}, {
	{gemvQ5_0r4t1VNNI, gemvQ5_0r1t1VNNI, gemvQ5_0r2t2VNNI, gemvQ5_0r1t2VNNI, gemvQ5_0r1t3VNNI, gemvQ5_0r1t4VNNI},
	{gemvQ4_1r4t1VNNI, gemvQ4_1r1t1VNNI, gemvQ4_1r2t2VNNI, gemvQ4_1r1t2VNNI, gemvQ4_1r1t3VNNI, gemvQ4_1r1t4VNNI},
	{gemvQ5_1r4t1VNNI, gemvQ5_1r1t1VNNI, gemvQ5_1r2t2VNNI, gemvQ5_1r1t2VNNI, gemvQ5_1r1t3VNNI, gemvQ5_1r1t4VNNI},
}}

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
	lv := 0
	if k.level >= AVX512VNNI {
		lv = 1
	}
	ks := &legacyKernels[lv][kind-wkQ5_0]
	for t := 0; t < n; t += 4 {
		// Groups of up to 4 tokens, each run over the rows in groups of
		// 4 rows for 1 token and of 2 for 2, then one row at a time.
		var group, one legacyKernel
		var nr int
		switch g := min(4, n-t); g {
		case 1:
			group, nr, one = ks[0], 4, ks[1]
		case 2:
			group, nr, one = ks[2], 2, ks[3]
		default:
			one = ks[g+1]
		}
		x := unsafe.Pointer(&a[t*lda])
		r := 0
		if nr > 0 {
			if r = rows / nr * nr; r > 0 {
				group(unsafe.Pointer(&w[0]), uintptr(ldw), x, uintptr(lda), nb, &dst[t*ldd], uintptr(4*ldd), r, ac)
			}
		}
		if r < rows {
			one(unsafe.Pointer(&w[r*ldw]), uintptr(ldw), x, uintptr(lda), nb, &dst[t*ldd+r], uintptr(4*ldd), rows-r, ac)
		}
	}
}
