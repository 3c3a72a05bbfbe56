package cpu

import "syscall"

// threadCPUTime returns the CPU time, in nanoseconds, the calling thread
// has used (lock the goroutine to its thread around a measurement).
func threadCPUTime() int64 {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
