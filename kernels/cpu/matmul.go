package cpu

import (
	"fmt"

	"github.com/weftrun/weft/tensor"
	"github.com/x448/float16"
)

// Matrix is a weight matrix of Rows×Cols elements in its stored type:
// row r occupies Data[r*RowBytes : (r+1)*RowBytes].
type Matrix struct {
	DType      tensor.DType
	Rows, Cols int
	Data       []byte
}

// MatrixOf views a 2-D tensor (or a 1-D one as a single row) as a Matrix.
func MatrixOf(t *tensor.Tensor) (Matrix, error) {
	var rows, cols int
	switch len(t.Shape) {
	case 1:
		rows, cols = 1, t.Shape[0]
	case 2:
		rows, cols = t.Shape[0], t.Shape[1]
	default:
		return Matrix{}, fmt.Errorf("tensor %q: shape %v is not a matrix", t.Name, t.Shape)
	}
	rb, err := t.DType.RowBytes(cols)
	if err != nil {
		return Matrix{}, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if len(t.Data) != rb*rows {
		return Matrix{}, fmt.Errorf("tensor %q: %d bytes of data, shape %v of %s needs %d", t.Name, len(t.Data), t.Shape, t.DType, rb*rows)
	}
	return Matrix{DType: t.DType, Rows: rows, Cols: cols, Data: t.Data}, nil
}

// RowBytes is the stored size of one row.
func (m Matrix) RowBytes() int { n, _ := m.DType.RowBytes(m.Cols); return n }

// Row returns the stored bytes of row r.
func (m Matrix) Row(r int) []byte { rb := m.RowBytes(); return m.Data[r*rb : (r+1)*rb] }

// SupportsMatMul reports whether MatMul can read weights of type d.
func SupportsMatMul(d tensor.DType) bool {
	switch d {
	case tensor.F32, tensor.F16, tensor.BF16:
		return true
	}
	return false
}

// MatMul computes dst[n×Rows] = x[n×Cols] · wᵀ.
func MatMul(p *Pool, dst []float32, w Matrix, x []float32, n int) error {
	if len(x) < n*w.Cols || len(dst) < n*w.Rows {
		return fmt.Errorf("matmul: x has %d floats, dst %d; want %d×%d and %d×%d", len(x), len(dst), n, w.Cols, n, w.Rows)
	}
	if !SupportsMatMul(w.DType) {
		return fmt.Errorf("matmul: weights of type %s are not supported", w.DType)
	}
	rb := w.RowBytes()
	p.Parallel(w.Rows, 4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := w.Data[r*rb : (r+1)*rb]
			for t := 0; t < n; t++ {
				dst[t*w.Rows+r] = dotRow(w.DType, row, x[t*w.Cols:(t+1)*w.Cols])
			}
		}
	})
	return nil
}

func dotRow(d tensor.DType, row []byte, x []float32) float32 {
	switch d {
	case tensor.F32:
		return DotF32(tensor.BytesToF32(row), x)
	case tensor.F16:
		var s float32
		for i := range x {
			s += float16.Frombits(uint16(row[2*i])|uint16(row[2*i+1])<<8).Float32() * x[i]
		}
		return s
	case tensor.BF16:
		var s float32
		for i := range x {
			s += bf16(uint16(row[2*i])|uint16(row[2*i+1])<<8) * x[i]
		}
		return s
	}
	return 0
}

// DotF32 returns Σ a[i]·b[i] over len(a).
func DotF32(a, b []float32) float32 {
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

// DequantizeRow writes row r of w as float32s into dst (len Cols).
func DequantizeRow(dst []float32, w Matrix, r int) error {
	row := w.Row(r)
	switch w.DType {
	case tensor.F32:
		copy(dst, tensor.BytesToF32(row))
	case tensor.F16:
		for i := range dst[:w.Cols] {
			dst[i] = float16.Frombits(uint16(row[2*i]) | uint16(row[2*i+1])<<8).Float32()
		}
	case tensor.BF16:
		for i := range dst[:w.Cols] {
			dst[i] = bf16(uint16(row[2*i]) | uint16(row[2*i+1])<<8)
		}
	default:
		return fmt.Errorf("dequantize: type %s is not supported", w.DType)
	}
	return nil
}
