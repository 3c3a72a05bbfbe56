//go:build amd64 && !noasm

// Hand-written: the AMX instructions are in neither avo's x86 database nor the Go assembler, so they are bytes checked by amx_encoding_test.go; generating them needs an AMX encoder in _gen (not done yet).

#include "textflag.h"

// Prefill GEMM for F16 and BF16 weights on AMX (AMX-BF16 tiles), as exact
// as float32 arithmetic: every weight is split into bfloat16 parts w = w1
// + w2 (an F16 value has 11 significant bits: w1 takes the top 8, rounded
// to nearest, w2 the rest; a BF16 weight is its own w1) and every
// activation into x = x1 + x2 + x3 (8 significant bits each, rounded to
// nearest). The parts are exact, so each product wi·xj is exact in
// float32, and TDPBF16PS accumulates them in float32 (round to nearest
// even; magnitudes below 2^-126 count as zero). Five tile products per
// block of 32 elements for F16 weights (w2·x3, below 2^-24 of w·x, is left
// out), three for BF16.
//
// The Go assembler has no AMX mnemonics: the instructions are spelled out
// as bytes, each line with its mnemonic (operands in Go order) in a
// comment; amx_encoding_test.go checks the bytes against the mnemonics.
// Tile registers: TMM0-3 the 2×2 accumulator tiles (16 weight rows × 16
// tokens each), TMM4-5 two weight tiles, TMM6-7 two activation tiles, all
// 16 rows of 64 bytes (amxCfg).
//
// Layouts (bfloat16 words): a weight tile holds 16 rows' 32 elements of
// one block of k, in the order π below; an activation tile holds, in row
// kk, the pairs (2kk, 2kk+1) (in order π) of 16 tokens. Within a block of
// 32 elements the order π is VPACKUSDW's on two vectors of 16: word j is
// element 4(j/8) + j%8 for j%8 < 4, else 16 + 4(j/8) + j%8 - 4. The same
// order on both sides leaves the sums unchanged.

// Tile configuration: palette 1, tiles 0-7 of 16 rows × 64 bytes.
DATA amxCfg<>+0(SB)/8, $0x0000000000000001
DATA amxCfg<>+8(SB)/8, $0
DATA amxCfg<>+16(SB)/8, $0x0040004000400040
DATA amxCfg<>+24(SB)/8, $0x0040004000400040
DATA amxCfg<>+32(SB)/8, $0
DATA amxCfg<>+40(SB)/8, $0
DATA amxCfg<>+48(SB)/8, $0x1010101010101010
DATA amxCfg<>+56(SB)/8, $0
GLOBL amxCfg<>(SB), RODATA|NOPTR, $64

// PREFETCH1 prefetches the next line of the region described at amxTileZ
// into L2, if any is left.
#define PREFETCH1 \
	TESTQ      R13, R13; \
	JEQ        8(PC); \
	PREFETCHT1 (R12)(R14*1); \
	DECQ       R13; \
	ADDQ       $64, R14; \
	CMPQ       R14, pfseg+88(FP); \
	JB         3(PC); \
	XORQ       R14, R14; \
	ADDQ       pfstride+80(FP), R12

// func amxTileZ(w *uint16, wstride uintptr, x *uint16, xstride uintptr, nkb, wparts int, buf *float32, load int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)
// Multiplies 2 weight tiles (rows 0-15 at w, rows 16-31 wstride bytes on;
// wparts parts per block, 1 KiB each) by 2 activation tiles (tokens 0-15
// at x, 16-31 xstride bytes on; 3 parts per block) over nkb blocks of 32
// elements: buf[32r + t] (r < 32 rows, t < 32 tokens) receives the sums,
// added to what it holds when load ≠ 0. Meanwhile it prefetches npf lines
// into L2, as gemm12x32Z does.
TEXT ·amxTileZ(SB), NOSPLIT, $0-104
	LEAQ amxCfg<>(SB), CX
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x01 // LDTILECFG (CX)
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DI
	ADDQ SI, DI
	MOVQ x+16(FP), DX
	MOVQ xstride+24(FP), AX
	ADDQ DX, AX
	MOVQ pf+64(FP), R12
	MOVQ pfoff+72(FP), R14
	MOVQ npf+96(FP), R13
	MOVQ load+56(FP), R9
	TESTQ R9, R9
	JEQ  zero
	MOVQ buf+48(FP), R11
	MOVQ $128, R9
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x0b // TILELOADD 0(R11)(R9*1), TMM0
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x0b; BYTE $0x40 // TILELOADD 64(R11)(R9*1), TMM1
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x94; BYTE $0x0b; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILELOADD 2048(R11)(R9*1), TMM2
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x9c; BYTE $0x0b; BYTE $0x40; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILELOADD 2112(R11)(R9*1), TMM3
	JMP  start

zero:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0 // TILEZERO TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8 // TILEZERO TMM1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0 // TILEZERO TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8 // TILEZERO TMM3

start:
	MOVQ nkb+32(FP), CX
	MOVQ $64, BX
	MOVQ wparts+40(FP), R8
	CMPQ R8, $1
	JEQ  loop1

// Two weight parts (F16): w1·x3, w1·x2, w2·x2, w2·x1, w1·x1. w2·x3 is
// left out: it is below 2^-24 of w·x (|w2| ≤ 2^-8|w|, |x3| ≤ 2^-16|x|).
loop2:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x1e // TILELOADD 0(SI)(BX*1), TMM4
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x1f // TILELOADD 0(DI)(BX*1), TMM5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xb4; BYTE $0x1a; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILELOADD 2048(DX)(BX*1), TMM6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xbc; BYTE $0x18; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILELOADD 2048(AX)(BX*1), TMM7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xb4; BYTE $0x1a; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00 // TILELOADD 1024(DX)(BX*1), TMM6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xbc; BYTE $0x18; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00 // TILELOADD 1024(AX)(BX*1), TMM7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xa4; BYTE $0x1e; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00 // TILELOADD 1024(SI)(BX*1), TMM4
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xac; BYTE $0x1f; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00 // TILELOADD 1024(DI)(BX*1), TMM5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x1a // TILELOADD 0(DX)(BX*1), TMM6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x18 // TILELOADD 0(AX)(BX*1), TMM7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x1e // TILELOADD 0(SI)(BX*1), TMM4
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x1f // TILELOADD 0(DI)(BX*1), TMM5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	ADDQ $2048, SI
	ADDQ $2048, DI
	ADDQ $3072, DX
	ADDQ $3072, AX
	DECQ CX
	JNZ  loop2
	JMP  done

// One weight part (BF16): w1·x1, w1·x2, w1·x3.
loop1:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x1e // TILELOADD 0(SI)(BX*1), TMM4
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x1f // TILELOADD 0(DI)(BX*1), TMM5
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x1a // TILELOADD 0(DX)(BX*1), TMM6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x18 // TILELOADD 0(AX)(BX*1), TMM7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xb4; BYTE $0x1a; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00 // TILELOADD 1024(DX)(BX*1), TMM6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xbc; BYTE $0x18; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00 // TILELOADD 1024(AX)(BX*1), TMM7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xb4; BYTE $0x1a; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILELOADD 2048(DX)(BX*1), TMM6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0xbc; BYTE $0x18; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILELOADD 2048(AX)(BX*1), TMM7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS TMM6, TMM4, TMM0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS TMM7, TMM4, TMM1
	PREFETCH1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS TMM6, TMM5, TMM2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS TMM7, TMM5, TMM3
	PREFETCH1
	PREFETCH1
	ADDQ $1024, SI
	ADDQ $1024, DI
	ADDQ $3072, DX
	ADDQ $3072, AX
	DECQ CX
	JNZ  loop1

done:
	MOVQ buf+48(FP), R11
	MOVQ $128, R9
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x0b // TILESTORED TMM0, 0(R11)(R9*1)
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x0b; BYTE $0x40 // TILESTORED TMM1, 64(R11)(R9*1)
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x94; BYTE $0x0b; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILESTORED TMM2, 2048(R11)(R9*1)
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x9c; BYTE $0x0b; BYTE $0x40; BYTE $0x08; BYTE $0x00; BYTE $0x00 // TILESTORED TMM3, 2112(R11)(R9*1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // TILERELEASE
	RET

// RNE rounds the float32s in v to bfloat16, to nearest even, as
// float32s in dst (t: scratch, may be dst): v + 0x7fff + bit 16 of v,
// truncated. Z27 = 0x7fff, Z28 = 1, Z30 = 0xffff0000 in every lane. Not
// for NaNs, and it overflows to infinity within 2^-9 of the largest
// float32.
#define RNE(v, t, dst) \
	VPSRLD $16, v, t; \
	VPANDD Z28, t, t; \
	VPADDD Z27, t, t; \
	VPADDD v, t, t; \
	VPANDD Z30, t, dst

// CONSTS loads the constants of RNE, and in Z29 a quiet NaN.
#define CONSTS \
	MOVL $0xffff0000, R9; \
	VPBROADCASTD R9, Z30; \
	MOVL $0x7fc00000, R9; \
	VPBROADCASTD R9, Z29; \
	MOVL $1, R9; \
	VPBROADCASTD R9, Z28; \
	MOVL $0x7fff, R9; \
	VPBROADCASTD R9, Z27

// MASKS sets K1, K2 to the valid elements among 0-15 and 16-31 of a
// block whose first R12 elements are valid (R12 > 0); clobbers R13.
#define MASKS \
	MOVQ  R12, R13; \
	CMPQ  R13, $16; \
	JLE   2(PC); \
	MOVQ  $16, R13; \
	MOVL  $-1, R11; \
	BZHIQ R13, R11, R13; \
	KMOVW R13, K1; \
	MOVQ  R12, R13; \
	SUBQ  $16, R13; \
	JGE   2(PC); \
	XORQ  R13, R13; \
	CMPQ  R13, $16; \
	JLE   2(PC); \
	MOVQ  $16, R13; \
	BZHIQ R13, R11, R13; \
	KMOVW R13, K2

// func amxPackWF16Z(dst *uint16, src *byte, rb uintptr, nrow, n int)
// Writes rows r < nrow (≤ 16) of n F16 weights (rows rb bytes apart at src)
// as 2 bfloat16 part(s) in weight-tile layout: block b (32 elements)
// at dst[1024b:], part p at +512p, row r at +32r, in order π; zero
// past row nrow and element n. w1 is w rounded to nearest even (a NaN
// gives a quiet NaN), w2 = w - w1 (exact for an F16 weight, |w2| ≤
// 2^-8|w|; zero where w is not finite).
TEXT ·amxPackWF16Z(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rb+16(FP), BX
	MOVQ nrow+24(FP), R8
	MOVQ n+32(FP), CX
	CONSTS
	XORQ R10, R10 // row

wrow:
	MOVQ DI, DX
	MOVQ SI, AX
	MOVQ CX, R12 // elements left in the row

wblock:
	MASKS
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	CMPQ R10, R8
	JGE  wsplit
	VMOVDQU16.Z (AX), K1, Y0
	VCVTPH2PS Y0, Z0
	VMOVDQU16.Z 32(AX), K2, Y1
	VCVTPH2PS Y1, Z1

wsplit:
	RNE(Z0, Z2, Z2)
	RNE(Z1, Z3, Z3)
	VCMPPS    $3, Z0, Z0, K3
	VMOVDQA32 Z29, K3, Z2
	VCMPPS    $3, Z1, Z1, K4
	VMOVDQA32 Z29, K4, Z3
	VSUBPS    Z2, Z0, Z4
	VSUBPS    Z3, Z1, Z5
	VCMPPS    $7, Z4, Z4, K3
	VMOVAPS.Z Z4, K3, Z4
	VCMPPS    $7, Z5, Z5, K4
	VMOVAPS.Z Z5, K4, Z5
	VPSRLD    $16, Z4, Z4
	VPSRLD    $16, Z5, Z5
	VPACKUSDW Z5, Z4, Z7
	VMOVDQU32 Z7, 1024(DX)
	VPSRLD    $16, Z2, Z2
	VPSRLD    $16, Z3, Z3
	VPACKUSDW Z3, Z2, Z6
	VMOVDQU32 Z6, (DX)
	ADDQ $2048, DX
	ADDQ $64, AX
	SUBQ $32, R12
	JGT  wblock

	ADDQ $64, DI
	ADDQ BX, SI
	INCQ R10
	CMPQ R10, $16
	JLT  wrow
	VZEROUPPER
	RET

// func amxPackWBF16Z(dst *uint16, src *byte, rb uintptr, nrow, n int)
// Writes rows r < nrow (≤ 16) of n BF16 weights (rows rb bytes apart at src)
// as 1 bfloat16 part(s) in weight-tile layout: block b (32 elements)
// at dst[512b:], part p at +512p, row r at +32r, in order π; zero
// past row nrow and element n. w1 is w rounded to nearest even (a NaN
// gives a quiet NaN), w2 = w - w1 (exact for an F16 weight, |w2| ≤
// 2^-8|w|; zero where w is not finite).
TEXT ·amxPackWBF16Z(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rb+16(FP), BX
	MOVQ nrow+24(FP), R8
	MOVQ n+32(FP), CX
	CONSTS
	XORQ R10, R10 // row

wrow:
	MOVQ DI, DX
	MOVQ SI, AX
	MOVQ CX, R12 // elements left in the row

wblock:
	MASKS
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	CMPQ R10, R8
	JGE  wsplit
	VMOVDQU16.Z (AX), K1, Y0
	VPMOVZXWD Y0, Z0
	VPSLLD $16, Z0, Z0
	VMOVDQU16.Z 32(AX), K2, Y1
	VPMOVZXWD Y1, Z1
	VPSLLD $16, Z1, Z1

wsplit:
	RNE(Z0, Z2, Z2)
	RNE(Z1, Z3, Z3)
	VCMPPS    $3, Z0, Z0, K3
	VMOVDQA32 Z29, K3, Z2
	VCMPPS    $3, Z1, Z1, K4
	VMOVDQA32 Z29, K4, Z3
	VPSRLD    $16, Z2, Z2
	VPSRLD    $16, Z3, Z3
	VPACKUSDW Z3, Z2, Z6
	VMOVDQU32 Z6, (DX)
	ADDQ $1024, DX
	ADDQ $64, AX
	SUBQ $32, R12
	JGT  wblock

	ADDQ $64, DI
	ADDQ BX, SI
	INCQ R10
	CMPQ R10, $16
	JLT  wrow
	VZEROUPPER
	RET

// func amxPackXZ(dst *uint16, x *float32, ldx uintptr, ntok, n int)
// Writes tokens t < ntok (≤ 16) of n float32 activations (tokens ldx
// bytes apart at x) as 3 bfloat16 parts x = x1 + x2 + x3 in activation-tile
// layout: block b at dst[1536b:], part p at +512p, pair kk (elements π(2kk),
// π(2kk+1)) of token t at +32kk + 2t; zero past token ntok and element n.
// The parts are rounded to nearest even: |x2| ≤ 2^-8|x|, |x3| ≤ 2^-16|x|.
// A NaN gives a NaN x1; an infinite x is all x1.
TEXT ·amxPackXZ(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), BX
	MOVQ ntok+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ CX, R12 // elements left

xblock:
	MASKS
	CONSTS
	MOVL $0x7fffffff, R9
	VPBROADCASTD R9, Z26
	MOVL $0x7f7f0000, R9 // below it, RNE cannot overflow
	VPBROADCASTD R9, Z25
	MOVQ SI, AX
	MOVQ DI, DX
	XORQ R10, R10 // token

xtok:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	CMPQ R10, R8
	JGE  xsplit
	VMOVUPS.Z (AX), K1, Z0
	VMOVUPS.Z 64(AX), K2, Z1

xsplit:
	// x1: x rounded to bfloat16, truncated where that could overflow (and
	// for infinities), a quiet NaN for a NaN.
	VPANDD     Z26, Z0, Z4
	VCMPPS     $1, Z25, Z4, K5
	VPANDD     Z26, Z1, Z5
	VCMPPS     $1, Z25, Z5, K6
	VPANDD     Z30, Z0, Z2
	VPANDD     Z30, Z1, Z3
	RNE(Z0, Z4, Z4)
	RNE(Z1, Z5, Z5)
	VMOVDQA32  Z4, K5, Z2
	VMOVDQA32  Z5, K6, Z3
	VCMPPS     $3, Z0, Z0, K3
	VMOVDQA32  Z29, K3, Z2
	VCMPPS     $3, Z1, Z1, K4
	VMOVDQA32  Z29, K4, Z3
	// r = x - x1 (exact; zero where x is not finite), x2 = r rounded,
	// x3 = r - x2 (exact, 8 bits at most).
	VSUBPS     Z2, Z0, Z4
	VSUBPS     Z3, Z1, Z5
	VCMPPS     $7, Z4, Z4, K3
	VMOVAPS.Z  Z4, K3, Z4
	VCMPPS     $7, Z5, Z5, K4
	VMOVAPS.Z  Z5, K4, Z5
	RNE(Z4, Z6, Z6)
	RNE(Z5, Z7, Z7)
	VSUBPS     Z6, Z4, Z8
	VSUBPS     Z7, Z5, Z9
	VPSRLD     $16, Z2, Z2
	VPSRLD     $16, Z3, Z3
	VPSRLD     $16, Z6, Z6
	VPSRLD     $16, Z7, Z7
	VPSRLD     $16, Z8, Z8
	VPSRLD     $16, Z9, Z9
	VPACKUSDW  Z3, Z2, Z10
	VPACKUSDW  Z7, Z6, Z11
	VPACKUSDW  Z9, Z8, Z12
	VMOVDQU32  Z10, (DX)
	VMOVDQU32  Z11, 1024(DX)
	VMOVDQU32  Z12, 2048(DX)
	ADDQ BX, AX
	ADDQ $64, DX
	INCQ R10
	CMPQ R10, $16
	JLT  xtok

	// Each part now holds token t's 16 pairs in row t: transpose the
	// 16×16 pairs in place.
	MOVQ DI, R10
	VMOVDQU32 0(R10), Z0
	VMOVDQU32 64(R10), Z1
	VMOVDQU32 128(R10), Z2
	VMOVDQU32 192(R10), Z3
	VMOVDQU32 256(R10), Z4
	VMOVDQU32 320(R10), Z5
	VMOVDQU32 384(R10), Z6
	VMOVDQU32 448(R10), Z7
	VMOVDQU32 512(R10), Z8
	VMOVDQU32 576(R10), Z9
	VMOVDQU32 640(R10), Z10
	VMOVDQU32 704(R10), Z11
	VMOVDQU32 768(R10), Z12
	VMOVDQU32 832(R10), Z13
	VMOVDQU32 896(R10), Z14
	VMOVDQU32 960(R10), Z15
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0x44, Z12, Z8, Z17
	VSHUFF32X4 $0xee, Z4, Z0, Z18
	VSHUFF32X4 $0xee, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0x44, Z13, Z9, Z21
	VSHUFF32X4 $0xee, Z5, Z1, Z22
	VSHUFF32X4 $0xee, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0x44, Z14, Z10, Z25
	VSHUFF32X4 $0xee, Z6, Z2, Z26
	VSHUFF32X4 $0xee, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0x44, Z15, Z11, Z29
	VSHUFF32X4 $0xee, Z7, Z3, Z30
	VSHUFF32X4 $0xee, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z17, Z16, Z0
	VMOVDQU32 Z0, 0(R10)
	VSHUFF32X4 $0xdd, Z17, Z16, Z4
	VMOVDQU32 Z4, 256(R10)
	VSHUFF32X4 $0x88, Z19, Z18, Z8
	VMOVDQU32 Z8, 512(R10)
	VSHUFF32X4 $0xdd, Z19, Z18, Z12
	VMOVDQU32 Z12, 768(R10)
	VSHUFF32X4 $0x88, Z21, Z20, Z1
	VMOVDQU32 Z1, 64(R10)
	VSHUFF32X4 $0xdd, Z21, Z20, Z5
	VMOVDQU32 Z5, 320(R10)
	VSHUFF32X4 $0x88, Z23, Z22, Z9
	VMOVDQU32 Z9, 576(R10)
	VSHUFF32X4 $0xdd, Z23, Z22, Z13
	VMOVDQU32 Z13, 832(R10)
	VSHUFF32X4 $0x88, Z25, Z24, Z2
	VMOVDQU32 Z2, 128(R10)
	VSHUFF32X4 $0xdd, Z25, Z24, Z6
	VMOVDQU32 Z6, 384(R10)
	VSHUFF32X4 $0x88, Z27, Z26, Z10
	VMOVDQU32 Z10, 640(R10)
	VSHUFF32X4 $0xdd, Z27, Z26, Z14
	VMOVDQU32 Z14, 896(R10)
	VSHUFF32X4 $0x88, Z29, Z28, Z3
	VMOVDQU32 Z3, 192(R10)
	VSHUFF32X4 $0xdd, Z29, Z28, Z7
	VMOVDQU32 Z7, 448(R10)
	VSHUFF32X4 $0x88, Z31, Z30, Z11
	VMOVDQU32 Z11, 704(R10)
	VSHUFF32X4 $0xdd, Z31, Z30, Z15
	VMOVDQU32 Z15, 960(R10)
	ADDQ $1024, R10
	VMOVDQU32 0(R10), Z0
	VMOVDQU32 64(R10), Z1
	VMOVDQU32 128(R10), Z2
	VMOVDQU32 192(R10), Z3
	VMOVDQU32 256(R10), Z4
	VMOVDQU32 320(R10), Z5
	VMOVDQU32 384(R10), Z6
	VMOVDQU32 448(R10), Z7
	VMOVDQU32 512(R10), Z8
	VMOVDQU32 576(R10), Z9
	VMOVDQU32 640(R10), Z10
	VMOVDQU32 704(R10), Z11
	VMOVDQU32 768(R10), Z12
	VMOVDQU32 832(R10), Z13
	VMOVDQU32 896(R10), Z14
	VMOVDQU32 960(R10), Z15
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0x44, Z12, Z8, Z17
	VSHUFF32X4 $0xee, Z4, Z0, Z18
	VSHUFF32X4 $0xee, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0x44, Z13, Z9, Z21
	VSHUFF32X4 $0xee, Z5, Z1, Z22
	VSHUFF32X4 $0xee, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0x44, Z14, Z10, Z25
	VSHUFF32X4 $0xee, Z6, Z2, Z26
	VSHUFF32X4 $0xee, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0x44, Z15, Z11, Z29
	VSHUFF32X4 $0xee, Z7, Z3, Z30
	VSHUFF32X4 $0xee, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z17, Z16, Z0
	VMOVDQU32 Z0, 0(R10)
	VSHUFF32X4 $0xdd, Z17, Z16, Z4
	VMOVDQU32 Z4, 256(R10)
	VSHUFF32X4 $0x88, Z19, Z18, Z8
	VMOVDQU32 Z8, 512(R10)
	VSHUFF32X4 $0xdd, Z19, Z18, Z12
	VMOVDQU32 Z12, 768(R10)
	VSHUFF32X4 $0x88, Z21, Z20, Z1
	VMOVDQU32 Z1, 64(R10)
	VSHUFF32X4 $0xdd, Z21, Z20, Z5
	VMOVDQU32 Z5, 320(R10)
	VSHUFF32X4 $0x88, Z23, Z22, Z9
	VMOVDQU32 Z9, 576(R10)
	VSHUFF32X4 $0xdd, Z23, Z22, Z13
	VMOVDQU32 Z13, 832(R10)
	VSHUFF32X4 $0x88, Z25, Z24, Z2
	VMOVDQU32 Z2, 128(R10)
	VSHUFF32X4 $0xdd, Z25, Z24, Z6
	VMOVDQU32 Z6, 384(R10)
	VSHUFF32X4 $0x88, Z27, Z26, Z10
	VMOVDQU32 Z10, 640(R10)
	VSHUFF32X4 $0xdd, Z27, Z26, Z14
	VMOVDQU32 Z14, 896(R10)
	VSHUFF32X4 $0x88, Z29, Z28, Z3
	VMOVDQU32 Z3, 192(R10)
	VSHUFF32X4 $0xdd, Z29, Z28, Z7
	VMOVDQU32 Z7, 448(R10)
	VSHUFF32X4 $0x88, Z31, Z30, Z11
	VMOVDQU32 Z11, 704(R10)
	VSHUFF32X4 $0xdd, Z31, Z30, Z15
	VMOVDQU32 Z15, 960(R10)
	ADDQ $1024, R10
	VMOVDQU32 0(R10), Z0
	VMOVDQU32 64(R10), Z1
	VMOVDQU32 128(R10), Z2
	VMOVDQU32 192(R10), Z3
	VMOVDQU32 256(R10), Z4
	VMOVDQU32 320(R10), Z5
	VMOVDQU32 384(R10), Z6
	VMOVDQU32 448(R10), Z7
	VMOVDQU32 512(R10), Z8
	VMOVDQU32 576(R10), Z9
	VMOVDQU32 640(R10), Z10
	VMOVDQU32 704(R10), Z11
	VMOVDQU32 768(R10), Z12
	VMOVDQU32 832(R10), Z13
	VMOVDQU32 896(R10), Z14
	VMOVDQU32 960(R10), Z15
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0x44, Z12, Z8, Z17
	VSHUFF32X4 $0xee, Z4, Z0, Z18
	VSHUFF32X4 $0xee, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0x44, Z13, Z9, Z21
	VSHUFF32X4 $0xee, Z5, Z1, Z22
	VSHUFF32X4 $0xee, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0x44, Z14, Z10, Z25
	VSHUFF32X4 $0xee, Z6, Z2, Z26
	VSHUFF32X4 $0xee, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0x44, Z15, Z11, Z29
	VSHUFF32X4 $0xee, Z7, Z3, Z30
	VSHUFF32X4 $0xee, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z17, Z16, Z0
	VMOVDQU32 Z0, 0(R10)
	VSHUFF32X4 $0xdd, Z17, Z16, Z4
	VMOVDQU32 Z4, 256(R10)
	VSHUFF32X4 $0x88, Z19, Z18, Z8
	VMOVDQU32 Z8, 512(R10)
	VSHUFF32X4 $0xdd, Z19, Z18, Z12
	VMOVDQU32 Z12, 768(R10)
	VSHUFF32X4 $0x88, Z21, Z20, Z1
	VMOVDQU32 Z1, 64(R10)
	VSHUFF32X4 $0xdd, Z21, Z20, Z5
	VMOVDQU32 Z5, 320(R10)
	VSHUFF32X4 $0x88, Z23, Z22, Z9
	VMOVDQU32 Z9, 576(R10)
	VSHUFF32X4 $0xdd, Z23, Z22, Z13
	VMOVDQU32 Z13, 832(R10)
	VSHUFF32X4 $0x88, Z25, Z24, Z2
	VMOVDQU32 Z2, 128(R10)
	VSHUFF32X4 $0xdd, Z25, Z24, Z6
	VMOVDQU32 Z6, 384(R10)
	VSHUFF32X4 $0x88, Z27, Z26, Z10
	VMOVDQU32 Z10, 640(R10)
	VSHUFF32X4 $0xdd, Z27, Z26, Z14
	VMOVDQU32 Z14, 896(R10)
	VSHUFF32X4 $0x88, Z29, Z28, Z3
	VMOVDQU32 Z3, 192(R10)
	VSHUFF32X4 $0xdd, Z29, Z28, Z7
	VMOVDQU32 Z7, 448(R10)
	VSHUFF32X4 $0x88, Z31, Z30, Z11
	VMOVDQU32 Z11, 704(R10)
	VSHUFF32X4 $0xdd, Z31, Z30, Z15
	VMOVDQU32 Z15, 960(R10)
	ADDQ $3072, DI
	ADDQ $128, SI
	SUBQ $32, R12
	JGT  xblock
	VZEROUPPER
	RET
