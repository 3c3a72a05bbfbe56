//go:build amd64 && !noasm

package cpu

// amx_amd64.s.

//go:noescape
func amxTileZ(w *uint16, wstride uintptr, x *uint16, xstride uintptr, nkb, wparts int, buf *float32, load int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)

//go:noescape
func amxPackWF16Z(dst *uint16, src *byte, rb uintptr, nrow, n int)

//go:noescape
func amxPackWBF16Z(dst *uint16, src *byte, rb uintptr, nrow, n int)

//go:noescape
func amxPackXZ(dst *uint16, x *float32, ldx uintptr, ntok, n int)

// hasAMX reports the AMX prefill GEMM.
func (k Kernels) hasAMX() bool { return k.level >= AMX }

// amxPackW writes rows r < nrow (≤ 16) of n weights of type ft (F16 or
// BF16), rows rb bytes apart in src, to dst in weight-tile layout
// (amxWLen(ft, n) words).
func (k Kernels) amxPackW(ft floatType, dst []uint16, src []byte, rb, nrow, n int) {
	if n <= 0 {
		return
	}
	_ = dst[amxWLen(ft, n)-1]
	var s *byte // not read without rows
	if nrow > 0 {
		_ = src[(nrow-1)*rb+2*n-1]
		s = &src[0]
	}
	nrow = max(0, min(nrow, 16))
	if ft == ftBF16 {
		amxPackWBF16Z(&dst[0], s, uintptr(rb), nrow, n)
	} else {
		amxPackWF16Z(&dst[0], s, uintptr(rb), nrow, n)
	}
}

// amxPackX writes tokens t < ntok (≤ 16) of n activations (tokens ldx
// floats apart in x) to dst in activation-tile layout (amxXLen(n) words).
func (k Kernels) amxPackX(dst []uint16, x []float32, ldx, ntok, n int) {
	if n <= 0 {
		return
	}
	_ = dst[amxXLen(n)-1]
	var p *float32 // not read without tokens
	if ntok > 0 {
		_ = x[(ntok-1)*ldx+n-1]
		p = &x[0]
	}
	amxPackXZ(&dst[0], p, uintptr(4*ldx), max(0, min(ntok, 16)), n)
}

// amxTile multiplies two weight tiles (rows 0-15 of w, rows 16-31 ws words
// on) by two activation tiles (tokens 0-15 of x, tokens 16-31 xs words on)
// over nkb blocks of 32 elements into buf (rows of 32 tokens, 32 rows),
// adding to what buf holds if load, prefetching the next lines of pf.
func (k Kernels) amxTile(ft floatType, w []uint16, ws int, x []uint16, xs, nkb int, buf []float32, load bool, pf *prefetcher) {
	parts := amxParts(ft)
	_ = w[ws+nkb*parts*512-1]
	_ = x[xs+nkb*1536-1]
	_ = buf[32*32-1]
	var p *byte
	var off, lines, stride, seg int
	if pf != nil {
		p, off, lines = pf.take()
		stride, seg = pf.rb, pf.seg
	}
	l := 0
	if load {
		l = 1
	}
	amxTileZ(&w[0], uintptr(2*ws), &x[0], uintptr(2*xs), nkb, parts, &buf[0], l, p, uintptr(off), uintptr(stride), uintptr(seg), lines)
}
