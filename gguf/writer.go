package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/weftrun/weft/tensor"
)

// maxNameLen is the longest tensor name llama.cpp accepts (GGML_MAX_NAME-1).
const maxNameLen = 63

// Writer writes a GGUF version 3 file as a stream, so that a model never
// has to be held in memory whole:
//
//	w := gguf.NewWriter(f)
//	w.AddKV("general.architecture", "llama")        // metadata, in file order
//	w.AddTensor("token_embd.weight", tensor.Q8_0, []int{32000, 4096})
//	w.WriteHeader()                                  // header, metadata, tensor infos
//	w.WriteTensorData("token_embd.weight", data)     // tensors in the order added
//	w.Close()
//
// Tensor data is placed as llama.cpp places it: the data section starts at
// a multiple of the alignment (general.alignment, which must then be a
// uint32 power of two, else 32) and every tensor is zero-padded to a
// multiple of it. After the first error every method returns that error.
type Writer struct {
	w         io.Writer
	name      string // for errors: the file name when w is an *os.File
	kvs       []writerKV
	keys      map[string]bool
	tensors   []TensorInfo
	index     map[string]int
	alignment uint64
	header    bool   // WriteHeader has run
	next      int    // index of the tensor whose data comes next
	done      uint64 // bytes of tensors[next] written so far
	off       uint64 // bytes written to w
	err       error
}

type writerKV struct {
	key   string
	typ   uint32 // value type, or the element type of an array
	array bool
	value any
}

// NewWriter returns a Writer that writes to w. It does not close w.
func NewWriter(w io.Writer) *Writer {
	name := "output"
	if f, ok := w.(*os.File); ok {
		name = f.Name()
	}
	return &Writer{w: w, name: name, keys: map[string]bool{}, index: map[string]int{}, alignment: DefaultAlignment}
}

func (w *Writer) fail(format string, args ...any) error {
	w.err = fmt.Errorf("gguf write %s: "+format, append([]any{w.name}, args...)...)
	return w.err
}

// valueType returns the GGUF type of a metadata value: its value type, or
// for a slice its element type with array set.
func valueType(v any) (typ uint32, array bool, ok bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, false, true
	case int8:
		return TypeInt8, false, true
	case uint16:
		return TypeUint16, false, true
	case int16:
		return TypeInt16, false, true
	case uint32:
		return TypeUint32, false, true
	case int32:
		return TypeInt32, false, true
	case float32:
		return TypeFloat32, false, true
	case bool:
		return TypeBool, false, true
	case string:
		return TypeString, false, true
	case uint64:
		return TypeUint64, false, true
	case int64:
		return TypeInt64, false, true
	case float64:
		return TypeFloat64, false, true
	case []uint8:
		return TypeUint8, true, true
	case []int8:
		return TypeInt8, true, true
	case []uint16:
		return TypeUint16, true, true
	case []int16:
		return TypeInt16, true, true
	case []uint32:
		return TypeUint32, true, true
	case []int32:
		return TypeInt32, true, true
	case []float32:
		return TypeFloat32, true, true
	case []bool:
		return TypeBool, true, true
	case []string:
		return TypeString, true, true
	case []uint64:
		return TypeUint64, true, true
	case []int64:
		return TypeInt64, true, true
	case []float64:
		return TypeFloat64, true, true
	}
	return 0, false, false
}

// AddKV appends a metadata entry. The value's Go type fixes its GGUF type:
// uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32,
// float64, bool, string, or a slice of one of these for an array (the
// types a File's Metadata holds; Go's int, nested slices and other types
// are refused). general.alignment must be a uint32 power of two.
func (w *Writer) AddKV(key string, value any) error {
	if w.err != nil {
		return w.err
	}
	if w.header {
		return w.fail("metadata %q added after the header was written", key)
	}
	if key == "" {
		return w.fail("empty metadata key")
	}
	if w.keys[key] {
		return w.fail("duplicate metadata key %q", key)
	}
	typ, array, ok := valueType(value)
	if !ok {
		return w.fail("metadata %q: unsupported value type %T", key, value)
	}
	if key == "general.alignment" {
		a, ok := value.(uint32)
		if !ok {
			return w.fail("general.alignment must be a uint32, not %T", value)
		}
		if a == 0 || a&(a-1) != 0 || a > 1<<20 {
			return w.fail("general.alignment %d is not a power of two up to 2^20", a)
		}
		w.alignment = uint64(a)
	}
	w.keys[key] = true
	w.kvs = append(w.kvs, writerKV{key, typ, array, value})
	return nil
}

// AddTensor declares a tensor: its name (unique, at most 63 bytes, as
// llama.cpp requires), type and row-major shape (outermost first, 1 to 4
// positive dimensions, the innermost a whole number of dt's blocks). Its
// data is written later with WriteTensorData, in the order of AddTensor
// calls.
func (w *Writer) AddTensor(name string, dt tensor.DType, shape []int) error {
	if w.err != nil {
		return w.err
	}
	if w.header {
		return w.fail("tensor %q added after the header was written", name)
	}
	_, dup := w.index[name]
	switch {
	case name == "":
		return w.fail("empty tensor name")
	case len(name) > maxNameLen:
		return w.fail("tensor name %q is %d bytes, longer than %d", name, len(name), maxNameLen)
	case dup:
		return w.fail("duplicate tensor %q", name)
	case !dt.Known():
		return w.fail("tensor %q: unknown type %d", name, uint32(dt))
	case len(shape) < 1 || len(shape) > 4:
		return w.fail("tensor %q has %d dimensions (1 to 4 allowed)", name, len(shape))
	}
	elems := uint64(1)
	for _, d := range shape {
		if d <= 0 || d > 1<<40 || elems > (1<<48)/uint64(d) {
			return w.fail("tensor %q: bad shape %v", name, shape)
		}
		elems *= uint64(d)
	}
	if _, err := dt.RowBytes(shape[len(shape)-1]); err != nil {
		return w.fail("tensor %q shape %v: %v", name, shape, err)
	}
	ti := TensorInfo{Name: name, DType: dt, Shape: append([]int(nil), shape...),
		Size: elems / uint64(dt.BlockSize()) * uint64(dt.TypeSize())}
	w.index[name] = len(w.tensors)
	w.tensors = append(w.tensors, ti)
	return nil
}

// Tensors returns the tensors declared so far; after WriteHeader their
// Offset fields are set.
func (w *Writer) Tensors() []TensorInfo { return w.tensors }

func pad(n, align uint64) uint64 { return (n + align - 1) / align * align }

// WriteHeader writes the header, the metadata and the tensor infos, padded
// to the alignment when tensor data follows. Metadata and tensors cannot be
// added afterwards.
func (w *Writer) WriteHeader() error {
	if w.err != nil {
		return w.err
	}
	if w.header {
		return w.fail("header written twice")
	}
	w.header = true
	var off uint64
	for i := range w.tensors {
		w.tensors[i].Offset = off
		off += pad(w.tensors[i].Size, w.alignment)
	}
	bw := bufio.NewWriterSize(w.w, 1<<16)
	e := &encoder{w: bw}
	e.bytes([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.key)
		if kv.array {
			e.u32(TypeArray)
			e.u32(kv.typ)
		} else {
			e.u32(kv.typ)
		}
		e.value(kv.value)
	}
	for _, ti := range w.tensors {
		e.str(ti.Name)
		e.u32(uint32(len(ti.Shape)))
		for d := len(ti.Shape) - 1; d >= 0; d-- {
			e.u64(uint64(ti.Shape[d]))
		}
		e.u32(uint32(ti.DType))
		e.u64(ti.Offset)
	}
	if len(w.tensors) > 0 {
		// Without tensors there is no data section to align (as in the
		// vocabulary-only files llama.cpp's converters write).
		e.zeros(pad(e.n, w.alignment) - e.n)
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	w.off = e.n
	if e.err != nil {
		return w.fail("header: %w", e.err)
	}
	return nil
}

// WriteTensorData writes data of the named tensor, which must be the next
// one in declaration order. A tensor's bytes may come in several
// consecutive calls; once all have been written the padding follows. The
// header is written first if WriteHeader has not been called.
func (w *Writer) WriteTensorData(name string, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if !w.header {
		if err := w.WriteHeader(); err != nil {
			return err
		}
	}
	if w.next >= len(w.tensors) {
		if _, ok := w.index[name]; !ok {
			return w.fail("no tensor %q was declared", name)
		}
		return w.fail("tensor %q: data written after all tensors were complete", name)
	}
	ti := &w.tensors[w.next]
	if ti.Name != name {
		if _, ok := w.index[name]; !ok {
			return w.fail("no tensor %q was declared", name)
		}
		return w.fail("tensor %q written out of order: %q comes next", name, ti.Name)
	}
	if uint64(len(data)) > ti.Size-w.done {
		return w.fail("tensor %q: %d bytes written, more than its %d", name, w.done+uint64(len(data)), ti.Size)
	}
	if _, err := w.w.Write(data); err != nil {
		return w.fail("tensor %q: %w", name, err)
	}
	w.done += uint64(len(data))
	w.off += uint64(len(data))
	if w.done == ti.Size {
		p := pad(w.off, w.alignment) - w.off
		if _, err := w.w.Write(make([]byte, p)); err != nil {
			return w.fail("tensor %q padding: %w", name, err)
		}
		w.off += p
		w.next++
		w.done = 0
	}
	return nil
}

// Close checks that the file is complete: it writes the header if no
// tensor data was written yet (a metadata-only file) and fails if a
// declared tensor is missing data. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if !w.header {
		if err := w.WriteHeader(); err != nil {
			return err
		}
	}
	if w.next < len(w.tensors) {
		ti := w.tensors[w.next]
		return w.fail("tensor %q: %d of its %d bytes written (%d tensors incomplete)", ti.Name, w.done, ti.Size, len(w.tensors)-w.next)
	}
	w.err = errors.New("gguf write " + w.name + ": writer is closed")
	return nil
}

// encoder writes little-endian GGUF primitives, counting bytes and keeping
// the first error.
type encoder struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(b)
	e.n += uint64(n)
}

func (e *encoder) u8(v uint8) { e.buf[0] = v; e.bytes(e.buf[:1]) }

func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.bytes(e.buf[:2]) }

func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.bytes(e.buf[:4]) }

func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.bytes(e.buf[:8]) }

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		var n int
		n, e.err = io.WriteString(e.w, s)
		e.n += uint64(n)
	}
}

func (e *encoder) zeros(n uint64) {
	var z [64]byte
	for n > 0 && e.err == nil {
		k := min(n, uint64(len(z)))
		e.bytes(z[:k])
		n -= k
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// value writes a scalar, or an array's length and elements.
func (e *encoder) value(v any) {
	switch v := v.(type) {
	case uint8:
		e.u8(v)
	case int8:
		e.u8(uint8(v))
	case uint16:
		e.u16(v)
	case int16:
		e.u16(uint16(v))
	case uint32:
		e.u32(v)
	case int32:
		e.u32(uint32(v))
	case float32:
		e.u32(math.Float32bits(v))
	case bool:
		e.u8(b2u(v))
	case string:
		e.str(v)
	case uint64:
		e.u64(v)
	case int64:
		e.u64(uint64(v))
	case float64:
		e.u64(math.Float64bits(v))
	case []uint8:
		e.u64(uint64(len(v)))
		e.bytes(v)
	case []int8:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u8(uint8(x))
		}
	case []uint16:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u16(x)
		}
	case []int16:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u16(uint16(x))
		}
	case []uint32:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(x)
		}
	case []int32:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(uint32(x))
		}
	case []float32:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(math.Float32bits(x))
		}
	case []bool:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u8(b2u(x))
		}
	case []string:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.str(x)
		}
	case []uint64:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u64(x)
		}
	case []int64:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u64(uint64(x))
		}
	case []float64:
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u64(math.Float64bits(x))
		}
	}
}
