package cpu

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Layout Y (AVX2 prefill of Q4_0 and Q8_0 weights): each token's
// activations, quantized as ggml's x86 backend quantizes them to Q8_0, in
// records of 40 bytes a block:
//
//	[ 0, 32)  int8 q[0:32]
//	[32, 36)  float32 d
//	[36, 40)  int32 -8·Σq (the Q4_0 correction)
//
// The tiles (q8tiley_amd64.go) broadcast a dword of a token's quants
// against 8 weight rows unpacked side by side.
const yTokBlock = 40

// q8yRowBytes is the size of one token of cols values in layout Y.
func q8yRowBytes(cols int) int { return cols / 32 * yTokBlock }

// packQ8Y quantizes x (a multiple of 32 values) into layout Y in dst.
func (k Kernels) packQ8Y(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:nb*yTokBlock]
	var tmp [8 * 34]byte
	for b0 := 0; b0 < nb; b0 += 8 {
		m := min(8, nb-b0)
		k.quantizeQ8_0(tmp[:m*34], x[32*b0:32*(b0+m)])
		for i := range m {
			src := tmp[34*i : 34*i+34]
			d := dst[(b0+i)*yTokBlock : (b0+i+1)*yTokBlock]
			copy(d[:32], src[2:])
			s := sumInt8x32(src[2:34])
			binary.LittleEndian.PutUint32(d[32:], math.Float32bits(f16(binary.LittleEndian.Uint16(src))))
			binary.LittleEndian.PutUint32(d[36:], uint32(-8*s))
		}
	}
}

// q8YMinTokens is the fewest tokens for which matmuls at the AVX2 level
// use its tiles (Q4_0 and Q8_0 in q8RowsY, IQ4_NL, and the K-quants in
// kGemmY); fewer run the matrix-vector kernels. Both give the same bits.
var q8YMinTokens = 2

// sumInt8x32 returns the sum of the 32 int8s in q, 8 bytes at a time: the
// unsigned bytes' sum less 256 for each negative one.
func sumInt8x32(q []byte) int32 {
	const m = 0x00ff00ff00ff00ff
	var s, neg int
	for i := 0; i < 32; i += 8 {
		v := binary.LittleEndian.Uint64(q[i:])
		t := v&m + v>>8&m // four 16-bit sums of two bytes
		s += int(t * 0x0001000100010001 >> 48)
		neg += bits.OnesCount64(v & 0x8080808080808080)
	}
	return int32(s - 256*neg)
}

// yStrip is the rows of one unpacked strip of the AVX2 prefill.
const yStrip = 8

// q8RowsY computes rows [r0, r1) of a Q4_0 or Q8_0 job for several tokens
// in layout Y, on thread th: each strip of 8 rows is unpacked once into
// the thread's scratch and multiplied with the tokens, up to yMaxTokens at
// a time, by tiles whose outputs run the matrix-vector kernels' chains.
func (t *mmTask) q8RowsY(th int, j *mmJob, r0, r1 int) {
	k, n, ldd, rb := t.k, t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	buf := t.scratchFor(th, nb*yStripBlock)
	for s := r0; s < r1; s += yStrip {
		nr := min(yStrip, r1-s)
		k.q8YUnpack(j.kind, buf, j.w.Data[s*rb:], rb, nr, nb)
		for tok := 0; tok < n; tok += yMaxTokens {
			nt := min(yMaxTokens, n-tok)
			k.q8YTile(j.kind, buf, j.act[tok*j.ldx:], j.ldx, nb, j.dst[tok*ldd+s:], ldd, nr, nt, t.acc)
		}
	}
}
