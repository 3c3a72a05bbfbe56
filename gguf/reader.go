// Package gguf reads and writes GGUF files (versions 2 and 3), the format of
// llama.cpp and ggml. Tensor data is memory-mapped and handed out as
// zero-copy views.
package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/weftrun/weft/tensor"
	"golang.org/x/sys/unix"
)

// Magic is the four bytes that open every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the tensor data alignment when general.alignment is absent.
const DefaultAlignment = 32

// Value types of metadata entries.
const (
	TypeUint8   uint32 = 0
	TypeInt8    uint32 = 1
	TypeUint16  uint32 = 2
	TypeInt16   uint32 = 3
	TypeUint32  uint32 = 4
	TypeInt32   uint32 = 5
	TypeFloat32 uint32 = 6
	TypeBool    uint32 = 7
	TypeString  uint32 = 8
	TypeArray   uint32 = 9
	TypeUint64  uint32 = 10
	TypeInt64   uint32 = 11
	TypeFloat64 uint32 = 12
)

// TensorInfo describes one tensor in the file.
type TensorInfo struct {
	Name   string
	DType  tensor.DType
	Shape  []int  // row-major, outermost first (ggml ne reversed)
	Offset uint64 // relative to the start of the data section
	Size   uint64 // bytes
}

// File is an open GGUF file.
type File struct {
	Path      string
	Version   uint32
	Alignment uint64
	Meta      Metadata
	// Keys lists metadata keys in file order.
	Keys    []string
	Tensors []TensorInfo
	index   map[string]int
	data    []byte // the whole mapped file
	dataOff uint64
	mapped  bool
}

// Open maps and parses a GGUF file. Errors name the file and what is wrong.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	size := st.Size()
	if size < 24 {
		return nil, fmt.Errorf("gguf %s: file is %d bytes, too short for a GGUF header", path, size)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf %s: mmap: %w", path, err)
	}
	g, err := parse(path, data)
	if err != nil {
		unix.Munmap(data)
		return nil, err
	}
	g.mapped = true
	return g, nil
}

// Parse parses GGUF bytes held in memory (used by tests and fuzzers).
func Parse(name string, data []byte) (*File, error) { return parse(name, data) }

// Close unmaps the file. Tensor views handed out before become invalid.
func (g *File) Close() error {
	if g.mapped && g.data != nil {
		err := unix.Munmap(g.data)
		g.data = nil
		return err
	}
	return nil
}

// Size returns the file size in bytes.
func (g *File) Size() int64 { return int64(len(g.data)) }

// Lookup returns the info of the named tensor.
func (g *File) Lookup(name string) (TensorInfo, bool) {
	i, ok := g.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return g.Tensors[i], true
}

// Tensor returns a zero-copy view of the named tensor's data.
func (g *File) Tensor(name string) (*tensor.Tensor, error) {
	ti, ok := g.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("gguf %s: no tensor %q", g.Path, name)
	}
	if g.data == nil {
		return nil, fmt.Errorf("gguf %s: tensor %q: file is closed", g.Path, name)
	}
	start := g.dataOff + ti.Offset
	return &tensor.Tensor{Name: ti.Name, DType: ti.DType, Shape: append([]int(nil), ti.Shape...), Data: g.data[start : start+ti.Size : start+ti.Size]}, nil
}

// Architecture returns general.architecture, or "".
func (g *File) Architecture() string { s, _ := g.Meta.String("general.architecture"); return s }

type reader struct {
	name string
	b    []byte
	off  uint64
}

var errShort = errors.New("unexpected end of file")

func (r *reader) need(n uint64) error {
	if n > uint64(len(r.b)) || r.off > uint64(len(r.b))-n {
		return fmt.Errorf("gguf %s: at byte %d: %w (need %d more bytes, file is %d)", r.name, r.off, errShort, n, len(r.b))
	}
	return nil
}

func (r *reader) u8() (uint8, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	v := r.b[r.off]
	r.off++
	return v, nil
}

func (r *reader) u16() (uint16, error) {
	if err := r.need(2); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v, nil
}

func (r *reader) u32() (uint32, error) {
	if err := r.need(4); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

func (r *reader) u64() (uint64, error) {
	if err := r.need(8); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v, nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if err := r.need(n); err != nil {
		return "", fmt.Errorf("string of length %d: %w", n, err)
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s, nil
}

// maxArray bounds array lengths so that a corrupt count cannot make us
// allocate the machine away; each element takes at least one byte.
func (r *reader) checkCount(n, elemMin uint64) error {
	if elemMin == 0 {
		elemMin = 1
	}
	if n > (uint64(len(r.b))-r.off)/elemMin {
		return fmt.Errorf("gguf %s: at byte %d: array of %d elements runs past the end of the file", r.name, r.off, n)
	}
	return nil
}

func (r *reader) scalar(t uint32) (any, error) {
	switch t {
	case TypeUint8:
		return r.u8()
	case TypeInt8:
		v, err := r.u8()
		return int8(v), err
	case TypeUint16:
		return r.u16()
	case TypeInt16:
		v, err := r.u16()
		return int16(v), err
	case TypeUint32:
		return r.u32()
	case TypeInt32:
		v, err := r.u32()
		return int32(v), err
	case TypeFloat32:
		v, err := r.u32()
		return math.Float32frombits(v), err
	case TypeBool:
		v, err := r.u8()
		if err == nil && v > 1 {
			return nil, fmt.Errorf("gguf %s: at byte %d: bool value %d", r.name, r.off-1, v)
		}
		return v == 1, err
	case TypeString:
		return r.str()
	case TypeUint64:
		return r.u64()
	case TypeInt64:
		v, err := r.u64()
		return int64(v), err
	case TypeFloat64:
		v, err := r.u64()
		return math.Float64frombits(v), err
	}
	return nil, fmt.Errorf("gguf %s: at byte %d: unknown value type %d", r.name, r.off, t)
}

var scalarSize = map[uint32]uint64{TypeUint8: 1, TypeInt8: 1, TypeUint16: 2, TypeInt16: 2, TypeUint32: 4, TypeInt32: 4, TypeFloat32: 4, TypeBool: 1, TypeString: 8, TypeUint64: 8, TypeInt64: 8, TypeFloat64: 8}

func (r *reader) array() (any, error) {
	et, err := r.u32()
	if err != nil {
		return nil, err
	}
	n, err := r.u64()
	if err != nil {
		return nil, err
	}
	sz, ok := scalarSize[et]
	if !ok {
		if et == TypeArray {
			return nil, fmt.Errorf("gguf %s: at byte %d: nested arrays are not supported", r.name, r.off)
		}
		return nil, fmt.Errorf("gguf %s: at byte %d: unknown array element type %d", r.name, r.off, et)
	}
	if err := r.checkCount(n, sz); err != nil {
		return nil, err
	}
	switch et {
	case TypeString:
		out := make([]string, n)
		for i := range out {
			if out[i], err = r.str(); err != nil {
				return nil, err
			}
		}
		return out, nil
	case TypeFloat32:
		out := make([]float32, n)
		for i := range out {
			v, _ := r.u32()
			out[i] = math.Float32frombits(v)
		}
		return out, nil
	case TypeInt32:
		out := make([]int32, n)
		for i := range out {
			v, _ := r.u32()
			out[i] = int32(v)
		}
		return out, nil
	case TypeUint32:
		out := make([]uint32, n)
		for i := range out {
			out[i], _ = r.u32()
		}
		return out, nil
	case TypeUint8:
		out := make([]uint8, n)
		copy(out, r.b[r.off:r.off+n])
		r.off += n
		return out, nil
	case TypeInt8:
		out := make([]int8, n)
		for i := range out {
			v, _ := r.u8()
			out[i] = int8(v)
		}
		return out, nil
	case TypeBool:
		out := make([]bool, n)
		for i := range out {
			v, _ := r.u8()
			out[i] = v != 0
		}
		return out, nil
	case TypeInt64:
		out := make([]int64, n)
		for i := range out {
			v, _ := r.u64()
			out[i] = int64(v)
		}
		return out, nil
	case TypeUint64:
		out := make([]uint64, n)
		for i := range out {
			out[i], _ = r.u64()
		}
		return out, nil
	case TypeFloat64:
		out := make([]float64, n)
		for i := range out {
			v, _ := r.u64()
			out[i] = math.Float64frombits(v)
		}
		return out, nil
	default: // uint16, int16
		out := make([]int64, n)
		for i := range out {
			v, _ := r.u16()
			if et == TypeInt16 {
				out[i] = int64(int16(v))
			} else {
				out[i] = int64(v)
			}
		}
		return out, nil
	}
}

func parse(name string, data []byte) (*File, error) {
	r := &reader{name: name, b: data}
	if len(data) < 4 || string(data[:4]) != Magic {
		got := data
		if len(got) > 4 {
			got = got[:4]
		}
		return nil, fmt.Errorf("gguf %s: bad magic %q, want %q (not a GGUF file)", name, got, Magic)
	}
	r.off = 4
	ver, err := r.u32()
	if err != nil {
		return nil, err
	}
	if ver != 2 && ver != 3 {
		return nil, fmt.Errorf("gguf %s: unsupported version %d (weft reads versions 2 and 3)", name, ver)
	}
	nt, err := r.u64()
	if err != nil {
		return nil, err
	}
	nkv, err := r.u64()
	if err != nil {
		return nil, err
	}
	// Each KV takes at least 8+4 bytes, each tensor info 8+4+4+8.
	if err := r.checkCount(nkv, 12); err != nil {
		return nil, fmt.Errorf("metadata count: %w", err)
	}
	g := &File{Path: name, Version: ver, Meta: Metadata{}, index: map[string]int{}, data: data}
	for i := uint64(0); i < nkv; i++ {
		key, err := r.str()
		if err != nil {
			return nil, fmt.Errorf("metadata entry %d key: %w", i, err)
		}
		t, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, err)
		}
		var v any
		if t == TypeArray {
			v, err = r.array()
		} else {
			v, err = r.scalar(t)
		}
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, err)
		}
		if _, dup := g.Meta[key]; dup {
			return nil, fmt.Errorf("gguf %s: duplicate metadata key %q", name, key)
		}
		g.Meta[key] = v
		g.Keys = append(g.Keys, key)
	}
	g.Alignment = DefaultAlignment
	if a, ok := g.Meta.Int("general.alignment"); ok {
		if a <= 0 || a&(a-1) != 0 || a > 1<<20 {
			return nil, fmt.Errorf("gguf %s: general.alignment %d is not a power of two", name, a)
		}
		g.Alignment = uint64(a)
	}
	if err := r.checkCount(nt, 24); err != nil {
		return nil, fmt.Errorf("tensor count: %w", err)
	}
	g.Tensors = make([]TensorInfo, 0, nt)
	for i := uint64(0); i < nt; i++ {
		tn, err := r.str()
		if err != nil {
			return nil, fmt.Errorf("tensor info %d: %w", i, err)
		}
		nd, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", tn, err)
		}
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("gguf %s: tensor %q has %d dimensions (1 to 4 allowed)", name, tn, nd)
		}
		ne := make([]uint64, nd)
		elems := uint64(1)
		for d := range ne {
			if ne[d], err = r.u64(); err != nil {
				return nil, fmt.Errorf("tensor %q: %w", tn, err)
			}
			if ne[d] == 0 || ne[d] > 1<<40 || elems > (1<<48)/ne[d] {
				return nil, fmt.Errorf("gguf %s: tensor %q has bad dimension %d", name, tn, ne[d])
			}
			elems *= ne[d]
		}
		dt, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", tn, err)
		}
		off, err := r.u64()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", tn, err)
		}
		d := tensor.DType(dt)
		if !d.Known() {
			return nil, fmt.Errorf("gguf %s: tensor %q has unknown type %d", name, tn, dt)
		}
		if ne[0]%uint64(d.BlockSize()) != 0 {
			return nil, fmt.Errorf("gguf %s: tensor %q: row of %d elements is not a multiple of %s's block size %d", name, tn, ne[0], d, d.BlockSize())
		}
		shape := make([]int, nd)
		for k := range ne {
			shape[int(nd)-1-k] = int(ne[k])
		}
		if _, dup := g.index[tn]; dup {
			return nil, fmt.Errorf("gguf %s: duplicate tensor %q", name, tn)
		}
		g.index[tn] = len(g.Tensors)
		g.Tensors = append(g.Tensors, TensorInfo{Name: tn, DType: d, Shape: shape, Offset: off,
			Size: elems / uint64(d.BlockSize()) * uint64(d.TypeSize())})
	}
	g.dataOff = (r.off + g.Alignment - 1) / g.Alignment * g.Alignment
	fileLen := uint64(len(data))
	for _, ti := range g.Tensors {
		if ti.Offset%g.Alignment != 0 {
			return nil, fmt.Errorf("gguf %s: tensor %q: offset %d is not aligned to %d", name, ti.Name, ti.Offset, g.Alignment)
		}
		if g.dataOff > fileLen || ti.Offset > fileLen-g.dataOff || ti.Size > fileLen-g.dataOff-ti.Offset {
			return nil, fmt.Errorf("gguf %s: tensor %q: data [%d, %d) runs past the end of the file (%d bytes; truncated?)",
				name, ti.Name, g.dataOff+ti.Offset, g.dataOff+ti.Offset+ti.Size, fileLen)
		}
	}
	return g, nil
}
