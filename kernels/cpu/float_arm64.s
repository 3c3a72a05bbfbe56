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

// func gemv4x2F32NEON(w *byte, ldw uintptr, x *float32, ldx uintptr, n int, y *[8]float32)
//
// is gemv4F32NEON for two tokens (x and x+ldx bytes) sharing each load of
// the weights: y[4t+r] = Σ_i w_r[i]·x_t[i], each output the same two
// 4-lane FMLA chains and the same final additions as gemv4F32NEON's.
//
// Registers: R0..R3 the rows, R4 and R9 the tokens, R5 values left, R6 y;
// V0..V7 token 0's chains (row r in V2r, V2r+1), V8..V15 token 1's;
// V16..V19 the tokens' values; V20..V27 the rows' weights; V28..V31 the
// sums.
TEXT ·gemv4x2F32NEON(SB), NOSPLIT, $0-48
	MOVD w+0(FP), R0
	MOVD ldw+8(FP), R7
	MOVD x+16(FP), R4
	MOVD ldx+24(FP), R8
	MOVD n+32(FP), R5
	MOVD y+40(FP), R6
	ADD R7, R0, R1
	ADD R7, R1, R2
	ADD R7, R2, R3
	ADD R8, R4, R9
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
loop2:
	VLD1.P 32(R4), [V16.S4, V17.S4]
	VLD1.P 32(R9), [V18.S4, V19.S4]
	VLD1.P 32(R0), [V20.S4, V21.S4]
	VLD1.P 32(R1), [V22.S4, V23.S4]
	VLD1.P 32(R2), [V24.S4, V25.S4]
	VLD1.P 32(R3), [V26.S4, V27.S4]
	VFMLA V20.S4, V16.S4, V0.S4
	VFMLA V21.S4, V17.S4, V1.S4
	VFMLA V22.S4, V16.S4, V2.S4
	VFMLA V23.S4, V17.S4, V3.S4
	VFMLA V24.S4, V16.S4, V4.S4
	VFMLA V25.S4, V17.S4, V5.S4
	VFMLA V26.S4, V16.S4, V6.S4
	VFMLA V27.S4, V17.S4, V7.S4
	VFMLA V20.S4, V18.S4, V8.S4
	VFMLA V21.S4, V19.S4, V9.S4
	VFMLA V22.S4, V18.S4, V10.S4
	VFMLA V23.S4, V19.S4, V11.S4
	VFMLA V24.S4, V18.S4, V12.S4
	VFMLA V25.S4, V19.S4, V13.S4
	VFMLA V26.S4, V18.S4, V14.S4
	VFMLA V27.S4, V19.S4, V15.S4
	SUB $8, R5
	CBNZ R5, loop2
	FADD(0, 0, 1)
	FADD(2, 2, 3)
	FADD(4, 4, 5)
	FADD(6, 6, 7)
	FADDP(28, 0, 2)
	FADDP(29, 4, 6)
	FADDP(28, 28, 29)
	FADD(8, 8, 9)
	FADD(10, 10, 11)
	FADD(12, 12, 13)
	FADD(14, 14, 15)
	FADDP(30, 8, 10)
	FADDP(31, 12, 14)
	FADDP(29, 30, 31)
	VST1 [V28.S4, V29.S4], (R6)
	RET

// func f16RowNEON(dst *float32, src *byte, n int)
//
// widens n f16 values (a positive multiple of 8) to float32, exactly
// (FCVTL).
TEXT ·f16RowNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
loopf16:
	VLD1.P 16(R1), [V0.H8]
	FCVTL(1, 0)
	FCVTL2(2, 0)
	VST1.P [V1.S4, V2.S4], 32(R0)
	SUB $8, R2
	CBNZ R2, loopf16
	RET

// func bf16RowNEON(dst *float32, src *byte, n int)
//
// widens n bf16 values (a positive multiple of 8) to float32: each into
// the high half of its float32 (ZIP with zero), exactly.
TEXT ·bf16RowNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
	VEOR V30.B16, V30.B16, V30.B16
loopbf16:
	VLD1.P 16(R1), [V0.H8]
	VZIP1 V0.H8, V30.H8, V1.H8
	VZIP2 V0.H8, V30.H8, V2.H8
	VST1.P [V1.S4, V2.S4], 32(R0)
	SUB $8, R2
	CBNZ R2, loopbf16
	RET

// func f32ToF16NEON(dst *byte, src *float32, n int)
//
// narrows n float32 values (a positive multiple of 8) to f16, rounding to
// nearest even (FCVTN, FCVTN2).
TEXT ·f32ToF16NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
loopn16:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	FCVTN(2, 0)
	FCVTN2(2, 1)
	VST1.P [V2.H8], 16(R0)
	SUB $8, R2
	CBNZ R2, loopn16
	RET
