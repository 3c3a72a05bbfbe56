//go:build amd64 && !noasm

#include "textflag.h"
#include "simd_amd64.h"

// Prefill for Q4_0 and Q8_0 weights on block-interleaved data, AVX-512
// VNNI. Sixteen blocks form a group; its 512 values are stored as 8
// vectors where lane l of vector s holds values 4s..4s+3 of block l. One
// VPDPBUSD then adds 4 products for each of 16 blocks, and after 8 of them
// each lane holds one block's whole dot product: the float work (convert,
// scale, accumulate) is paid once per 16 blocks.
//
// Layout C (activations), 704 bytes per group: the 8 quant vectors, 16
// int32 -8·Σq (for Q4_0 weights), 16 int32 -128·Σq (for Q8_0 weights, whose
// sign bit the unpacking flips), 16 float32 scales.
//
// Unpacked weights (U16), 576 bytes per row and group: the 8 vectors of
// unsigned values (Q4_0: the nibbles; Q8_0: q+128), 16 float32 scales.

// Byte offsets of the 16 blocks of a group: Q4_0 (18 bytes) and Q8_0 (34).
DATA off18<>+0(SB)/8, $0x0000001200000000
DATA off18<>+8(SB)/8, $0x0000003600000024
DATA off18<>+16(SB)/8, $0x0000005a00000048
DATA off18<>+24(SB)/8, $0x0000007e0000006c
DATA off18<>+32(SB)/8, $0x000000a200000090
DATA off18<>+40(SB)/8, $0x000000c6000000b4
DATA off18<>+48(SB)/8, $0x000000ea000000d8
DATA off18<>+56(SB)/8, $0x0000010e000000fc
GLOBL off18<>(SB), RODATA|NOPTR, $64
DATA off34<>+0(SB)/8, $0x0000002200000000
DATA off34<>+8(SB)/8, $0x0000006600000044
DATA off34<>+16(SB)/8, $0x000000aa00000088
DATA off34<>+24(SB)/8, $0x000000ee000000cc
DATA off34<>+32(SB)/8, $0x0000013200000110
DATA off34<>+40(SB)/8, $0x0000017600000154
DATA off34<>+48(SB)/8, $0x000001ba00000198
DATA off34<>+56(SB)/8, $0x000001fe000001dc
GLOBL off34<>(SB), RODATA|NOPTR, $64

// GATHER loads into z the dword at off(SI) + offsets(Z31) of each block
// whose lane is set in K1 (others zero).
#define GATHER(off, z) \
	KMOVW      K1, K2; \
	VPXORD     z, z, z; \
	VPGATHERDD off(SI)(Z31*1), K2, z

// GMASK sets K1 to the blocks of the current group: all 16, or the R10
// left in a partial group (R10 < 16). It uses R11.
#define GMASK \
	MOVL   $0xffff, R11; \
	CMPQ   R10, $16; \
	JAE    3(PC); \
	MOVL   $-1, R11; \
	BZHIL  R10, R11, R11; \
	KMOVW  R11, K1

// SCALES gathers the 16 f16 scales of the group as float32s into z (y its
// ymm name); t (ty) scratch.
#define SCALES(z, y, t, ty) \
	GATHER(0, t); \
	VPMOVDW   t, ty; \
	VCVTPH2PS ty, z

// func interleaveQ8Z(dst, src *byte, nb int)
// Rearranges nb ggml Q8_0 blocks at src into layout C groups at dst.
TEXT ·interleaveQ8Z(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), R10
	VMOVDQU64    off34<>(SB), Z31
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z30
	VPXORD       Z29, Z29, Z29

group:
	TESTQ R10, R10
	JLE   done
	GMASK
	VPXORD   Z20, Z20, Z20
	GATHER(2, Z0)
	GATHER(6, Z1)
	GATHER(10, Z2)
	GATHER(14, Z3)
	GATHER(18, Z4)
	GATHER(22, Z5)
	GATHER(26, Z6)
	GATHER(30, Z7)
	VPDPBUSD Z0, Z30, Z20
	VPDPBUSD Z1, Z30, Z20
	VPDPBUSD Z2, Z30, Z20
	VPDPBUSD Z3, Z30, Z20
	VPDPBUSD Z4, Z30, Z20
	VPDPBUSD Z5, Z30, Z20
	VPDPBUSD Z6, Z30, Z20
	VPDPBUSD Z7, Z30, Z20
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	VMOVDQU64 Z4, 256(DI)
	VMOVDQU64 Z5, 320(DI)
	VMOVDQU64 Z6, 384(DI)
	VMOVDQU64 Z7, 448(DI)
	VPSLLD    $3, Z20, Z21
	VPSUBD    Z21, Z29, Z21
	VMOVDQU64 Z21, 512(DI)
	VPSLLD    $7, Z20, Z21
	VPSUBD    Z21, Z29, Z21
	VMOVDQU64 Z21, 576(DI)
	SCALES(Z22, Y22, Z23, Y23)
	VMOVUPS   Z22, 640(DI)
	ADDQ      $544, SI
	ADDQ      $704, DI
	SUBQ      $16, R10
	JMP       group

done:
	VZEROUPPER
	RET

// func unpackU16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)
// Unpacks nrows rows of nb Q4_0 blocks (ldw bytes apart) into U16 groups.
TEXT ·unpackU16Q4_0Z(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         w+8(FP), R8
	MOVQ         ldw+16(FP), BX
	MOVQ         nrows+24(FP), R14
	VMOVDQU64    off18<>(SB), Z31
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	TESTQ        R14, R14
	JZ           done

row:
	MOVQ R8, SI
	MOVQ nb+32(FP), R10

group:
	TESTQ R10, R10
	JLE   next
	GMASK
	GATHER(2, Z0)
	GATHER(6, Z1)
	GATHER(10, Z2)
	GATHER(14, Z3)
	VPSRLD    $4, Z0, Z4
	VPSRLD    $4, Z1, Z5
	VPSRLD    $4, Z2, Z6
	VPSRLD    $4, Z3, Z7
	VPANDD    Z30, Z0, Z0
	VPANDD    Z30, Z1, Z1
	VPANDD    Z30, Z2, Z2
	VPANDD    Z30, Z3, Z3
	VPANDD    Z30, Z4, Z4
	VPANDD    Z30, Z5, Z5
	VPANDD    Z30, Z6, Z6
	VPANDD    Z30, Z7, Z7
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	VMOVDQU64 Z4, 256(DI)
	VMOVDQU64 Z5, 320(DI)
	VMOVDQU64 Z6, 384(DI)
	VMOVDQU64 Z7, 448(DI)
	SCALES(Z22, Y22, Z23, Y23)
	VMOVUPS   Z22, 512(DI)
	ADDQ      $288, SI
	ADDQ      $576, DI
	SUBQ      $16, R10
	JMP       group

next:
	ADDQ BX, R8
	DECQ R14
	JNZ  row

done:
	VZEROUPPER
	RET

// func unpackU16Q8_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)
// Unpacks nrows rows of nb Q8_0 blocks (ldw bytes apart) into U16 groups.
TEXT ·unpackU16Q8_0Z(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         w+8(FP), R8
	MOVQ         ldw+16(FP), BX
	MOVQ         nrows+24(FP), R14
	VMOVDQU64    off34<>(SB), Z31
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z30
	TESTQ        R14, R14
	JZ           done

row:
	MOVQ R8, SI
	MOVQ nb+32(FP), R10

group:
	TESTQ R10, R10
	JLE   next
	GMASK
	GATHER(2, Z0)
	GATHER(6, Z1)
	GATHER(10, Z2)
	GATHER(14, Z3)
	GATHER(18, Z4)
	GATHER(22, Z5)
	GATHER(26, Z6)
	GATHER(30, Z7)
	VPXORD    Z30, Z0, Z0
	VPXORD    Z30, Z1, Z1
	VPXORD    Z30, Z2, Z2
	VPXORD    Z30, Z3, Z3
	VPXORD    Z30, Z4, Z4
	VPXORD    Z30, Z5, Z5
	VPXORD    Z30, Z6, Z6
	VPXORD    Z30, Z7, Z7
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	VMOVDQU64 Z4, 256(DI)
	VMOVDQU64 Z5, 320(DI)
	VMOVDQU64 Z6, 384(DI)
	VMOVDQU64 Z7, 448(DI)
	SCALES(Z22, Y22, Z23, Y23)
	VMOVUPS   Z22, 512(DI)
	ADDQ      $544, SI
	ADDQ      $576, DI
	SUBQ      $16, R10
	JMP       group

next:
	ADDQ BX, R8
	DECQ R14
	JNZ  row

done:
	VZEROUPPER
	RET

// CSTEP multiplies vector s (byte offset o) of the 2 rows and 4 tokens.
#define CSTEP(o) \
	VMOVDQU64 o(DI)(BX*1), Z16; \
	VMOVDQU64 o(R12)(BX*1), Z17; \
	VMOVDQU64 o(R13)(BX*1), Z18; \
	VMOVDQU64 o(R14)(BX*1), Z19; \
	VMOVDQU64 o(R8)(AX*1), Z20; \
	VMOVDQU64 o(R9)(AX*1), Z21; \
	VPDPBUSD  Z16, Z20, Z0; \
	VPDPBUSD  Z17, Z20, Z1; \
	VPDPBUSD  Z18, Z20, Z2; \
	VPDPBUSD  Z19, Z20, Z3; \
	VPDPBUSD  Z16, Z21, Z4; \
	VPDPBUSD  Z17, Z21, Z5; \
	VPDPBUSD  Z18, Z21, Z6; \
	VPDPBUSD  Z19, Z21, Z7

// CEPI adds the group's int sums i (row r, token at p) to the float
// accumulator f: f += float(i) · (row scales sw) · (token scales).
#define CEPI(i, p, sw, f, t) \
	VCVTDQ2PS   i, i; \
	VMULPS      640(p)(BX*1), sw, t; \
	VFMADD231PS t, i, f

// STORE2 stores the 2 floats in the low half of x at (DX), adding what is
// there when AX ≠ 0, and advances DX by BX; t is scratch.
#define STORE2(x, t) \
	TESTQ  AX, AX; \
	JEQ    3(PC); \
	VMOVSD (DX), t; \
	VADDPS t, x, x; \
	VMOVSD x, (DX); \
	ADDQ   BX, DX

// CTILE is the tile's loop, for corrections at byte CORR of each group:
// R8, R9 the rows, DI, R12, R13, R14 the tokens, CX the groups.
#define CTILE(CORR) \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	XORQ AX, AX; \
	XORQ BX, BX; \
	TESTQ CX, CX; \
	JZ fin; \
grp: \
	VMOVDQU64 CORR(DI)(BX*1), Z0; \
	VMOVDQU64 CORR(R12)(BX*1), Z1; \
	VMOVDQU64 CORR(R13)(BX*1), Z2; \
	VMOVDQU64 CORR(R14)(BX*1), Z3; \
	VMOVDQA64 Z0, Z4; \
	VMOVDQA64 Z1, Z5; \
	VMOVDQA64 Z2, Z6; \
	VMOVDQA64 Z3, Z7; \
	CSTEP(0); \
	CSTEP(64); \
	CSTEP(128); \
	CSTEP(192); \
	CSTEP(256); \
	CSTEP(320); \
	CSTEP(384); \
	CSTEP(448); \
	VMOVUPS 512(R8)(AX*1), Z22; \
	VMOVUPS 512(R9)(AX*1), Z23; \
	CEPI(Z0, DI, Z22, Z8, Z24); \
	CEPI(Z1, R12, Z22, Z9, Z25); \
	CEPI(Z2, R13, Z22, Z10, Z26); \
	CEPI(Z3, R14, Z22, Z11, Z27); \
	CEPI(Z4, DI, Z23, Z12, Z28); \
	CEPI(Z5, R12, Z23, Z13, Z29); \
	CEPI(Z6, R13, Z23, Z14, Z30); \
	CEPI(Z7, R14, Z23, Z15, Z31); \
	ADDQ $576, AX; \
	ADDQ $704, BX; \
	DECQ CX; \
	JNZ grp

// CSTORE stores the tile's 2×4 sums at DX (token stride BX, acc flag AX).
#define CSTORE \
	REDUCE4X(Z8, Z12, Z9, Z13, Y8, Y12, Y9, Y13, X8, X12, Y31); \
	STORE2(X8, X4); \
	VPERMILPS $0x4e, X8, X8; \
	STORE2(X8, X4); \
	REDUCE4X(Z10, Z14, Z11, Z15, Y10, Y14, Y11, Y15, X10, X14, Y31); \
	STORE2(X10, X4); \
	VPERMILPS $0x4e, X10, X10; \
	STORE2(X10, X4)

// func tileC4Z(wu unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, ng int, dst *float32, ldd uintptr, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for 2 rows of ng unpacked Q4_0 groups (ldw
// bytes apart) and 4 tokens in layout C (ldx bytes apart).
TEXT ·tileC4Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ ldw+8(FP), R9
	ADDQ R8, R9
	MOVQ x+16(FP), DI
	MOVQ ldx+24(FP), SI
	LEAQ (DI)(SI*1), R12
	LEAQ (R12)(SI*1), R13
	LEAQ (R13)(SI*1), R14
	MOVQ ng+32(FP), CX
	CTILE(512)

fin:
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), BX
	MOVQ acc+56(FP), AX
	CSTORE
	VZEROUPPER
	RET

// func tileC8Z(wu unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, ng int, dst *float32, ldd uintptr, acc int)
// As tileC4Z for unpacked Q8_0 weights.
TEXT ·tileC8Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ ldw+8(FP), R9
	ADDQ R8, R9
	MOVQ x+16(FP), DI
	MOVQ ldx+24(FP), SI
	LEAQ (DI)(SI*1), R12
	LEAQ (R12)(SI*1), R13
	LEAQ (R13)(SI*1), R14
	MOVQ ng+32(FP), CX
	CTILE(576)

fin:
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), BX
	MOVQ acc+56(FP), AX
	CSTORE
	VZEROUPPER
	RET
