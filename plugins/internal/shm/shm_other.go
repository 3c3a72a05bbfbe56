//go:build !unix

package shm

// Supported reports whether segments work on this platform.
const Supported = false

func (s *Segment) resize(size int) error { return ErrUnsupported }

func (s *Segment) unmap() error { return nil }

func mapFile(path string, size int, readOnly bool) ([]byte, error) { return nil, ErrUnsupported }

func unmap(b []byte) error { return nil }

func alive(pid int) bool { return true }
