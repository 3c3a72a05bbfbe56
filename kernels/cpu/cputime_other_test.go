//go:build !linux

package cpu

// threadCPUTime reports no per-thread CPU time on this system.
func threadCPUTime() int64 { return -1 }
