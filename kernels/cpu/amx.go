package cpu

import "unsafe"

// The prefill GEMM of F16 and BF16 weights on AMX (floatRowsAMX).
//
// AMX multiplies bfloat16 tiles and accumulates in float32. To keep the
// result that of float32 arithmetic, the operands are split into parts
// that are exact in bfloat16: an F16 weight (11 significant bits) into
// w1 + w2, a BF16 weight is its own part, and a float32 activation (24
// bits) into x1 + x2 + x3 (8 each, the top bits first). Every product
// wi·xj is then exact in float32 and is accumulated in float32 with round
// to nearest even; the sum differs from a float32 dot product only in
// the order of its roundings. (AMX treats magnitudes below 2^-126, float32
// subnormals, as zero, inputs and sums alike.) It costs 6 tile products
// per F16 weight block (3 for BF16) instead of 1, and AMX still does them
// several times faster than the AVX-512 FMAs do the float32 products.
//
// Rows per block, reduction chunk (a multiple of 32), token pairs (of 16
// tokens) per pass.
const (
	amxRB   = 64
	amxKC   = 512
	amxPass = 4
)

// amxParts returns the bfloat16 parts of a weight of type ft.
func amxParts(ft floatType) int {
	if ft == ftBF16 {
		return 1
	}
	return 2
}

// amxWLen returns the words of 16 rows of n weights of type ft in
// weight-tile layout: per block of 32 elements, amxParts(ft) tiles of 16
// rows × 32 words.
func amxWLen(ft floatType, n int) int { return (n + 31) / 32 * amxParts(ft) * 512 }

// amxXLen returns the words of 16 tokens of n activations in
// activation-tile layout: per block of 32 elements, 3 tiles of 16 pairs ×
// 16 tokens × 2 words.
func amxXLen(n int) int { return (n + 31) / 32 * 1536 }

// amxTokenTiles returns the activation tiles of n tokens: 16 tokens each,
// an even number (the kernel takes them in pairs).
func amxTokenTiles(n int) int { return (n + 31) / 32 * 2 }

// amxXTask packs x into activation tiles: tile i holds tokens 16i..16i+15
// (zero past n) at xa[i*amxXLen(cols):].
type amxXTask struct {
	k       Kernels
	x       []float32
	cols, n int
	xa      []uint16
}

func (t *amxXTask) Run(lo, hi int) {
	ld := amxXLen(t.cols)
	for i := lo; i < hi; i++ {
		ntok := max(0, min(16, t.n-16*i))
		var x []float32
		if ntok > 0 {
			x = t.x[16*i*t.cols:]
		}
		t.k.amxPackX(t.xa[i*ld:(i+1)*ld], x, t.cols, ntok, t.cols)
	}
}

// floatRowsAMX computes rows [r0, r1) of an F16 or BF16 job for all
// tokens on AMX, on thread w.
//
// For each chunk of amxKC elements of a block of amxRB rows, the rows are
// split into weight tiles (128 KiB for F16) and multiplied with the
// activation tiles of every token pair of the pass (384 KiB for 128
// tokens), two row tiles by two token tiles per kernel call. The sums
// wait in a buffer until the last chunk is added and they are transposed
// into dst. While a chunk is computed, the kernel prefetches the weights
// of the next one into L2.
func (t *mmTask) floatRowsAMX(w int, j *mmJob, r0, r1 int) {
	k, n, cols, ldd, rb, ft := t.k, t.n, j.w.Cols, j.w.Rows, j.rb, j.ft
	wd, dst := j.w.Data, j.dst
	ts := amxWLen(ft, amxKC) // words per row tile of a chunk
	const bufLen = amxPass * amxRB * 32
	wlen := amxRB / 16 * ts
	b := t.scratchFor(w, 2*wlen+4*bufLen+128)
	wp := bytesAsU16(alignedBytes(b, 2*wlen))
	buf := bytesAsF32(alignedBytes(b[2*wlen+64:], 4*bufLen))
	xs := amxXLen(cols) // words per token tile
	pairs := (n + 31) / 32
	var pf prefetcher
	for b0 := r0; b0 < r1; b0 += amxRB {
		b1 := min(b0+amxRB, r1)
		rpairs := (b1 - b0 + 31) / 32
		for p0 := 0; p0 < pairs; p0 += amxPass {
			p1 := min(p0+amxPass, pairs)
			for c0 := 0; c0 < cols; c0 += amxKC {
				c1 := min(c0+amxKC, cols)
				kc := c1 - c0
				nkb := (kc + 31) / 32
				// The chunk after this one: the next columns, or the
				// next pass's or block's first ones.
				nb0, nb1, nc0 := b0, b1, c1
				if nc0 == cols {
					nc0 = 0
					if p1 == pairs {
						nb0, nb1 = b1, min(b1+amxRB, r1)
					}
				}
				pf.plan(wd, rb, nb0, nb1, 2*nc0, 2*min(nc0+amxKC, cols), (p1-p0)*rpairs)
				for i := range 2 * rpairs {
					g0 := b0 + 16*i
					var src []byte
					if g0 < b1 {
						src = wd[g0*rb+2*c0:]
					}
					k.amxPackW(ft, wp[i*ts:(i+1)*ts], src, rb, b1-g0, kc)
				}
				for p := p0; p < p1; p++ {
					xa := t.xa[2*p*xs+c0/32*1536:]
					for rp := range rpairs {
						k.amxTile(ft, wp[2*rp*ts:], ts, xa, xs, nkb, buf[((p-p0)*amxRB+32*rp)*32:], c0 > 0, &pf)
					}
				}
			}
			for p := p0; p < p1; p++ {
				k.unpanel(dst[32*p*ldd+b0:], ldd, buf[(p-p0)*amxRB*32:], b1-b0, min(32, n-32*p), t.acc)
			}
		}
	}
}

// bytesAsU16 views b (64-byte aligned, an even number of bytes) as uint16s.
func bytesAsU16(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}
