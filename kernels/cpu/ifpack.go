package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/weftrun/weft/tensor"
)

// Inferflow's Q3H_B64T1 and Q4_B64T1 weights in strips of 16 rows.
//
// A matrix-vector product that reads the file's layout (kquantif_amd64.s)
// multiplies one row at a time and folds each row's products
// horizontally: at 4 bits per weight it runs out of instructions before
// the memory runs out of bandwidth. Pool.PackWeight copies such a matrix
// once, at load time, into strips of 16 rows whose blocks are
// interleaved so that one VPDPBUSD of a broadcast activation dword adds
// four products to each of 16 rows, one row per dword lane: no folds, and
// the float epilogue runs once per block for 16 rows. The copy has as
// many bytes per block as the file (plus the rows that pad the last
// strip), so a token reads no more memory.
//
// Strip s holds rows 16s..16s+15 (rows past the matrix are zero), its nb
// blocks one after the other, ifStripBlock bytes each. In a block, group
// j = 0..7 holds values 8j..8j+7 of the 16 rows: of row r, the even
// values 8j, 8j+2, 8j+4, 8j+6 meet activation dword 2g of activation
// block j/4 (layout I, g = j%4) and the odd ones dword 2g+1.
//
// Q3H_B64T1, 512 bytes per block: group j at 56j is 8 row pairs of 7
// bytes; pair i at 56j+7i is a little-endian 56-bit word whose bits
// 7m..7m+6 are the 7-bit pair code 4j+m of row 2i and bits 28+7m.. that of
// row 2i+1 (m = 0..3; the code of values 2k, 2k+1 is q₂ₖ + 11·q₂ₖ₊₁, as in
// the file). Then the 16 rows' f16 scales at 448 and f16 bases at 480.
//
// Q4_B64T1, 576 bytes per block: group j at 64j is 16 dwords, dword r the
// four bytes qs[4j:4j+4] of row r (low nibbles the even values, high
// nibbles the odd ones, as in the file). Then the scales at 512 and the
// bases at 544.
//
// Layout I (activations for the strips), 40 bytes per 32-value Q8_0
// block: for g = 0..3 the bytes q[8g], q[8g+2], q[8g+4], q[8g+6], then
// q[8g+1], q[8g+3], q[8g+5], q[8g+7]; then float32 dy and float32
// fl(Y·dy), Y = Σq. The kernels compute exactly what kernels/quant's
// DotQ3H_B64T1Q8_0 and DotQ4_B64T1Q8_0 compute: per activation block the
// exact integer sum S, then sum += fl(fl(fl(scale·dy)·S) + fl(base·fl(Y·dy))),
// one chain per row over the blocks.
const (
	ifStripRows = 16
	ifActBlock  = 40 // bytes per 32 activations, layout I
)

// ifStripBlock is the size of one block of a 16-row strip of kind.
func ifStripBlock(kind wkind) int {
	if kind == wkIfQ3H {
		return 16 * 32
	}
	return 16 * 36
}

// ifPacked is a matrix in strips (see above).
type ifPacked struct {
	kind       wkind
	dtype      tensor.DType
	rows, cols int
	data       []byte // strips of nb blocks, 64-byte aligned
}

// PackWeight prepares w for the pool's matmuls. On machines with AVX-512
// VNNI and VBMI, an Inferflow Q3H_B64T1 or Q4_B64T1 matrix is copied
// into 16-row strips that every later MatMul of the same w (the same
// Data, DType, Rows and Cols) through p reads instead of w.Data. The copy
// lives until p closes; w.Data must stay unchanged. Other weights are
// left alone. It is meant for load time: it takes about as long as
// reading the matrix a few times. With a WithRepack kernel set, K-quant
// and IQ4_NL matrices get a Q8_0 copy for prefill instead (repack.go).
func (p *Pool) PackWeight(w Matrix) {
	if p == nil || len(w.Data) == 0 || w.Cols%64 != 0 || w.Rows == 0 {
		return
	}
	if p.k.repacks(w.DType) && len(w.Data) >= w.Rows*w.RowBytes() {
		p.packQ8(w)
		return
	}
	kind, _, _ := p.k.classify(w.DType)
	if kind != wkIfQ3H && kind != wkIfQ4 || !p.k.hasIfPack() || len(w.Data) < w.Rows*w.RowBytes() {
		return
	}
	if p.packFor(w) != nil {
		return
	}
	pk := packIf(p, kind, w)
	p.packs.Store(unsafe.SliceData(w.Data), pk)
}

// packFor returns the strips PackWeight made of w, or nil.
func (p *Pool) packFor(w Matrix) *ifPacked {
	if p == nil || len(w.Data) == 0 {
		return nil
	}
	v, ok := p.packs.Load(unsafe.SliceData(w.Data))
	if !ok {
		return nil
	}
	pk := v.(*ifPacked)
	if pk.dtype != w.DType || pk.rows != w.Rows || pk.cols != w.Cols {
		return nil
	}
	return pk
}

// packIf copies w into strips, the strips split over p's threads.
func packIf(p *Pool, kind wkind, w Matrix) *ifPacked {
	nb, sb := w.Cols/64, ifStripBlock(kind)
	strips := (w.Rows + ifStripRows - 1) / ifStripRows
	size := strips * nb * sb
	pk := &ifPacked{kind: kind, dtype: w.DType, rows: w.Rows, cols: w.Cols}
	pk.data = alignedBytes(make([]byte, size+64), size)
	p.Parallel(strips, 1, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			packIfStrip(kind, pk.data[s*nb*sb:(s+1)*nb*sb], w, s)
		}
	})
	return pk
}

// packIfStrip writes strip s of w into dst.
func packIfStrip(kind wkind, dst []byte, w Matrix, s int) {
	nb, sb, rb := w.Cols/64, ifStripBlock(kind), w.RowBytes()
	bb := rb / nb                // bytes per file block
	var g [ifStripRows][8]uint32 // Q3H: the 4 codes of each group, 7 bits apart
	for b := range nb {
		d := dst[b*sb : (b+1)*sb]
		var hd [64]byte
		for r := range ifStripRows {
			row := s*ifStripRows + r
			if row >= w.Rows {
				// Zero rows pad the last strip.
				g[r] = [8]uint32{}
				for j := range 8 {
					if kind == wkIfQ4 {
						binary.LittleEndian.PutUint32(d[64*j+4*r:], 0)
					}
				}
				continue
			}
			x := w.Data[row*rb+b*bb : row*rb+(b+1)*bb]
			hd[2*r], hd[2*r+1] = x[2], x[3]       // scale
			hd[32+2*r], hd[32+2*r+1] = x[0], x[1] // base
			if kind == wkIfQ4 {
				for j := range 8 {
					binary.LittleEndian.PutUint32(d[64*j+4*r:], binary.LittleEndian.Uint32(x[4+4*j:]))
				}
				continue
			}
			qh, qm, qs := binary.LittleEndian.Uint32(x[4:]), x[8:16], x[16:32]
			for j := range 8 {
				g[r][j] = ifNibT[qs[2*j]] | ifNibT[qs[2*j+1]]<<14 | ifQmT[qm[j]] | ifQhT[qh>>(4*j)&15]
			}
		}
		if kind == wkIfQ3H {
			// Pair i of group j is 7 bytes at 56j+7i; the eighth byte each
			// store writes is overwritten by the next one (the last, by
			// the headers).
			for j := range 8 {
				for i := range 8 {
					v := uint64(g[2*i][j]) | uint64(g[2*i+1][j])<<28
					binary.LittleEndian.PutUint64(d[56*j+7*i:], v)
				}
			}
		}
		copy(d[sb-64:], hd[:])
	}
}

// Tables of packIfStrip: a qs byte's two nibbles 7 bits apart, a qm
// byte's four bit pairs at 7m+4, four qh bits at 7m+6.
var ifNibT, ifQmT, ifQhT = func() (nib, qm, qh [256]uint32) {
	for v := range uint32(256) {
		nib[v] = v&15 | v>>4<<7
		for m := range 4 {
			qm[v] |= (v >> (2 * m) & 3) << (7*m + 4)
			qh[v] |= (v >> m & 1) << (7*m + 6)
		}
	}
	return
}()

// ifRows computes rows [r0, r1) of a job on strips for all tokens: whole
// strips straight into dst, 4 tokens at a time, a strip cut by r0 or r1
// through a buffer.
func (t *mmTask) ifRows(j *mmJob, r0, r1 int) {
	pk, k := j.pack, t.k
	n, ldd, nb := t.n, j.w.Rows, j.w.Cols/64
	ss := nb * ifStripBlock(pk.kind) // bytes per strip
	s0, s1 := r0/ifStripRows, (r1+ifStripRows-1)/ifStripRows
	step := s1 - s0
	if n > 1 {
		step = 4 // a few strips stay in L2 for every token
	}
	for c0 := s0; c0 < s1; c0 += step {
		c1 := min(c0+step, s1)
		// The whole strips [lo, hi) of [c0, c1).
		lo, hi := c0, c1
		if lo*ifStripRows < r0 {
			lo++
		}
		if hi*ifStripRows > r1 && hi > lo {
			hi--
		}
		tok := 0
		if hi > lo {
			w := pk.data[lo*ss : hi*ss]
			for ; tok+4 <= n; tok += 4 {
				k.ifStrips4(pk.kind, w, j.act[tok*j.ldx:], j.ldx, nb, j.dst[tok*ldd+lo*ifStripRows:], ldd, hi-lo, t.acc)
			}
			for ; tok < n; tok++ {
				k.ifStrips(pk.kind, w, j.act[tok*j.ldx:], nb, j.dst[tok*ldd+lo*ifStripRows:], hi-lo, t.acc)
			}
		}
		for s := c0; s < c1; s++ {
			if s >= lo && s < hi {
				continue
			}
			for tok := range n {
				var y [ifStripRows]float32
				k.ifStrips(pk.kind, pk.data[s*ss:(s+1)*ss], j.act[tok*j.ldx:], nb, y[:], 1, false)
				for r := max(s*ifStripRows, r0); r < min((s+1)*ifStripRows, r1); r++ {
					put(j.dst, tok*ldd+r, y[r-s*ifStripRows], t.acc)
				}
			}
		}
	}
}

// ifStripsGo is the portable form of the strip kernels: y[16s+r] (+)= row
// r of strip s times the activations a (layout I), for len(y)/16 strips of
// nb blocks in w.
func ifStripsGo(kind wkind, w, a []byte, nb int, y []float32, acc bool) {
	sb := ifStripBlock(kind)
	for s := range len(y) / ifStripRows {
		var sum [ifStripRows]float32
		for b := range nb {
			blk := w[(s*nb+b)*sb : (s*nb+b+1)*sb]
			ab := a[2*b*ifActBlock : (2*b+2)*ifActBlock]
			var S [2][ifStripRows]int32
			for j := range 8 {
				h, g := j/4, j%4
				ae := ab[h*ifActBlock+8*g : h*ifActBlock+8*g+8]
				for r := range ifStripRows {
					var ev, od [4]int32
					if kind == wkIfQ3H {
						o := 56*j + 7*(r/2)
						var v uint64
						for i := range 7 {
							v |= uint64(blk[o+i]) << (8 * i)
						}
						v >>= 28 * (r % 2)
						for m := range 4 {
							c := int32(v >> (7 * m) & 127)
							ev[m], od[m] = c%11, c/11
						}
					} else {
						for m := range 4 {
							q := blk[64*j+4*r+m]
							ev[m], od[m] = int32(q&15), int32(q>>4)
						}
					}
					for m := range 4 {
						S[h][r] += ev[m]*int32(int8(ae[m])) + od[m]*int32(int8(ae[4+m]))
					}
				}
			}
			for r := range ifStripRows {
				scale := f16(binary.LittleEndian.Uint16(blk[sb-64+2*r:]))
				base := f16(binary.LittleEndian.Uint16(blk[sb-32+2*r:]))
				for h := range 2 {
					dy := math.Float32frombits(binary.LittleEndian.Uint32(ab[h*ifActBlock+32:]))
					ydy := math.Float32frombits(binary.LittleEndian.Uint32(ab[h*ifActBlock+36:]))
					sum[r] += float32(float32(scale*dy)*float32(S[h][r])) + float32(base*ydy)
				}
			}
		}
		for r, v := range sum {
			put(y, s*ifStripRows+r, v, acc)
		}
	}
}

// ifActBytes is the size of one token's cols activations in layout I.
func ifActBytes(cols int) int { return cols / 32 * ifActBlock }

// packQ8IGo quantizes x (a multiple of 32 values) into layout I.
func packQ8IGo(dst []byte, x []float32) {
	var q [32]int8
	for b := range len(x) / 32 {
		d := dst[b*ifActBlock : (b+1)*ifActBlock]
		dy := f16(quantBlockQ8(&q, x[32*b:]))
		var sy int32
		for i, v := range q {
			sy += int32(v)
			d[i/8*8+i%2*4+i%8/2] = byte(v)
		}
		binary.LittleEndian.PutUint32(d[32:], math.Float32bits(dy))
		binary.LittleEndian.PutUint32(d[36:], math.Float32bits(float32(float32(sy)*dy)))
	}
}
