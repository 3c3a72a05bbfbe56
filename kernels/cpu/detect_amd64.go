//go:build amd64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

func detectLevel() Level {
	x := &cpu.X86
	if !(x.HasAVX2 && x.HasFMA && x.HasOSXSAVE && hasF16C()) {
		return Generic
	}
	if !(x.HasAVX512F && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL) {
		return AVX2
	}
	if !(x.HasAVX512VNNI && x.HasAVX512VBMI && x.HasAVX512GFNI) {
		return AVX512
	}
	if !(x.HasAMXTile && x.HasAMXBF16 && amxPermitted()) {
		return AVX512VNNI
	}
	return AMX
}
