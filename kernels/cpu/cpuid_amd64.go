//go:build amd64 && !noasm

package cpu

// cpuid1ecx returns ECX of CPUID leaf 1.
func cpuid1ecx() uint32

// pause executes the PAUSE spin-loop hint.
func pause()

// hasF16C reports the F16C extension (VCVTPH2PS/VCVTPS2PH), which
// golang.org/x/sys/cpu does not expose.
func hasF16C() bool { return cpuid1ecx()&(1<<29) != 0 }
