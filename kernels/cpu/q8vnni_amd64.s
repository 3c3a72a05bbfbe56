//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet; its Q4_0/Q8_0 gemv4 kernels share macros and keep locals in the frame (issue 18 item 3).

#include "textflag.h"

#define PFD 2048

// Matrix-vector products of Q4_0 and Q8_0 weights with activations in
// layouts A and B (q8pack.go), AVX-512 with VNNI (VPDPBUSD) and VBMI
// (VPERMT2B). Each output is ggml's chain over the row's blocks,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc)
//
// bit for bit. Four rows (one per memory stream) are done side by side, 4
// blocks at a time: VPDPBUSD leaves 4 int32 partial sums per block and row,
// an in-register transpose adds them into one vector whose lane 4j+r is
// block j of row r, and the chain then takes the blocks in order, 4 rows
// per FMA.

// Byte gather of one Q4_0 group (4 blocks of 18 bytes) from two overlapping
// 64-byte loads (bytes [0,64) and [8,72)): the 4×16 quant bytes.
DATA q4qidx<>+0(SB)/8, $0x0908070605040302
DATA q4qidx<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q4qidx<>+16(SB)/8, $0x1b1a191817161514
DATA q4qidx<>+24(SB)/8, $0x232221201f1e1d1c
DATA q4qidx<>+32(SB)/8, $0x2d2c2b2a29282726
DATA q4qidx<>+40(SB)/8, $0x3534333231302f2e
DATA q4qidx<>+48(SB)/8, $0x3f3e3d3c3b3a3938
DATA q4qidx<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL q4qidx<>(SB), RODATA|NOPTR, $64

// Byte gather of the f16 scales of 4 Q4_0 groups, two at a time: from the
// first 64 bytes of rows r (table 1) and r+1 (table 2), word 4j+r' of the
// result (r' = 0, 2 from table 1; 1, 3 from table 2) is block j's scale
// (word 9j).
DATA q4sidx<>+0(SB)/8, $0x4140010041400100
DATA q4sidx<>+8(SB)/8, $0x5352131253521312
DATA q4sidx<>+16(SB)/8, $0x6564252465642524
DATA q4sidx<>+24(SB)/8, $0x7776373677763736
DATA q4sidx<>+32(SB)/8, $0
DATA q4sidx<>+40(SB)/8, $0
DATA q4sidx<>+48(SB)/8, $0
DATA q4sidx<>+56(SB)/8, $0
GLOBL q4sidx<>(SB), RODATA|NOPTR, $64

// Byte gathers of a Q8_0 group (4 blocks of 34 bytes): the first 16 quants
// of each block from bytes [0,128), the last 16 from bytes [8,136).
DATA q8aidx<>+0(SB)/8, $0x0908070605040302
DATA q8aidx<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q8aidx<>+16(SB)/8, $0x2b2a292827262524
DATA q8aidx<>+24(SB)/8, $0x333231302f2e2d2c
DATA q8aidx<>+32(SB)/8, $0x4d4c4b4a49484746
DATA q8aidx<>+40(SB)/8, $0x5554535251504f4e
DATA q8aidx<>+48(SB)/8, $0x6f6e6d6c6b6a6968
DATA q8aidx<>+56(SB)/8, $0x7776757473727170
GLOBL q8aidx<>(SB), RODATA|NOPTR, $64
DATA q8bidx<>+0(SB)/8, $0x11100f0e0d0c0b0a
DATA q8bidx<>+8(SB)/8, $0x1918171615141312
DATA q8bidx<>+16(SB)/8, $0x333231302f2e2d2c
DATA q8bidx<>+24(SB)/8, $0x3b3a393837363534
DATA q8bidx<>+32(SB)/8, $0x5554535251504f4e
DATA q8bidx<>+40(SB)/8, $0x5d5c5b5a59585756
DATA q8bidx<>+48(SB)/8, $0x7776757473727170
DATA q8bidx<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL q8bidx<>(SB), RODATA|NOPTR, $64

// The same for Q8_0 groups: words 0 and 17 of bytes [0,64) of the rows
// give blocks 0 and 1 (words 0-7), words 2 and 19 of bytes [64,128) blocks
// 2 and 3 (words 8-15).
DATA q8sidx<>+0(SB)/8, $0x4140010041400100
DATA q8sidx<>+8(SB)/8, $0x6362232263622322
DATA q8sidx<>+16(SB)/8, $0x4544050445440504
DATA q8sidx<>+24(SB)/8, $0x6766272667662726
DATA q8sidx<>+32(SB)/8, $0
DATA q8sidx<>+40(SB)/8, $0
DATA q8sidx<>+48(SB)/8, $0
DATA q8sidx<>+56(SB)/8, $0
GLOBL q8sidx<>(SB), RODATA|NOPTR, $64

// In the kernels, R8..R11 point at the current rows of the 4 streams (q
// rows apart), AX is the byte offset in the rows, BX the row stride, DI the
// activations and R12 the current activation group, CX the byte length of
// the rows' whole groups, DX the output of stream 0 and SI the byte
// distance 4q between the streams' outputs, R14 the rows left. Z16-Z19 hold
// the activation group (layout A or B), Y20 gets the weight scales (f16
// word 4j+r: block j of row r). K4 selects the words of rows 2 and 3, K5
// those of blocks 2 and 3.

#define SMASKS \
	MOVL  $0xcccc, AX; \
	KMOVD AX, K4; \
	MOVL  $0xff00, AX; \
	KMOVD AX, K5

#define XLOAD4 \
	VMOVDQU64 (R12), Z16; \
	VMOVDQU64 64(R12), Z17; \
	VMOVDQU64 128(R12), Z18; \
	VMOVDQU64 192(R12), Z19

// REDUCE4I adds the 4 int32 lanes of each block (128-bit lane j) of the
// rows' partial sums t0..t3 into Z11: lane 4j+r is row r's sum of block j.
#define REDUCE4I(t0, t1, t2, t3) \
	VPUNPCKLDQ  t1, t0, Z11; \
	VPUNPCKHDQ  t1, t0, Z12; \
	VPADDD      Z12, Z11, Z11; \
	VPUNPCKLDQ  t3, t2, Z12; \
	VPUNPCKHDQ  t3, t2, Z13; \
	VPADDD      Z13, Z12, Z12; \
	VPUNPCKLQDQ Z12, Z11, Z13; \
	VPUNPCKHQDQ Z12, Z11, Z14; \
	VPADDD      Z14, Z13, Z11

// CHAIN4 converts the sums in Z11, multiplies the weight scales (f16 words
// in Y20) by the activation scales (Z19) and runs the chain of the 4
// blocks, in order, for the 4 rows in X0.
#define CHAIN4 \
	VCVTDQ2PS   Z11, Z11; \
	VCVTPH2PS   Y20, Z12; \
	VMULPS      Z19, Z12, Z12; \
	VMOVUPS     Z11, 0(SP); \
	VMOVUPS     Z12, 64(SP); \
	VFMADD231PS X12, X11, X0; \
	VMOVUPS     16(SP), X13; \
	VFMADD231PS 80(SP), X13, X0; \
	VMOVUPS     32(SP), X13; \
	VFMADD231PS 96(SP), X13, X0; \
	VMOVUPS     48(SP), X13; \
	VFMADD231PS 112(SP), X13, X0

// GEMV4FIN adds the old outputs to the 4 chains in X0 when acc is set,
// stores them at (DX), (DX)(SI*1), (DX)(SI*2) and 3·SI(DX), then advances DX
// and the rows. It uses R13.
#define GEMV4FIN \
	LEAQ       (DX)(SI*2), R13; \
	CMPQ       acc+48(FP), $0; \
	JEQ        store; \
	VMOVSS     (DX), X4; \
	VINSERTPS  $0x10, (DX)(SI*1), X4, X4; \
	VINSERTPS  $0x20, (R13), X4, X4; \
	VINSERTPS  $0x30, (R13)(SI*1), X4, X4; \
	VADDPS     X4, X0, X0; \
store: \
	VMOVSS     X0, (DX); \
	VEXTRACTPS $1, X0, (DX)(SI*1); \
	VEXTRACTPS $2, X0, (R13); \
	VEXTRACTPS $3, X0, (R13)(SI*1); \
	ADDQ       $4, DX; \
	ADDQ       BX, R8; \
	ADDQ       BX, R9; \
	ADDQ       BX, R10; \
	ADDQ       BX, R11

// GEMV4SETUP loads the arguments into the registers above.
#define GEMV4SETUP(GB) \
	MOVQ   w+0(FP), R8; \
	MOVQ   ldw+8(FP), BX; \
	MOVQ   x+16(FP), DI; \
	MOVQ   nb+24(FP), CX; \
	MOVQ   y+32(FP), DX; \
	MOVQ   q+40(FP), R14; \
	MOVQ   R14, AX; \
	IMULQ  BX, AX; \
	LEAQ   (R8)(AX*1), R9; \
	LEAQ   (R9)(AX*1), R10; \
	LEAQ   (R10)(AX*1), R11; \
	MOVQ   R14, SI; \
	SHLQ   $2, SI; \
	SHRQ   $2, CX; \
	IMUL3Q $GB, CX, CX

// Q4SCALES gathers the scales of the Q4_0 groups of the 4 rows at
// oi(pi)(AX*1) into Y20.
#define Q4SCALES(p0, o0, p1, o1, p2, o2, p3, o3) \
	VMOVDQU8  o0(p0)(AX*1), Z20; \
	VPERMT2B  o1(p1)(AX*1), Z29, Z20; \
	VMOVDQU8  o2(p2)(AX*1), Z21; \
	VPERMT2B  o3(p3)(AX*1), Z29, Z21; \
	VMOVDQU16 Z21, K4, Z20

// Q4STREAM accumulates into t the partial sums of the Q4_0 group at
// o(p)(AX*1): 4 int32 per block, the corrections plus the VPDPBUSD of low
// and high nibbles with the activations.
#define Q4STREAM(p, o, t) \
	VMOVDQU8       o(p)(AX*1), Z9; \
	VPERMT2B       o+8(p)(AX*1), Z30, Z9; \
	VGF2P8AFFINEQB $0, Z28, Z9, Z10; \
	VPANDD         Z31, Z9, Z9; \
	VMOVDQA64      Z18, t; \
	VPDPBUSD       Z16, Z9, t; \
	VPDPBUSD       Z17, Z10, t

// func gemv4Q4_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_0 blocks,
// ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or y[j·q+r] += w_{j·q+r}·x when
// acc is not 0 (one addition after the chain). The streams are read side
// by side, which keeps more memory reads in flight than one stream does.
// x is in layout A. The frame holds the chain's inputs (128 bytes) and a
// partial last group of a row, copied and zero-padded (128 bytes per
// stream).
TEXT ·gemv4Q4_0VNNI(SB), 0, $640-56
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64    q4qidx<>(SB), Z30
	VMOVDQU64    q4sidx<>(SB), Z29
	MOVQ         $0x1020408000000000, AX
	VPBROADCASTQ AX, Z28
	SMASKS
	MOVQ         nb+24(FP), AX
	ANDQ         $3, AX
	IMUL3Q       $18, AX, AX
	MOVQ         $-1, R13
	BZHIQ        AX, R13, R13
	KMOVQ        R13, K2
	GEMV4SETUP(72)
	TESTQ        R14, R14
	JZ           done

row:
	VXORPS X0, X0, X0
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
	Q4STREAM(R8, 0, Z4)
	Q4STREAM(R9, 0, Z5)
	Q4STREAM(R10, 0, Z6)
	Q4STREAM(R11, 0, Z7)
	Q4SCALES(R8, 0, R9, 0, R10, 0, R11, 0)
	REDUCE4I(Z4, Z5, Z6, Z7)
	CHAIN4
	ADDQ       $72, AX
	ADDQ       $256, R12
	CMPQ       AX, CX
	JB         grp

part:
	MOVQ          nb+24(FP), R13
	ANDQ          $3, R13
	JZ            fin
	VPXORD        Z15, Z15, Z15
	VMOVDQU8.Z    (R8)(AX*1), K2, Z9
	VMOVDQU64     Z9, 128(SP)
	VMOVDQU64     Z15, 192(SP)
	VMOVDQU8.Z    (R9)(AX*1), K2, Z9
	VMOVDQU64     Z9, 256(SP)
	VMOVDQU64     Z15, 320(SP)
	VMOVDQU8.Z    (R10)(AX*1), K2, Z9
	VMOVDQU64     Z9, 384(SP)
	VMOVDQU64     Z15, 448(SP)
	VMOVDQU8.Z    (R11)(AX*1), K2, Z9
	VMOVDQU64     Z9, 512(SP)
	VMOVDQU64     Z15, 576(SP)
	LEAQ          128(SP), R13
	XORQ          AX, AX
	XLOAD4
	Q4STREAM(R13, 0, Z4)
	Q4STREAM(R13, 128, Z5)
	Q4STREAM(R13, 256, Z6)
	Q4STREAM(R13, 384, Z7)
	Q4SCALES(R13, 0, R13, 128, R13, 256, R13, 384)
	REDUCE4I(Z4, Z5, Z6, Z7)
	CHAIN4

fin:
	GEMV4FIN
	DECQ R14
	JNZ  row

done:
	VZEROUPPER
	RET

// Q8SCALES gathers the scales of the Q8_0 groups of the 4 rows at
// oi(pi)(AX*1) into Y20.
#define Q8SCALES(p0, o0, p1, o1, p2, o2, p3, o3) \
	VMOVDQU8  o0(p0)(AX*1), Z20; \
	VPERMT2B  o1(p1)(AX*1), Z29, Z20; \
	VMOVDQU8  o2(p2)(AX*1), Z21; \
	VPERMT2B  o3(p3)(AX*1), Z29, Z21; \
	VMOVDQU8  o0+64(p0)(AX*1), Z22; \
	VPERMT2B  o1+64(p1)(AX*1), Z29, Z22; \
	VMOVDQU8  o2+64(p2)(AX*1), Z23; \
	VPERMT2B  o3+64(p3)(AX*1), Z29, Z23; \
	VMOVDQU16 Z21, K4, Z20; \
	VMOVDQU16 Z23, K4, Z22; \
	VMOVDQU16 Z22, K5, Z20

// Q8STREAM accumulates into t the partial sums of the Q8_0 group at
// o(p)(AX*1): the first and second halves of its 4 blocks are gathered
// into Z9 and Z10 and made unsigned (w+128), and VPDPBUSD adds them times
// the activations to the corrections.
#define Q8STREAM(p, o, t) \
	VMOVDQU8  o(p)(AX*1), Z9; \
	VPERMT2B  o+64(p)(AX*1), Z30, Z9; \
	VMOVDQU8  o+8(p)(AX*1), Z10; \
	VPERMT2B  o+72(p)(AX*1), Z27, Z10; \
	VPXORD    Z28, Z9, Z9; \
	VPXORD    Z28, Z10, Z10; \
	VMOVDQA64 Z18, t; \
	VPDPBUSD  Z16, Z9, t; \
	VPDPBUSD  Z17, Z10, t

// Q8TAIL copies the partial group at (p)(AX*1) to o(SP), zero-padded to
// 192 bytes (K2 and K3: its bytes in the first and second 64).
#define Q8TAIL(p, o) \
	VMOVDQU8.Z (p)(AX*1), K2, Z9; \
	VMOVDQU8.Z 64(p)(AX*1), K3, Z10; \
	VMOVDQU64  Z9, o(SP); \
	VMOVDQU64  Z10, o+64(SP); \
	VMOVDQU64  Z15, o+128(SP)

// func gemv4Q8_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4_0VNNI for Q8_0 weights and activations in layout B.
TEXT ·gemv4Q8_0VNNI(SB), 0, $896-56
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z28
	VMOVDQU64    q8aidx<>(SB), Z30
	VMOVDQU64    q8bidx<>(SB), Z27
	VMOVDQU64    q8sidx<>(SB), Z29
	SMASKS
	MOVQ         nb+24(FP), AX
	ANDQ         $3, AX
	IMUL3Q       $34, AX, AX
	MOVQ         $-1, R13
	BZHIQ        AX, R13, R12
	KMOVQ        R12, K2
	XORQ         R12, R12
	SUBQ         $64, AX
	CMOVQLT      R12, AX
	BZHIQ        AX, R13, R12
	KMOVQ        R12, K3
	GEMV4SETUP(136)
	TESTQ        R14, R14
	JZ           done

row:
	VXORPS X0, X0, X0
	XORQ   AX, AX
	MOVQ   DI, R12
	TESTQ  CX, CX
	JZ     part

grp:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD+64(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD+64(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD+64(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	PREFETCHT0 PFD+64(R11)(AX*1)
	XLOAD4
	Q8STREAM(R8, 0, Z4)
	Q8STREAM(R9, 0, Z5)
	Q8STREAM(R10, 0, Z6)
	Q8STREAM(R11, 0, Z7)
	Q8SCALES(R8, 0, R9, 0, R10, 0, R11, 0)
	REDUCE4I(Z4, Z5, Z6, Z7)
	CHAIN4
	ADDQ       $136, AX
	ADDQ       $256, R12
	CMPQ       AX, CX
	JB         grp

part:
	MOVQ   nb+24(FP), R13
	ANDQ   $3, R13
	JZ     fin
	VPXORD Z15, Z15, Z15
	Q8TAIL(R8, 128)
	Q8TAIL(R9, 320)
	Q8TAIL(R10, 512)
	Q8TAIL(R11, 704)
	LEAQ   128(SP), R13
	XORQ   AX, AX
	XLOAD4
	Q8STREAM(R13, 0, Z4)
	Q8STREAM(R13, 192, Z5)
	Q8STREAM(R13, 384, Z6)
	Q8STREAM(R13, 576, Z7)
	Q8SCALES(R13, 0, R13, 192, R13, 384, R13, 576)
	REDUCE4I(Z4, Z5, Z6, Z7)
	CHAIN4

fin:
	GEMV4FIN
	DECQ R14
	JNZ  row

done:
	VZEROUPPER
	RET
