//go:build amd64 && !noasm

#include "textflag.h"
#include "q8tile_amd64.h"

// Prefill for Q4_0 and Q8_0 weights, AVX-512 VNNI: 16 rows × up to 16
// tokens per tile, each output one chain over the blocks of the row in
// ggml's order,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc),
//
// with the rows in the lanes: nothing is summed across lanes, so the chain
// is a plain vertical FMA per block.
//
// Weights are unpacked per strip of 16 rows, 576 bytes per block: 8
// vectors where lane r of vector s holds the quants 4s..4s+3 of row r
// (Q4_0: the nibbles, 0..15; Q8_0: q+128, unsigned), then the 16 rows'
// scales as float32. A token's activations (layout C, q8pack.go) give per
// block 8 dwords of quants that VPDPBUSD broadcasts against the 8 vectors:
// after 8 of them, starting from the correction (-8·Σq or -128·Σq), lane r
// holds row r's exact integer sum of the block.

// Row offsets for the gathers: lane r = r (times the row stride).
DATA iota16<>+0(SB)/8, $0x0000000100000000
DATA iota16<>+8(SB)/8, $0x0000000300000002
DATA iota16<>+16(SB)/8, $0x0000000500000004
DATA iota16<>+24(SB)/8, $0x0000000700000006
DATA iota16<>+32(SB)/8, $0x0000000900000008
DATA iota16<>+40(SB)/8, $0x0000000b0000000a
DATA iota16<>+48(SB)/8, $0x0000000d0000000c
DATA iota16<>+56(SB)/8, $0x0000000f0000000e
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// GATHER loads into z the dword at off(SI) of each of the rows set in K1
// (Z31 their offsets), zero for the others.
#define GATHER(off, z) \
	KMOVW      K1, K2; \
	VPXORD     z, z, z; \
	VPGATHERDD off(SI)(Z31*1), K2, z

// USETUP loads the arguments of an unpack: DI dst, SI the first row, Z31
// the row offsets, K1 the rows, CX the blocks.
#define USETUP \
	MOVQ         dst+0(FP), DI; \
	MOVQ         w+8(FP), SI; \
	MOVQ         ldw+16(FP), AX; \
	VPBROADCASTD AX, Z31; \
	VPMULLD      iota16<>(SB), Z31, Z31; \
	MOVQ         nrows+24(FP), CX; \
	MOVL         $-1, AX; \
	BZHIL        CX, AX, AX; \
	KMOVW        AX, K1; \
	MOVQ         nb+32(FP), CX

// USCALES stores the 16 rows' scales of the block at SI as float32 at
// 512(DI).
#define USCALES \
	GATHER(0, Z8); \
	VPMOVDW   Z8, Y8; \
	VCVTPH2PS Y8, Z8; \
	VMOVUPS   Z8, 512(DI)

// func unpackS16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)
// Unpacks nb Q4_0 blocks of nrows ≤ 16 rows (ldw bytes apart) into a strip;
// missing rows are zero.
TEXT ·unpackS16Q4_0Z(SB), NOSPLIT, $0-40
	USETUP
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	TESTQ        CX, CX
	JZ           done

blk:
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
	USCALES
	ADDQ      $18, SI
	ADDQ      $576, DI
	DECQ      CX
	JNZ       blk

done:
	VZEROUPPER
	RET

// func unpackS16Q8_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)
// Unpacks nb Q8_0 blocks of nrows ≤ 16 rows (ldw bytes apart) into a strip
// (quants + 128); missing rows are zero.
TEXT ·unpackS16Q8_0Z(SB), NOSPLIT, $0-40
	USETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z30
	TESTQ        CX, CX
	JZ           done

blk:
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
	USCALES
	ADDQ      $34, SI
	ADDQ      $576, DI
	DECQ      CX
	JNZ       blk

done:
	VZEROUPPER
	RET

// In the tiles, R8 walks the strip, DI the group's records (768 bytes per
// block), CX counts the blocks; Z0..Z15 are the tokens' chains, Z16..Z23
// the block's 8 weight vectors and Z24 its 16 scales.

#define WLOAD \
	VMOVDQU64 (R8), Z16; \
	VMOVDQU64 64(R8), Z17; \
	VMOVDQU64 128(R8), Z18; \
	VMOVDQU64 192(R8), Z19; \
	VMOVDQU64 256(R8), Z20; \
	VMOVDQU64 320(R8), Z21; \
	VMOVDQU64 384(R8), Z22; \
	VMOVDQU64 448(R8), Z23; \
	VMOVUPS   512(R8), Z24

// ST stores the chain z of the next token (rows K1) at (DX), adding it to
// what is there if ADD; it returns after nt (CX) tokens.
#define ST(z) \
	VMOVUPS z, K1, (DX); \
	ADDQ    BX, DX; \
	DECQ    CX; \
	JZ      done

#define STA(z) \
	VMOVUPS.Z (DX), K1, Z25; \
	VADDPS    Z25, z, z; \
	VMOVUPS   z, K1, (DX); \
	ADDQ      BX, DX; \
	DECQ      CX; \
	JZ        done

// func tile16Q4Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of
// nb unpacked Q4_0 blocks and the first nt ≤ 16 tokens of a group in
// layout C; acc adds the chain to dst after it.
TEXT ·tile16Q4Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
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
	TESTQ CX, CX
	JZ    fin

blk:
	WLOAD
	TOK(0, 32, Z0, Z25, Z26)
	TOK(48, 32, Z1, Z27, Z28)
	TOK(96, 32, Z2, Z29, Z30)
	TOK(144, 32, Z3, Z25, Z26)
	TOK(192, 32, Z4, Z27, Z28)
	TOK(240, 32, Z5, Z29, Z30)
	TOK(288, 32, Z6, Z25, Z26)
	TOK(336, 32, Z7, Z27, Z28)
	TOK(384, 32, Z8, Z29, Z30)
	TOK(432, 32, Z9, Z25, Z26)
	TOK(480, 32, Z10, Z27, Z28)
	TOK(528, 32, Z11, Z29, Z30)
	TOK(576, 32, Z12, Z25, Z26)
	TOK(624, 32, Z13, Z27, Z28)
	TOK(672, 32, Z14, Z29, Z30)
	TOK(720, 32, Z15, Z25, Z26)
	ADDQ $576, R8
	ADDQ $768, DI
	DECQ CX
	JNZ  blk

fin:
	MOVQ  dst+24(FP), DX
	MOVQ  ldd+32(FP), BX
	MOVQ  rmask+40(FP), AX
	KMOVW AX, K1
	MOVQ  nt+48(FP), CX
	TESTQ CX, CX
	JZ    done
	CMPQ  acc+56(FP), $0
	JNE   add
	ST(Z0)
	ST(Z1)
	ST(Z2)
	ST(Z3)
	ST(Z4)
	ST(Z5)
	ST(Z6)
	ST(Z7)
	ST(Z8)
	ST(Z9)
	ST(Z10)
	ST(Z11)
	ST(Z12)
	ST(Z13)
	ST(Z14)
	ST(Z15)
	JMP done

add:
	STA(Z0)
	STA(Z1)
	STA(Z2)
	STA(Z3)
	STA(Z4)
	STA(Z5)
	STA(Z6)
	STA(Z7)
	STA(Z8)
	STA(Z9)
	STA(Z10)
	STA(Z11)
	STA(Z12)
	STA(Z13)
	STA(Z14)
	STA(Z15)

done:
	VZEROUPPER
	RET

// func tile8Q4Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of
// nb unpacked Q4_0 blocks and the first nt ≤ 8 tokens of a group in
// layout C; acc adds the chain to dst after it.
TEXT ·tile8Q4Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ CX, CX
	JZ    fin

blk:
	WLOAD
	TOK(0, 32, Z0, Z25, Z26)
	TOK(48, 32, Z1, Z27, Z28)
	TOK(96, 32, Z2, Z29, Z30)
	TOK(144, 32, Z3, Z25, Z26)
	TOK(192, 32, Z4, Z27, Z28)
	TOK(240, 32, Z5, Z29, Z30)
	TOK(288, 32, Z6, Z25, Z26)
	TOK(336, 32, Z7, Z27, Z28)
	ADDQ $576, R8
	ADDQ $768, DI
	DECQ CX
	JNZ  blk

fin:
	MOVQ  dst+24(FP), DX
	MOVQ  ldd+32(FP), BX
	MOVQ  rmask+40(FP), AX
	KMOVW AX, K1
	MOVQ  nt+48(FP), CX
	TESTQ CX, CX
	JZ    done
	CMPQ  acc+56(FP), $0
	JNE   add
	ST(Z0)
	ST(Z1)
	ST(Z2)
	ST(Z3)
	ST(Z4)
	ST(Z5)
	ST(Z6)
	ST(Z7)
	JMP done

add:
	STA(Z0)
	STA(Z1)
	STA(Z2)
	STA(Z3)
	STA(Z4)
	STA(Z5)
	STA(Z6)
	STA(Z7)

done:
	VZEROUPPER
	RET

// func tile4Q4Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of
// nb unpacked Q4_0 blocks and the first nt ≤ 4 tokens of a group in
// layout C; acc adds the chain to dst after it.
TEXT ·tile4Q4Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ CX, CX
	JZ    fin

blk:
	WLOAD
	TOK(0, 32, Z0, Z25, Z26)
	TOK(48, 32, Z1, Z27, Z28)
	TOK(96, 32, Z2, Z29, Z30)
	TOK(144, 32, Z3, Z25, Z26)
	ADDQ $576, R8
	ADDQ $768, DI
	DECQ CX
	JNZ  blk

fin:
	MOVQ  dst+24(FP), DX
	MOVQ  ldd+32(FP), BX
	MOVQ  rmask+40(FP), AX
	KMOVW AX, K1
	MOVQ  nt+48(FP), CX
	TESTQ CX, CX
	JZ    done
	CMPQ  acc+56(FP), $0
	JNE   add
	ST(Z0)
	ST(Z1)
	ST(Z2)
	ST(Z3)
	JMP done

add:
	STA(Z0)
	STA(Z1)
	STA(Z2)
	STA(Z3)

done:
	VZEROUPPER
	RET

// func tile16Q8Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of
// nb unpacked Q8_0 blocks and the first nt ≤ 16 tokens of a group in
// layout C; acc adds the chain to dst after it.
TEXT ·tile16Q8Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
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
	TESTQ CX, CX
	JZ    fin

blk:
	WLOAD
	TOK(0, 36, Z0, Z25, Z26)
	TOK(48, 36, Z1, Z27, Z28)
	TOK(96, 36, Z2, Z29, Z30)
	TOK(144, 36, Z3, Z25, Z26)
	TOK(192, 36, Z4, Z27, Z28)
	TOK(240, 36, Z5, Z29, Z30)
	TOK(288, 36, Z6, Z25, Z26)
	TOK(336, 36, Z7, Z27, Z28)
	TOK(384, 36, Z8, Z29, Z30)
	TOK(432, 36, Z9, Z25, Z26)
	TOK(480, 36, Z10, Z27, Z28)
	TOK(528, 36, Z11, Z29, Z30)
	TOK(576, 36, Z12, Z25, Z26)
	TOK(624, 36, Z13, Z27, Z28)
	TOK(672, 36, Z14, Z29, Z30)
	TOK(720, 36, Z15, Z25, Z26)
	ADDQ $576, R8
	ADDQ $768, DI
	DECQ CX
	JNZ  blk

fin:
	MOVQ  dst+24(FP), DX
	MOVQ  ldd+32(FP), BX
	MOVQ  rmask+40(FP), AX
	KMOVW AX, K1
	MOVQ  nt+48(FP), CX
	TESTQ CX, CX
	JZ    done
	CMPQ  acc+56(FP), $0
	JNE   add
	ST(Z0)
	ST(Z1)
	ST(Z2)
	ST(Z3)
	ST(Z4)
	ST(Z5)
	ST(Z6)
	ST(Z7)
	ST(Z8)
	ST(Z9)
	ST(Z10)
	ST(Z11)
	ST(Z12)
	ST(Z13)
	ST(Z14)
	ST(Z15)
	JMP done

add:
	STA(Z0)
	STA(Z1)
	STA(Z2)
	STA(Z3)
	STA(Z4)
	STA(Z5)
	STA(Z6)
	STA(Z7)
	STA(Z8)
	STA(Z9)
	STA(Z10)
	STA(Z11)
	STA(Z12)
	STA(Z13)
	STA(Z14)
	STA(Z15)

done:
	VZEROUPPER
	RET

// func tile8Q8Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of
// nb unpacked Q8_0 blocks and the first nt ≤ 8 tokens of a group in
// layout C; acc adds the chain to dst after it.
TEXT ·tile8Q8Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ CX, CX
	JZ    fin

blk:
	WLOAD
	TOK(0, 36, Z0, Z25, Z26)
	TOK(48, 36, Z1, Z27, Z28)
	TOK(96, 36, Z2, Z29, Z30)
	TOK(144, 36, Z3, Z25, Z26)
	TOK(192, 36, Z4, Z27, Z28)
	TOK(240, 36, Z5, Z29, Z30)
	TOK(288, 36, Z6, Z25, Z26)
	TOK(336, 36, Z7, Z27, Z28)
	ADDQ $576, R8
	ADDQ $768, DI
	DECQ CX
	JNZ  blk

fin:
	MOVQ  dst+24(FP), DX
	MOVQ  ldd+32(FP), BX
	MOVQ  rmask+40(FP), AX
	KMOVW AX, K1
	MOVQ  nt+48(FP), CX
	TESTQ CX, CX
	JZ    done
	CMPQ  acc+56(FP), $0
	JNE   add
	ST(Z0)
	ST(Z1)
	ST(Z2)
	ST(Z3)
	ST(Z4)
	ST(Z5)
	ST(Z6)
	ST(Z7)
	JMP done

add:
	STA(Z0)
	STA(Z1)
	STA(Z2)
	STA(Z3)
	STA(Z4)
	STA(Z5)
	STA(Z6)
	STA(Z7)

done:
	VZEROUPPER
	RET

// func tile4Q8Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of
// nb unpacked Q8_0 blocks and the first nt ≤ 4 tokens of a group in
// layout C; acc adds the chain to dst after it.
TEXT ·tile4Q8Z(SB), NOSPLIT, $0-64
	MOVQ wu+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ CX, CX
	JZ    fin

blk:
	WLOAD
	TOK(0, 36, Z0, Z25, Z26)
	TOK(48, 36, Z1, Z27, Z28)
	TOK(96, 36, Z2, Z29, Z30)
	TOK(144, 36, Z3, Z25, Z26)
	ADDQ $576, R8
	ADDQ $768, DI
	DECQ CX
	JNZ  blk

fin:
	MOVQ  dst+24(FP), DX
	MOVQ  ldd+32(FP), BX
	MOVQ  rmask+40(FP), AX
	KMOVW AX, K1
	MOVQ  nt+48(FP), CX
	TESTQ CX, CX
	JZ    done
	CMPQ  acc+56(FP), $0
	JNE   add
	ST(Z0)
	ST(Z1)
	ST(Z2)
	ST(Z3)
	JMP done

add:
	STA(Z0)
	STA(Z1)
	STA(Z2)
	STA(Z3)

done:
	VZEROUPPER
	RET
