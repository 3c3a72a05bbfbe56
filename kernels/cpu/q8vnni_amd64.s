//go:build amd64 && !noasm

#include "textflag.h"
#include "simd_amd64.h"

#define PFD 2048

// Q4_0 and Q8_0 weights times activations in layouts A and B (q8pack.go),
// AVX-512 with VNNI (VPDPBUSD) and VBMI (VPERMI2B).

// Byte gather of one Q4_0 group (4 blocks of 18 bytes) from two overlapping
// 64-byte loads (bytes [0,64) and [8,72)): the 4×16 quant bytes, and the
// 4 scales, each repeated over the 4 words of its block's lanes.
DATA q4qidx<>+0(SB)/8, $0x0908070605040302
DATA q4qidx<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q4qidx<>+16(SB)/8, $0x1b1a191817161514
DATA q4qidx<>+24(SB)/8, $0x232221201f1e1d1c
DATA q4qidx<>+32(SB)/8, $0x2d2c2b2a29282726
DATA q4qidx<>+40(SB)/8, $0x3534333231302f2e
DATA q4qidx<>+48(SB)/8, $0x3f3e3d3c3b3a3938
DATA q4qidx<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL q4qidx<>(SB), RODATA|NOPTR, $64
DATA q4sidx<>+0(SB)/8, $0x0100010001000100
DATA q4sidx<>+8(SB)/8, $0x1312131213121312
DATA q4sidx<>+16(SB)/8, $0x2524252425242524
DATA q4sidx<>+24(SB)/8, $0x3736373637363736
DATA q4sidx<>+32(SB)/8, $0
DATA q4sidx<>+40(SB)/8, $0
DATA q4sidx<>+48(SB)/8, $0
DATA q4sidx<>+56(SB)/8, $0
GLOBL q4sidx<>(SB), RODATA|NOPTR, $64

// Q4CONST loads the constants of the Q4_0 kernels: Z31 = 0x0f bytes, Z30 and
// Z29 the gather indices, Z28 the GF(2) affine matrix that shifts each byte
// right by 4.
#define Q4CONST \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31; \
	VMOVDQU64    q4qidx<>(SB), Z30; \
	VMOVDQU64    q4sidx<>(SB), Z29; \
	MOVQ         $0x1020408000000000, AX; \
	VPBROADCASTQ AX, Z28

// Q4MASKS sets K2 and K3 to the bytes of a partial group of R10 blocks in
// the first and second 64-byte load. It uses R11, R12 and R13.
#define Q4MASKS \
	IMUL3Q $18, R10, R11; \
	MOVQ   $-1, R12; \
	BZHIQ  R11, R12, R13; \
	KMOVQ  R13, K2; \
	SUBQ   $8, R11; \
	BZHIQ  R11, R12, R13; \
	KMOVQ  R13, K3

// Q4LOAD gathers a Q4_0 group whose bytes [0,64) are m1 and [8,72) m2
// (registers or memory): q gets the 4×16 quant bytes, sc (scy its ymm
// name) the 16 float32 scales, 4 lanes per block.
#define Q4LOAD(m1, m2, q, sc, scy) \
	VMOVDQU8  m1, q; \
	VPERMB    m1, Z29, sc; \
	VPERMT2B  m2, Z30, q; \
	VCVTPH2PS scy, sc

// Q4NIB splits the quant bytes in q into low nibbles (q) and high (hi).
#define Q4NIB(q, hi) \
	VGF2P8AFFINEQB $0, Z28, q, hi; \
	VPANDD         Z31, q, q

// Q4DOT accumulates into f one group's product: corr, xl and xh are the
// activation rows (register or memory), sx the activation scales (memory),
// t1 and t2 scratch.
#define Q4DOT(lo, hi, sc, corr, xl, xh, sx, f, t1, t2) \
	VMOVDQU32   corr, t1; \
	VPDPBUSD    xl, lo, t1; \
	VPDPBUSD    xh, hi, t1; \
	VCVTDQ2PS   t1, t1; \
	VMULPS      sx, sc, t2; \
	VFMADD231PS t2, t1, f

// func gemvQ4_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)
// For each of nrows rows of nb Q4_0 blocks (ldw bytes apart), y[r] = w_r·x,
// or y[r] += w_r·x when acc is not 0. x is in layout A.
TEXT ·gemvQ4_0VNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ ldw+8(FP), BX
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ nrows+40(FP), R14
	MOVQ acc+48(FP), R9
	Q4CONST
	MOVQ CX, R10
	ANDQ $3, R10
	SHRQ $2, CX
	Q4MASKS
	TESTQ R14, R14
	JZ    done

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   SI, R11
	MOVQ   DI, R12
	MOVQ   CX, R13
	SUBQ   $2, R13
	JB     one

pair:
	PREFETCHT0 PFD(R11)
	PREFETCHT0 PFD+64(R11)
	PREFETCHT0 PFD+128(R11)
	Q4LOAD((R11), 8(R11), Z9, Z11, Y11)
	Q4NIB(Z9, Z10)
	Q4DOT(Z9, Z10, Z11, 128(R12), (R12), 64(R12), 192(R12), Z0, Z12, Z13)
	Q4LOAD(72(R11), 80(R11), Z15, Z17, Y17)
	Q4NIB(Z15, Z16)
	Q4DOT(Z15, Z16, Z17, 384(R12), 256(R12), 320(R12), 448(R12), Z1, Z18, Z19)
	ADDQ $144, R11
	ADDQ $512, R12
	SUBQ $2, R13
	JAE  pair

one:
	ADDQ $2, R13
	JZ   part
	Q4LOAD((R11), 8(R11), Z9, Z11, Y11)
	Q4NIB(Z9, Z10)
	Q4DOT(Z9, Z10, Z11, 128(R12), (R12), 64(R12), 192(R12), Z0, Z12, Z13)
	ADDQ $72, R11
	ADDQ $256, R12

part:
	TESTQ R10, R10
	JZ    fin
	VMOVDQU8.Z (R11), K2, Z8
	VMOVDQU8.Z 8(R11), K3, Z10
	Q4LOAD(Z8, Z10, Z9, Z11, Y11)
	Q4NIB(Z9, Z10)
	Q4DOT(Z9, Z10, Z11, 128(R12), (R12), 64(R12), 192(R12), Z1, Z12, Z13)

fin:
	VADDPS Z1, Z0, Z0
	HSUM(Z0, Y0, X0, Y1, X1)
	TESTQ  R9, R9
	JZ     store
	VADDSS (DX), X0, X0

store:
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, SI
	DECQ   R14
	JNZ    row

done:
	VZEROUPPER
	RET

// Q8UNPACK loads a pair of Q8_0 blocks at base: q (qy its ymm name) gets
// the 64 quants with the sign bit flipped (w+128, unsigned), sc (scy, scx)
// the 16 float32 scales (lanes 0-7 block 0, 8-15 block 1); tx is scratch.
#define Q8UNPACK(base, q, qy, sc, scy, scx, tx) \
	VMOVDQU8      2(base), qy; \
	VINSERTI64X4  $1, 36(base), q, q; \
	VPXORD        Z28, q, q; \
	VPBROADCASTW  (base), scx; \
	VPBROADCASTW  34(base), tx; \
	VINSERTI32X4  $1, tx, scy, scy; \
	VCVTPH2PS     scy, sc

// Q8UNPACK1 loads a single Q8_0 block at base as the first of a pair whose
// second block is zero.
#define Q8UNPACK1(base, q, qy, sc, scy, scx) \
	VMOVDQU8      2(base), qy; \
	VPXORD        Z28, q, q; \
	VPBROADCASTW  (base), scx; \
	VCVTPH2PS     scy, sc

// Q8DOT accumulates into f one pair's product; corr, x and sx are the
// activation rows (register or memory), t1 and t2 scratch.
#define Q8DOT(q, sc, corr, x, sx, f, t1, t2) \
	VMOVDQU32   corr, t1; \
	VPDPBUSD    x, q, t1; \
	VCVTDQ2PS   t1, t1; \
	VMULPS      sx, sc, t2; \
	VFMADD231PS t2, t1, f

#define Q8CONST \
	MOVL         $0x80808080, AX; \
	VPBROADCASTD AX, Z28

// func gemvQ8_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)
// As gemvQ4_0VNNI for Q8_0 weights and activations in layout B.
TEXT ·gemvQ8_0VNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ ldw+8(FP), BX
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ nrows+40(FP), R14
	MOVQ acc+48(FP), R9
	Q8CONST
	MOVQ  CX, R10
	ANDQ  $1, R10
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    done

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   SI, R11
	MOVQ   DI, R12
	MOVQ   CX, R13
	SUBQ   $2, R13
	JB     one

pair:
	PREFETCHT0 PFD(R11)
	PREFETCHT0 PFD+64(R11)
	PREFETCHT0 PFD+128(R11)
	Q8UNPACK(R11, Z8, Y8, Z9, Y9, X9, X10)
	Q8DOT(Z8, Z9, 64(R12), (R12), 128(R12), Z0, Z11, Z12)
	ADDQ $68, R11
	Q8UNPACK(R11, Z13, Y13, Z14, Y14, X14, X15)
	Q8DOT(Z13, Z14, 256(R12), 192(R12), 320(R12), Z1, Z16, Z17)
	ADDQ $68, R11
	ADDQ $384, R12
	SUBQ $2, R13
	JAE  pair

one:
	ADDQ $2, R13
	JZ   part
	Q8UNPACK(R11, Z8, Y8, Z9, Y9, X9, X10)
	Q8DOT(Z8, Z9, 64(R12), (R12), 128(R12), Z0, Z11, Z12)
	ADDQ $68, R11
	ADDQ $192, R12

part:
	TESTQ R10, R10
	JZ    fin
	Q8UNPACK1(R11, Z8, Y8, Z9, Y9, X9)
	Q8DOT(Z8, Z9, 64(R12), (R12), 128(R12), Z1, Z11, Z12)

fin:
	VADDPS Z1, Z0, Z0
	HSUM(Z0, Y0, X0, Y1, X1)
	TESTQ  R9, R9
	JZ     store
	VADDSS (DX), X0, X0

store:
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, SI
	DECQ   R14
	JNZ    row

done:
	VZEROUPPER
	RET

// In the 4-stream matrix-vector kernels, R8..R11 point at the current rows
// of the 4 streams (q rows apart), BX is the row stride, DI the
// activations, CX the byte length of the whole groups, DX the output of
// stream 0 and SI the byte distance 4q between the streams' outputs, R14
// the rows left.

// GEMV4STORE stores the 4 sums in X0 at (DX), (DX)(SI*1), (DX)(SI*2) and
// 3·SI(DX) (R13 = DX+2·SI), then advances DX and the rows.
#define GEMV4STORE \
	VMOVSS     X0, (DX); \
	VEXTRACTPS $1, X0, (DX)(SI*1); \
	VEXTRACTPS $2, X0, (R13); \
	VEXTRACTPS $3, X0, (R13)(SI*1); \
	ADDQ       $4, DX; \
	ADDQ       BX, R8; \
	ADDQ       BX, R9; \
	ADDQ       BX, R10; \
	ADDQ       BX, R11

// Q4ROW accumulates into f the group at offset AX of the row at p, with the
// activations in Z16 (lo), Z17 (hi), Z18 (corrections), Z19 (scales).
#define Q4ROW(p, f) \
	Q4LOAD((p)(AX*1), 8(p)(AX*1), Z9, Z11, Y11); \
	Q4NIB(Z9, Z10); \
	Q4DOT(Z9, Z10, Z11, Z18, Z16, Z17, Z19, f, Z12, Z13)

#define Q4ROWPART(p, f) \
	VMOVDQU8.Z (p)(AX*1), K2, Z8; \
	VMOVDQU8.Z 8(p)(AX*1), K3, Z10; \
	Q4LOAD(Z8, Z10, Z9, Z11, Y11); \
	Q4NIB(Z9, Z10); \
	Q4DOT(Z9, Z10, Z11, Z18, Z16, Z17, Z19, f, Z12, Z13)

#define XLOAD4 \
	VMOVDQU64 (R12), Z16; \
	VMOVDQU64 64(R12), Z17; \
	VMOVDQU64 128(R12), Z18; \
	VMOVDQU64 192(R12), Z19

// func gemv4Q4_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_0 blocks,
// ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not 0. The
// streams are read side by side, which keeps more memory reads in flight
// than one stream does. x is in layout A.
TEXT ·gemv4Q4_0VNNI(SB), NOSPLIT, $0-56
	Q4CONST
	MOVQ nb+24(FP), R10
	ANDQ $3, R10
	Q4MASKS
	MOVQ   w+0(FP), R8
	MOVQ   ldw+8(FP), BX
	MOVQ   x+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   y+32(FP), DX
	MOVQ   q+40(FP), R14
	MOVQ   R14, AX
	IMULQ  BX, AX
	LEAQ   (R8)(AX*1), R9
	LEAQ   (R9)(AX*1), R10
	LEAQ   (R10)(AX*1), R11
	MOVQ   R14, SI
	SHLQ   $2, SI
	SHRQ   $2, CX
	IMUL3Q $72, CX, CX // end offset of the whole groups
	TESTQ  R14, R14
	JZ     done

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   DI, R12
	TESTQ  CX, CX
	JZ     part

grp:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	XLOAD4
	Q4ROW(R8, Z0)
	Q4ROW(R9, Z1)
	Q4ROW(R10, Z2)
	Q4ROW(R11, Z3)
	ADDQ $72, AX
	ADDQ $256, R12
	CMPQ AX, CX
	JB   grp

part:
	MOVQ nb+24(FP), R13
	ANDQ $3, R13
	JZ   fin
	XLOAD4
	Q4ROWPART(R8, Z0)
	Q4ROWPART(R9, Z1)
	Q4ROWPART(R10, Z2)
	Q4ROWPART(R11, Z3)

fin:
	REDUCE4X(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, X1, Y20)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

store:
	GEMV4STORE
	DECQ R14
	JNZ  row

done:
	VZEROUPPER
	RET

// Q8ROW accumulates into f the pair at offset AX of the row at p, with the
// activations in Z16 (quants), Z18 (corrections), Z19 (scales).
#define Q8ROW(p, f) \
	LEAQ (p)(AX*1), R13; \
	Q8UNPACK(R13, Z8, Y8, Z9, Y9, X9, X10); \
	Q8DOT(Z8, Z9, Z18, Z16, Z19, f, Z12, Z13)

#define Q8ROW1(p, f) \
	LEAQ (p)(AX*1), R13; \
	Q8UNPACK1(R13, Z8, Y8, Z9, Y9, X9); \
	Q8DOT(Z8, Z9, Z18, Z16, Z19, f, Z12, Z13)

#define XLOAD3 \
	VMOVDQU64 (R12), Z16; \
	VMOVDQU64 64(R12), Z18; \
	VMOVDQU64 128(R12), Z19

// func gemv4Q8_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4_0VNNI for Q8_0 weights and activations in layout B.
TEXT ·gemv4Q8_0VNNI(SB), NOSPLIT, $0-56
	Q8CONST
	MOVQ   w+0(FP), R8
	MOVQ   ldw+8(FP), BX
	MOVQ   x+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   y+32(FP), DX
	MOVQ   q+40(FP), R14
	MOVQ   R14, AX
	IMULQ  BX, AX
	LEAQ   (R8)(AX*1), R9
	LEAQ   (R9)(AX*1), R10
	LEAQ   (R10)(AX*1), R11
	MOVQ   R14, SI
	SHLQ   $2, SI
	SHRQ   $1, CX
	IMUL3Q $68, CX, CX // end offset of the whole pairs
	TESTQ  R14, R14
	JZ     done

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   DI, R12
	TESTQ  CX, CX
	JZ     part

pair:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	XLOAD3
	Q8ROW(R8, Z0)
	Q8ROW(R9, Z1)
	Q8ROW(R10, Z2)
	Q8ROW(R11, Z3)
	ADDQ $68, AX
	ADDQ $192, R12
	CMPQ AX, CX
	JB   pair

part:
	MOVQ nb+24(FP), R13
	ANDQ $1, R13
	JZ   fin
	XLOAD3
	Q8ROW1(R8, Z0)
	Q8ROW1(R9, Z1)
	Q8ROW1(R10, Z2)
	Q8ROW1(R11, Z3)

fin:
	REDUCE4X(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, X1, Y20)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

store:
	GEMV4STORE
	DECQ R14
	JNZ  row

done:
	VZEROUPPER
	RET
