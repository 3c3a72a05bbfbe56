//go:build !linux

package shm

import "time"

// ChannelsSupported reports whether this platform has futex doorbells.
const ChannelsSupported = false

func futexWait(addr *uint32, val uint32, d time.Duration) {
	if d <= 0 || d > time.Millisecond {
		d = time.Millisecond
	}
	time.Sleep(d)
}

func futexWake(addr *uint32) {}
