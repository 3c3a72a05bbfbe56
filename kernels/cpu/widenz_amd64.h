// Body of the tile-layout widening (see gemmz_amd64.s for the layout),
// AVX-512. The including file defines:
//   O16          byte offset of 16 weight elements
//   LDM(m, z, y) load 16 weights at m as float32 into z under mask K1
//                (masked-off lanes read as zero; y is the ymm half of z)
//   WIDEN        the symbol name

// func WIDEN(dst *float32, src *byte, rb uintptr, nrow, n int)
// Writes rows r < nrow (≤ 12) of n weights, rows rb bytes apart at src,
// as float32 in tile layout: element (r, i) at dst[96·(i/8) + 8r + i%8];
// the rest of each group of 16 elements (rows nrow..11, elements past n)
// is zero. Two rows at a time: 16 elements of each, and their low and high
// halves side by side into each of 2 blocks.
TEXT WIDEN(SB), NOSPLIT, $0-40
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  rb+16(FP), BX
	MOVQ  nrow+24(FP), R8
	MOVQ  n+32(FP), CX
	TESTQ CX, CX
	JEQ   wdone
	// K2: all 16 elements; K3: those of the last group of 16.
	MOVL  $0xffff, R10
	KMOVW R10, K2
	MOVQ  CX, R9
	ANDQ  $15, R9
	BZHIQ R9, R10, R11
	TESTQ R9, R9
	JNE   2(PC)
	MOVL  R10, R11
	KMOVW R11, K3
	ADDQ  $15, CX
	SHRQ  $4, CX // groups of 16 elements
	MOVQ  $6, R11 // pairs of rows

wpair:
	MOVQ  SI, AX
	MOVQ  DI, R12
	MOVQ  CX, R13

wchunk:
	KMOVW K2, K1
	CMPQ  R13, $1
	JNE   2(PC)
	KMOVW K3, K1
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	CMPQ  R8, $1
	JLT   wtr
	LDM((AX), Z0, Y0)
	CMPQ  R8, $2
	JLT   wtr
	LDM((AX)(BX*1), Z1, Y1)

wtr:
	VSHUFF64X2 $0x44, Z1, Z0, Z2 // elements 0-7 of both rows
	VSHUFF64X2 $0xee, Z1, Z0, Z3 // elements 8-15
	VMOVUPS    Z2, (R12)
	VMOVUPS    Z3, 384(R12)
	ADDQ       $O16, AX
	ADDQ       $768, R12
	DECQ       R13
	JNZ        wchunk

	SUBQ $2, R8
	LEAQ (SI)(BX*2), SI
	ADDQ $64, DI
	DECQ R11
	JNZ  wpair

wdone:
	VZEROUPPER
	RET
