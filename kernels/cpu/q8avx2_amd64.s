//go:build amd64 && !noasm

#include "textflag.h"

// Q4_0 and Q8_0 weights times activations in layouts A and B (q8pack.go),
// AVX2: VPMADDUBSW (unsigned × signed bytes to int16 pairs) and VPMADDWD.
// Y15 holds 0x0f bytes, Y14 int16 ones.

#define AVX2CONST \
	MOVL         $0x0f0f0f0f, AX; \
	MOVD         AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL         $0x00010001, AX; \
	MOVD         AX, X14; \
	VPBROADCASTD X14, Y14

// Q4PAIR accumulates into f the product of Q4_0 blocks 2p and 2p+1 of the
// group at R11 (weight byte offsets w0 = 18·2p, w1 = w0+18) with the group
// at R12 (lo quants at xl, hi at xh, corrections at c, scales at s).
#define Q4PAIR(w0, w1, xl, xh, c, s, f) \
	VMOVDQU      w0+2(R11), X8; \
	VINSERTI128  $1, w1+2(R11), Y8, Y8; \
	VPSRLW       $4, Y8, Y9; \
	VPAND        Y15, Y8, Y8; \
	VPAND        Y15, Y9, Y9; \
	VPMADDUBSW   xl(R12), Y8, Y8; \
	VPMADDUBSW   xh(R12), Y9, Y9; \
	VPADDW       Y9, Y8, Y8; \
	VPMADDWD     Y14, Y8, Y8; \
	VPADDD       c(R12), Y8, Y8; \
	VCVTDQ2PS    Y8, Y8; \
	VPBROADCASTW w0(R11), X10; \
	VPBROADCASTW w1(R11), X11; \
	VPUNPCKLQDQ  X11, X10, X10; \
	VCVTPH2PS    X10, Y10; \
	VMULPS       s(R12), Y10, Y10; \
	VFMADD231PS  Y10, Y8, f

// func gemvQ4_0AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)
// For each of nrows rows of nb Q4_0 blocks (ldw bytes apart), y[r] = w_r·x
// (or += when acc is not 0). x is in layout A.
TEXT ·gemvQ4_0AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ ldw+8(FP), BX
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ nrows+40(FP), R14
	MOVQ acc+48(FP), R9
	AVX2CONST
	MOVQ  CX, R10
	ANDQ  $3, R10 // blocks in a partial group
	SHRQ  $2, CX
	TESTQ R14, R14
	JZ    done

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   SI, R11
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     part

grp:
	Q4PAIR(0, 18, 0, 64, 128, 192, Y0)
	Q4PAIR(36, 54, 32, 96, 160, 224, Y1)
	ADDQ $72, R11
	ADDQ $256, R12
	DECQ R13
	JNZ  grp

part:
	CMPQ R10, $2
	JB   single
	Q4PAIR(0, 18, 0, 64, 128, 192, Y0)
	CMPQ R10, $3
	JB   fin
	// third block alone: its pair partner is padding (zero activations,
	// so any weight bytes would do, but stay inside the row: reuse it).
	Q4PAIR(36, 36, 32, 96, 160, 224, Y1)
	JMP  fin

single:
	CMPQ R10, $1
	JB   fin
	Q4PAIR(0, 0, 0, 64, 128, 192, Y0)

fin:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDSS       X1, X0, X0
	TESTQ        R9, R9
	JZ           store
	VADDSS       (DX), X0, X0

store:
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, SI
	DECQ   R14
	JNZ    row

done:
	VZEROUPPER
	RET

// Q8BLK accumulates into f the product of the Q8_0 block at w(R11) with the
// activations at x(R12) (scales at s(R12)).
#define Q8BLK(w, x, s, f) \
	VMOVDQU      w+2(R11), Y8; \
	VMOVDQU      x(R12), Y9; \
	VPSIGNB      Y8, Y9, Y9; \
	VPABSB       Y8, Y8; \
	VPMADDUBSW   Y9, Y8, Y8; \
	VPMADDWD     Y14, Y8, Y8; \
	VCVTDQ2PS    Y8, Y8; \
	VPBROADCASTW w(R11), X10; \
	VCVTPH2PS    X10, Y10; \
	VMULPS       s(R12), Y10, Y10; \
	VFMADD231PS  Y10, Y8, f

// func gemvQ8_0AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)
// As gemvQ4_0AVX2 for Q8_0 weights and activations in layout B.
TEXT ·gemvQ8_0AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ ldw+8(FP), BX
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ nrows+40(FP), R14
	MOVQ acc+48(FP), R9
	AVX2CONST
	MOVQ  CX, R10
	ANDQ  $1, R10
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    done

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   SI, R11
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     part

pair:
	Q8BLK(0, 0, 128, Y0)
	Q8BLK(34, 32, 160, Y1)
	ADDQ $68, R11
	ADDQ $192, R12
	DECQ R13
	JNZ  pair

part:
	TESTQ R10, R10
	JZ    fin
	Q8BLK(0, 0, 128, Y0)

fin:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDSS       X1, X0, X0
	TESTQ        R9, R9
	JZ           store
	VADDSS       (DX), X0, X0

store:
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, SI
	DECQ   R14
	JNZ    row

done:
	VZEROUPPER
	RET
