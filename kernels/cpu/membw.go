package cpu

import (
	"encoding/binary"
	"time"
)

func xorReadGo(b []byte) uint64 {
	var s0, s1, s2, s3 uint64
	for i := 0; i+32 <= len(b); i += 32 {
		c := b[i : i+32]
		s0 ^= binary.LittleEndian.Uint64(c)
		s1 ^= binary.LittleEndian.Uint64(c[8:])
		s2 ^= binary.LittleEndian.Uint64(c[16:])
		s3 ^= binary.LittleEndian.Uint64(c[24:])
	}
	return s0 ^ s1 ^ s2 ^ s3
}

// bwTask reads a buffer in chunks, one result word per chunk.
type bwTask struct {
	k     Kernels
	buf   []byte
	chunk int
	sums  []uint64
}

func (t *bwTask) Run(lo, hi int) {
	for c := lo; c < hi; c++ {
		t.sums[c] = t.k.xorRead(t.buf[c*t.chunk : (c+1)*t.chunk])
	}
}

// MemBandwidth measures the memory read bandwidth in GB/s (1e9 bytes per
// second) that the pool's threads reach with the kernels' SIMD loads: it
// fills a buffer of the given size (use one much larger than the caches,
// such as 1 GiB), then reads it in full several times and reports the
// fastest pass. It allocates the buffer on each call.
func MemBandwidth(p *Pool, bytes int) float64 {
	const chunk = 1 << 20
	nch := max(1, bytes/chunk)
	t := &bwTask{
		k:     p.Kernels(),
		buf:   make([]byte, nch*chunk),
		chunk: chunk,
		sums:  make([]uint64, nch),
	}
	for i := range t.buf {
		t.buf[i] = byte(i*7 + i>>8)
	}
	best := time.Duration(1<<63 - 1)
	var fold uint64
	for pass := 0; pass < 5; pass++ {
		start := time.Now()
		p.Run(nch, 1, t)
		if d := time.Since(start); d < best {
			best = d
		}
		for _, s := range t.sums {
			fold ^= s
		}
	}
	t.sums[0] = fold // keep the reads observable
	return float64(len(t.buf)) / best.Seconds() / 1e9
}
