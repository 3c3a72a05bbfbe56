//go:build amd64 && !noasm

package cpu

import "unsafe"

// Strip kernels for Inferflow's 64-value formats (ifpack_amd64.s).

//go:noescape
func ifStripsQ3HVNNI(w, a unsafe.Pointer, nb int, y *float32, strips int, acc int)

//go:noescape
func ifStripsQ4VNNI(w, a unsafe.Pointer, nb int, y *float32, strips int, acc int)

//go:noescape
func ifStrips4Q3HVNNI(w, a unsafe.Pointer, lda, nb int, y *float32, ldy, strips, acc int)

//go:noescape
func ifStrips4Q4VNNI(w, a unsafe.Pointer, lda, nb int, y *float32, ldy, strips, acc int)

//go:noescape
func ifActQ8I(dst, src unsafe.Pointer, nb int)

// hasIfPack reports the strip kernels (ifpack.go).
func (k Kernels) hasIfPack() bool { return k.level >= AVX512VNNI }

// ifStrips computes y[16s+r] (+)= row r of strip s times a (layout I) for
// len(y)/16 strips of nb blocks in w.
func (k Kernels) ifStrips(kind wkind, w, a []byte, nb int, y []float32, strips int, acc bool) {
	if strips == 0 || nb == 0 {
		if !acc {
			clear(y[:16*strips])
		}
		return
	}
	if !k.hasIfPack() {
		ifStripsGo(kind, w, a, nb, y[:16*strips], acc)
		return
	}
	_ = w[strips*nb*ifStripBlock(kind)-1]
	_ = a[2*nb*ifActBlock-1]
	_ = y[16*strips-1]
	ac := 0
	if acc {
		ac = 1
	}
	if kind == wkIfQ3H {
		ifStripsQ3HVNNI(unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0]), nb, &y[0], strips, ac)
	} else {
		ifStripsQ4VNNI(unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0]), nb, &y[0], strips, ac)
	}
}

// ifStrips4 is ifStrips for 4 tokens: activations lda bytes apart in a,
// results ldy floats apart in y.
func (k Kernels) ifStrips4(kind wkind, w, a []byte, lda, nb int, y []float32, ldy, strips int, acc bool) {
	if strips == 0 || nb == 0 || !k.hasIfPack() {
		for t := range 4 {
			k.ifStrips(kind, w, a[t*lda:], nb, y[t*ldy:], strips, acc)
		}
		return
	}
	_ = w[strips*nb*ifStripBlock(kind)-1]
	_ = a[3*lda+2*nb*ifActBlock-1]
	_ = y[3*ldy+16*strips-1]
	ac := 0
	if acc {
		ac = 1
	}
	if kind == wkIfQ3H {
		ifStrips4Q3HVNNI(unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0]), lda, nb, &y[0], ldy, strips, ac)
	} else {
		ifStrips4Q4VNNI(unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0]), lda, nb, &y[0], ldy, strips, ac)
	}
}

// packQ8I quantizes x (a multiple of 32 values) into layout I.
func (k Kernels) packQ8I(dst []byte, x []float32) {
	if !k.hasIfPack() {
		packQ8IGo(dst, x)
		return
	}
	const chunk = 32 // blocks per pass through tmp
	var tmp [chunk * 34]byte
	for c := 0; c < len(x)/32; c += chunk {
		nb := min(chunk, len(x)/32-c)
		k.quantizeQ8_0(tmp[:nb*34], x[32*c:32*(c+nb)])
		d := dst[c*ifActBlock : (c+nb)*ifActBlock]
		ifActQ8I(unsafe.Pointer(&d[0]), unsafe.Pointer(&tmp[0]), nb)
	}
}
