package shm

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reserve sizes f, allocating its pages now: on tmpfs a lazily allocated
// page that finds the file system full raises SIGBUS when touched, while
// fallocate reports ENOSPC up front.
func reserve(f *os.File, size int) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, int64(size))
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(int64(size))
	}
	return err
}
