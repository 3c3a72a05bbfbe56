//go:build amd64 && !noasm

// Hand-written: two tiny wrappers (CPUID, PAUSE), nothing to generate.

#include "textflag.h"

// func cpuid1ecx() uint32
TEXT ·cpuid1ecx(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET

// func pause()
TEXT ·pause(SB), NOSPLIT, $0-0
	PAUSE
	RET
