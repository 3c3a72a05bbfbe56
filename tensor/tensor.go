// Package tensor defines weft's element types and the Tensor value that
// flows between loaders, the graph, the scheduler and the kernels.
//
// Shapes are row-major, outermost dimension first (the PyTorch order): a
// linear weight that maps in→out features has Shape [out, in]. GGUF lists
// dimensions innermost first (ggml's ne[]); loaders reverse them.
package tensor

import (
	"fmt"
	"unsafe"
)

// DType is an element type. The numbering is ggml's, so a GGUF tensor type
// converts directly.
type DType uint32

// Element types, numbered as in ggml.
const (
	F32  DType = 0
	F16  DType = 1
	Q4_0 DType = 2
	Q4_1 DType = 3
	Q5_0 DType = 6
	Q5_1 DType = 7
	Q8_0 DType = 8
	Q8_1 DType = 9
	Q2_K DType = 10
	Q3_K DType = 11
	Q4_K DType = 12
	Q5_K DType = 13
	Q6_K DType = 14
	Q8_K DType = 15
	I8   DType = 24
	I16  DType = 25
	I32  DType = 26
	I64  DType = 27
	F64  DType = 28
	BF16 DType = 30
	// IQ4_NL is ggml's 4-bit non-linear type (blocks of 32).
	IQ4_NL DType = 20
)

// Inferflow's block formats, under weft's own GGUF type ids (from 4096,
// clear of ggml's and its forks' ids; llama.cpp cannot read files that
// hold them). See kernels/quant's package comment and docs/quantization.md.
const (
	Q8_B32T2  DType = 4096
	Q6_B64T1  DType = 4097
	Q5_B64T1  DType = 4098
	Q4_B32T1  DType = 4099
	Q4_B64T1  DType = 4100
	Q3H_B64T1 DType = 4101
	Q3_B32T1  DType = 4102
	Q2_B32T1  DType = 4103
)

// typeInfo is a type's layout. It is the part of a type's traits that
// sits below every other package; kernels/quant's traits table adds the
// quantizer, dequantizer, dot product and activation type.
type typeInfo struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
	// fileType is general.file_type (llama.cpp's llama_ftype) for a model
	// whose weights are mostly of this type, or -1 for none.
	fileType int32
}

var typeTable = map[DType]typeInfo{
	F32:  {"f32", 1, 4, 0},
	F16:  {"f16", 1, 2, 1},
	BF16: {"bf16", 1, 2, 32},
	F64:  {"f64", 1, 8, -1},
	I8:   {"i8", 1, 1, -1},
	I16:  {"i16", 1, 2, -1},
	I32:  {"i32", 1, 4, -1},
	I64:  {"i64", 1, 8, -1},
	Q4_0: {"q4_0", 32, 18, 2},
	Q4_1: {"q4_1", 32, 20, 3},
	Q5_0: {"q5_0", 32, 22, 8},
	Q5_1: {"q5_1", 32, 24, 9},
	Q8_0: {"q8_0", 32, 34, 7},
	Q8_1: {"q8_1", 32, 36, -1},
	Q2_K: {"q2_k", 256, 84, 10},
	Q3_K: {"q3_k", 256, 110, 12},
	Q4_K: {"q4_k", 256, 144, 15},
	Q5_K: {"q5_k", 256, 176, 17},
	Q6_K: {"q6_k", 256, 210, 18},
	Q8_K: {"q8_k", 256, 292, -1},

	IQ4_NL: {"iq4_nl", 32, 18, 25},

	Q8_B32T2:  {"q8_b32t2", 32, 34, -1},
	Q6_B64T1:  {"q6_b64t1", 64, 52, -1},
	Q5_B64T1:  {"q5_b64t1", 64, 44, -1},
	Q4_B32T1:  {"q4_b32t1", 32, 20, -1},
	Q4_B64T1:  {"q4_b64t1", 64, 36, -1},
	Q3H_B64T1: {"q3h_b64t1", 64, 32, -1},
	Q3_B32T1:  {"q3_b32t1", 32, 16, -1},
	Q2_B32T1:  {"q2_b32t1", 32, 12, -1},
}

// Known reports whether d is a type weft knows the layout of.
func (d DType) Known() bool { _, ok := typeTable[d]; return ok }

// String returns the lower-case name used in specs and on the command line.
func (d DType) String() string {
	if t, ok := typeTable[d]; ok {
		return t.name
	}
	return fmt.Sprintf("dtype(%d)", uint32(d))
}

// BlockSize is the number of elements in one block (1 for plain types).
func (d DType) BlockSize() int { return typeTable[d].blockSize }

// TypeSize is the number of bytes in one block.
func (d DType) TypeSize() int { return typeTable[d].typeSize }

// FileType returns general.file_type (llama.cpp's llama_ftype) for a model
// whose weights are mostly of type d: for the K-quants the _M mix (Q4_K:
// 15, Q4_K_M). It reports false for a type llama.cpp has no such number
// for (Q8_K, the integer types, Inferflow's formats).
func (d DType) FileType() (uint32, bool) {
	t, ok := typeTable[d]
	if !ok || t.fileType < 0 {
		return 0, false
	}
	return uint32(t.fileType), true
}

// Quantized reports whether d is a block-quantized type.
func (d DType) Quantized() bool { return typeTable[d].blockSize > 1 }

// RowBytes returns the bytes taken by n elements, or an error when n is not
// a whole number of blocks.
func (d DType) RowBytes(n int) (int, error) {
	t, ok := typeTable[d]
	if !ok {
		return 0, fmt.Errorf("unknown dtype %d", uint32(d))
	}
	if n%t.blockSize != 0 {
		return 0, fmt.Errorf("%s: %d elements is not a multiple of the block size %d", t.name, n, t.blockSize)
	}
	return n / t.blockSize * t.typeSize, nil
}

// ParseDType parses a name such as "f16" or "q4_0" (case-insensitive).
func ParseDType(s string) (DType, error) {
	ls := lower(s)
	for d, t := range typeTable {
		if t.name == ls {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q", s)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Tensor is a named, typed block of memory. Data may be a view into a
// memory-mapped file; treat it as read-only unless you own it.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// Elems returns the number of elements.
func (t *Tensor) Elems() int { return NumElems(t.Shape) }

// NumElems returns the product of the dimensions.
func NumElems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// F32 returns the data as float32s. It panics if the dtype is not F32; call
// it only after checking.
func (t *Tensor) F32() []float32 {
	if t.DType != F32 {
		panic("tensor: F32() on " + t.DType.String())
	}
	return BytesToF32(t.Data)
}

// BytesToF32 reinterprets b as float32s (little-endian hosts only).
func BytesToF32(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// F32ToBytes reinterprets f as bytes.
func F32ToBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

// NewF32 allocates an F32 tensor.
func NewF32(name string, shape ...int) *Tensor {
	return &Tensor{Name: name, DType: F32, Shape: append([]int(nil), shape...), Data: make([]byte, 4*NumElems(shape))}
}

// FromF32 wraps float32 data as a tensor without copying.
func FromF32(name string, data []float32, shape ...int) *Tensor {
	return &Tensor{Name: name, DType: F32, Shape: append([]int(nil), shape...), Data: F32ToBytes(data)}
}

// BytesToI32 reinterprets b as int32s (little-endian hosts only).
func BytesToI32(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}
