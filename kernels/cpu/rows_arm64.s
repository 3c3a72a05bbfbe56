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

// ggml's vectorised exponential, expf of ggmlmath.go, on 4 lanes: the
// same fused multiply-adds (FMLA; FMLS for fmaf(-n, c, x)), the same
// roundings. The scaling by 2^n is exact but for its one rounding: j·2^(n-c)
// (exact: |n-c| ≤ 66) times 2^c, c = n clamped to [-126, 126], as
// float32(ldexp(j, n)) rounds j·2^n once; lanes with |n| > 192 become 0
// (n < 0) or +Inf.
//
// EXP_CONSTS loads the constants: V16 log2e, V17 0x1.8p23, V18 and V19
// ln2 (high, low), V20..V24 the polynomial's c5..c1, V25 1, V26 192, V27
// 126, V28 -126, V29 +Inf, V30 int32 127.
#define VCONST(bits, V) \
	MOVW $bits, R9 \
	VDUP R9, V.S4

#define EXP_CONSTS \
	VCONST(0x3fb8aa3b, V16) \
	VCONST(0x4b400000, V17) \
	VCONST(0x3f317200, V18) \
	VCONST(0x35bfbe8e, V19) \
	VCONST(0x3c072010, V20) \
	VCONST(0x3d2b9f17, V21) \
	VCONST(0x3e2aaf33, V22) \
	VCONST(0x3efffedb, V23) \
	VCONST(0x3f7ffff6, V24) \
	VCONST(0x3f800000, V25) \
	VCONST(0x43400000, V26) \
	VCONST(0x42fc0000, V27) \
	VCONST(0xc2fc0000, V28) \
	VCONST(0x7f800000, V29) \
	VCONST(127, V30)

// EXPF sets V1 = expf(V0); V2..V8 scratch.
#define EXPF \
	VMOV V17.B16, V2.B16 \
	VFMLA V16.S4, V0.S4, V2.S4 \
	FSUB(3, 2, 17) \
	VMOV V0.B16, V4.B16 \
	VFMLS V18.S4, V3.S4, V4.S4 \
	VFMLS V19.S4, V3.S4, V4.S4 \
	FMUL(5, 4, 4) \
	VMOV V21.B16, V6.B16 \
	VFMLA V20.S4, V4.S4, V6.S4 \
	VMOV V23.B16, V7.B16 \
	VFMLA V22.S4, V4.S4, V7.S4 \
	VFMLA V6.S4, V5.S4, V7.S4 \
	VMOV V25.B16, V8.B16 \
	VFMLA V24.S4, V4.S4, V8.S4 \
	VFMLA V7.S4, V5.S4, V8.S4 \
	FMIN(2, 3, 27) \
	FMAX(2, 2, 28) \
	FSUB(4, 3, 2) \
	FCVTZS(2, 2) \
	FCVTZS(4, 4) \
	VADD V30.S4, V2.S4, V2.S4 \
	VSHL $23, V2.S4, V2.S4 \
	VADD V30.S4, V4.S4, V4.S4 \
	VSHL $23, V4.S4, V4.S4 \
	FMUL(8, 8, 4) \
	FMUL(1, 8, 2) \
	FABS(5, 3) \
	FCMGT(5, 5, 26) \
	FCMGTZ(6, 3) \
	VAND V29.B16, V6.B16, V6.B16 \
	BSL(5, 6, 1) \
	VMOV V5.B16, V1.B16

// func siluNEON(dst, x *float32, n int)
//
// sets dst[i] = siluf(x[i]) = x/(1+expf(-x)) for n values (a positive
// multiple of 4), bit for bit.
TEXT ·siluNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	EXP_CONSTS
siluloop:
	VLD1.P 16(R1), [V10.S4]
	FNEG(0, 10)
	EXPF
	FADD(1, 25, 1)
	FDIV(1, 10, 1)
	VST1.P [V1.S4], 16(R0)
	SUB $4, R2
	CBNZ R2, siluloop
	RET

// func swigluNEON(dst, gate, up *float32, n int)
//
// sets dst[i] = siluf(gate[i])·up[i] for n values (a positive multiple of 4),
// bit for bit.
TEXT ·swigluNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD gate+8(FP), R1
	MOVD up+16(FP), R3
	MOVD n+24(FP), R2
	EXP_CONSTS
swigluloop:
	VLD1.P 16(R1), [V10.S4]
	VLD1.P 16(R3), [V11.S4]
	FNEG(0, 10)
	EXPF
	FADD(1, 25, 1)
	FDIV(1, 10, 1)
	FMUL(1, 1, 11)
	VST1.P [V1.S4], 16(R0)
	SUB $4, R2
	CBNZ R2, swigluloop
	RET

// func expSumGGNEON(x *float32, n int, m float32) float64
//
// sets x[i] = expf(x[i]-m) for n values (a positive multiple of 16) and
// returns expSumGGGo's sum: per 16 values hsum16 (the halves V10+V12 and
// V11+V13, then their halves, then (t0+t2)+(t1+t3)), added in float64 in
// F31.
TEXT ·expSumGGNEON(SB), NOSPLIT, $0-32
	MOVD x+0(FP), R0
	MOVD n+8(FP), R2
	FMOVS m+16(FP), F9
	VDUP V9.S[0], V9.S4
	EXP_CONSTS
	VEOR V31.B16, V31.B16, V31.B16
ggloop:
	VLD1 (R0), [V10.S4, V11.S4, V12.S4, V13.S4]
	FSUB(0, 10, 9)
	EXPF
	VMOV V1.B16, V10.B16
	FSUB(0, 11, 9)
	EXPF
	VMOV V1.B16, V11.B16
	FSUB(0, 12, 9)
	EXPF
	VMOV V1.B16, V12.B16
	FSUB(0, 13, 9)
	EXPF
	VMOV V1.B16, V13.B16
	VST1.P [V10.S4, V11.S4, V12.S4, V13.S4], 64(R0)
	FADD(14, 12, 10)
	FADD(15, 13, 11)
	FADD(14, 15, 14)
	VEXT $8, V14.B16, V14.B16, V15.B16
	FADD2(14, 14, 15)
	FADDPS(14, 14)
	FCVTSD F14, F14
	FADDD(31, 31, 14)
	SUB $16, R2
	CBNZ R2, ggloop
	FMOVD F31, ret+24(FP)
	RET

// func scaleNEON(dst, x *float32, n int, a float32)
//
// sets dst[i] = x[i]·a for n values (a positive multiple of 4).
TEXT ·scaleNEON(SB), NOSPLIT, $0-28
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R3
	FMOVS a+24(FP), F1
	VDUP V1.S[0], V1.S4
scaleloop:
	VLD1.P 16(R1), [V2.S4]
	FMUL(2, 2, 1)
	VST1.P [V2.S4], 16(R0)
	SUB $4, R3
	CBNZ R3, scaleloop
	RET

// func axpyNEON(y, x *float32, n int, a float32)
//
// adds a·x[i] to y[i] for n values (a positive multiple of 4), fused
// (FMLA), as Go's arm64 compiler fuses axpyGo's y[i] += a*v.
TEXT ·axpyNEON(SB), NOSPLIT, $0-28
	MOVD y+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R3
	FMOVS a+24(FP), F1
	VDUP V1.S[0], V1.S4
axpyloop:
	VLD1.P 16(R1), [V2.S4]
	VLD1 (R0), [V3.S4]
	VFMLA V1.S4, V2.S4, V3.S4
	VST1.P [V3.S4], 16(R0)
	SUB $4, R3
	CBNZ R3, axpyloop
	RET

// func addNEON(dst, a, b *float32, n int) and mulNEON: dst[i] = a[i]+b[i]
// (a[i]·b[i]) for n values (a positive multiple of 4).
TEXT ·addNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD n+24(FP), R3
addloop:
	VLD1.P 16(R1), [V1.S4]
	VLD1.P 16(R2), [V2.S4]
	FADD(1, 1, 2)
	VST1.P [V1.S4], 16(R0)
	SUB $4, R3
	CBNZ R3, addloop
	RET

TEXT ·mulNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD n+24(FP), R3
mulloop:
	VLD1.P 16(R1), [V1.S4]
	VLD1.P 16(R2), [V2.S4]
	FMUL(1, 1, 2)
	VST1.P [V1.S4], 16(R0)
	SUB $4, R3
	CBNZ R3, mulloop
	RET

// func maxNEON(x *float32, n int) float32
//
// returns the largest of n values (a positive multiple of 4), FMAX lane
// by lane then across (a NaN anywhere gives NaN).
TEXT ·maxNEON(SB), NOSPLIT, $0-20
	MOVD x+0(FP), R0
	MOVD n+8(FP), R2
	VLD1.P 16(R0), [V0.S4]
	SUB $4, R2
	CBZ R2, maxdone
maxloop:
	VLD1.P 16(R0), [V1.S4]
	FMAX(0, 0, 1)
	SUB $4, R2
	CBNZ R2, maxloop
maxdone:
	FMAXV(0, 0)
	FMOVS F0, ret+16(FP)
	RET

// func dotRowsNEON(out, q, k *float32, stride uintptr, n, hd int)
//
// sets out[r] = q·k_r for n rows of k (stride bytes apart) over hd values
// (a positive multiple of 4) as dotF32F32Go compiles on arm64: four
// chains, lane j adding q[i]·k[i] for i ≡ j (mod 4) fused (FMLA, as Go
// fuses s += a*b), then (s0+s1)+(s2+s3).
TEXT ·dotRowsNEON(SB), NOSPLIT, $0-48
	MOVD out+0(FP), R0
	MOVD q+8(FP), R1
	MOVD k+16(FP), R2
	MOVD stride+24(FP), R3
	MOVD n+32(FP), R4
	MOVD hd+40(FP), R5
dotrow:
	MOVD R1, R6
	MOVD R2, R7
	MOVD R5, R8
	VEOR V0.B16, V0.B16, V0.B16
dotcol:
	VLD1.P 16(R6), [V1.S4]
	VLD1.P 16(R7), [V2.S4]
	VFMLA V2.S4, V1.S4, V0.S4
	SUB $4, R8
	CBNZ R8, dotcol
	FADDP(0, 0, 0)
	FADDPS(0, 0)
	FMOVS F0, (R0)
	ADD $4, R0
	ADD R3, R2
	SUB $1, R4
	CBNZ R4, dotrow
	RET

// func axpyRowsNEON(o, p, v *float32, stride uintptr, n, hd int)
//
// adds p[r]·v_r to o for n rows of v (stride bytes apart) in order, over
// hd values (a positive multiple of 4), skipping rows with p[r] = 0, as
// axpyRowsGo compiles on arm64 (fused: FMLA).
TEXT ·axpyRowsNEON(SB), NOSPLIT, $0-48
	MOVD o+0(FP), R0
	MOVD p+8(FP), R1
	MOVD v+16(FP), R2
	MOVD stride+24(FP), R3
	MOVD n+32(FP), R4
	MOVD hd+40(FP), R5
axrow:
	FMOVS.P 4(R1), F1
	FCMPS $(0.0), F1
	BEQ axnext
	VDUP V1.S[0], V1.S4
	MOVD R0, R6
	MOVD R2, R7
	MOVD R5, R8
axcol:
	VLD1.P 16(R7), [V2.S4]
	VLD1 (R6), [V3.S4]
	VFMLA V2.S4, V1.S4, V3.S4
	VST1.P [V3.S4], 16(R6)
	SUB $4, R8
	CBNZ R8, axcol
axnext:
	ADD R3, R2
	SUB $1, R4
	CBNZ R4, axrow
	RET
