package plugins

import "syscall"

// sysProcAttr puts a plugin in its own process group (so Close can kill
// whatever it started) and has the kernel SIGKILL it when the thread that
// started it exits: the host's spawner thread, which lives until Close.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) {
	if pid > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}
