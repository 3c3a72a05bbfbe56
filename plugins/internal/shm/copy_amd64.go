//go:build !noasm

package shm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// canStream reports whether streamCopy bypasses the caches.
var canStream = cpu.X86.HasAVX2

// streamAVX2 copies n bytes, a positive multiple of 256, to a 32-byte
// aligned dst with non-temporal stores.
//
//go:noescape
func streamAVX2(dst, src *byte, n int)

// streamCopy copies len(src) bytes into dst (at least as long) with
// stores that bypass the caches.
func streamCopy(dst, src []byte) {
	n := len(src)
	if n < 4096 {
		copy(dst, src)
		return
	}
	head := int(-uintptr(unsafe.Pointer(&dst[0])) & 63)
	copy(dst[:head], src[:head])
	body := (n - head) &^ 255
	streamAVX2(&dst[head], &src[head], body)
	copy(dst[head+body:n], src[head+body:n])
}
