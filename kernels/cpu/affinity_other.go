//go:build !linux

package cpu

import "errors"

// PinThread is not supported here: threads stay where the OS puts them.
func PinThread(cpus []int) error { return errors.New("pinning threads needs Linux") }

// ThreadCPUs is not supported here.
func ThreadCPUs() ([]int, error) { return nil, errors.New("thread affinity needs Linux") }
