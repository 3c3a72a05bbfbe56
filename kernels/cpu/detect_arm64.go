//go:build arm64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

func detectLevel() Level {
	a := &cpu.ARM64
	if !a.HasASIMD {
		return Generic
	}
	if !a.HasASIMDDP {
		return NEON
	}
	if !a.HasI8MM {
		return DotProd
	}
	return I8MM
}
