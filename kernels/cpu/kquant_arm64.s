//go:build arm64 && !noasm

#include "textflag.h"
#include "neon_arm64.h"

// K-quant matrix-vector kernels for arm64 NEON with FEAT_DotProd, in the
// order of kernels/quant's dot products (ggml's x86 one, kdot.go): per
// super-block of 256, eight exact int32 lanes, lane (e mod 32)/4 holding
// element e's products times its sub-block scale: SDOT's four lanes sum
// just those groups of 4 bytes, so 16 weights against 16 activations give
// lanes 0..3 (e mod 32 < 16) or 4..7, and MLA by element scales them.
// Each float32 lane then gains d·lane in one FMLA; the lanes reduce as
// hsum8: (hi+lo), then (l0+l2)+(l1+l3). The mins are kept as kdot.go
// keeps them: Q4_K in four more lanes (FMLA of dmin), added last as
// (m0+m2)+(m1+m3); Q5_K as one sum in lane 0 of V28, added last; Q2_K in
// the eight lanes themselves, before d·lane.
//
// func gemvQ2_KDot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, rows int, acc int)
// (and gemvQ3_KDot, gemvQ4_KDot, gemvQ5_KDot, gemvQ6_KDot)
//
// set (acc = 0) or add to (acc != 0, one float32 addition) y[r] the dot
// product of row r (ldw bytes apart from w, nb blocks) with the Q8_K row
// x, for rows rows.
//
// Registers: R0 the row, R1 ldw, R2 x, R3 nb, R4 y, R5 rows left, R6 acc;
// R7 the block, R8 its activations, R9 blocks left, R10.. scratch. V26,
// V27 the float32 lanes, V28 the min lanes; V18, V19 a block's int32
// lanes; V29 the activations' scale, V30 d (and dmin), V31 -d, -dmin;
// V12 0x0f; V8..V11 and V15, V16 the weights and SDOT sums of a step.

#define KQ_PROLOGUE \
	MOVD w+0(FP), R0 \
	MOVD ldw+8(FP), R1 \
	MOVD x+16(FP), R2 \
	MOVD nb+24(FP), R3 \
	MOVD y+32(FP), R4 \
	MOVD rows+40(FP), R5 \
	MOVD acc+48(FP), R6 \
	VMOVI $15, V12.B16

#define KQ_ROW \
	MOVD R0, R7 \
	MOVD R2, R8 \
	MOVD R3, R9 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	VEOR V28.B16, V28.B16, V28.B16

// KQ_D sets V29 to the activations' scale and V30 lane 0 (lane 1) to
// yd·d (yd·dmin) from the f16 at off (off2) of the block; V31 = -V30.
#define KQ_D(off, off2) \
	FMOVS (R8), F29 \
	VDUP V29.S[0], V29.S4 \
	MOVHU off(R7), R10 \
	MOVHU off2(R7), R11 \
	VMOV R10, V30.H[0] \
	VMOV R11, V30.H[1] \
	FCVTL(30, 30) \
	FMUL(30, 30, 29) \
	FNEG(31, 30)

// KQ_DOT2(sa, ia, sb, ib): the weights V8, V9 (16 each) against the next
// 32 activations (R11), into lanes 0..3 times scale Vsa.S[ia] and 4..7
// times Vsb.S[ib].
#define KQ_DOT2(sa, ia, sb, ib) \
	VLD1.P 32(R11), [V10.B16, V11.B16] \
	VEOR V15.B16, V15.B16, V15.B16 \
	VEOR V16.B16, V16.B16, V16.B16 \
	SDOT(15, 8, 10) \
	SDOT(16, 9, 11) \
	MLAE(18, 15, sa, ia) \
	MLAE(19, 16, sb, ib)

// KQ_BLOCK_END adds d times the block's lanes and steps to the next block
// of bs bytes.
#define KQ_BLOCK_END(bs) \
	SCVTF(18, 18) \
	SCVTF(19, 19) \
	FMLAE(26, 18, 30, 0) \
	FMLAE(27, 19, 30, 0) \
	ADD $bs, R7 \
	ADD $292, R8 \
	SUB $1, R9 \
	CBNZ R9, block

// KQ_HSUM8 leaves hsum8 of V26, V27 in F26.
#define KQ_HSUM8 \
	FADD(26, 27, 26) \
	VEXT $8, V26.B16, V26.B16, V27.B16 \
	FADD2(26, 26, 27) \
	FADDPS(26, 26)

// KQ_STORE stores or adds F26 and moves to the next row.
#define KQ_STORE \
	CBZ R6, store \
	FMOVS (R4), F27 \
	FADDS F27, F26 \
store: \
	FMOVS F26, (R4) \
	ADD $4, R4 \
	ADD R1, R0 \
	SUB $1, R5 \
	CBNZ R5, row \
	RET

// KQ_SCALES_K4 unpacks the 6-bit scales and mins of a Q4_K/Q5_K block in
// general registers (sub-blocks 0..3 from the low 6 bits of bytes 0..3
// and 4..7, 4..7 from the nibbles of bytes 8..11 and the top bits of
// 0..7) and widens them to int32: scales in V21, V22, mins in V24, V25;
// then the min products, per sub-block its two bsums (SADDLP) times its
// min, pairwise added (ADDP) into V16 lanes 0..3.
#define KQ_SCALES_K4 \
	MOVWU 4(R7), R12 \
	MOVWU 8(R7), R13 \
	MOVWU 12(R7), R14 \
	ANDW $0x3f3f3f3f, R12, R15 \
	ANDW $0x3f3f3f3f, R13, R16 \
	ANDW $0x0f0f0f0f, R14, R17 \
	LSRW $6, R12, R10 \
	ANDW $0x03030303, R10, R10 \
	LSLW $4, R10, R10 \
	ORRW R10, R17, R17 \
	LSRW $4, R14, R19 \
	ANDW $0x0f0f0f0f, R19, R19 \
	LSRW $6, R13, R10 \
	ANDW $0x03030303, R10, R10 \
	LSLW $4, R10, R10 \
	ORRW R10, R19, R19 \
	VMOV R15, V20.S[0] \
	VMOV R17, V20.S[1] \
	UXTLB(20, 20) \
	UXTL(21, 20) \
	UXTL2(22, 20) \
	VMOV R16, V23.S[0] \
	VMOV R19, V23.S[1] \
	UXTLB(23, 23) \
	UXTL(24, 23) \
	UXTL2(25, 23) \
	ADD $260, R8, R10 \
	VLD1 (R10), [V16.H8, V17.H8] \
	SADDLP(16, 16) \
	SADDLP(17, 17) \
	MULS(16, 16, 24) \
	MULS(17, 17, 25) \
	VADDP V17.S4, V16.S4, V16.S4

// KQ_NIBBLES loads 32 bytes of nibbles (R10) and the next 64 activations
// (R11): low nibbles in V0, V1, high in V6, V7, activations V2..V5.
#define KQ_NIBBLES \
	VLD1.P 32(R10), [V0.B16, V1.B16] \
	VLD1.P 64(R11), [V2.B16, V3.B16, V4.B16, V5.B16] \
	VUSHR $4, V0.B16, V6.B16 \
	VUSHR $4, V1.B16, V7.B16 \
	VAND V12.B16, V0.B16, V0.B16 \
	VAND V12.B16, V1.B16, V1.B16

// KQ_DOT4(s, i0, i1): V0, V1 (sub-block scale Vs.S[i0]) and V6, V7
// (Vs.S[i1]) against V2..V5.
#define KQ_DOT4(s, i0, i1) \
	VEOR V8.B16, V8.B16, V8.B16 \
	VEOR V9.B16, V9.B16, V9.B16 \
	VEOR V10.B16, V10.B16, V10.B16 \
	VEOR V11.B16, V11.B16, V11.B16 \
	SDOT(8, 0, 2) \
	SDOT(9, 1, 3) \
	SDOT(10, 6, 4) \
	SDOT(11, 7, 5) \
	MLAE(18, 8, s, i0) \
	MLAE(19, 9, s, i0) \
	MLAE(18, 10, s, i1) \
	MLAE(19, 11, s, i1)

// Q4_K (144-byte blocks: d, dmin, 12 bytes of scales and mins, 128 bytes
// of nibbles): value 64j+l (l < 32) is the low nibble of qs[32j+l], value
// 64j+32+l the high one.
TEXT ·gemvQ4_KDot(SB), NOSPLIT, $0-56
	KQ_PROLOGUE
row:
	KQ_ROW
block:
	KQ_D(0, 2)
	KQ_SCALES_K4
	SCVTF(16, 16)
	FMLAE(28, 16, 31, 1)
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	ADD $16, R7, R10
	ADD $4, R8, R11
	KQ_NIBBLES
	KQ_DOT4(21, 0, 1)
	KQ_NIBBLES
	KQ_DOT4(21, 2, 3)
	KQ_NIBBLES
	KQ_DOT4(22, 0, 1)
	KQ_NIBBLES
	KQ_DOT4(22, 2, 3)
	KQ_BLOCK_END(144)
	KQ_HSUM8
	VEXT $8, V28.B16, V28.B16, V29.B16
	FADD2(28, 28, 29)
	FADDPS(28, 28)
	FADDS F28, F26
	KQ_STORE

// KQ_HIGH5 adds 16 to the nibbles V0, V1 (V6, V7) where bit 0 of qh
// (V14, V15) is set, then shifts qh right by one: called twice per 64
// values, it walks bits 2j and 2j+1. V13 1.
#define KQ_HIGH5(a, b) \
	VAND V13.B16, V14.B16, V8.B16 \
	VSHL $4, V8.B16, V8.B16 \
	VORR V8.B16, a, a \
	VAND V13.B16, V15.B16, V8.B16 \
	VSHL $4, V8.B16, V8.B16 \
	VORR V8.B16, b, b \
	VUSHR $1, V14.B16, V14.B16 \
	VUSHR $1, V15.B16, V15.B16

#define KQ_NIBBLES5 \
	KQ_NIBBLES \
	KQ_HIGH5(V0.B16, V1.B16) \
	KQ_HIGH5(V6.B16, V7.B16)

// Q5_K (176-byte blocks: d, dmin, 12 bytes of scales and mins as Q4_K's,
// 32 bytes qh, 128 bytes of nibbles): value 64j+l (l < 32) is the low
// nibble of qs[32j+l] plus 16·bit 2j of qh[l], value 64j+32+l the high
// nibble plus 16·bit 2j+1. The min products are summed to one integer
// (ADDP twice) and kept in lane 0 of V28 (kdot.go's summs).
TEXT ·gemvQ5_KDot(SB), NOSPLIT, $0-56
	KQ_PROLOGUE
	VMOVI $1, V13.B16
row:
	KQ_ROW
block:
	KQ_D(0, 2)
	KQ_SCALES_K4
	VADDP V16.S4, V16.S4, V16.S4
	VADDP V16.S4, V16.S4, V16.S4
	SCVTF(16, 16)
	FMLAE(28, 16, 31, 1)
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	ADD $16, R7, R10
	VLD1 (R10), [V14.B16, V15.B16]
	ADD $48, R7, R10
	ADD $4, R8, R11
	KQ_NIBBLES5
	KQ_DOT4(21, 0, 1)
	KQ_NIBBLES5
	KQ_DOT4(21, 2, 3)
	KQ_NIBBLES5
	KQ_DOT4(22, 0, 1)
	KQ_NIBBLES5
	KQ_DOT4(22, 2, 3)
	KQ_BLOCK_END(176)
	KQ_HSUM8
	FADDS F28, F26
	KQ_STORE

// KQ_SCALES16 widens 16 signed byte scales in V20 to int32 in V23, V24,
// V25, V20 (scale j in lane j%4 of the (j/4)th).
#define KQ_SCALES16 \
	SXTLB(21, 20) \
	SXTLB2(22, 20) \
	SXTL(23, 21) \
	SXTL2(24, 21) \
	SXTL(25, 22) \
	SXTL2(20, 22)

// KQ_Q6(lo, hi, nib, sa, ia, sb, ib): 32 weights of a Q6_K half: the
// nibbles of Vlo, Vhi (nib: low by AND, high by shift; into V6), bits 0,
// 1 of qh (V4, V5, then shifted right by 2 for the next step) above them,
// minus 32, into V8, V9; then KQ_DOT2.
#define KQ_Q6(lo, hi, nib, sa, ia, sb, ib) \
	nib(lo, V6) \
	VAND V13.B16, V4.B16, V7.B16 \
	VSHL $4, V7.B16, V7.B16 \
	VORR V7.B16, V6.B16, V8.B16 \
	VSUB V14.B16, V8.B16, V8.B16 \
	nib(hi, V6) \
	VAND V13.B16, V5.B16, V7.B16 \
	VSHL $4, V7.B16, V7.B16 \
	VORR V7.B16, V6.B16, V9.B16 \
	VSUB V14.B16, V9.B16, V9.B16 \
	VUSHR $2, V4.B16, V4.B16 \
	VUSHR $2, V5.B16, V5.B16 \
	KQ_DOT2(sa, ia, sb, ib)

#define NIB_LO(v, d) VAND V12.B16, v.B16, d.B16
#define NIB_HI(v, d) VUSHR $4, v.B16, d.B16

// KQ_Q6_HALF(off, qh, s0, s1): the 128 values of a Q6_K half, its ql at
// off and qh at qh bytes into the block; sub-block scales 8h.. in Vs0
// (the first 64 values) and Vs1. Value 128h+32s+l is a nibble of
// ql[64h+l] (s = 0, 2) or ql[64h+32+l] (s = 1, 3), low for s < 2, with
// bits 2s, 2s+1 of qh[32h+l] above it.
#define KQ_Q6_HALF(off, qh, s0, s1) \
	ADD $off, R7, R10 \
	VLD1 (R10), [V0.B16, V1.B16, V2.B16, V3.B16] \
	ADD $qh, R7, R10 \
	VLD1 (R10), [V4.B16, V5.B16] \
	KQ_Q6(V0, V1, NIB_LO, s0, 0, s0, 1) \
	KQ_Q6(V2, V3, NIB_LO, s0, 2, s0, 3) \
	KQ_Q6(V0, V1, NIB_HI, s1, 0, s1, 1) \
	KQ_Q6(V2, V3, NIB_HI, s1, 2, s1, 3)

// Q6_K (210-byte blocks: 128 bytes ql, 64 bytes qh, 16 int8 scales, d).
// V13 3, V14 32.
TEXT ·gemvQ6_KDot(SB), NOSPLIT, $0-56
	KQ_PROLOGUE
	VMOVI $3, V13.B16
	VMOVI $32, V14.B16
row:
	KQ_ROW
block:
	KQ_D(208, 208)
	ADD $192, R7, R10
	VLD1 (R10), [V20.B16]
	KQ_SCALES16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	ADD $4, R8, R11
	KQ_Q6_HALF(0, 128, 23, 24)
	KQ_Q6_HALF(64, 160, 25, 20)
	KQ_BLOCK_END(210)
	KQ_HSUM8
	KQ_STORE

// KQ_Q2(sa, ia, sb, ib): 32 weights of 2 bits, bits 0, 1 of V0, V1 (then
// shifted right by 2 for the next step), into V8, V9; then KQ_DOT2. V13 3.
#define KQ_Q2(sa, ia, sb, ib) \
	VAND V13.B16, V0.B16, V8.B16 \
	VAND V13.B16, V1.B16, V9.B16 \
	VUSHR $2, V0.B16, V0.B16 \
	VUSHR $2, V1.B16, V1.B16 \
	KQ_DOT2(sa, ia, sb, ib)

// KQ_Q2_HALF(off, s0, s1): 128 values from the 32 bytes at off: value
// 32s+l is bits 2s, 2s+1 of byte l; scales in Vs0 (the first 64 values)
// and Vs1.
#define KQ_Q2_HALF(off, s0, s1) \
	ADD $off, R7, R10 \
	VLD1 (R10), [V0.B16, V1.B16] \
	KQ_Q2(s0, 0, s0, 1) \
	KQ_Q2(s0, 2, s0, 3) \
	KQ_Q2(s1, 0, s1, 1) \
	KQ_Q2(s1, 2, s1, 3)

// Q2_K (84-byte blocks: 16 bytes of 4-bit scales (low) and mins (high),
// 64 bytes of 2-bit quants, d, dmin): per block each float32 lane k first
// gains dmin times min[2k]·bsum[2k] + min[2k+1]·bsum[2k+1] (SMULL, ADDP),
// then d times its integer lane. The mins widen into V21, V22 (int16),
// the scales into V23, V24, V25, V20.
TEXT ·gemvQ2_KDot(SB), NOSPLIT, $0-56
	KQ_PROLOGUE
	VMOVI $3, V13.B16
row:
	KQ_ROW
block:
	KQ_D(80, 82)
	VLD1 (R7), [V20.B16]
	VUSHR $4, V20.B16, V14.B16
	UXTLB(21, 14)
	UXTLB2(22, 14)
	ADD $260, R8, R10
	VLD1 (R10), [V16.H8, V17.H8]
	SMULLH(0, 21, 16)
	SMULLH2(1, 21, 16)
	SMULLH(2, 22, 17)
	SMULLH2(3, 22, 17)
	VADDP V1.S4, V0.S4, V0.S4
	VADDP V3.S4, V2.S4, V2.S4
	SCVTF(0, 0)
	SCVTF(2, 2)
	FMLAE(26, 0, 31, 1)
	FMLAE(27, 2, 31, 1)
	VAND V12.B16, V20.B16, V20.B16
	KQ_SCALES16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	ADD $4, R8, R11
	KQ_Q2_HALF(16, 23, 24)
	KQ_Q2_HALF(48, 25, 20)
	KQ_BLOCK_END(84)
	KQ_HSUM8
	KQ_STORE

// KQ_Q3(sa, ia, sb, ib): 32 weights of Q3_K: bits 0, 1 of V0, V1 (then
// shifted right by 2), plus 4 where bit 0 of hmask V6, V7 is set (then
// shifted right by 1), minus 4, into V8, V9; then KQ_DOT2. V13 3, V14 4,
// V17 1.
#define KQ_Q3(sa, ia, sb, ib) \
	VAND V13.B16, V0.B16, V8.B16 \
	VAND V17.B16, V6.B16, V2.B16 \
	VSHL $2, V2.B16, V2.B16 \
	VORR V2.B16, V8.B16, V8.B16 \
	VSUB V14.B16, V8.B16, V8.B16 \
	VAND V13.B16, V1.B16, V9.B16 \
	VAND V17.B16, V7.B16, V2.B16 \
	VSHL $2, V2.B16, V2.B16 \
	VORR V2.B16, V9.B16, V9.B16 \
	VSUB V14.B16, V9.B16, V9.B16 \
	VUSHR $2, V0.B16, V0.B16 \
	VUSHR $2, V1.B16, V1.B16 \
	VUSHR $1, V6.B16, V6.B16 \
	VUSHR $1, V7.B16, V7.B16 \
	KQ_DOT2(sa, ia, sb, ib)

#define KQ_Q3_HALF(off, s0, s1) \
	ADD $off, R7, R10 \
	VLD1 (R10), [V0.B16, V1.B16] \
	KQ_Q3(s0, 0, s0, 1) \
	KQ_Q3(s0, 2, s0, 3) \
	KQ_Q3(s1, 0, s1, 1) \
	KQ_Q3(s1, 2, s1, 3)

// Q3_K (110-byte blocks: 32 bytes hmask, 64 bytes of 2-bit quants, 12
// bytes of 6-bit scales, d): value 128c+32s+l is bits 2s, 2s+1 of
// qs[32c+l], plus 4 if bit 4c+s of hmask[l] is set, minus 4. Scale j is
// the low (j < 8) or high nibble of byte j mod 8, with bits 2(j/4),
// 2(j/4)+1 of byte 8+j%4 above it, minus 32: the nibbles in V20 (ZIP of
// the two halves), the bit pairs in general registers, then widened by
// KQ_SCALES16.
TEXT ·gemvQ3_KDot(SB), NOSPLIT, $0-56
	KQ_PROLOGUE
	VMOVI $3, V13.B16
	VMOVI $4, V14.B16
	VMOVI $1, V17.B16
row:
	KQ_ROW
block:
	KQ_D(108, 108)
	MOVD 96(R7), R10
	VMOV R10, V20.D[0]
	VAND V12.B16, V20.B16, V21.B16
	VUSHR $4, V20.B16, V22.B16
	VZIP1 V22.D2, V21.D2, V20.D2
	MOVWU 104(R7), R10
	ANDW $0x03030303, R10, R11
	VMOV R11, V21.S[0]
	LSRW $2, R10, R11
	ANDW $0x03030303, R11, R11
	VMOV R11, V21.S[1]
	LSRW $4, R10, R11
	ANDW $0x03030303, R11, R11
	VMOV R11, V21.S[2]
	LSRW $6, R10, R11
	ANDW $0x03030303, R11, R11
	VMOV R11, V21.S[3]
	VSHL $4, V21.B16, V21.B16
	VORR V21.B16, V20.B16, V20.B16
	VMOVI $32, V21.B16
	VSUB V21.B16, V20.B16, V20.B16
	KQ_SCALES16
	VLD1 (R7), [V6.B16, V7.B16]
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	ADD $4, R8, R11
	KQ_Q3_HALF(32, 23, 24)
	KQ_Q3_HALF(64, 25, 20)
	KQ_BLOCK_END(110)
	KQ_HSUM8
	KQ_STORE
