//go:build amd64 && !noasm && !linux

package cpu

// amxPermitted reports false: AMX is used only where the permission
// protocol is known (Linux).
func amxPermitted() bool { return false }
