//go:build amd64 && !noasm

#include "textflag.h"

// Unpacking of whole 16-row strips of Q4_0 and Q8_0 weights into the
// layout of the prefill tiles (q8ilv_amd64.s), without gathers: each row's
// quants are read with plain 16-byte loads, four rows to a register (lane
// j of register k holds row 4j+k), and a 4×4 dword transpose inside the
// 128-bit lanes turns them into vectors whose lane r is row r. The
// scales, 2 bytes a row, still come from one gather per block. The result
// is the same bytes as unpackS16Q4_0Z/unpackS16Q8_0Z (the tests compare
// them); these are several times faster, which moves the point where the
// tiles beat per-token matrix-vector products down to a few tokens.

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

// func unpack16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nb int)
// Unpacks nb Q4_0 blocks of 16 rows (ldw bytes apart) into a strip.
TEXT ·unpack16Q4_0Z(SB), NOSPLIT, $0-32
	SETUP16
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	TESTQ        CX, CX
	JZ           done

blk:
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
