//go:build !amd64 || noasm

package shm

// canStream is false: there is no copy loop that bypasses the caches here.
const canStream = false

func streamCopy(dst, src []byte) { copy(dst, src) }
