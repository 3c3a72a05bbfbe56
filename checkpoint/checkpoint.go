// Package checkpoint opens model weights behind one interface, whatever the
// format they were saved in: GGUF, llama2.c, safetensors (one file or
// sharded), PyTorch zip checkpoints (torch.save) and Hugging Face model
// folders holding either.
//
// Tensor data is memory-mapped wherever the format allows it, and Tensor
// returns views into the mapping, never copies. The exceptions are spelled
// out where they happen: deflated entries of a PyTorch zip are inflated into
// memory, and a non-contiguous PyTorch tensor is gathered into a fresh
// buffer.
//
// Shapes follow the package contract: row-major, outermost dimension first.
package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/weftrun/weft/tensor"
)

// Info describes one tensor of a checkpoint.
type Info struct {
	Name  string
	DType tensor.DType
	Shape []int // row-major, outermost first
}

// Checkpoint is an open set of model weights.
//
// Tensor may be called from several goroutines at once. Views it returned
// become invalid after Close; Close must not run concurrently with Tensor.
type Checkpoint interface {
	// Path returns the path the checkpoint was opened from.
	Path() string
	// Format returns "gguf", "llama2c", "safetensors" or "pytorch". A sharded
	// checkpoint or a Hugging Face folder reports the format of its files.
	Format() string
	// Arch returns the model architecture: general.architecture for GGUF,
	// model_type of config.json for a Hugging Face folder, "llama" for
	// llama2.c, and "" when the format does not record one.
	Arch() string
	// Meta returns the format's own metadata (GGUF key/values, config.json,
	// the llama2.c header, safetensors __metadata__). The map is shared:
	// treat it as read-only.
	Meta() map[string]any
	// Infos lists every tensor in file order.
	Infos() []Info
	// Tensor returns the named tensor, a zero-copy view where the format
	// allows it. Its Data must not be written.
	Tensor(name string) (*tensor.Tensor, error)
	// Close releases the files and mappings.
	Close() error
}

// Format names returned by Checkpoint.Format.
const (
	FormatGGUF        = "gguf"
	FormatLlama2C     = "llama2c"
	FormatSafetensors = "safetensors"
	FormatPyTorch     = "pytorch"
)

// ErrUnrecognised is wrapped by Open's error when a file matches no format.
var ErrUnrecognised = errors.New("unrecognised checkpoint format")

// ErrClosed is returned by Tensor after Close.
var ErrClosed = errors.New("checkpoint is closed")

// Open opens a checkpoint, deciding its format from what it finds:
//
//   - a directory is a Hugging Face model folder (see OpenHF);
//   - a file starting with "GGUF" is GGUF;
//   - a zip archive is a PyTorch checkpoint written by torch.save, and a
//     pickle starting with torch's legacy magic number is the pre-1.6 format;
//   - a file named *.index.json is the index of a sharded checkpoint;
//   - a file named *.safetensors, or one whose first 8 bytes are a plausible
//     header length followed by '{', is safetensors;
//   - a file whose first 28 bytes are a plausible llama2.c header is llama2.c,
//     when its size matches that header or its name ends in .bin.
//
// Anything else is an error wrapping ErrUnrecognised that names the file.
func Open(path string) (Checkpoint, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if st.IsDir() {
		return OpenHF(path)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("checkpoint %s: not a regular file or directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	head := make([]byte, 64)
	n, err := io.ReadFull(f, head)
	f.Close()
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	head = head[:n]
	switch sniff(path, head, st.Size()) {
	case FormatGGUF:
		return OpenGGUF(path)
	case FormatPyTorch:
		return OpenPyTorch(path)
	case "index":
		return OpenIndex(path)
	case FormatSafetensors:
		return OpenSafetensors(path)
	case FormatLlama2C:
		return OpenLlama2C(path)
	}
	return nil, fmt.Errorf("checkpoint %s: %w (%d bytes, starting % x)", path, ErrUnrecognised, st.Size(), head[:min(len(head), 8)])
}

// sniff names the format of a file from its name, first bytes and size, or
// returns "".
func sniff(path string, head []byte, size int64) string {
	lower := strings.ToLower(path)
	switch {
	case len(head) >= 4 && string(head[:4]) == "GGUF":
		return FormatGGUF
	case len(head) >= 4 && (string(head[:4]) == "PK\x03\x04" || string(head[:4]) == "PK\x05\x06"):
		return FormatPyTorch
	case isLegacyTorch(head):
		return FormatPyTorch
	case len(head) >= 4 && string(head[:4]) == llama2cMagic:
		return FormatLlama2C // a newer export; OpenLlama2C explains
	case strings.HasSuffix(lower, ".index.json"):
		return "index"
	case strings.HasSuffix(lower, ".safetensors"):
		return FormatSafetensors
	case len(head) > 8 && head[8] == '{':
		n := binary.LittleEndian.Uint64(head)
		if n >= 2 && n <= maxSafetensorsHeader && n <= uint64(size-8) {
			return FormatSafetensors
		}
	}
	if len(head) >= llama2cHeaderSize {
		if h, err := parseLlama2CHeader(head); err == nil {
			if want, err := h.fileSize(); err == nil && (want == size || strings.HasSuffix(lower, ".bin")) {
				return FormatLlama2C
			}
		}
	}
	return ""
}

// table is the bookkeeping shared by the single-file formats: the tensor
// list in file order and a name index into it.
type table struct {
	infos []Info
	index map[string]int
}

// add appends a tensor; it reports false when the name is taken.
func (t *table) add(inf Info) bool {
	if t.index == nil {
		t.index = map[string]int{}
	}
	if _, dup := t.index[inf.Name]; dup {
		return false
	}
	t.index[inf.Name] = len(t.infos)
	t.infos = append(t.infos, inf)
	return true
}

func (t *table) lookup(name string) (int, bool) { i, ok := t.index[name]; return i, ok }

// cloneInfos returns a copy of infos whose shapes do not alias the table's.
func cloneInfos(infos []Info) []Info {
	out := make([]Info, len(infos))
	for i, inf := range infos {
		out[i] = Info{Name: inf.Name, DType: inf.DType, Shape: append([]int(nil), inf.Shape...)}
	}
	return out
}

// checkedElems multiplies the dimensions of shape, failing on a negative
// dimension or when the total would pass limit.
func checkedElems(shape []int64, limit int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension %d in shape %v", d, shape)
		}
		if d != 0 && n > limit/d {
			return 0, fmt.Errorf("shape %v has too many elements", shape)
		}
		n *= d
	}
	return n, nil
}
