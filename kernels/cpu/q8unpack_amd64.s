//go:build amd64 && !noasm

#include "textflag.h"
#include "q8tile_amd64.h"

// Unpacking of whole 16-row strips of Q4_0 and Q8_0 weights into the
// layout of the prefill tiles (q8ilv_amd64.s), without gathers: each row's
// quants are read with plain 16-byte loads, four rows to a register (lane
// j of register k holds row 4j+k), and a 4×4 dword transpose inside the
// 128-bit lanes turns them into vectors whose lane r is row r. The
// scales, 2 bytes a row, still come from one gather per block. The result
// is the same bytes as unpackS16Q4_0Z/unpackS16Q8_0Z (the tests compare
// them); these are several times faster, which moves the point where the
// tiles beat per-token matrix-vector products down to a few tokens.
//
// For up to 8 tokens the fused kernels below skip the strip in memory:
// each block is unpacked into registers and multiplied at once with every
// token, by the tiles' own per-token step (TOK), so the results are the
// tiles' bits, which are ggml's.

// Row offsets for the scale gather: lane r = r.
DATA iota16u<>+0(SB)/8, $0x0000000100000000
DATA iota16u<>+8(SB)/8, $0x0000000300000002
DATA iota16u<>+16(SB)/8, $0x0000000500000004
DATA iota16u<>+24(SB)/8, $0x0000000700000006
DATA iota16u<>+32(SB)/8, $0x0000000900000008
DATA iota16u<>+40(SB)/8, $0x0000000b0000000a
DATA iota16u<>+48(SB)/8, $0x0000000d0000000c
DATA iota16u<>+56(SB)/8, $0x0000000f0000000e
GLOBL iota16u<>(SB), RODATA|NOPTR, $64

// In the kernels SI, R11, R12 and R13 point at the current block of rows
// 0, 4, 8 and 12; BX is the row stride and R10 three times it; DI walks
// the strip; CX counts the blocks; Z31 holds the rows' offsets for the
// scale gather.

// LOADS loads the 16 bytes at offset o of the current block of rows k,
// 4+k, 8+k and 12+k into lanes 0..3 of zk (xk: its low 128 bits).
#define LOADS(o, z0, x0, z1, x1, z2, x2, z3, x3) \
	VMOVDQU      o(SI), x0; \
	VINSERTI32X4 $1, o(R11), z0, z0; \
	VINSERTI32X4 $2, o(R12), z0, z0; \
	VINSERTI32X4 $3, o(R13), z0, z0; \
	VMOVDQU      o(SI)(BX*1), x1; \
	VINSERTI32X4 $1, o(R11)(BX*1), z1, z1; \
	VINSERTI32X4 $2, o(R12)(BX*1), z1, z1; \
	VINSERTI32X4 $3, o(R13)(BX*1), z1, z1; \
	VMOVDQU      o(SI)(BX*2), x2; \
	VINSERTI32X4 $1, o(R11)(BX*2), z2, z2; \
	VINSERTI32X4 $2, o(R12)(BX*2), z2, z2; \
	VINSERTI32X4 $3, o(R13)(BX*2), z2, z2; \
	VMOVDQU      o(SI)(R10*1), x3; \
	VINSERTI32X4 $1, o(R11)(R10*1), z3, z3; \
	VINSERTI32X4 $2, o(R12)(R10*1), z3, z3; \
	VINSERTI32X4 $3, o(R13)(R10*1), z3, z3

// PF16 prefetches the 16 rows PFU bytes ahead of the current block: 16
// row streams are more than the hardware prefetchers follow.
#define PFU 1024
#define PF16 \
	PREFETCHT0 PFU(SI); \
	PREFETCHT0 PFU(SI)(BX*1); \
	PREFETCHT0 PFU(SI)(BX*2); \
	PREFETCHT0 PFU(SI)(R10*1); \
	PREFETCHT0 PFU(R11); \
	PREFETCHT0 PFU(R11)(BX*1); \
	PREFETCHT0 PFU(R11)(BX*2); \
	PREFETCHT0 PFU(R11)(R10*1); \
	PREFETCHT0 PFU(R12); \
	PREFETCHT0 PFU(R12)(BX*1); \
	PREFETCHT0 PFU(R12)(BX*2); \
	PREFETCHT0 PFU(R12)(R10*1); \
	PREFETCHT0 PFU(R13); \
	PREFETCHT0 PFU(R13)(BX*1); \
	PREFETCHT0 PFU(R13)(BX*2); \
	PREFETCHT0 PFU(R13)(R10*1)

// TRANSPOSE turns b0..b3 (lane j of bk: 4 dwords of row 4j+k) into
// c0..c3 (lane j of cd: dword d of rows 4j..4j+3), using t0..t3.
#define TRANSPOSE(b0, b1, b2, b3, t0, t1, t2, t3, c0, c1, c2, c3) \
	VPUNPCKLDQ  b1, b0, t0; \
	VPUNPCKHDQ  b1, b0, t1; \
	VPUNPCKLDQ  b3, b2, t2; \
	VPUNPCKHDQ  b3, b2, t3; \
	VPUNPCKLQDQ t2, t0, c0; \
	VPUNPCKHQDQ t2, t0, c1; \
	VPUNPCKLQDQ t3, t1, c2; \
	VPUNPCKHQDQ t3, t1, c3

// SETUP16 loads the arguments.
#define SETUP16 \
	MOVQ         dst+0(FP), DI; \
	MOVQ         w+8(FP), SI; \
	MOVQ         ldw+16(FP), BX; \
	MOVQ         nb+24(FP), CX; \
	LEAQ         (BX)(BX*2), R10; \
	LEAQ         (SI)(BX*4), R11; \
	LEAQ         (R11)(BX*4), R12; \
	LEAQ         (R12)(BX*4), R13; \
	VPBROADCASTD BX, Z31; \
	VPMULLD      iota16u<>(SB), Z31, Z31

// SCALES16 stores the 16 rows' scales of the current block as float32 at
// 512(DI).
#define SCALES16 \
	KXNORW     K2, K2, K2; \
	VPXORD     Z8, Z8, Z8; \
	VPGATHERDD (SI)(Z31*1), K2, Z8; \
	VPMOVDW    Z8, Y8; \
	VCVTPH2PS  Y8, Z8; \
	VMOVUPS    Z8, 512(DI)

// FSETUP loads the arguments of a fused kernel: SI, R11, R12, R13 the
// current block of rows 0, 4, 8, 12, BX the row stride and R10 three times
// it, DI the tokens' records, CX the blocks, Z31 the rows' offsets.
#define FSETUP \
	MOVQ         w+0(FP), SI; \
	MOVQ         ldw+8(FP), BX; \
	MOVQ         x+16(FP), DI; \
	MOVQ         nb+24(FP), CX; \
	LEAQ         (BX)(BX*2), R10; \
	LEAQ         (SI)(BX*4), R11; \
	LEAQ         (R11)(BX*4), R12; \
	LEAQ         (R12)(BX*4), R13; \
	VPBROADCASTD BX, Z31; \
	VPMULLD      iota16u<>(SB), Z31, Z31

// FSCALES loads the 16 rows' scales of the current block into Z24.
#define FSCALES \
	KXNORW     K2, K2, K2; \
	VPXORD     Z24, Z24, Z24; \
	VPGATHERDD (SI)(Z31*1), K2, Z24; \
	VPMOVDW    Z24, Y24; \
	VCVTPH2PS  Y24, Z24

// Q4REGS unpacks the current Q4_0 block of the 16 rows into Z16..Z23
// (Z30: the nibble mask).
#define Q4REGS \
	LOADS(2, Z0, X0, Z1, X1, Z2, X2, Z3, X3); \
	TRANSPOSE(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z16, Z17, Z18, Z19); \
	VPSRLD $4, Z16, Z20; \
	VPSRLD $4, Z17, Z21; \
	VPSRLD $4, Z18, Z22; \
	VPSRLD $4, Z19, Z23; \
	VPANDD Z30, Z16, Z16; \
	VPANDD Z30, Z17, Z17; \
	VPANDD Z30, Z18, Z18; \
	VPANDD Z30, Z19, Z19; \
	VPANDD Z30, Z20, Z20; \
	VPANDD Z30, Z21, Z21; \
	VPANDD Z30, Z22, Z22; \
	VPANDD Z30, Z23, Z23

// Q8REGS unpacks the current Q8_0 block of the 16 rows into Z16..Z23
// (Z30: 0x80 in every byte).
#define Q8REGS \
	LOADS(2, Z0, X0, Z1, X1, Z2, X2, Z3, X3); \
	TRANSPOSE(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z16, Z17, Z18, Z19); \
	LOADS(18, Z0, X0, Z1, X1, Z2, X2, Z3, X3); \
	TRANSPOSE(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z20, Z21, Z22, Z23); \
	VPXORD Z30, Z16, Z16; \
	VPXORD Z30, Z17, Z17; \
	VPXORD Z30, Z18, Z18; \
	VPXORD Z30, Z19, Z19; \
	VPXORD Z30, Z20, Z20; \
	VPXORD Z30, Z21, Z21; \
	VPXORD Z30, Z22, Z22; \
	VPXORD Z30, Z23, Z23

// TOKS4 and TOKS8 run the block for the first 4 or 8 tokens of the group,
// chains in Z8..Z15; corr is the offset of the records' correction (32:
// Q4_0's, 36: Q8_0's).
#define TOKS4(corr) \
	TOK(0, corr, Z8, Z25, Z26); \
	TOK(48, corr, Z9, Z27, Z28); \
	TOK(96, corr, Z10, Z25, Z26); \
	TOK(144, corr, Z11, Z27, Z28)

#define TOKS8(corr) \
	TOKS4(corr); \
	TOK(192, corr, Z12, Z25, Z26); \
	TOK(240, corr, Z13, Z27, Z28); \
	TOK(288, corr, Z14, Z25, Z26); \
	TOK(336, corr, Z15, Z27, Z28)

// FNEXT advances to the next block (bb bytes a row) and loops to blk.
#define FNEXT(bb) \
	ADDQ $bb, SI; \
	ADDQ $bb, R11; \
	ADDQ $bb, R12; \
	ADDQ $bb, R13; \
	ADDQ $768, DI; \
	DECQ CX; \
	JNZ  blk

// FCLEAR zeroes the 8 chains.
#define FCLEAR \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

// FST stores the chain z of the next token at (DX), adding what is there
// when acc is set (R9), and returns after nt (CX) tokens.
#define FST(z) \
	TESTQ     R9, R9; \
	JZ        2(PC); \
	VADDPS    (DX), z, z; \
	VMOVUPS   z, (DX); \
	ADDQ      BX, DX; \
	DECQ      CX; \
	JZ        done

// FFIN stores the chains of the nt tokens.
#define FFIN \
	MOVQ  dst+32(FP), DX; \
	MOVQ  ldd+40(FP), BX; \
	MOVQ  nt+48(FP), CX; \
	MOVQ  acc+56(FP), R9; \
	TESTQ CX, CX; \
	JZ    done; \
	FST(Z8); \
	FST(Z9); \
	FST(Z10); \
	FST(Z11); \
	FST(Z12); \
	FST(Z13); \
	FST(Z14); \
	FST(Z15)

// func unpack16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nb int)
// Unpacks nb Q4_0 blocks of 16 rows (ldw bytes apart) into a strip.
TEXT ·unpack16Q4_0Z(SB), NOSPLIT, $0-32
	SETUP16
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	TESTQ        CX, CX
	JZ           done

blk:
	PF16
	LOADS(2, Z0, X0, Z1, X1, Z2, X2, Z3, X3)
	TRANSPOSE(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z16, Z17, Z18, Z19)
	VPSRLD    $4, Z16, Z20
	VPSRLD    $4, Z17, Z21
	VPSRLD    $4, Z18, Z22
	VPSRLD    $4, Z19, Z23
	VPANDD    Z30, Z16, Z16
	VPANDD    Z30, Z17, Z17
	VPANDD    Z30, Z18, Z18
	VPANDD    Z30, Z19, Z19
	VPANDD    Z30, Z20, Z20
	VPANDD    Z30, Z21, Z21
	VPANDD    Z30, Z22, Z22
	VPANDD    Z30, Z23, Z23
	VMOVDQU64 Z16, (DI)
	VMOVDQU64 Z17, 64(DI)
	VMOVDQU64 Z18, 128(DI)
	VMOVDQU64 Z19, 192(DI)
	VMOVDQU64 Z20, 256(DI)
	VMOVDQU64 Z21, 320(DI)
	VMOVDQU64 Z22, 384(DI)
	VMOVDQU64 Z23, 448(DI)
	SCALES16
	ADDQ      $18, SI
	ADDQ      $18, R11
	ADDQ      $18, R12
	ADDQ      $18, R13
	ADDQ      $576, DI
	DECQ      CX
	JNZ       blk

done:
	VZEROUPPER
	RET

// func unpack16Q8_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nb int)
// Unpacks nb Q8_0 blocks of 16 rows (ldw bytes apart) into a strip
// (quants + 128).
TEXT ·unpack16Q8_0Z(SB), NOSPLIT, $0-32
	SETUP16
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z30
	TESTQ        CX, CX
	JZ           done

blk:
	PF16
	LOADS(2, Z0, X0, Z1, X1, Z2, X2, Z3, X3)
	LOADS(18, Z9, X9, Z10, X10, Z11, X11, Z12, X12)
	TRANSPOSE(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z16, Z17, Z18, Z19)
	TRANSPOSE(Z9, Z10, Z11, Z12, Z4, Z5, Z6, Z7, Z20, Z21, Z22, Z23)
	VPXORD    Z30, Z16, Z16
	VPXORD    Z30, Z17, Z17
	VPXORD    Z30, Z18, Z18
	VPXORD    Z30, Z19, Z19
	VPXORD    Z30, Z20, Z20
	VPXORD    Z30, Z21, Z21
	VPXORD    Z30, Z22, Z22
	VPXORD    Z30, Z23, Z23
	VMOVDQU64 Z16, (DI)
	VMOVDQU64 Z17, 64(DI)
	VMOVDQU64 Z18, 128(DI)
	VMOVDQU64 Z19, 192(DI)
	VMOVDQU64 Z20, 256(DI)
	VMOVDQU64 Z21, 320(DI)
	VMOVDQU64 Z22, 384(DI)
	VMOVDQU64 Z23, 448(DI)
	SCALES16
	ADDQ      $34, SI
	ADDQ      $34, R11
	ADDQ      $34, R12
	ADDQ      $34, R13
	ADDQ      $576, DI
	DECQ      CX
	JNZ       blk

done:
	VZEROUPPER
	RET

// func fuse4Q4Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the 16 rows of nb Q4_0 blocks at w
// (ldw bytes apart) and the first nt ≤ 4 tokens of a group in layout C.
TEXT ·fuse4Q4Z(SB), NOSPLIT, $0-64
	FSETUP
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	FCLEAR
	TESTQ        CX, CX
	JZ           fin

blk:
	PF16
	Q4REGS
	FSCALES
	TOKS4(32)
	FNEXT(18)

fin:
	FFIN

done:
	VZEROUPPER
	RET

// func fuse8Q4Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)
// As fuse4Q4Z for nt ≤ 8 tokens.
TEXT ·fuse8Q4Z(SB), NOSPLIT, $0-64
	FSETUP
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	FCLEAR
	TESTQ        CX, CX
	JZ           fin

blk:
	PF16
	Q4REGS
	FSCALES
	TOKS8(32)
	FNEXT(18)

fin:
	FFIN

done:
	VZEROUPPER
	RET

// func fuse4Q8Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)
// As fuse4Q4Z for Q8_0 weights.
TEXT ·fuse4Q8Z(SB), NOSPLIT, $0-64
	FSETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z30
	FCLEAR
	TESTQ        CX, CX
	JZ           fin

blk:
	PF16
	Q8REGS
	FSCALES
	TOKS4(36)
	FNEXT(34)

fin:
	FFIN

done:
	VZEROUPPER
	RET

// func fuse8Q8Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)
// As fuse4Q8Z for nt ≤ 8 tokens.
TEXT ·fuse8Q8Z(SB), NOSPLIT, $0-64
	FSETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z30
	FCLEAR
	TESTQ        CX, CX
	JZ           fin

blk:
	PF16
	Q8REGS
	FSCALES
	TOKS8(36)
	FNEXT(34)

fin:
	FFIN

done:
	VZEROUPPER
	RET
