//go:build arm64 && !noasm

#include "textflag.h"
#include "neon_arm64.h"

// Row kernels for arm64 NEON.

// func sumSqLanesNEON(l *[8]float64, x *float32, n int)
//
// sets l[j] to Σ x[i]² over i < n (a positive multiple of 8), i%8 = j, in
// sumSqGo's order: each square rounded to float32 (FMUL), then added to
// its float64 lane (V0 lanes 0, 1; V1 2, 3; V2 4, 5; V3 6, 7).
TEXT ·sumSqLanesNEON(SB), NOSPLIT, $0-24
	MOVD l+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
loop:
	VLD1.P 32(R1), [V4.S4, V5.S4]
	FMUL(4, 4, 4)
	FMUL(5, 5, 5)
	FCVTLD(6, 4)
	FCVTL2D(7, 4)
	FCVTLD(16, 5)
	FCVTL2D(17, 5)
	FADDD(0, 0, 6)
	FADDD(1, 1, 7)
	FADDD(2, 2, 16)
	FADDD(3, 3, 17)
	SUB $8, R2
	CBNZ R2, loop
	VST1 [V0.D2, V1.D2, V2.D2, V3.D2], (R0)
	RET

// func scaleMulNEON(dst, x, w *float32, n int, a float32)
//
// sets dst[i] = x[i]·a·w[i] (two roundings, left to right) for n values,
// a positive multiple of 4.
TEXT ·scaleMulNEON(SB), NOSPLIT, $0-36
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD w+16(FP), R2
	MOVD n+24(FP), R3
	FMOVS a+32(FP), F1
	VDUP V1.S[0], V1.S4
loop:
	VLD1.P 16(R1), [V2.S4]
	VLD1.P 16(R2), [V3.S4]
	FMUL(2, 2, 1)
	FMUL(2, 2, 3)
	VST1.P [V2.S4], 16(R0)
	SUB $4, R3
	CBNZ R3, loop
	RET
