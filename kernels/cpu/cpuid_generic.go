//go:build !amd64 || noasm

package cpu

// pause is the spin-loop hint; a no-op without assembly.
func pause() {}
