//go:build !amd64 || noasm

package cpu

func (k Kernels) xorRead(b []byte) uint64 { return xorReadGo(b) }
