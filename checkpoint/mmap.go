package checkpoint

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapping is a read-only memory map of a whole file.
type mapping struct {
	data []byte // nil for an empty file
}

// mapFile maps path read-only. An empty file gives an empty mapping.
func mapFile(path string) (*mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	size := st.Size()
	if size == 0 {
		return &mapping{}, nil
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("%s: %d bytes is too large to map", path, size)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return &mapping{data: data}, nil
}

// close unmaps the file; it is safe to call twice.
func (m *mapping) close() error {
	if m == nil || m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	m.data = nil
	return err
}
