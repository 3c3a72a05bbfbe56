//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package progress

// isTerminal reports false: on this system weft does not detect terminals,
// so bars stay silent.
func isTerminal(fd uintptr) bool { return false }
