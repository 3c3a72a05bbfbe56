package cpu

import (
	"encoding/binary"
	"math"

	"github.com/weftrun/weft/kernels/quant"
)

// The scalar conversions are kernels/quant's (the reference for every
// format); these names keep the kernels' call sites short.
func f16(h uint16) float32    { return quant.FromF16(h) }
func toF16(f float32) uint16  { return quant.ToF16(f) }
func bf16(b uint16) float32   { return quant.FromBF16(b) }
func toBF16(f float32) uint16 { return quant.ToBF16(f) }

// Pure-Go dot products of a weight row in its stored type with float32
// activations. Four partial sums keep the loops pipelined.

func dotF32Go(w []byte, x []float32) float32 {
	w = w[:4*len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		b := w[4*i : 4*i+16]
		s0 += math.Float32frombits(binary.LittleEndian.Uint32(b)) * x[i]
		s1 += math.Float32frombits(binary.LittleEndian.Uint32(b[4:])) * x[i+1]
		s2 += math.Float32frombits(binary.LittleEndian.Uint32(b[8:])) * x[i+2]
		s3 += math.Float32frombits(binary.LittleEndian.Uint32(b[12:])) * x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:])) * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotF16Go(w []byte, x []float32) float32 {
	w = w[:2*len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		b := w[2*i : 2*i+8]
		s0 += f16(binary.LittleEndian.Uint16(b)) * x[i]
		s1 += f16(binary.LittleEndian.Uint16(b[2:])) * x[i+1]
		s2 += f16(binary.LittleEndian.Uint16(b[4:])) * x[i+2]
		s3 += f16(binary.LittleEndian.Uint16(b[6:])) * x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += f16(binary.LittleEndian.Uint16(w[2*i:])) * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotBF16Go(w []byte, x []float32) float32 {
	w = w[:2*len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		b := w[2*i : 2*i+8]
		s0 += bf16(binary.LittleEndian.Uint16(b)) * x[i]
		s1 += bf16(binary.LittleEndian.Uint16(b[2:])) * x[i+1]
		s2 += bf16(binary.LittleEndian.Uint16(b[4:])) * x[i+2]
		s3 += bf16(binary.LittleEndian.Uint16(b[6:])) * x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += bf16(binary.LittleEndian.Uint16(w[2*i:])) * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotF32F32Go(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// f16RowGo converts len(dst) halves in src to float32.
func f16RowGo(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = f16(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// toF16RowGo converts src to halves in dst.
func toF16RowGo(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], toF16(v))
	}
}

// floatDotGo is the pure-Go dot product of a row of F32, F16 or BF16
// weights with x.
func floatDotGo(dt floatType, w []byte, x []float32) float32 {
	switch dt {
	case ftF16:
		return dotF16Go(w, x)
	case ftBF16:
		return dotBF16Go(w, x)
	}
	return dotF32Go(w, x)
}

// floatType is the weight element type of the float kernels.
type floatType uint8

const (
	ftF32 floatType = iota
	ftF16
	ftBF16
)

func (t floatType) size() int {
	if t == ftF32 {
		return 4
	}
	return 2
}

// floatTileGo is the pure-Go floatTile.
func floatTileGo(dt floatType, w []byte, ldw int, x []float32, ldx, n int, dst []float32, ldd int, acc bool) {
	for t := range 4 {
		for r := range 4 {
			put(dst, t*ldd+r, floatDotGo(dt, w[r*ldw:], x[t*ldx:t*ldx+n]), acc)
		}
	}
}
