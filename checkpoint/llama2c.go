package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weftrun/weft/tensor"
)

// llama2cMagic opens the files of llama2.c's newer exporter (version 1 and
// up: "ak42" as a little-endian uint32), which weft does not read.
const llama2cMagic = "24ka"

// llama2cHeaderSize is the size of the legacy llama2.c header: 7 int32.
const llama2cHeaderSize = 28

// llama2cHeader is the header of a legacy llama2.c checkpoint (the format
// of run.c and of export.py's --version 0).
type llama2cHeader struct {
	dim, hidden, layers, heads, kvHeads, vocab, seqLen int64
	shared                                             bool // vocab_size > 0: the classifier is the token embedding
}

// parseLlama2CHeader reads and sanity-checks the 28-byte header.
func parseLlama2CHeader(b []byte) (llama2cHeader, error) {
	if len(b) < llama2cHeaderSize {
		return llama2cHeader{}, fmt.Errorf("%d bytes is too short for the %d-byte header", len(b), llama2cHeaderSize)
	}
	var v [7]int64
	for i := range v {
		v[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	h := llama2cHeader{dim: v[0], hidden: v[1], layers: v[2], heads: v[3], kvHeads: v[4], vocab: v[5], seqLen: v[6], shared: v[5] > 0}
	if h.vocab < 0 {
		h.vocab = -h.vocab
	}
	// The bounds are far above any llama2.c model; they keep the size
	// arithmetic below from overflowing and reject random bytes.
	check := []struct {
		name   string
		v, max int64
	}{
		{"dim", h.dim, 1 << 16}, {"hidden_dim", h.hidden, 1 << 18}, {"n_layers", h.layers, 1 << 10},
		{"n_heads", h.heads, 1 << 10}, {"n_kv_heads", h.kvHeads, 1 << 10}, {"vocab_size", h.vocab, 1 << 22},
		{"seq_len", h.seqLen, 1 << 22},
	}
	for _, c := range check {
		if c.v <= 0 || c.v > c.max {
			return h, fmt.Errorf("header field %s = %d is out of range [1, %d]", c.name, c.v, c.max)
		}
	}
	if h.dim%h.heads != 0 {
		return h, fmt.Errorf("header: dim %d is not a multiple of n_heads %d", h.dim, h.heads)
	}
	if h.kvHeads > h.heads || h.heads%h.kvHeads != 0 {
		return h, fmt.Errorf("header: n_heads %d is not a multiple of n_kv_heads %d", h.heads, h.kvHeads)
	}
	return h, nil
}

func (h llama2cHeader) kvDim() int64    { return h.dim * h.kvHeads / h.heads }
func (h llama2cHeader) headSize() int64 { return h.dim / h.heads }

// llama2cSection is one stacked run of float32s in the file: either a single
// tensor or the same tensor of every layer back to back.
type llama2cSection struct {
	name     string  // tensor name; "%d" is replaced by the layer
	perLayer bool    // one tensor per layer
	shape    []int64 // shape of one tensor
	skip     bool    // not exposed (freq_cis)
}

func (h llama2cHeader) sections() []llama2cSection {
	L := func(name string, shape ...int64) llama2cSection {
		return llama2cSection{name: name, perLayer: true, shape: shape}
	}
	// run.c skips seq_len*head_size/2 floats twice, computed left to right.
	freq := h.seqLen * h.headSize() / 2
	s := []llama2cSection{
		{name: "tok_embeddings.weight", shape: []int64{h.vocab, h.dim}},
		L("layers.%d.attention_norm.weight", h.dim),
		L("layers.%d.attention.wq.weight", h.dim, h.dim),
		L("layers.%d.attention.wk.weight", h.kvDim(), h.dim),
		L("layers.%d.attention.wv.weight", h.kvDim(), h.dim),
		L("layers.%d.attention.wo.weight", h.dim, h.dim),
		L("layers.%d.ffn_norm.weight", h.dim),
		L("layers.%d.feed_forward.w1.weight", h.hidden, h.dim),
		L("layers.%d.feed_forward.w2.weight", h.dim, h.hidden),
		L("layers.%d.feed_forward.w3.weight", h.hidden, h.dim),
		{name: "norm.weight", shape: []int64{h.dim}},
		{name: "freq_cis_real", shape: []int64{freq}, skip: true},
		{name: "freq_cis_imag", shape: []int64{freq}, skip: true},
	}
	if !h.shared {
		s = append(s, llama2cSection{name: "output.weight", shape: []int64{h.vocab, h.dim}})
	}
	return s
}

// fileSize returns the size the header implies.
func (h llama2cHeader) fileSize() (int64, error) {
	size := int64(llama2cHeaderSize)
	for _, s := range h.sections() {
		n, err := checkedElems(s.shape, math.MaxInt64/8)
		if err != nil {
			return 0, err
		}
		if s.perLayer {
			n *= h.layers
		}
		size += 4 * n
	}
	return size, nil
}

// llama2c is a Checkpoint over a memory-mapped llama2.c file.
type llama2c struct {
	path   string
	m      *mapping // nil when parsed from memory
	data   []byte
	meta   map[string]any
	tab    table
	offs   []int64 // byte offset of each tensor
	closed bool
}

// OpenLlama2C opens a legacy llama2.c checkpoint (run.c's format): a header
// of 7 little-endian int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a negative vocab_size means an unshared classifier
// follows the other weights) and then float32 tensors.
//
// Meta holds the header fields as ints under dim, hidden_dim, n_layers,
// n_heads, n_kv_heads, vocab_size (made positive) and seq_len, and
// shared_classifier (bool). Tensors carry Meta's PyTorch llama names
// (tok_embeddings.weight, layers.{i}.attention.wq.weight, ...; see
// docs/contracts.md) and are views of the mapped file. The weights are in
// llama2.c's layout: RoPE rotates adjacent pairs, as in GGUF, and no
// permutation is applied. The freq_cis tables are not exposed.
func OpenLlama2C(path string) (Checkpoint, error) {
	m, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("llama2c: %w", err)
	}
	c, err := newLlama2C(path, m.data)
	if err != nil {
		m.close()
		return nil, err
	}
	c.m = m
	return c, nil
}

func newLlama2C(path string, data []byte) (*llama2c, error) {
	if len(data) >= 8 && string(data[:4]) == llama2cMagic {
		return nil, fmt.Errorf("llama2c %s: export version %d (magic \"ak42\") is not supported; weft reads the legacy version 0 format (export.py --version 0)",
			path, int32(binary.LittleEndian.Uint32(data[4:])))
	}
	h, err := parseLlama2CHeader(data)
	if err != nil {
		return nil, fmt.Errorf("llama2c %s: %w", path, err)
	}
	size := int64(len(data))
	want, err := h.fileSize()
	if err != nil {
		return nil, fmt.Errorf("llama2c %s: %w", path, err)
	}
	c := &llama2c{path: path, data: data, meta: map[string]any{
		"dim": int(h.dim), "hidden_dim": int(h.hidden), "n_layers": int(h.layers), "n_heads": int(h.heads),
		"n_kv_heads": int(h.kvHeads), "vocab_size": int(h.vocab), "seq_len": int(h.seqLen),
		"shared_classifier": h.shared,
	}}
	off := int64(llama2cHeaderSize)
	for _, s := range h.sections() {
		n, _ := checkedElems(s.shape, math.MaxInt64/8) // checked by fileSize
		layers := int64(1)
		if s.perLayer {
			layers = h.layers
		}
		for l := int64(0); l < layers; l++ {
			name := s.name
			if s.perLayer {
				name = fmt.Sprintf(s.name, l)
			}
			end := off + 4*n
			if end > size {
				return nil, fmt.Errorf("llama2c %s: file is %d bytes but tensor %q needs bytes [%d, %d) (truncated? the header implies %d bytes)",
					path, size, name, off, end, want)
			}
			if !s.skip {
				shape := make([]int, len(s.shape))
				for i, d := range s.shape {
					shape[i] = int(d)
				}
				c.tab.add(Info{Name: name, DType: tensor.F32, Shape: shape})
				c.offs = append(c.offs, off)
			}
			off = end
		}
	}
	if off != size {
		extra := size - off
		if h.shared && extra == 4*h.vocab*h.dim {
			return nil, fmt.Errorf("llama2c %s: %d trailing bytes, the size of a classifier, but vocab_size %d is positive (shared classifier); a separate classifier needs a negative vocab_size",
				path, extra, h.vocab)
		}
		return nil, fmt.Errorf("llama2c %s: %d trailing bytes after the last tensor (file is %d bytes, the header implies %d)", path, extra, size, off)
	}
	return c, nil
}

func (c *llama2c) Path() string         { return c.path }
func (c *llama2c) Format() string       { return FormatLlama2C }
func (c *llama2c) Arch() string         { return "llama" }
func (c *llama2c) Meta() map[string]any { return c.meta }
func (c *llama2c) Infos() []Info        { return cloneInfos(c.tab.infos) }

func (c *llama2c) Tensor(name string) (*tensor.Tensor, error) {
	if c.closed {
		return nil, fmt.Errorf("llama2c %s: tensor %q: %w", c.path, name, ErrClosed)
	}
	i, ok := c.tab.lookup(name)
	if !ok {
		return nil, fmt.Errorf("llama2c %s: no tensor %q", c.path, name)
	}
	inf := c.tab.infos[i]
	n := int64(4 * tensor.NumElems(inf.Shape))
	off := c.offs[i]
	return &tensor.Tensor{Name: name, DType: tensor.F32, Shape: append([]int(nil), inf.Shape...), Data: c.data[off : off+n : off+n]}, nil
}

func (c *llama2c) Close() error {
	c.closed = true
	c.data = nil
	return c.m.close()
}
