package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/weftrun/weft/tensor"
)

// maxPickle bounds the size of a checkpoint's pickle (not its tensor data).
const maxPickle = 256 << 20

// legacyTorchMagic is the first pickle of torch's pre-1.6 format, an 80-bit
// integer, as pickled: LONG1, 10 bytes, little-endian.
var legacyTorchMagic = []byte{0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19}

func isLegacyTorch(head []byte) bool {
	return len(head) >= 2+len(legacyTorchMagic) && head[0] == opProto && bytes.Equal(head[2:2+len(legacyTorchMagic)], legacyTorchMagic)
}

// ptStorage is the bytes behind one torch storage.
type ptStorage struct {
	typ   *pyGlobal
	numel int64
	name  string    // archive entry, for errors
	view  []byte    // stored (uncompressed) data: a view of the mapping
	file  *zip.File // deflated data, inflated on first use
	err   error     // why the data is unusable, reported with the tensor's name
}

// ptTensor is where one tensor's elements lie in its storage.
type ptTensor struct {
	storage *ptStorage
	elem    int64
	offset  int64   // in elements
	size    []int64 // shape
	stride  []int64 // in elements
	contig  bool
}

// pytorch is a Checkpoint over a torch.save file.
type pytorch struct {
	path    string
	m       *mapping // nil when parsed from memory
	size    int64    // file size
	meta    map[string]any
	tab     table
	tensors []ptTensor

	mu       sync.Mutex
	inflated map[*ptStorage][]byte
	closed   bool
}

// OpenPyTorch opens a checkpoint written by torch.save: the zip archive of
// torch 1.6 and later (<name>/data.pkl, <name>/data/<key>, ...) or the
// older single-stream format. It reads state dicts: the pickle's top-level
// dict, whose tensor values become the checkpoint's tensors, in the dict's
// order. Nested dicts are flattened with dotted names ({"model": {"w": t}}
// gives "model.w"); values that are neither tensors nor dicts are ignored.
// Meta is empty.
//
// The pickle is read by a restricted unpickler that runs nothing: it knows
// collections.OrderedDict, torch._utils._rebuild_tensor(_v2),
// torch._utils._rebuild_parameter(_with_state), the torch.*Storage types and
// the torch dtypes, and refuses any other global with an error naming it.
//
// Uncompressed archive entries, which torch writes, are mapped and tensors
// are views of them. A deflated entry is inflated into memory on first use
// and kept. A tensor whose strides are not row-major is gathered into a
// fresh buffer on every call to Tensor.
func OpenPyTorch(path string) (Checkpoint, error) {
	m, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch: %w", err)
	}
	c, err := parsePyTorch(path, m.data)
	if err != nil {
		m.close()
		return nil, err
	}
	c.m = m
	return c, nil
}

func parsePyTorch(path string, data []byte) (*pytorch, error) {
	if isLegacyTorch(data) {
		return parseLegacyTorch(path, data)
	}
	if len(data) < 4 || (string(data[:4]) != "PK\x03\x04" && string(data[:4]) != "PK\x05\x06") {
		return nil, fmt.Errorf("pytorch %s: neither a zip archive nor a legacy torch.save file", path)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("pytorch %s: %w", path, err)
	}
	var pkl *zip.File
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
		if f.Name == "data.pkl" || (strings.HasSuffix(f.Name, "/data.pkl") && strings.Count(f.Name, "/") == 1) {
			if pkl != nil {
				return nil, fmt.Errorf("pytorch %s: archive holds both %s and %s", path, pkl.Name, f.Name)
			}
			pkl = f
		}
	}
	if pkl == nil {
		return nil, fmt.Errorf("pytorch %s: zip archive without a data.pkl (not a torch.save checkpoint)", path)
	}
	prefix := strings.TrimSuffix(pkl.Name, "data.pkl")
	if bo, ok := files[prefix+"byteorder"]; ok {
		b, err := readEntry(bo, 16, int64(len(data)))
		if err != nil {
			return nil, fmt.Errorf("pytorch %s: %s: %w", path, bo.Name, err)
		}
		if s := strings.TrimSpace(string(b)); s != "little" {
			return nil, fmt.Errorf("pytorch %s: byte order %q is not supported", path, s)
		}
	}
	prog, err := readEntry(pkl, maxPickle, int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: %s: %w", path, pkl.Name, err)
	}
	storages := map[string]*ptStorage{}
	load := func(pid any) (any, error) {
		key, typ, numel, err := parsePersistentID(pid, false)
		if err != nil {
			return nil, err
		}
		if s, ok := storages[key]; ok {
			if s.typ.name != typ.name || s.numel != numel {
				return nil, fmt.Errorf("storage %q is described twice, as %d of %s and as %d of %s", key, s.numel, s.typ, numel, typ)
			}
			return &pyStorage{typ: typ, key: key, numel: numel}, nil
		}
		name := prefix + "data/" + key
		s := &ptStorage{typ: typ, numel: numel, name: name}
		storages[key] = s
		f, ok := files[name]
		if !ok {
			s.err = fmt.Errorf("archive entry %s is missing", name)
			return &pyStorage{typ: typ, key: key, numel: numel}, nil
		}
		if f.Method == zip.Store && f.CompressedSize64 == f.UncompressedSize64 {
			off, err := f.DataOffset()
			switch {
			case err != nil:
				s.err = fmt.Errorf("%s: %w", name, err)
			case off < 0 || f.UncompressedSize64 > uint64(int64(len(data))-off):
				s.err = fmt.Errorf("%s runs past the end of the file (truncated?)", name)
			default:
				s.view = data[off : off+int64(f.UncompressedSize64) : off+int64(f.UncompressedSize64)]
			}
		} else {
			s.file = f
		}
		if s.err == nil {
			s.err = s.checkSize(f.UncompressedSize64)
		}
		return &pyStorage{typ: typ, key: key, numel: numel}, nil
	}
	root, _, err := unpickle(prog, load)
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: %s: %w", path, pkl.Name, err)
	}
	c := &pytorch{path: path, size: int64(len(data)), meta: map[string]any{}}
	if err := c.addTensors(root, storages); err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", path, err)
	}
	return c, nil
}

// checkSize compares a storage's byte count with its element count.
func (s *ptStorage) checkSize(n uint64) error {
	if !s.typ.dtypeOK {
		return nil // refused later, naming the tensor
	}
	elem := uint64(s.typ.dtype.TypeSize())
	if uint64(s.numel) > math.MaxInt64/elem || n != uint64(s.numel)*elem {
		return fmt.Errorf("%s holds %d bytes, but it is a storage of %d %s elements, %d bytes (truncated?)",
			s.name, n, s.numel, s.typ, uint64(s.numel)*elem)
	}
	return nil
}

// parsePersistentID checks a ('storage', type, key, location, numel[,
// view_metadata]) tuple.
func parsePersistentID(pid any, legacy bool) (key string, typ *pyGlobal, numel int64, err error) {
	t, ok := pid.(pyTuple)
	if !ok || len(t) < 5 || len(t) > 6 {
		return "", nil, 0, fmt.Errorf("persistent ID %s, want ('storage', type, key, location, numel)", describe(pid))
	}
	if s, _ := t[0].(string); s != "storage" {
		return "", nil, 0, fmt.Errorf("persistent ID of kind %s, want 'storage'", describe(t[0]))
	}
	typ, ok = t[1].(*pyGlobal)
	if !ok || typ.kind != gStorage {
		return "", nil, 0, fmt.Errorf("persistent ID with storage type %s", describe(t[1]))
	}
	switch k := t[2].(type) {
	case string:
		key = k
	case int64:
		key = strconv.FormatInt(k, 10)
	default:
		return "", nil, 0, fmt.Errorf("persistent ID with key %s", describe(t[2]))
	}
	numel, ok = t[4].(int64)
	if !ok || numel < 0 {
		return "", nil, 0, fmt.Errorf("storage %q: bad element count %s", key, describe(t[4]))
	}
	if len(t) == 6 {
		if _, none := t[5].(pyNone); !none || !legacy {
			return "", nil, 0, fmt.Errorf("storage %q: storage views are not supported", key)
		}
	}
	return key, typ, numel, nil
}

// maxDeflateRatio is above what deflate can reach (about 1032:1), so a
// size claim beyond it is a lie.
const maxDeflateRatio = 1100

// readEntry reads a whole archive entry of at most limit bytes, checking its
// CRC. The sizes the archive claims are checked before anything is allocated.
func readEntry(f *zip.File, limit, fileSize int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%d bytes is over the %d-byte limit", f.UncompressedSize64, limit)
	}
	if f.CompressedSize64 > uint64(fileSize) || f.UncompressedSize64 > f.CompressedSize64*maxDeflateRatio+1024 {
		return nil, fmt.Errorf("claims %d bytes from %d compressed ones", f.UncompressedSize64, f.CompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b := make([]byte, f.UncompressedSize64)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, fmt.Errorf("read %d bytes: %w (truncated?)", len(b), err)
	}
	var one [1]byte
	if n, err := rc.Read(one[:]); n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("more data than the archive's directory says")
		}
		return nil, err
	}
	return b, nil
}

// addTensors walks the unpickled state dict.
func (c *pytorch) addTensors(root any, storages map[string]*ptStorage) error {
	d, ok := root.(*pyDict)
	if !ok {
		return fmt.Errorf("the pickle holds %s, not a state dict", describe(root))
	}
	seen := map[*pyDict]bool{}
	var walk func(d *pyDict, prefix string, depth int) error
	walk = func(d *pyDict, prefix string, depth int) error {
		if seen[d] {
			return fmt.Errorf("dict %q is reached twice (cyclic or shared)", strings.TrimSuffix(prefix, "."))
		}
		if depth > 16 {
			return fmt.Errorf("dicts nested more than 16 deep at %q", strings.TrimSuffix(prefix, "."))
		}
		seen[d] = true
		for i, k := range d.keys {
			var name string
			switch k := k.(type) {
			case string:
				name = prefix + k
			case int64:
				name = prefix + strconv.FormatInt(k, 10)
			default:
				continue
			}
			switch v := d.vals[i].(type) {
			case *pyTensor:
				if err := c.addTensor(name, v, storages); err != nil {
					return err
				}
			case *pyDict:
				if err := walk(v, name+".", depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(d, "", 0)
}

func (c *pytorch) addTensor(name string, v *pyTensor, storages map[string]*ptStorage) error {
	s := storages[v.storage.key]
	if s.err != nil {
		return fmt.Errorf("tensor %q: %w", name, s.err)
	}
	if !s.typ.dtypeOK {
		return fmt.Errorf("tensor %q: storage type %s is not supported", name, s.typ)
	}
	elem := int64(s.typ.dtype.TypeSize())
	numel, err := checkedElems(v.size, math.MaxInt64/elem)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", name, err)
	}
	t := ptTensor{storage: s, elem: elem, offset: v.offset, size: v.size, stride: v.stride, contig: true}
	// Check that the last element lies in the storage, and whether the
	// strides are row-major (dimensions of size 1 may have any stride).
	if numel > 0 {
		last := v.offset
		if last >= s.numel {
			return fmt.Errorf("tensor %q: offset %d is past the end of %s (%d elements)", name, v.offset, s.name, s.numel)
		}
		want := int64(1)
		for i := len(v.size) - 1; i >= 0; i-- {
			if v.size[i] != 1 && v.stride[i] != want {
				t.contig = false
			}
			want *= v.size[i]
			if v.size[i] > 1 && v.stride[i] > 0 {
				if v.size[i]-1 > (s.numel-1-last)/v.stride[i] {
					return fmt.Errorf("tensor %q: shape %v, stride %v at offset %d reaches past the end of %s (%d elements)",
						name, v.size, v.stride, v.offset, s.name, s.numel)
				}
				last += (v.size[i] - 1) * v.stride[i]
			}
		}
	}
	if numel == 0 {
		t.offset, t.contig = 0, true
	}
	shape := make([]int, len(v.size))
	for i, d := range v.size {
		shape[i] = int(d)
	}
	if !c.tab.add(Info{Name: name, DType: s.typ.dtype, Shape: shape}) {
		return fmt.Errorf("tensor %q appears twice", name)
	}
	c.tensors = append(c.tensors, t)
	return nil
}

// storageBytes returns a storage's data, inflating it if need be.
func (c *pytorch) storageBytes(s *ptStorage) ([]byte, error) {
	if s.file == nil {
		return s.view, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.inflated[s]; ok {
		return b, nil
	}
	b, err := readEntry(s.file, math.MaxInt64, c.size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if c.inflated == nil {
		c.inflated = map[*ptStorage][]byte{}
	}
	c.inflated[s] = b
	return b, nil
}

func (c *pytorch) Path() string         { return c.path }
func (c *pytorch) Format() string       { return FormatPyTorch }
func (c *pytorch) Arch() string         { return "" }
func (c *pytorch) Meta() map[string]any { return c.meta }
func (c *pytorch) Infos() []Info        { return cloneInfos(c.tab.infos) }

func (c *pytorch) Tensor(name string) (*tensor.Tensor, error) {
	if c.closed {
		return nil, fmt.Errorf("pytorch %s: tensor %q: %w", c.path, name, ErrClosed)
	}
	i, ok := c.tab.lookup(name)
	if !ok {
		return nil, fmt.Errorf("pytorch %s: no tensor %q", c.path, name)
	}
	inf, t := c.tab.infos[i], c.tensors[i]
	sb, err := c.storageBytes(t.storage)
	if err != nil {
		return nil, fmt.Errorf("pytorch %s: tensor %q: %w", c.path, name, err)
	}
	out := &tensor.Tensor{Name: name, DType: inf.DType, Shape: append([]int(nil), inf.Shape...)}
	n := int64(tensor.NumElems(inf.Shape)) * t.elem
	if t.contig {
		off := t.offset * t.elem
		out.Data = sb[off : off+n : off+n]
		return out, nil
	}
	out.Data = gather(sb, t, n)
	return out, nil
}

// gather copies a strided tensor into row-major order.
func gather(sb []byte, t ptTensor, n int64) []byte {
	dst := make([]byte, n)
	if n == 0 {
		return dst
	}
	idx := make([]int64, len(t.size))
	src := t.offset
	for o := int64(0); o < n; o += t.elem {
		copy(dst[o:o+t.elem], sb[src*t.elem:(src+1)*t.elem])
		// Advance the multi-index, innermost dimension first.
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			src += t.stride[d]
			if idx[d] < t.size[d] {
				break
			}
			src -= idx[d] * t.stride[d]
			idx[d] = 0
		}
	}
	return dst
}

func (c *pytorch) Close() error {
	c.closed = true
	c.mu.Lock()
	c.inflated = nil
	c.mu.Unlock()
	return c.m.close()
}

// parseLegacyTorch reads torch's pre-1.6 format: five pickles back to back
// (magic number, protocol version 1001, system info, the object, the sorted
// storage keys), then each storage as an int64 element count followed by
// its bytes.
func parseLegacyTorch(path string, data []byte) (*pytorch, error) {
	pos := 0
	next := func(what string, load func(any) (any, error)) (any, error) {
		v, n, err := unpickle(data[pos:], load)
		if err != nil {
			return nil, fmt.Errorf("pytorch %s: %s pickle at byte %d: %w", path, what, pos, err)
		}
		pos += n
		return v, nil
	}
	magic, err := next("magic number", nil)
	if err != nil {
		return nil, err
	}
	if m, ok := magic.(*big.Int); !ok || m.Text(16) != "1950a86a20f9469cfc6c" {
		return nil, fmt.Errorf("pytorch %s: bad legacy magic number", path)
	}
	ver, err := next("protocol version", nil)
	if err != nil {
		return nil, err
	}
	if ver != int64(1001) {
		return nil, fmt.Errorf("pytorch %s: legacy protocol version %s, want 1001", path, describe(ver))
	}
	info, err := next("system info", nil)
	if err != nil {
		return nil, err
	}
	if d, ok := info.(*pyDict); ok {
		if i, ok := d.index["little_endian"]; ok && d.vals[i] != true {
			return nil, fmt.Errorf("pytorch %s: big-endian checkpoints are not supported", path)
		}
	}
	storages := map[string]*ptStorage{}
	load := func(pid any) (any, error) {
		key, typ, numel, err := parsePersistentID(pid, true)
		if err != nil {
			return nil, err
		}
		if s, ok := storages[key]; ok && (s.typ.name != typ.name || s.numel != numel) {
			return nil, fmt.Errorf("storage %q is described twice, as %d of %s and as %d of %s", key, s.numel, s.typ, numel, typ)
		}
		storages[key] = &ptStorage{typ: typ, numel: numel, name: "storage " + strconv.Quote(key)}
		return &pyStorage{typ: typ, key: key, numel: numel}, nil
	}
	root, err := next("object", load)
	if err != nil {
		return nil, err
	}
	keysV, err := next("storage keys", nil)
	if err != nil {
		return nil, err
	}
	keys, ok := keysV.(*pyList)
	if !ok {
		return nil, fmt.Errorf("pytorch %s: storage keys are %s, want a list", path, describe(keysV))
	}
	for _, kv := range keys.items {
		key, ok := kv.(string)
		if !ok {
			return nil, fmt.Errorf("pytorch %s: storage key %s is not a string", path, describe(kv))
		}
		s, ok := storages[key]
		if !ok {
			return nil, fmt.Errorf("pytorch %s: storage %q has data but no tensor uses it", path, key)
		}
		if s.view != nil {
			return nil, fmt.Errorf("pytorch %s: storage %q is stored twice", path, key)
		}
		if len(data)-pos < 8 {
			return nil, fmt.Errorf("pytorch %s: storage %q: the file ends at byte %d before its size (truncated?)", path, key, len(data))
		}
		numel := binary.LittleEndian.Uint64(data[pos:])
		pos += 8
		if numel != uint64(s.numel) {
			return nil, fmt.Errorf("pytorch %s: storage %q has %d elements, but the pickle says %d", path, key, numel, s.numel)
		}
		elem := uint64(1) // BoolStorage, ByteStorage
		if s.typ.dtypeOK {
			elem = uint64(s.typ.dtype.TypeSize())
		}
		if numel > uint64(len(data)-pos)/elem {
			return nil, fmt.Errorf("pytorch %s: storage %q of %d %s elements runs past the end of the file (truncated?)", path, key, numel, s.typ)
		}
		n := int(numel * elem)
		s.view = data[pos : pos+n : pos+n]
		if s.view == nil {
			s.view = []byte{}
		}
		pos += n
	}
	for key, s := range storages {
		if s.view == nil {
			return nil, fmt.Errorf("pytorch %s: storage %q has no data", path, key)
		}
	}
	if pos != len(data) {
		return nil, fmt.Errorf("pytorch %s: %d trailing bytes after the last storage", path, len(data)-pos)
	}
	c := &pytorch{path: path, size: int64(len(data)), meta: map[string]any{}}
	if err := c.addTensors(root, storages); err != nil {
		return nil, fmt.Errorf("pytorch %s: %w", path, err)
	}
	return c, nil
}
