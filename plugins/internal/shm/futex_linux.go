package shm

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ChannelsSupported reports whether this platform has futex doorbells.
const ChannelsSupported = true

const (
	futexWaitOp = 0 // FUTEX_WAIT: shared, not FUTEX_PRIVATE_FLAG
	futexWakeOp = 1 // FUTEX_WAKE
)

func futexWait(addr *uint32, val uint32, d time.Duration) {
	var ts *unix.Timespec
	if d > 0 {
		t := unix.NsecToTimespec(d.Nanoseconds())
		ts = &t
	}
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
}

func futexWake(addr *uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp, 1<<30, 0, 0, 0)
}
