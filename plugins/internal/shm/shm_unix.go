//go:build unix

package shm

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported reports whether segments work on this platform.
const Supported = true

func (s *Segment) resize(size int) error {
	if err := reserve(s.f, size); err != nil {
		return fmt.Errorf("%s: reserve %d bytes: %w", s.path, size, err)
	}
	data, err := unix.Mmap(int(s.f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("%s: mmap: %w", s.path, err)
	}
	s.data = data
	return nil
}

func (s *Segment) unmap() error {
	if s.data == nil {
		return nil
	}
	err := unix.Munmap(s.data)
	s.data = nil
	return err
}

func mapFile(path string, size int, readOnly bool) ([]byte, error) {
	flag, prot := os.O_RDWR, unix.PROT_READ|unix.PROT_WRITE
	if readOnly {
		flag, prot = os.O_RDONLY, unix.PROT_READ
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < int64(size) {
		return nil, fmt.Errorf("file has %d bytes, want %d", st.Size(), size)
	}
	if size <= 0 {
		return nil, fmt.Errorf("size %d", size)
	}
	return unix.Mmap(int(f.Fd()), 0, size, prot, unix.MAP_SHARED)
}

func unmap(b []byte) error { return unix.Munmap(b) }

func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
