package cpu

import "unsafe"

func uintptrOf(b []byte) uintptr {
	if cap(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// q8Rows computes rows [r0, r1) of a SIMD Q4_0 or Q8_0 job for all tokens.
func (t *mmTask) q8Rows(j *mmJob, r0, r1 int) {
	k, n, ldd, rb := t.k, t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	w := j.w.Data
	if n == 1 || !k.hasQ8Tile() {
		// Matrix-vector products; for several tokens, swept over blocks
		// of rows that stay in cache.
		step := r1 - r0
		if n > 1 {
			step = q8RB
		}
		for b0 := r0; b0 < r1; b0 += step {
			b1 := min(b0+step, r1)
			for tok := range n {
				k.q8Gemv(j.kind, w[b0*rb:b1*rb], rb, j.act[tok*j.ldx:(tok+1)*j.ldx], nb, j.dst[tok*ldd+b0:tok*ldd+b1], t.acc)
			}
		}
		return
	}
	// Blocked GEMM: 2 rows × 4 tokens per tile, the reduction cut into
	// chunks of q8KC blocks.
	bb := 18 // weight bytes per block
	ab := q8aGroup / 4
	if j.kind == wkQ8_0 {
		bb, ab = 34, q8bPair/2
	}
	var y [8]float32
	for b0 := r0; b0 < r1; b0 += q8RB {
		b1 := min(b0+q8RB, r1)
		for c0 := 0; c0 < nb; c0 += q8KC {
			c1 := min(c0+q8KC, nb)
			acc := t.acc || c0 > 0
			tok := 0
			for ; tok+4 <= n; tok += 4 {
				a := j.act[tok*j.ldx+c0*ab:]
				r := b0
				for ; r+2 <= b1; r += 2 {
					k.q8Tile(j.kind, w[r*rb+c0*bb:(r+1)*rb+c1*bb], rb, a, j.ldx, c1-c0, &y)
					for tt := range 4 {
						put(j.dst, (tok+tt)*ldd+r, y[tt], acc)
						put(j.dst, (tok+tt)*ldd+r+1, y[4+tt], acc)
					}
				}
				if r < b1 {
					for tt := tok; tt < tok+4; tt++ {
						k.q8Gemv(j.kind, w[r*rb+c0*bb:r*rb+c1*bb], rb, j.act[tt*j.ldx+c0*ab:], c1-c0, j.dst[tt*ldd+r:tt*ldd+r+1], acc)
					}
				}
			}
			for ; tok < n; tok++ {
				k.q8Gemv(j.kind, w[b0*rb+c0*bb:(b1-1)*rb+c1*bb], rb, j.act[tok*j.ldx+c0*ab:], c1-c0, j.dst[tok*ldd+b0:tok*ldd+b1], acc)
			}
		}
	}
}
