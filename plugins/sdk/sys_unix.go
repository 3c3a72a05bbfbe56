//go:build unix && !linux

package sdk

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// setDeathSignal has no equivalent here; the re-parenting watch remains.
func setDeathSignal() {}

// redirectStdout: see the Linux version.
func redirectStdout() error {
	hs, err := unix.Dup(1)
	if err != nil {
		return fmt.Errorf("dup stdout: %w", err)
	}
	unix.CloseOnExec(hs)
	if err := unix.Dup2(2, 1); err != nil {
		return fmt.Errorf("redirect stdout: %w", err)
	}
	os.Stdout = os.NewFile(uintptr(hs), "/dev/stdout")
	return nil
}
