//go:build unix && !linux

package shm

import "os"

func reserve(f *os.File, size int) error { return f.Truncate(int64(size)) }
