//go:build arm64 && !noasm

#include "textflag.h"
#include "neon_arm64.h"

// F32, F16 and BF16 matrix-vector kernels for arm64 NEON.
//
// func gemv4F32NEON(w *byte, ldw uintptr, x *float32, n int, y *[4]float32)
//
// sets y[r] = Σ_i w_r[i]·x[i] for 4 rows ldw bytes apart from w, over n
// values (a positive multiple of 8). Each row keeps two chains of 4 lanes
// (FMLA), added at the end; F16 weights widen by FCVTL, BF16 by shifting
// them into the high half of each float32 (ZIP with zero).
//
// Registers: R0..R3 the rows, R4 x, R5 values left, R6 y; V0..V7 the
// rows' chains (row r in V2r, V2r+1); V16, V17 x; V18..V25 the widened
// weights; V26..V29 scratch; V30 zero.

#define WIDEN_F32(rp, Vlo, Vhi, lo, hi, Vt, t) \
	VLD1.P 32(rp), [Vlo.S4, Vhi.S4]

#define WIDEN_F16(rp, Vlo, Vhi, lo, hi, Vt, t) \
	VLD1.P 16(rp), [Vt.H8] \
	FCVTL(lo, t) \
	FCVTL2(hi, t)

#define WIDEN_BF16(rp, Vlo, Vhi, lo, hi, Vt, t) \
	VLD1.P 16(rp), [Vt.H8] \
	VZIP1 Vt.H8, V30.H8, Vlo.H8 \
	VZIP2 Vt.H8, V30.H8, Vhi.H8

#define GEMV4F(WIDEN) \
	MOVD w+0(FP), R0 \
	MOVD ldw+8(FP), R7 \
	MOVD x+16(FP), R4 \
	MOVD n+24(FP), R5 \
	MOVD y+32(FP), R6 \
	ADD R7, R0, R1 \
	ADD R7, R1, R2 \
	ADD R7, R2, R3 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V0.B16, V0.B16, V0.B16 \
	VEOR V1.B16, V1.B16, V1.B16 \
	VEOR V2.B16, V2.B16, V2.B16 \
	VEOR V3.B16, V3.B16, V3.B16 \
	VEOR V4.B16, V4.B16, V4.B16 \
	VEOR V5.B16, V5.B16, V5.B16 \
	VEOR V6.B16, V6.B16, V6.B16 \
	VEOR V7.B16, V7.B16, V7.B16 \
loop: \
	VLD1.P 32(R4), [V16.S4, V17.S4] \
	WIDEN(R0, V18, V19, 18, 19, V26, 26) \
	WIDEN(R1, V20, V21, 20, 21, V27, 27) \
	WIDEN(R2, V22, V23, 22, 23, V28, 28) \
	WIDEN(R3, V24, V25, 24, 25, V29, 29) \
	VFMLA V18.S4, V16.S4, V0.S4 \
	VFMLA V19.S4, V17.S4, V1.S4 \
	VFMLA V20.S4, V16.S4, V2.S4 \
	VFMLA V21.S4, V17.S4, V3.S4 \
	VFMLA V22.S4, V16.S4, V4.S4 \
	VFMLA V23.S4, V17.S4, V5.S4 \
	VFMLA V24.S4, V16.S4, V6.S4 \
	VFMLA V25.S4, V17.S4, V7.S4 \
	SUB $8, R5 \
	CBNZ R5, loop \
	FADD(0, 0, 1) \
	FADD(2, 2, 3) \
	FADD(4, 4, 5) \
	FADD(6, 6, 7) \
	FADDP(8, 0, 2) \
	FADDP(9, 4, 6) \
	FADDP(8, 8, 9) \
	VST1 [V8.S4], (R6) \
	RET

TEXT ·gemv4F32NEON(SB), NOSPLIT, $0-40
	GEMV4F(WIDEN_F32)

TEXT ·gemv4F16NEON(SB), NOSPLIT, $0-40
	GEMV4F(WIDEN_F16)

TEXT ·gemv4BF16NEON(SB), NOSPLIT, $0-40
	GEMV4F(WIDEN_BF16)
