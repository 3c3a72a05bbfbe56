package sdk

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/weftrun/weft/plugins/internal/wire"
)

// watchParent makes the plugin exit when the engine that started it dies:
// the kernel's parent-death signal where there is one, and a goroutine
// that notices the process being re-parented.
func watchParent() {
	parent := os.Getppid()
	if s := os.Getenv(wire.EnvParentPID); s != "" {
		if pid, err := strconv.Atoi(s); err == nil {
			parent = pid
		}
	}
	setDeathSignal()
	// The engine may have died before the death signal was armed.
	if os.Getppid() != parent {
		fmt.Fprintf(os.Stderr, "weft plugin: engine (pid %d) is gone; exiting\n", parent)
		os.Exit(1)
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for range t.C {
			if os.Getppid() != parent {
				os.Exit(1)
			}
		}
	}()
}
