package checkpoint

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/weftrun/weft/tensor"
)

// maxSafetensorsHeader bounds the JSON header, as the reference
// implementation does (100 MB).
const maxSafetensorsHeader = 100_000_000

// safetensorsDTypes maps the dtype strings of safetensors headers that have
// a tensor.DType.
var safetensorsDTypes = map[string]tensor.DType{
	"F64": tensor.F64, "F32": tensor.F32, "F16": tensor.F16, "BF16": tensor.BF16,
	"I64": tensor.I64, "I32": tensor.I32, "I16": tensor.I16, "I8": tensor.I8,
}

// safetensorsUnsupported lists valid safetensors dtypes weft has no type for.
var safetensorsUnsupported = map[string]bool{
	"BOOL": true, "U8": true, "U16": true, "U32": true, "U64": true,
	"F8_E4M3": true, "F8_E5M2": true, "F8_E8M0": true, "F6_E2M3": true, "F6_E3M2": true, "F4": true,
}

// stTensor is one entry of a safetensors header.
type stTensor struct {
	name       string
	dtype      tensor.DType
	shape      []int
	begin, end int64 // relative to the start of the data section
}

// parseSafetensorsHeader parses a safetensors JSON header describing
// dataLen bytes of tensor data. It returns the tensors in data order and
// the __metadata__ strings. Following the reference implementation, the
// tensors must tile the data exactly: no gaps, no overlaps, no bytes left
// over.
func parseSafetensorsHeader(hdr []byte, dataLen int64) ([]stTensor, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("header is not a JSON object")
	}
	var (
		out  []stTensor
		meta map[string]string
		seen = map[string]bool{}
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("header: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("header: key %v is not a string", tok)
		}
		if seen[name] {
			return nil, nil, fmt.Errorf("header: duplicate entry %q", name)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&meta); err != nil {
				return nil, nil, fmt.Errorf("header: __metadata__ must map strings to strings: %w", err)
			}
			continue
		}
		var e struct {
			DType       *string  `json:"dtype"`
			Shape       *[]int64 `json:"shape"`
			DataOffsets *[]int64 `json:"data_offsets"`
		}
		if err := dec.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("header: tensor %q: %w", name, err)
		}
		if e.DType == nil || e.Shape == nil || e.DataOffsets == nil {
			return nil, nil, fmt.Errorf("header: tensor %q: needs dtype, shape and data_offsets", name)
		}
		dt, ok := safetensorsDTypes[*e.DType]
		if !ok {
			if safetensorsUnsupported[*e.DType] {
				return nil, nil, fmt.Errorf("header: tensor %q: dtype %s is not supported by weft", name, *e.DType)
			}
			return nil, nil, fmt.Errorf("header: tensor %q: unknown dtype %q", name, *e.DType)
		}
		if len(*e.DataOffsets) != 2 {
			return nil, nil, fmt.Errorf("header: tensor %q: data_offsets has %d numbers, want 2", name, len(*e.DataOffsets))
		}
		begin, end := (*e.DataOffsets)[0], (*e.DataOffsets)[1]
		if begin < 0 || end < begin {
			return nil, nil, fmt.Errorf("header: tensor %q: bad data_offsets [%d, %d]", name, begin, end)
		}
		n, err := checkedElems(*e.Shape, math.MaxInt64/int64(dt.TypeSize()))
		if err != nil {
			return nil, nil, fmt.Errorf("header: tensor %q: %w", name, err)
		}
		if n*int64(dt.TypeSize()) != end-begin {
			return nil, nil, fmt.Errorf("header: tensor %q: shape %v of %s takes %d bytes but data_offsets [%d, %d] hold %d",
				name, *e.Shape, *e.DType, n*int64(dt.TypeSize()), begin, end, end-begin)
		}
		shape := make([]int, len(*e.Shape))
		for i, d := range *e.Shape {
			shape[i] = int(d)
		}
		out = append(out, stTensor{name: name, dtype: dt, shape: shape, begin: begin, end: end})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("header: data after the JSON object")
	}
	slices.SortStableFunc(out, func(a, b stTensor) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end))
	})
	var pos int64
	for _, t := range out {
		if t.end > dataLen {
			return nil, nil, fmt.Errorf("tensor %q: data [%d, %d) runs past the end of the file's %d data bytes (truncated?)", t.name, t.begin, t.end, dataLen)
		}
		if t.begin != pos {
			if t.begin < pos {
				return nil, nil, fmt.Errorf("tensor %q: data [%d, %d) overlaps the tensor before it", t.name, t.begin, t.end)
			}
			return nil, nil, fmt.Errorf("tensor %q: data starts at %d, leaving a gap after byte %d", t.name, t.begin, pos)
		}
		pos = t.end
	}
	if pos != dataLen {
		return nil, nil, fmt.Errorf("%d bytes after the last tensor's data", dataLen-pos)
	}
	return out, meta, nil
}

// safetensors is a Checkpoint over one memory-mapped safetensors file.
type safetensors struct {
	path   string
	m      *mapping // nil when parsed from memory
	data   []byte   // the data section
	meta   map[string]any
	tab    table
	spans  [][2]int64
	closed bool
}

// OpenSafetensors opens one safetensors file: an 8-byte little-endian
// header length, a JSON header and the tensor data, which is mapped and
// handed out as views. Meta holds the header's __metadata__ strings. The
// tensors are listed in data order.
//
// A view's Data is aligned to its element size only if the writer aligned
// the data section, as the reference writer does (8 bytes).
func OpenSafetensors(path string) (Checkpoint, error) {
	m, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	c, err := parseSafetensors(path, m.data)
	if err != nil {
		m.close()
		return nil, err
	}
	c.m = m
	return c, nil
}

// parseSafetensors parses a whole safetensors file held in data.
func parseSafetensors(path string, data []byte) (*safetensors, error) {
	size := int64(len(data))
	if size < 8 {
		return nil, fmt.Errorf("safetensors %s: file is %d bytes, too short for the header length", path, size)
	}
	n := binary.LittleEndian.Uint64(data)
	if n > maxSafetensorsHeader {
		return nil, fmt.Errorf("safetensors %s: header length %d is over the %d-byte limit (not a safetensors file?)", path, n, maxSafetensorsHeader)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("safetensors %s: header length %d runs past the end of the %d-byte file (truncated?)", path, n, size)
	}
	hdr := data[8 : 8+n]
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, fmt.Errorf("safetensors %s: header does not start with '{'", path)
	}
	body := data[8+n:]
	ts, meta, err := parseSafetensorsHeader(hdr, int64(len(body)))
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	c := &safetensors{path: path, data: body, meta: make(map[string]any, len(meta))}
	for k, v := range meta {
		c.meta[k] = v
	}
	for _, t := range ts {
		c.tab.add(Info{Name: t.name, DType: t.dtype, Shape: t.shape})
		c.spans = append(c.spans, [2]int64{t.begin, t.end})
	}
	return c, nil
}

func (c *safetensors) Path() string         { return c.path }
func (c *safetensors) Format() string       { return FormatSafetensors }
func (c *safetensors) Arch() string         { return "" }
func (c *safetensors) Meta() map[string]any { return c.meta }
func (c *safetensors) Infos() []Info        { return cloneInfos(c.tab.infos) }

func (c *safetensors) Tensor(name string) (*tensor.Tensor, error) {
	if c.closed {
		return nil, fmt.Errorf("safetensors %s: tensor %q: %w", c.path, name, ErrClosed)
	}
	i, ok := c.tab.lookup(name)
	if !ok {
		return nil, fmt.Errorf("safetensors %s: no tensor %q", c.path, name)
	}
	inf, sp := c.tab.infos[i], c.spans[i]
	return &tensor.Tensor{Name: name, DType: inf.DType, Shape: append([]int(nil), inf.Shape...), Data: c.data[sp[0]:sp[1]:sp[1]]}, nil
}

func (c *safetensors) Close() error {
	c.closed = true
	c.data = nil
	return c.m.close()
}
