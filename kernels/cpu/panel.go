package cpu

// The prefill GEMM for float weights on AVX-512 (floatRowsPanel): rows per
// block, reduction chunk, panels (of 32 tokens) per pass, fewest tokens
// worth transposing x for.
const (
	panelRB        = 192
	panelKC        = 512
	panelPass      = 4
	panelMinTokens = 16
)

// floatRowsPanel computes rows [r0, r1) of a float-weight job for all
// tokens with 12-row × 32-token tiles over the panels in t.xp, on thread w.
//
// The reduction is cut into chunks of panelKC elements. For each chunk of
// a block of panelRB rows, each 12 rows are widened to float32 (24 KiB,
// kept in L1) and multiplied with the chunk of every panel of the pass (64
// KiB each, read from L2, where the pass's 256 KiB stay while the block's
// rows go by). The first panel's kernel widens the 12 rows itself, a
// block of 8 elements ahead of its multiply-adds, so that waiting for the
// weights hides under them (a separate widening pass spent about a tenth
// of the multiply time waiting); rows that do not fill a tile, or chunks
// that are not whole blocks, are widened by widenTile first. The tiles'
// partial sums wait in a buffer until the last chunk is added and they are
// transposed into dst. While a tile is computed, the kernels prefetch the
// next tile's weights into L2: one tile ahead, a few µs, is enough for
// memory's latency, and keeps L2 for the panels.
func (t *mmTask) floatRowsPanel(w int, j *mmJob, r0, r1 int) {
	k, n, cols, ldd, rb, ft := t.k, t.n, j.w.Cols, j.w.Rows, j.rb, j.ft
	wd, dst := j.w.Data, j.dst
	es := ft.size()
	const wideLen = panelKC / 16 * 192 // tileLen(panelKC)
	const bufLen = panelRB / 12 * panelPass * tileBufLen
	b := t.scratchFor(w, 4*(wideLen+bufLen)+64)
	wide := bytesAsF32(alignedBytes(b, 4*(wideLen+bufLen)))
	wide, buf := wide[:wideLen], wide[wideLen:]
	np := (n + 31) / 32
	var pf prefetcher
	for b0 := r0; b0 < r1; b0 += panelRB {
		b1 := min(b0+panelRB, r1)
		tiles := (b1 - b0 + 11) / 12
		for p0 := 0; p0 < np; p0 += panelPass {
			p1 := min(p0+panelPass, np)
			for c0 := 0; c0 < cols; c0 += panelKC {
				c1 := min(c0+panelKC, cols)
				kc := c1 - c0
				// The chunk after this one: the next columns, or the
				// next pass's or block's first ones.
				nb0, nb1, nc0 := b0, b1, c1
				if nc0 == cols {
					nc0 = 0
					if p1 == np {
						nb0, nb1 = b1, min(b1+panelRB, r1)
					}
				}
				for i := range tiles {
					g0 := b0 + 12*i
					// Prefetch the next tile's weights while this one's
					// are multiplied: the next 12 rows of the chunk or
					// the first ones of the next chunk.
					if i+1 < tiles {
						pf.plan(wd, rb, g0+12, min(g0+24, b1), c0*es, c1*es, p1-p0)
					} else {
						pf.plan(wd, rb, nb0, min(nb0+12, nb1), nc0*es, min(nc0+panelKC, cols)*es, p1-p0)
					}
					p := p0
					if b1-g0 >= 12 && kc%8 == 0 {
						// The first panel widens the tile as it goes.
						k.widenPanelTile(ft, wide, wd[g0*rb+c0*es:], rb, t.xp[p*32*cols+c0*32:], kc, buf[i*tileBufLen:], c0 > 0, &pf)
						p++
					} else {
						k.widenTile(ft, wide, wd[g0*rb+c0*es:], rb, min(12, b1-g0), kc)
					}
					for ; p < p1; p++ {
						k.panelTile(wide, t.xp[p*32*cols+c0*32:], kc, buf[((p-p0)*tiles+i)*tileBufLen:], c0 > 0, &pf)
					}
				}
			}
			for p := p0; p < p1; p++ {
				k.unpanel(dst[32*p*ldd+b0:], ldd, buf[(p-p0)*tiles*tileBufLen:], b1-b0, min(32, n-32*p), t.acc)
			}
		}
	}
}

// prefetcher hands out the cache lines of a region of weights to prefetch,
// a share per kernel call: bytes [c0, c1) of rows [r0, r1), rb bytes
// apart.
type prefetcher struct {
	data []byte
	rb   int // bytes from one row's segment to the next
	seg  int // segment length rounded to whole lines, bytes
	base int // offset in data of the current row's segment
	off  int // offset of the next line in the current segment
	rows int // rows left, the current one included
	per  int // lines per call
}

// plan sets the region to bytes [c0, c1) of rows [r0, r1) of data (rb
// bytes per row), to be prefetched over the given number of calls.
func (p *prefetcher) plan(data []byte, rb, r0, r1, c0, c1, calls int) {
	*p = prefetcher{}
	if r0 >= r1 || c0 >= c1 || calls <= 0 {
		return
	}
	base := r0*rb + c0
	mis := int(uintptrOf(data[base:]) & 63)
	seg := (c1 - c0 + mis + 63) &^ 63
	if rb%64 != 0 {
		seg += 64 // rows start at different offsets within a line
	}
	lines := (r1 - r0) * seg / 64
	*p = prefetcher{data: data, rb: rb, seg: seg, base: base - mis, rows: r1 - r0, per: (lines + calls - 1) / calls}
}

// kernelArgs is take in the form the tile kernels receive it: the
// segment, the offset, the row stride and the segment length in bytes,
// and the lines; nothing to prefetch for a nil p.
func (p *prefetcher) kernelArgs() (seg *byte, off, stride, segLen uintptr, lines int) {
	if p == nil {
		return nil, 0, 0, 0, 0
	}
	s, o, l := p.take()
	return s, uintptr(o), uintptr(p.rb), uintptr(p.seg), l
}

// take returns the next call's share: the current segment, the offset in
// it to start from and how many lines to prefetch.
func (p *prefetcher) take() (seg *byte, off, lines int) {
	if p.rows == 0 {
		return nil, 0, 0
	}
	seg, off = &p.data[max(p.base, 0)], p.off
	left := p.rows*p.seg/64 - p.off/64
	lines = min(p.per, left)
	adv := p.off + 64*lines
	p.base += adv / p.seg * p.rb
	p.rows -= adv / p.seg
	p.off = adv % p.seg
	return seg, off, lines
}

// panelTask transposes x into panels of 32 tokens: panel p holds, for each
// of the cols elements, the 32 tokens' values (zero past the last token).
type panelTask struct {
	k       Kernels
	x       []float32
	cols, n int
	xp      []float32
}

func (t *panelTask) Run(lo, hi int) {
	cols := t.cols
	for p := lo; p < hi; p++ {
		ntok := min(32, t.n-32*p)
		t.k.packPanel(t.xp[p*32*cols:(p+1)*32*cols], t.x[32*p*cols:(32*p+ntok)*cols], cols, ntok)
	}
}
