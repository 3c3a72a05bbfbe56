package checkpoint

import (
	"fmt"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/tensor"
)

// ggufCkpt is a Checkpoint over a memory-mapped GGUF file.
type ggufCkpt struct {
	f      *gguf.File
	infos  []Info
	closed bool
}

// OpenGGUF opens a GGUF file (versions 2 and 3). Meta holds the GGUF
// key/values with their GGUF types, so gguf.Metadata(c.Meta()) gives the
// typed getters.
func OpenGGUF(path string) (Checkpoint, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	c := &ggufCkpt{f: f, infos: make([]Info, len(f.Tensors))}
	for i, ti := range f.Tensors {
		c.infos[i] = Info{Name: ti.Name, DType: ti.DType, Shape: ti.Shape}
	}
	return c, nil
}

// Path returns the file's path.
func (c *ggufCkpt) Path() string { return c.f.Path }

// Format returns "gguf".
func (c *ggufCkpt) Format() string { return FormatGGUF }

// Arch returns general.architecture.
func (c *ggufCkpt) Arch() string { return c.f.Architecture() }

// Meta returns the GGUF key/values with their GGUF types (see gguf.Metadata;
// gguf.Metadata(c.Meta()) gives its typed getters).
func (c *ggufCkpt) Meta() map[string]any { return c.f.Meta }

// Infos lists the tensors in the order of the file's tensor table.
func (c *ggufCkpt) Infos() []Info { return cloneInfos(c.infos) }

// Tensor returns a zero-copy view of the named tensor.
func (c *ggufCkpt) Tensor(name string) (*tensor.Tensor, error) {
	if c.closed {
		return nil, fmt.Errorf("checkpoint %s: tensor %q: %w", c.f.Path, name, ErrClosed)
	}
	t, err := c.f.Tensor(name)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return t, nil
}

// Close unmaps the file.
func (c *ggufCkpt) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	return c.f.Close()
}
