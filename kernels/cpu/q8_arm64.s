//go:build arm64 && !noasm

#include "textflag.h"
#include "neon_arm64.h"

// Q4_0 and Q8_0 matrix-vector kernels for arm64 NEON.
//
// func gemvQ4_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, groups int, acc int)
//
// computes groups×4 outputs y[r] (+)= w_r·x for rows r ldw bytes apart
// from w, each a row of nb Q4_0 (18-byte) or Q8_0 (34-byte) blocks, with x
// in activation layout A or B (q8pack.go: per group of 4 blocks, the low
// 16 quants of each block, the high 16, corrections (unused here) and the
// scales as float32, 4 lanes per block). The 4 rows of a group run in the
// 4 float32 lanes of V0, each lane ggml's chain over the row's blocks,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc)
//
// by FMLA (one rounding); the integer sums isum_b are exact. acc != 0
// adds the chain to y with one float32 addition.
//
// The Dot kernels sum bytes with SDOT (FEAT_DotProd); the NEON ones with
// SMULL/SMLAL (int16 products: |(n-8)·q| + |(n'-8)·q'| ≤ 2032 and
// |w·q| + |w'·q'| ≤ 32512 fit) and SADDLP/SADALP.
//
// Registers: R0 w, R1 ldw, R2 x, R3 nb, R4 y, R5 groups, R6 acc; R7, R8,
// R10, R11 the rows; R12 the activation block; R13 blocks left; R14
// blocks left in the activation group; R9 scratch; R15..R17, R19 the
// rows' f16 scales. V0 the chains; V1 0x0f; V2 8; V3, V4 the block's low
// and high quants; V5 its scale; V6..V8 scratch; V16..V23 the rows'
// weights; V24..V27 their integer sums; V28..V31 scratch.

// Integer sums of one row's block: weights lo/hi (16 bytes each, against
// the low and high activation quants V3, V4) into the 4 lanes of a.
#define ISUM_DOT(lo, hi, a, t) \
	SDOT(a, lo, 3) \
	SDOT(a, hi, 4)

#define ISUM_NEON(lo, hi, a, t) \
	SMULL(a, lo, 3) \
	SMLAL(a, hi, 4) \
	SMULL2(t, lo, 3) \
	SMLAL2(t, hi, 4) \
	SADDLP(a, a) \
	SADALP(a, t)

// Loads of one row's block: the f16 scale into rd, the weights as signed
// bytes into Vlo and Vhi.
#define LOAD_Q4(rp, rd, Vlo, Vhi) \
	MOVHU.P 2(rp), rd \
	VLD1.P 16(rp), [Vlo.B16] \
	VUSHR $4, Vlo.B16, Vhi.B16 \
	VAND V1.B16, Vlo.B16, Vlo.B16 \
	VSUB V2.B16, Vlo.B16, Vlo.B16 \
	VSUB V2.B16, Vhi.B16, Vhi.B16

#define LOAD_Q8(rp, rd, Vlo, Vhi) \
	MOVHU.P 2(rp), rd \
	VLD1.P 32(rp), [Vlo.B16, Vhi.B16]

// GEMV4 is the body of one kernel: LOAD loads a row's block, ISUM sums it.
// Q8_0 rows use V16..V23 in pairs, Q4_0 rows the same pairs.
#define GEMV4(LOAD, ISUM) \
	MOVD w+0(FP), R0 \
	MOVD ldw+8(FP), R1 \
	MOVD x+16(FP), R2 \
	MOVD nb+24(FP), R3 \
	MOVD y+32(FP), R4 \
	MOVD groups+40(FP), R5 \
	MOVD acc+48(FP), R6 \
	VMOVI $15, V1.B16 \
	VMOVI $8, V2.B16 \
group: \
	MOVD R0, R7 \
	ADD R1, R7, R8 \
	ADD R1, R8, R10 \
	ADD R1, R10, R11 \
	MOVD R2, R12 \
	MOVD R3, R13 \
	MOVD $4, R14 \
	VEOR V0.B16, V0.B16, V0.B16 \
block: \
	VLD1 (R12), [V3.B16] \
	ADD $64, R12, R9 \
	VLD1 (R9), [V4.B16] \
	ADD $128, R9 \
	VLD1 (R9), [V5.S4] \
	LOAD(R7, R15, V16, V17) \
	LOAD(R8, R16, V18, V19) \
	LOAD(R10, R17, V20, V21) \
	LOAD(R11, R19, V22, V23) \
	VEOR V24.B16, V24.B16, V24.B16 \
	VEOR V25.B16, V25.B16, V25.B16 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	ISUM(16, 17, 24, 28) \
	ISUM(18, 19, 25, 29) \
	ISUM(20, 21, 26, 30) \
	ISUM(22, 23, 27, 31) \
	VADDP V25.S4, V24.S4, V6.S4 \
	VADDP V27.S4, V26.S4, V7.S4 \
	VADDP V7.S4, V6.S4, V6.S4 \
	SCVTF(6, 6) \
	VMOV R15, V8.H[0] \
	VMOV R16, V8.H[1] \
	VMOV R17, V8.H[2] \
	VMOV R19, V8.H[3] \
	FCVTL(8, 8) \
	FMUL(8, 8, 5) \
	VFMLA V8.S4, V6.S4, V0.S4 \
	ADD $16, R12 \
	SUB $1, R14 \
	CBNZ R14, next \
	MOVD $4, R14 \
	ADD $192, R12 \
next: \
	SUB $1, R13 \
	CBNZ R13, block \
	CBZ R6, store \
	VLD1 (R4), [V6.S4] \
	FADD(0, 6, 0) \
store: \
	VST1.P [V0.S4], 16(R4) \
	ADD R1<<2, R0 \
	SUB $1, R5 \
	CBNZ R5, group \
	RET

// func gemv4x2Q4_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)
//
// is gemvQ4_0Dot for two tokens (activations ldx bytes apart, outputs ldy
// bytes apart) sharing each load of the weights: token 0's chains in V0,
// token 1's in V12. Beyond GEMV4's registers: R3 ldx, R20 nb, R21 ldy;
// V9..V11 token 1's quants and scale, V13, V14 scratch, V28..V31 token
// 1's integer sums.
#define GEMV4X2(LOAD) \
	MOVD w+0(FP), R0 \
	MOVD ldw+8(FP), R1 \
	MOVD x+16(FP), R2 \
	MOVD ldx+24(FP), R3 \
	MOVD nb+32(FP), R20 \
	MOVD y+40(FP), R4 \
	MOVD ldy+48(FP), R21 \
	MOVD groups+56(FP), R5 \
	MOVD acc+64(FP), R6 \
	VMOVI $15, V1.B16 \
	VMOVI $8, V2.B16 \
group: \
	MOVD R0, R7 \
	ADD R1, R7, R8 \
	ADD R1, R8, R10 \
	ADD R1, R10, R11 \
	MOVD R2, R12 \
	MOVD R20, R13 \
	MOVD $4, R14 \
	VEOR V0.B16, V0.B16, V0.B16 \
	VEOR V12.B16, V12.B16, V12.B16 \
block: \
	VLD1 (R12), [V3.B16] \
	ADD $64, R12, R9 \
	VLD1 (R9), [V4.B16] \
	ADD $128, R9 \
	VLD1 (R9), [V5.S4] \
	ADD R3, R12, R9 \
	VLD1 (R9), [V9.B16] \
	ADD $64, R9 \
	VLD1 (R9), [V10.B16] \
	ADD $128, R9 \
	VLD1 (R9), [V11.S4] \
	LOAD(R7, R15, V16, V17) \
	LOAD(R8, R16, V18, V19) \
	LOAD(R10, R17, V20, V21) \
	LOAD(R11, R19, V22, V23) \
	VEOR V24.B16, V24.B16, V24.B16 \
	VEOR V25.B16, V25.B16, V25.B16 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	VEOR V28.B16, V28.B16, V28.B16 \
	VEOR V29.B16, V29.B16, V29.B16 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V31.B16, V31.B16, V31.B16 \
	SDOT(24, 16, 3) \
	SDOT(24, 17, 4) \
	SDOT(25, 18, 3) \
	SDOT(25, 19, 4) \
	SDOT(26, 20, 3) \
	SDOT(26, 21, 4) \
	SDOT(27, 22, 3) \
	SDOT(27, 23, 4) \
	SDOT(28, 16, 9) \
	SDOT(28, 17, 10) \
	SDOT(29, 18, 9) \
	SDOT(29, 19, 10) \
	SDOT(30, 20, 9) \
	SDOT(30, 21, 10) \
	SDOT(31, 22, 9) \
	SDOT(31, 23, 10) \
	VADDP V25.S4, V24.S4, V6.S4 \
	VADDP V27.S4, V26.S4, V7.S4 \
	VADDP V7.S4, V6.S4, V6.S4 \
	VADDP V29.S4, V28.S4, V13.S4 \
	VADDP V31.S4, V30.S4, V14.S4 \
	VADDP V14.S4, V13.S4, V13.S4 \
	SCVTF(6, 6) \
	SCVTF(13, 13) \
	VMOV R15, V8.H[0] \
	VMOV R16, V8.H[1] \
	VMOV R17, V8.H[2] \
	VMOV R19, V8.H[3] \
	FCVTL(8, 8) \
	FMUL(7, 8, 5) \
	FMUL(14, 8, 11) \
	VFMLA V7.S4, V6.S4, V0.S4 \
	VFMLA V14.S4, V13.S4, V12.S4 \
	ADD $16, R12 \
	SUB $1, R14 \
	CBNZ R14, next \
	MOVD $4, R14 \
	ADD $192, R12 \
next: \
	SUB $1, R13 \
	CBNZ R13, block \
	ADD R21, R4, R9 \
	CBZ R6, store \
	VLD1 (R4), [V6.S4] \
	FADD(0, 6, 0) \
	VLD1 (R9), [V13.S4] \
	FADD(12, 13, 12) \
store: \
	VST1.P [V0.S4], 16(R4) \
	VST1 [V12.S4], (R9) \
	ADD R1<<2, R0 \
	SUB $1, R5 \
	CBNZ R5, group \
	RET

TEXT ·gemvQ4_0Dot(SB), NOSPLIT, $0-56
	GEMV4(LOAD_Q4, ISUM_DOT)

TEXT ·gemvQ4_0NEON(SB), NOSPLIT, $0-56
	GEMV4(LOAD_Q4, ISUM_NEON)

TEXT ·gemvQ8_0Dot(SB), NOSPLIT, $0-56
	GEMV4(LOAD_Q8, ISUM_DOT)

TEXT ·gemvQ8_0NEON(SB), NOSPLIT, $0-56
	GEMV4(LOAD_Q8, ISUM_NEON)

TEXT ·gemv4x2Q4_0Dot(SB), NOSPLIT, $0-72
	GEMV4X2(LOAD_Q4)

TEXT ·gemv4x2Q8_0Dot(SB), NOSPLIT, $0-72
	GEMV4X2(LOAD_Q8)

// func gemv4x4Q4_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)
//
// is gemv4x2Q4_0Dot for four tokens (activations ldx bytes apart, outputs
// ldy bytes apart) sharing each load of the weights: token t's chains in
// V0, V12, V13, V14 (one row per lane). Each token's step is GEMV4's
// (SDOT, pairwise adds, SCVTF, dw·dx, FMLA), so each output is the same
// chain. Beyond GEMV4X2's registers: R22 2·ldx, R23 3·ldx, R24 and R25
// token pointers; V15 the rows' scales as float32.
#define DOT_TOKEN(xp, chain) \
	VLD1 (xp), [V3.B16] \
	ADD $64, xp, R9 \
	VLD1 (R9), [V4.B16] \
	ADD $128, R9 \
	VLD1 (R9), [V5.S4] \
	VEOR V24.B16, V24.B16, V24.B16 \
	VEOR V25.B16, V25.B16, V25.B16 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	SDOT(24, 16, 3) \
	SDOT(24, 17, 4) \
	SDOT(25, 18, 3) \
	SDOT(25, 19, 4) \
	SDOT(26, 20, 3) \
	SDOT(26, 21, 4) \
	SDOT(27, 22, 3) \
	SDOT(27, 23, 4) \
	VADDP V25.S4, V24.S4, V6.S4 \
	VADDP V27.S4, V26.S4, V7.S4 \
	VADDP V7.S4, V6.S4, V6.S4 \
	SCVTF(6, 6) \
	FMUL(7, 15, 5) \
	VFMLA V7.S4, V6.S4, chain

// TILE4_PROLOGUE loads the arguments of a four-token kernel.
#define TILE4_PROLOGUE \
	MOVD w+0(FP), R0 \
	MOVD ldw+8(FP), R1 \
	MOVD x+16(FP), R2 \
	MOVD ldx+24(FP), R3 \
	MOVD nb+32(FP), R20 \
	MOVD y+40(FP), R4 \
	MOVD ldy+48(FP), R21 \
	MOVD groups+56(FP), R5 \
	MOVD acc+64(FP), R6 \
	ADD R3, R3, R22 \
	ADD R3, R22, R23 \
	VMOVI $15, V1.B16 \
	VMOVI $8, V2.B16

// TILE4_GROUP starts a group of 4 rows: row pointers, activation cursor,
// block counters, chains cleared.
#define TILE4_GROUP \
	MOVD R0, R7 \
	ADD R1, R7, R8 \
	ADD R1, R8, R10 \
	ADD R1, R10, R11 \
	MOVD R2, R12 \
	MOVD R20, R13 \
	MOVD $4, R14 \
	VEOR V0.B16, V0.B16, V0.B16 \
	VEOR V12.B16, V12.B16, V12.B16 \
	VEOR V13.B16, V13.B16, V13.B16 \
	VEOR V14.B16, V14.B16, V14.B16

// TILE4_LOAD loads the block of the 4 rows: weights into V16..V23 (row r
// in V16+2r, V17+2r), their f16 scales as float32 into Vs.
#define TILE4_LOAD(LOAD, Vs, s) \
	LOAD(R7, R15, V16, V17) \
	LOAD(R8, R16, V18, V19) \
	LOAD(R10, R17, V20, V21) \
	LOAD(R11, R19, V22, V23) \
	VMOV R15, Vs.H[0] \
	VMOV R16, Vs.H[1] \
	VMOV R17, Vs.H[2] \
	VMOV R19, Vs.H[3] \
	FCVTL(s, s)

// TILE4_NEXT steps to the next block (and group of 4 activation blocks).
#define TILE4_NEXT \
	ADD $16, R12 \
	SUB $1, R14 \
	CBNZ R14, next \
	MOVD $4, R14 \
	ADD $192, R12 \
next: \
	SUB $1, R13 \
	CBNZ R13, block

// TILE4_STORE stores (acc = 0) or adds (acc != 0) the tokens' row vectors
// V0, V12, V13, V14 at y, y+ldy, y+2·ldy, y+3·ldy (one float32 addition
// each), then moves to the next group of rows.
#define TILE4_STORE \
	ADD R21, R4, R15 \
	ADD R21, R15, R16 \
	ADD R21, R16, R17 \
	CBZ R6, store \
	VLD1 (R4), [V6.S4] \
	FADD(0, 6, 0) \
	VLD1 (R15), [V6.S4] \
	FADD(12, 6, 12) \
	VLD1 (R16), [V6.S4] \
	FADD(13, 6, 13) \
	VLD1 (R17), [V6.S4] \
	FADD(14, 6, 14) \
store: \
	VST1.P [V0.S4], 16(R4) \
	VST1 [V12.S4], (R15) \
	VST1 [V13.S4], (R16) \
	VST1 [V14.S4], (R17) \
	ADD R1<<2, R0 \
	SUB $1, R5 \
	CBNZ R5, group \
	RET

#define GEMV4X4DOT(LOAD) \
	TILE4_PROLOGUE \
group: \
	TILE4_GROUP \
block: \
	TILE4_LOAD(LOAD, V15, 15) \
	DOT_TOKEN(R12, V0.S4) \
	ADD R3, R12, R24 \
	DOT_TOKEN(R24, V12.S4) \
	ADD R22, R12, R24 \
	DOT_TOKEN(R24, V13.S4) \
	ADD R23, R12, R24 \
	DOT_TOKEN(R24, V14.S4) \
	TILE4_NEXT \
	TILE4_STORE

// func gemv4x4Q4_0MM(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)
//
// is gemv4x4Q4_0Dot with SMMLA (FEAT_I8MM): each block's 4 rows × 4
// tokens of integer sums come from 16 SMMLA, a 2×2 matrix of sums each,
// rows paired (V24..V27 rows 0 and 1, V28..V31 rows 2 and 3: the 8-byte
// halves of the low and high weights zipped) against tokens paired
// (V16..V19). The chains run in 2×2 order, lane 2i+j row i and token j
// of the pair: V0 rows 0, 1 × tokens 0, 1; V12 rows 2, 3 × tokens 0, 1;
// V13 and V14 the same for tokens 2, 3; each lane is again ggml's chain
// (SCVTF, dw·dx with dw = V6 or V7 = rows' scales doubled, dx = V15 the
// tokens' alternated, FMLA). UZP1 and UZP2 turn them into the tokens'
// row vectors at the end. V8 the rows' scales; V3, V4, V5 and V9, V10,
// V11 a token pair's quants and scales; V20..V23 sums and scales.
#define MM_PAIR(xa, xb, cq0, cq1) \
	VLD1 (xa), [V3.B16] \
	ADD $64, xa, R9 \
	VLD1 (R9), [V4.B16] \
	ADD $128, R9 \
	VLD1 (R9), [V5.S4] \
	VLD1 (xb), [V9.B16] \
	ADD $64, xb, R9 \
	VLD1 (R9), [V10.B16] \
	ADD $128, R9 \
	VLD1 (R9), [V11.S4] \
	VZIP1 V9.D2, V3.D2, V16.D2 \
	VZIP2 V9.D2, V3.D2, V17.D2 \
	VZIP1 V10.D2, V4.D2, V18.D2 \
	VZIP2 V10.D2, V4.D2, V19.D2 \
	VEOR V20.B16, V20.B16, V20.B16 \
	VEOR V21.B16, V21.B16, V21.B16 \
	SMMLA(20, 24, 16) \
	SMMLA(20, 25, 17) \
	SMMLA(20, 26, 18) \
	SMMLA(20, 27, 19) \
	SMMLA(21, 28, 16) \
	SMMLA(21, 29, 17) \
	SMMLA(21, 30, 18) \
	SMMLA(21, 31, 19) \
	SCVTF(20, 20) \
	SCVTF(21, 21) \
	VZIP1 V11.S4, V5.S4, V15.S4 \
	FMUL(22, 6, 15) \
	FMUL(23, 7, 15) \
	VFMLA V22.S4, V20.S4, cq0 \
	VFMLA V23.S4, V21.S4, cq1

#define GEMV4X4MM(LOAD) \
	TILE4_PROLOGUE \
group: \
	TILE4_GROUP \
block: \
	TILE4_LOAD(LOAD, V8, 8) \
	VZIP1 V18.D2, V16.D2, V24.D2 \
	VZIP2 V18.D2, V16.D2, V25.D2 \
	VZIP1 V19.D2, V17.D2, V26.D2 \
	VZIP2 V19.D2, V17.D2, V27.D2 \
	VZIP1 V22.D2, V20.D2, V28.D2 \
	VZIP2 V22.D2, V20.D2, V29.D2 \
	VZIP1 V23.D2, V21.D2, V30.D2 \
	VZIP2 V23.D2, V21.D2, V31.D2 \
	VZIP1 V8.S4, V8.S4, V6.S4 \
	VZIP2 V8.S4, V8.S4, V7.S4 \
	ADD R3, R12, R24 \
	MM_PAIR(R12, R24, V0.S4, V12.S4) \
	ADD R22, R12, R24 \
	ADD R23, R12, R25 \
	MM_PAIR(R24, R25, V13.S4, V14.S4) \
	TILE4_NEXT \
	VUZP1 V12.S4, V0.S4, V24.S4 \
	VUZP2 V12.S4, V0.S4, V25.S4 \
	VUZP1 V14.S4, V13.S4, V26.S4 \
	VUZP2 V14.S4, V13.S4, V27.S4 \
	VMOV V24.B16, V0.B16 \
	VMOV V25.B16, V12.B16 \
	VMOV V26.B16, V13.B16 \
	VMOV V27.B16, V14.B16 \
	TILE4_STORE

TEXT ·gemv4x4Q4_0Dot(SB), NOSPLIT, $0-72
	GEMV4X4DOT(LOAD_Q4)

TEXT ·gemv4x4Q8_0Dot(SB), NOSPLIT, $0-72
	GEMV4X4DOT(LOAD_Q8)

TEXT ·gemv4x4Q4_0MM(SB), NOSPLIT, $0-72
	GEMV4X4MM(LOAD_Q4)

TEXT ·gemv4x4Q8_0MM(SB), NOSPLIT, $0-72
	GEMV4X4MM(LOAD_Q8)
