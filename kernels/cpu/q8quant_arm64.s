//go:build arm64 && !noasm

#include "textflag.h"
#include "neon_arm64.h"

// Activation quantizers for arm64 NEON: quantBlockQ8 (q8pack.go) on 32
// values at a time, bit for bit: amax = max |x| (FABS, FMAX), id =
// 127/amax (0 where that exceeds the float32 range), q = x·id rounded to
// nearest even (FMUL, FCVTNS), d = amax/127 rounded to f16 (FCVTN).
//
// QUANT_BLOCK reads 32 values at R1 (advancing it) and leaves q in V18
// (q[0:16]) and V19 (q[16:32]) as bytes, d's f16 in V11.H[0..3], and in
// V12 lane l the sum q[4l:4l+4] + q[16+4l:20+4l]. Constants: V20 127.0,
// V21 the largest float32, V22 zero.
#define QUANT_BLOCK \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4] \
	FABS(8, 0) \
	FABS(9, 1) \
	FMAX(8, 8, 9) \
	FABS(9, 2) \
	FMAX(8, 8, 9) \
	FABS(9, 3) \
	FMAX(8, 8, 9) \
	FABS(9, 4) \
	FMAX(8, 8, 9) \
	FABS(9, 5) \
	FMAX(8, 8, 9) \
	FABS(9, 6) \
	FMAX(8, 8, 9) \
	FABS(9, 7) \
	FMAX(8, 8, 9) \
	FMAXV(8, 8) \
	VDUP V8.S[0], V8.S4 \
	FDIV(9, 20, 8) \
	FCMGT(10, 9, 21) \
	BSL(10, 22, 9) \
	FMUL(0, 0, 10) \
	FMUL(1, 1, 10) \
	FMUL(2, 2, 10) \
	FMUL(3, 3, 10) \
	FMUL(4, 4, 10) \
	FMUL(5, 5, 10) \
	FMUL(6, 6, 10) \
	FMUL(7, 7, 10) \
	FCVTNS(0, 0) \
	FCVTNS(1, 1) \
	FCVTNS(2, 2) \
	FCVTNS(3, 3) \
	FCVTNS(4, 4) \
	FCVTNS(5, 5) \
	FCVTNS(6, 6) \
	FCVTNS(7, 7) \
	FDIV(11, 8, 20) \
	FCVTN(11, 11) \
	VADD V4.S4, V0.S4, V12.S4 \
	VADD V5.S4, V1.S4, V13.S4 \
	VADD V6.S4, V2.S4, V14.S4 \
	VADD V7.S4, V3.S4, V15.S4 \
	VADDP V13.S4, V12.S4, V12.S4 \
	VADDP V15.S4, V14.S4, V14.S4 \
	VADDP V14.S4, V12.S4, V12.S4 \
	XTN(16, 0) \
	XTN2(16, 1) \
	XTN(17, 2) \
	XTN2(17, 3) \
	XTNB(18, 16) \
	XTNB2(18, 17) \
	XTN(16, 4) \
	XTN2(16, 5) \
	XTN(17, 6) \
	XTN2(17, 7) \
	XTNB(19, 16) \
	XTNB2(19, 17)

#define QUANT_CONSTS \
	MOVW $0x42fe0000, R9 \
	VDUP R9, V20.S4 \
	MOVW $0x7f7fffff, R9 \
	VDUP R9, V21.S4 \
	VEOR V22.B16, V22.B16, V22.B16

// func packQ8NEON(dst *byte, x *float32, nb int, b int)
//
// quantizes nb blocks of 32 values into layout A (b = 0: corrections
// -8·s) or B (b = 1: -128·s), block j of a group of 4 at 16·j: its q
// at [0,64) and [64,128), the corrections at [128,192), d widened back to
// float32 at [192,256), 4 lanes each. The caller clears the padding.
TEXT ·packQ8NEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD nb+16(FP), R2
	MOVD b+24(FP), R3
	QUANT_CONSTS
	MOVD $4, R4
packloop:
	QUANT_BLOCK
	FCVTL(11, 11)
	VSHL $3, V12.S4, V12.S4
	CBZ R3, packneg
	VSHL $4, V12.S4, V12.S4
packneg:
	VSUB V12.S4, V22.S4, V12.S4
	VST1 [V18.B16], (R0)
	ADD $64, R0, R9
	VST1 [V19.B16], (R9)
	ADD $64, R9
	VST1 [V12.S4], (R9)
	ADD $64, R9
	VST1 [V11.S4], (R9)
	ADD $16, R0
	SUB $1, R4
	CBNZ R4, packnext
	MOVD $4, R4
	ADD $192, R0
packnext:
	SUB $1, R2
	CBNZ R2, packloop
	RET

// func quantizeQ8_0NEON(dst *byte, x *float32, nb int)
//
// quantizes nb blocks of 32 values into ggml Q8_0 blocks (34 bytes: d's
// f16, then q).
TEXT ·quantizeQ8_0NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD nb+16(FP), R2
	QUANT_CONSTS
q80loop:
	QUANT_BLOCK
	VMOV V11.H[0], R9
	MOVH.P R9, 2(R0)
	VST1.P [V18.B16, V19.B16], 32(R0)
	SUB $1, R2
	CBNZ R2, q80loop
	RET

// func quantizeQ8_KNEON(dst *byte, x *float32, nb int)
//
// quantizes nb blocks of 256 values into Q8_K blocks as
// quant.QuantizeRowQ8_K does, bit for bit: amax = max |x| (FMAXNM: NaNs
// skipped, as its strict comparison skips them), mx the first value with
// |mx| = amax, iscale = -127/mx, q = min(127, x·iscale rounded to nearest
// even), d = 1/iscale, the sums of each 16 q as int16; a block whose amax
// is not above 0 is all zeros.
TEXT ·quantizeQ8_KNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD nb+16(FP), R2
	MOVW $127, R9
	VDUP R9, V20.S4
	MOVW $0xc2fe0000, R9
	FMOVS R9, F21
kblock:
	MOVD R1, R9
	MOVD $16, R3
	VEOR V0.B16, V0.B16, V0.B16
kmax:
	VLD1.P 64(R9), [V1.S4, V2.S4, V3.S4, V4.S4]
	FABS(1, 1)
	FABS(2, 2)
	FABS(3, 3)
	FABS(4, 4)
	FMAXNM(0, 0, 1)
	FMAXNM(0, 0, 2)
	FMAXNM(0, 0, 3)
	FMAXNM(0, 0, 4)
	SUB $1, R3
	CBNZ R3, kmax
	FMAXNMV(0, 0)
	FCMPS $(0.0), F0
	BGT knonzero
	MOVD R0, R9
	MOVD $36, R3
kclear:
	MOVD.P ZR, 8(R9)
	SUB $1, R3
	CBNZ R3, kclear
	MOVW ZR, (R9)
	B knext
knonzero:
	VDUP V0.S[0], V5.S4
	MOVD R1, R9
	MOVD $64, R3
kfind:
	VLD1.P 16(R9), [V1.S4]
	FABS(1, 1)
	FCMEQ(2, 1, 5)
	VMOV V2.D[0], R10
	VMOV V2.D[1], R11
	ORR R10, R11, R12
	CBNZ R12, kfound
	SUB $1, R3
	CBNZ R3, kfind
	FMOVS F0, F6
	B kscale
kfound:
	SUB $16, R9
	CBNZ R10, khalf
	ADD $8, R9
	MOVD R11, R10
khalf:
	TST $0xffffffff, R10
	BNE klane
	ADD $4, R9
klane:
	FMOVS (R9), F6
kscale:
	FDIVS F6, F21, F8
	FMOVS $1.0, F9
	FDIVS F8, F9, F9
	FMOVS F9, (R0)
	VDUP V8.S[0], V8.S4
	MOVD R1, R9
	ADD $4, R0, R10
	ADD $260, R0, R11
	MOVD $16, R3
kquant:
	VLD1.P 64(R9), [V1.S4, V2.S4, V3.S4, V4.S4]
	FMUL(1, 1, 8)
	FMUL(2, 2, 8)
	FMUL(3, 3, 8)
	FMUL(4, 4, 8)
	FCVTNS(1, 1)
	FCVTNS(2, 2)
	FCVTNS(3, 3)
	FCVTNS(4, 4)
	SMIN(1, 1, 20)
	SMIN(2, 2, 20)
	SMIN(3, 3, 20)
	SMIN(4, 4, 20)
	VADD V2.S4, V1.S4, V5.S4
	VADD V4.S4, V3.S4, V6.S4
	VADD V6.S4, V5.S4, V5.S4
	ADDV(5, 5)
	VMOV V5.S[0], R12
	MOVH.P R12, 2(R11)
	XTN(16, 1)
	XTN2(16, 2)
	XTN(17, 3)
	XTN2(17, 4)
	XTNB(18, 16)
	XTNB2(18, 17)
	VST1.P [V18.B16], 16(R10)
	SUB $1, R3
	CBNZ R3, kquant
knext:
	ADD $1024, R1
	ADD $292, R0
	SUB $1, R2
	CBNZ R2, kblock
	RET
