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
	if n >= 4 && k.hasQ8Unpacked() {
		t.q8RowsUnpacked(th, j, r0, r1)
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

// q8RowsUnpacked is q8Rows for several tokens: each block of rows is
// unpacked once into the thread's scratch, then multiplied with every 4
// tokens by 4×4 tiles.
func (t *mmTask) q8RowsUnpacked(th int, j *mmJob, r0, r1 int) {
	k, n, ldd, rb := t.k, t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	w := j.w.Data
	bb, ab := 18, q8aGroup/4
	if j.kind == wkQ8_0 {
		bb, ab = 34, q8bPair/2
	}
	buf := t.scratchFor(th, q8RB*q8UnpackedRowBytes(j.kind, q8KC))
	var y [16]float32
	for b0 := r0; b0 < r1; b0 += q8RB {
		b1 := min(b0+q8RB, r1)
		nr := b1 - b0
		nr4 := (nr + 3) &^ 3
		for c0 := 0; c0 < nb; c0 += q8KC {
			c1 := min(c0+q8KC, nb)
			cb := c1 - c0
			ldu := q8UnpackedRowBytes(j.kind, cb)
			k.q8Unpack(j.kind, buf, w[b0*rb+c0*bb:], rb, nr, cb)
			clear(buf[nr*ldu : nr4*ldu]) // rows padding the last tile
			acc := t.acc || c0 > 0
			tok := 0
			for ; tok+4 <= n; tok += 4 {
				a := j.act[tok*j.ldx+c0*ab:]
				r := 0
				for ; r+4 <= nr; r += 4 {
					k.q8TileU(j.kind, buf[r*ldu:], ldu, a, j.ldx, cb, j.dst[tok*ldd+b0+r:], ldd, acc)
				}
				if r < nr {
					// The last rows, through a 4×4 buffer.
					k.q8TileU(j.kind, buf[r*ldu:], ldu, a, j.ldx, cb, y[:], 4, false)
					for i := 0; r+i < nr; i++ {
						for tt := range 4 {
							put(j.dst, (tok+tt)*ldd+b0+r+i, y[4*tt+i], acc)
						}
					}
				}
			}
			for ; tok < n; tok++ {
				k.q8Gemv(j.kind, w[b0*rb+c0*bb:(b1-1)*rb+c1*bb], rb, j.act[tok*j.ldx+c0*ab:], cb, j.dst[tok*ldd+b0:tok*ldd+b1], acc)
			}
		}
	}
}

// unsafePointer returns the address of b's first byte.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
