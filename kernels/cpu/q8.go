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
	if j.af == afQ8Y {
		t.q8RowsY(th, j, r0, r1)
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
		k.q8GemvN(j.kind, w[b0*rb:b1*rb], rb, j.act, j.ldx, nb, j.dst[b0:], ldd, b1-b0, n, t.acc)
	}
}

// q8RowsC is q8Rows for several tokens: each block of q8RB rows is
// unpacked once into the thread's scratch, in strips of 16 rows, then
// multiplied with every group of 16 tokens (activations in layout C) by
// 16×16 tiles that run each output's whole chain.
func (t *mmTask) q8RowsC(th int, j *mmJob, r0, r1 int) {
	k, n, ldd, rb := t.k, t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	if n <= q8FusedMaxTokens {
		// A few tokens: whole strips unpack in registers, fused with the
		// tiles' step; a last partial strip goes the long way.
		for ; r0+q8Strip <= r1; r0 += q8Strip {
			k.q8Fused(j.kind, j.w.Data[r0*rb:], rb, j.act, nb, j.dst[r0:], ldd, n, t.acc)
		}
		if r0 == r1 {
			return
		}
	}
	sb := nb * q8uBlockOf(j.kind) // bytes per unpacked strip
	buf := t.scratchFor(th, q8RB/q8Strip*sb)
	for b0 := r0; b0 < r1; b0 += q8RB {
		b1 := min(b0+q8RB, r1)
		ns := (b1 - b0 + q8Strip - 1) / q8Strip
		for s := range ns {
			r := b0 + s*q8Strip
			k.q8UnpackStrip(j.kind, buf[s*sb:(s+1)*sb], j.w.Data[r*rb:], rb, min(q8Strip, b1-r), nb)
		}
		for g := 0; g < n; g += q8Strip {
			a := j.act[g*j.ldx:]
			nt := min(q8Strip, n-g)
			for s := range ns {
				r := b0 + s*q8Strip
				k.q8Tile(j.kind, buf[s*sb:(s+1)*sb], a, nb, j.dst[g*ldd+r:], ldd, min(q8Strip, b1-r), nt, t.acc)
			}
		}
	}
}

// unsafePointer returns the address of b's first byte.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
