package sdk

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// setDeathSignal asks the kernel to SIGKILL this process when the thread
// that started it exits (the engine starts plugins from a thread that
// lives as long as it does).
func setDeathSignal() {
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}

// redirectStdout keeps the real standard output for go-plugin's handshake
// line only (as os.Stdout, which go-plugin then replaces with a pipe to the
// engine's log) and points file descriptor 1 at standard error, so that
// nothing else the process writes there can corrupt the protocol.
func redirectStdout() error {
	hs, err := unix.Dup(1)
	if err != nil {
		return fmt.Errorf("dup stdout: %w", err)
	}
	unix.CloseOnExec(hs)
	if err := unix.Dup3(2, 1, 0); err != nil {
		return fmt.Errorf("redirect stdout: %w", err)
	}
	os.Stdout = os.NewFile(uintptr(hs), "/dev/stdout")
	return nil
}
