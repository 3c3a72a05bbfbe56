package cpu

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// PinThread locks the calling goroutine to its OS thread and restricts
// that thread to the given CPUs (a NUMA node's, so that its memory
// accesses stay local).
func PinThread(cpus []int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin thread to CPUs %v: %w", cpus, err)
	}
	return nil
}

// ThreadCPUs returns the CPUs the calling thread may run on.
func ThreadCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var out []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}
