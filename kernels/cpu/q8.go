package cpu

import "unsafe"

func uintptrOf(b []byte) uintptr {
	if cap(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// bytesAsF32 views b (64-byte aligned, a multiple of 4 bytes) as float32s.
func bytesAsF32(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// f32AsBytes views f as bytes.
func f32AsBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// q8Rows computes rows [r0, r1) of a SIMD Q4_0 or Q8_0 job for all tokens,
// on thread th.
func (t *mmTask) q8Rows(th int, j *mmJob, r0, r1 int) {
	k, n, ldd, rb := t.k, t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	w := j.w.Data
	if j.af == afQ8C {
		t.q8RowsC(th, j, r0, r1)
		return
	}
	// Matrix-vector products; for several tokens, swept over blocks of
	// rows that stay in cache.
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
}

// q8RowsC is q8Rows for several tokens: each block of rows is unpacked once
// into the thread's scratch, block-interleaved, then multiplied with every
// 4 tokens (activations in layout C) by 2×4 tiles.
func (t *mmTask) q8RowsC(th int, j *mmJob, r0, r1 int) {
	k, n, ldd, rb := t.k, t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	w := j.w.Data
	bb := 18
	if j.kind == wkQ8_0 {
		bb = 34
	}
	buf := t.scratchFor(th, (q8RB+1)*q8uRowBytes(q8KC))
	var y [8]float32
	for b0 := r0; b0 < r1; b0 += q8RB {
		b1 := min(b0+q8RB, r1)
		nr := b1 - b0
		for c0 := 0; c0 < nb; c0 += q8KC {
			c1 := min(c0+q8KC, nb)
			cb := c1 - c0
			lu := q8uRowBytes(cb)
			k.q8UnpackC(j.kind, buf, w[b0*rb+c0*bb:], rb, nr, cb)
			clear(buf[nr*lu : (nr+1)*lu]) // the row padding an odd last tile
			acc := t.acc || c0 > 0
			for tok := 0; tok < n; tok += 4 {
				a := j.act[tok*j.ldx+c0/16*q8cGroup:]
				for r := 0; r < nr; r += 2 {
					if tok+4 <= n && r+2 <= nr {
						k.q8TileC(j.kind, buf[r*lu:], lu, a, j.ldx, cb, j.dst[tok*ldd+b0+r:], ldd, acc)
						continue
					}
					// A partial tile, through a buffer.
					k.q8TileC(j.kind, buf[r*lu:], lu, a, j.ldx, cb, y[:], 2, false)
					for tt := 0; tt < 4 && tok+tt < n; tt++ {
						for i := 0; i < 2 && r+i < nr; i++ {
							put(j.dst, (tok+tt)*ldd+b0+r+i, y[2*tt+i], acc)
						}
					}
				}
			}
		}
	}
}

// unsafePointer returns the address of b's first byte.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
