//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet; the Q4_0/Q8_0 AVX2 gemvs share macros (issue 18 item 3).

#include "textflag.h"

// Q4_0 and Q8_0 weights times activations in layouts A and P (q8pack.go),
// AVX2: VPMADDUBSW (unsigned × signed bytes to int16 pairs) and VPMADDWD
// give int32 partial sums, VPHADDD adds them into one exact sum per block,
// and each output is ggml's chain over the row's blocks in order,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc),
//
// one scalar FMA per block. Y15 holds 0x0f bytes, Y14 int16 ones; the
// frame holds the float sums of 4 blocks.

#define AVX2CONST \
	MOVL         $0x0f0f0f0f, AX; \
	MOVD         AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL         $0x00010001, AX; \
	MOVD         AX, X14; \
	VPBROADCASTD X14, Y14

// Q4PAIRI sets out to the int32 partial sums (4 per block, corrections
// included) of Q4_0 blocks 2p and 2p+1 of the group at R11 (weight byte
// offsets w0 and w1) with the group at R12 (lo quants at xl, hi at xh,
// corrections at c).
#define Q4PAIRI(w0, w1, xl, xh, c, out) \
	VMOVDQU     w0+2(R11), X8; \
	VINSERTI128 $1, w1+2(R11), Y8, Y8; \
	VPSRLW      $4, Y8, Y9; \
	VPAND       Y15, Y8, Y8; \
	VPAND       Y15, Y9, Y9; \
	VPMADDUBSW  xl(R12), Y8, Y8; \
	VPMADDUBSW  xh(R12), Y9, Y9; \
	VPADDW      Y9, Y8, Y8; \
	VPMADDWD    Y14, Y8, Y8; \
	VPADDD      c(R12), Y8, out

// Q4SUMS adds the partial sums of blocks 0, 1 (Y2) and 2, 3 (Y3) of a
// group and stores them as float32 at 0(SP): block 0 at 0, 1 at 16, 2 at 4,
// 3 at 20.
#define Q4SUMS \
	VPHADDD   Y3, Y2, Y8; \
	VPHADDD   Y8, Y8, Y8; \
	VCVTDQ2PS Y8, Y8; \
	VMOVUPS   Y8, 0(SP)

// CHAINBLK runs one block of the chain in X0: the weight scale at w(R11)
// times the activation scale at s(R12), fused with the block's sum at
// f(SP).
#define CHAINBLK(w, f, s) \
	VPBROADCASTW w(R11), X10; \
	VCVTPH2PS    X10, X10; \
	VMULSS       s(R12), X10, X10; \
	VFMADD231SS  f(SP), X10, X0

// FINISH adds the old output to the chain in X0 when acc (R9) is set,
// stores it and advances to the next row.
#define FINISH \
	TESTQ  R9, R9; \
	JZ     store; \
	VADDSS (DX), X0, X0; \
store: \
	VMOVSS X0, (DX); \
	ADDQ   $4, DX; \
	ADDQ   BX, SI; \
	DECQ   R14; \
	JNZ    row

// func gemvQ4_0AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)
// For each of nrows rows of nb Q4_0 blocks (ldw bytes apart), y[r] = w_r·x
// (or += when acc is not 0, one addition after the chain). x is in
// layout A.
TEXT ·gemvQ4_0AVX2(SB), NOSPLIT, $32-56
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
	VXORPS X0, X0, X0
	MOVQ   SI, R11
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     part

grp:
	Q4PAIRI(0, 18, 0, 64, 128, Y2)
	Q4PAIRI(36, 54, 32, 96, 160, Y3)
	Q4SUMS
	CHAINBLK(0, 0, 192)
	CHAINBLK(18, 16, 208)
	CHAINBLK(36, 4, 224)
	CHAINBLK(54, 20, 240)
	ADDQ $72, R11
	ADDQ $256, R12
	DECQ R13
	JNZ  grp

part:
	// A partial group of 1-3 blocks: a missing pair partner reuses a
	// block of the row (its activations are zero padding), and only the
	// present blocks enter the chain.
	CMPQ   R10, $1
	JB     fin
	VPXOR  Y3, Y3, Y3
	JA     two
	Q4PAIRI(0, 0, 0, 64, 128, Y2)
	Q4SUMS
	CHAINBLK(0, 0, 192)
	JMP    fin

two:
	Q4PAIRI(0, 18, 0, 64, 128, Y2)
	CMPQ   R10, $3
	JB     two1
	Q4PAIRI(36, 36, 32, 96, 160, Y3)

two1:
	Q4SUMS
	CHAINBLK(0, 0, 192)
	CHAINBLK(18, 16, 208)
	CMPQ   R10, $3
	JB     fin
	CHAINBLK(36, 4, 224)

fin:
	FINISH

done:
	VZEROUPPER
	RET

// Q8BLKI sets out to the 8 int32 partial sums of the Q8_0 block at w(R11)
// with the activations at x(R12).
#define Q8BLKI(w, x, out) \
	VMOVDQU    w+2(R11), Y8; \
	VMOVDQU    x(R12), Y9; \
	VPSIGNB    Y8, Y9, Y9; \
	VPABSB     Y8, Y8; \
	VPMADDUBSW Y9, Y8, Y8; \
	VPMADDWD   Y14, Y8, out

// Q8SUMS adds the partial sums of blocks 0-3 (Y2..Y5) and stores them as
// float32 at 0(SP), 4(SP), 8(SP), 12(SP).
#define Q8SUMS \
	VPHADDD      Y3, Y2, Y8; \
	VPHADDD      Y5, Y4, Y9; \
	VPHADDD      Y9, Y8, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VPADDD       X9, X8, X8; \
	VCVTDQ2PS    X8, X8; \
	VMOVUPS      X8, 0(SP)

// func gemvQ8_0AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)
// As gemvQ4_0AVX2 for Q8_0 weights and activations in layout P.
TEXT ·gemvQ8_0AVX2(SB), NOSPLIT, $32-56
	MOVQ w+0(FP), SI
	MOVQ ldw+8(FP), BX
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ nrows+40(FP), R14
	MOVQ acc+48(FP), R9
	AVX2CONST
	MOVQ  CX, R10
	ANDQ  $3, R10 // blocks after the whole groups of 4
	SHRQ  $2, CX
	TESTQ R14, R14
	JZ    done

row:
	VXORPS X0, X0, X0
	MOVQ   SI, R11
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     part

grp:
	Q8BLKI(0, 0, Y2)
	Q8BLKI(34, 32, Y3)
	Q8BLKI(68, 192, Y4)
	Q8BLKI(102, 224, Y5)
	Q8SUMS
	CHAINBLK(0, 0, 128)
	CHAINBLK(34, 4, 160)
	CHAINBLK(68, 8, 320)
	CHAINBLK(102, 12, 352)
	ADDQ $136, R11
	ADDQ $384, R12
	DECQ R13
	JNZ  grp

part:
	// 1-3 blocks left: missing ones are zero sums, left out of the chain.
	CMPQ  R10, $1
	JB    fin
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	Q8BLKI(0, 0, Y2)
	CMPQ  R10, $2
	JB    sums
	Q8BLKI(34, 32, Y3)
	CMPQ  R10, $3
	JB    sums
	Q8BLKI(68, 192, Y4)

sums:
	Q8SUMS
	CHAINBLK(0, 0, 128)
	CMPQ R10, $2
	JB   fin
	CHAINBLK(34, 4, 160)
	CMPQ R10, $3
	JB   fin
	CHAINBLK(68, 8, 320)

fin:
	FINISH

done:
	VZEROUPPER
	RET
