//go:build amd64 && !noasm

#include "textflag.h"

// Prefill GEMM for float32 weights, AVX-512: 12 weight rows × 32 tokens
// per tile. The activations come as a panel of 32 tokens transposed
// (k-major: 32 floats per k), so each k needs 2 vector loads and 12 weight
// broadcasts for 24 FMAs; each accumulator holds 16 tokens of one row.

// GSTEP12 multiplies the 32 tokens at off(SI) with element k (byte offset
// wo) of the 12 rows.
#define GSTEP12(off, wo) \
	VMOVUPS      off(SI), Z24; \
	VMOVUPS      off+64(SI), Z25; \
	VBROADCASTSS wo(R8), Z26; \
	VBROADCASTSS wo(R8)(BX*1), Z27; \
	VFMADD231PS  Z24, Z26, Z0; \
	VFMADD231PS  Z25, Z26, Z1; \
	VBROADCASTSS wo(R8)(BX*2), Z28; \
	VFMADD231PS  Z24, Z27, Z2; \
	VFMADD231PS  Z25, Z27, Z3; \
	VBROADCASTSS wo(R9), Z29; \
	VFMADD231PS  Z24, Z28, Z4; \
	VFMADD231PS  Z25, Z28, Z5; \
	VBROADCASTSS wo(R9)(BX*1), Z30; \
	VFMADD231PS  Z24, Z29, Z6; \
	VFMADD231PS  Z25, Z29, Z7; \
	VBROADCASTSS wo(R9)(BX*2), Z31; \
	VFMADD231PS  Z24, Z30, Z8; \
	VFMADD231PS  Z25, Z30, Z9; \
	VBROADCASTSS wo(R10), Z26; \
	VFMADD231PS  Z24, Z31, Z10; \
	VFMADD231PS  Z25, Z31, Z11; \
	VBROADCASTSS wo(R10)(BX*1), Z27; \
	VFMADD231PS  Z24, Z26, Z12; \
	VFMADD231PS  Z25, Z26, Z13; \
	VBROADCASTSS wo(R10)(BX*2), Z28; \
	VFMADD231PS  Z24, Z27, Z14; \
	VFMADD231PS  Z25, Z27, Z15; \
	VBROADCASTSS wo(R11), Z29; \
	VFMADD231PS  Z24, Z28, Z16; \
	VFMADD231PS  Z25, Z28, Z17; \
	VBROADCASTSS wo(R11)(BX*1), Z30; \
	VFMADD231PS  Z24, Z29, Z18; \
	VFMADD231PS  Z25, Z29, Z19; \
	VBROADCASTSS wo(R11)(BX*2), Z31; \
	VFMADD231PS  Z24, Z30, Z20; \
	VFMADD231PS  Z25, Z30, Z21; \
	VFMADD231PS  Z24, Z31, Z22; \
	VFMADD231PS  Z25, Z31, Z23

// SCATTER2 stores the 32 tokens of one row (lo: tokens 0-15, hi: 16-31)
// at DX with the token stride in Z24/Z25 (byte offsets), under the token
// masks K1/K2, adding the old values when AX ≠ 0; then advances DX by a
// row.
#define SCATTER2(lo, hi) \
	TESTQ       AX, AX; \
	JEQ         7(PC); \
	KMOVW       K1, K3; \
	KMOVW       K2, K4; \
	VGATHERDPS  (DX)(Z24*1), K3, Z26; \
	VGATHERDPS  (DX)(Z25*1), K4, Z27; \
	VADDPS      Z26, lo, lo; \
	VADDPS      Z27, hi, hi; \
	KMOVW       K1, K3; \
	KMOVW       K2, K4; \
	VSCATTERDPS lo, K3, (DX)(Z24*1); \
	VSCATTERDPS hi, K4, (DX)(Z25*1); \
	ADDQ        $4, DX

// func gemm12x32Z(w *float32, ldw uintptr, xp *float32, k int, dst *float32, ldd uintptr, acc, ntok int)
// dst[t·ldd/4 + r] (+)= Σ_{i<k} w[r·ldw/4 + i]·xp[32i + t] for r < 12 and
// t < ntok (≤ 32); with acc ≠ 0 the sums are added to dst.
TEXT ·gemm12x32Z(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), R8
	MOVQ ldw+8(FP), BX
	MOVQ xp+16(FP), SI
	MOVQ k+24(FP), CX
	LEAQ (R8)(BX*2), R9
	ADDQ BX, R9
	LEAQ (R9)(BX*2), R10
	ADDQ BX, R10
	LEAQ (R10)(BX*2), R11
	ADDQ BX, R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ   CX, DX
	SHRQ   $2, DX
	JZ     one

loop4:
	GSTEP12(0, 0)
	GSTEP12(128, 4)
	GSTEP12(256, 8)
	GSTEP12(384, 12)
	ADDQ $512, SI
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, R11
	DECQ DX
	JNZ  loop4

one:
	ANDQ $3, CX
	JZ   store

loop1:
	GSTEP12(0, 0)
	ADDQ $128, SI
	ADDQ $4, R8
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  loop1

store:
	// Token masks: K1 tokens 0-15, K2 tokens 16-31 (of ntok).
	MOVQ  ntok+56(FP), CX
	MOVL  $-1, R12
	BZHIQ CX, R12, R12
	KMOVW R12, K1
	SHRQ  $16, R12
	KMOVW R12, K2
	// Byte offsets t·ldd for t = 0..31.
	MOVQ         ldd+40(FP), BX
	VPBROADCASTD BX, Z26
	VMOVDQU32    iota32<>(SB), Z24
	VMOVDQU32    iota32<>+64(SB), Z25
	VPMULLD      Z26, Z24, Z24
	VPMULLD      Z26, Z25, Z25
	MOVQ         dst+32(FP), DX
	MOVQ         acc+48(FP), AX
	SCATTER2(Z0, Z1)
	SCATTER2(Z2, Z3)
	SCATTER2(Z4, Z5)
	SCATTER2(Z6, Z7)
	SCATTER2(Z8, Z9)
	SCATTER2(Z10, Z11)
	SCATTER2(Z12, Z13)
	SCATTER2(Z14, Z15)
	SCATTER2(Z16, Z17)
	SCATTER2(Z18, Z19)
	SCATTER2(Z20, Z21)
	SCATTER2(Z22, Z23)
	VZEROUPPER
	RET

// 0, 1, ..., 31 as int32.
DATA iota32<>+0(SB)/8, $0x0000000100000000
DATA iota32<>+8(SB)/8, $0x0000000300000002
DATA iota32<>+16(SB)/8, $0x0000000500000004
DATA iota32<>+24(SB)/8, $0x0000000700000006
DATA iota32<>+32(SB)/8, $0x0000000900000008
DATA iota32<>+40(SB)/8, $0x0000000b0000000a
DATA iota32<>+48(SB)/8, $0x0000000d0000000c
DATA iota32<>+56(SB)/8, $0x0000000f0000000e
DATA iota32<>+64(SB)/8, $0x0000001100000010
DATA iota32<>+72(SB)/8, $0x0000001300000012
DATA iota32<>+80(SB)/8, $0x0000001500000014
DATA iota32<>+88(SB)/8, $0x0000001700000016
DATA iota32<>+96(SB)/8, $0x0000001900000018
DATA iota32<>+104(SB)/8, $0x0000001b0000001a
DATA iota32<>+112(SB)/8, $0x0000001d0000001c
DATA iota32<>+120(SB)/8, $0x0000001f0000001e
GLOBL iota32<>(SB), RODATA|NOPTR, $128

// func packPanelZ(dst, x *float32, cols, ntok int)
// dst[32c + t] = x[t·cols + c] for c < cols and t < 32 (0 for t ≥ ntok).
TEXT ·packPanelZ(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         cols+16(FP), CX
	MOVQ         ntok+24(FP), DX
	MOVQ         CX, BX
	SHLQ         $2, BX
	VPBROADCASTD BX, Z26
	VMOVDQU32    iota32<>(SB), Z24
	VMOVDQU32    iota32<>+64(SB), Z25
	VPMULLD      Z26, Z24, Z24 // byte offsets of tokens 0-15
	VPMULLD      Z26, Z25, Z25 // and 16-31
	MOVL         $-1, R12
	BZHIQ        DX, R12, R12
	KMOVW        R12, K1
	SHRQ         $16, R12
	KMOVW        R12, K2
	TESTQ        CX, CX
	JZ           done

loop:
	KMOVW       K1, K3
	KMOVW       K2, K4
	VPXORD      Z0, Z0, Z0
	VPXORD      Z1, Z1, Z1
	VGATHERDPS  (SI)(Z24*1), K3, Z0
	VGATHERDPS  (SI)(Z25*1), K4, Z1
	VMOVUPS     Z0, (DI)
	VMOVUPS     Z1, 64(DI)
	ADDQ        $4, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         loop

done:
	VZEROUPPER
	RET
