//go:build amd64 && !noasm

// Hand-written: the K-quant kernels were rewritten to ggml's x86 summation
// order (and Q2_K/Q3_K/Q5_K added) after the avo generator was written;
// moving them to kernels/cpu/_gen is still to do.

#include "textflag.h"
#include "simd_amd64.h"

// K-quant weights times Q8_K activations (ggml layout: d float32, 256
// int8 quants, 16 int16 sums of 16), AVX-512 with VNNI, VBMI and GFNI.
//
// They sum in the order of ggml's x86 kernels (kernels/quant's K-quant dot
// products): per block, exact integer sums in 16 dword lanes, lane m
// holding values 4m..4m+3 of each 64-value chunk, folded to 8 lanes (m and
// m+8: lane l holds the values v with (v mod 32)/4 = l); each row's float
// accumulator gains d·lane in one fused multiply-add per lane; Q4_K's
// four min lanes (dmin·m·Σx by pairs of sub-blocks) ride in lanes 8..11 of
// the same accumulator; at the end KSUM8 (and KSUMM) reduce as ggml's
// hsum_float_8 does. Q2_K and Q3_K instead run two rows per vector, each
// 256-bit half holding one row's 8 lanes, so nothing is folded.

#define PFD 2048

// Word shift counts that move the 2 high bits of a Q6_K value (in qh) to
// bits 4-5 of the byte: left by 4 and 2 for the first 64 values of a half,
// right by 0 and 2 for the last 64.
DATA q6shl<>+0(SB)/8, $0x0004000400040004
DATA q6shl<>+8(SB)/8, $0x0004000400040004
DATA q6shl<>+16(SB)/8, $0x0004000400040004
DATA q6shl<>+24(SB)/8, $0x0004000400040004
DATA q6shl<>+32(SB)/8, $0x0002000200020002
DATA q6shl<>+40(SB)/8, $0x0002000200020002
DATA q6shl<>+48(SB)/8, $0x0002000200020002
DATA q6shl<>+56(SB)/8, $0x0002000200020002
GLOBL q6shl<>(SB), RODATA|NOPTR, $64
DATA q6shr<>+0(SB)/8, $0x0000000000000000
DATA q6shr<>+8(SB)/8, $0x0000000000000000
DATA q6shr<>+16(SB)/8, $0x0000000000000000
DATA q6shr<>+24(SB)/8, $0x0000000000000000
DATA q6shr<>+32(SB)/8, $0x0002000200020002
DATA q6shr<>+40(SB)/8, $0x0002000200020002
DATA q6shr<>+48(SB)/8, $0x0002000200020002
DATA q6shr<>+56(SB)/8, $0x0002000200020002
GLOBL q6shr<>(SB), RODATA|NOPTR, $64
DATA q6idx0<>+0(SB)/8, $0x0000000000000000
DATA q6idx0<>+8(SB)/8, $0x0000000000000000
DATA q6idx0<>+16(SB)/8, $0x0001000100010001
DATA q6idx0<>+24(SB)/8, $0x0001000100010001
DATA q6idx0<>+32(SB)/8, $0x0002000200020002
DATA q6idx0<>+40(SB)/8, $0x0002000200020002
DATA q6idx0<>+48(SB)/8, $0x0003000300030003
DATA q6idx0<>+56(SB)/8, $0x0003000300030003
GLOBL q6idx0<>(SB), RODATA|NOPTR, $64
DATA q6idx1<>+0(SB)/8, $0x0004000400040004
DATA q6idx1<>+8(SB)/8, $0x0004000400040004
DATA q6idx1<>+16(SB)/8, $0x0005000500050005
DATA q6idx1<>+24(SB)/8, $0x0005000500050005
DATA q6idx1<>+32(SB)/8, $0x0006000600060006
DATA q6idx1<>+40(SB)/8, $0x0006000600060006
DATA q6idx1<>+48(SB)/8, $0x0007000700070007
DATA q6idx1<>+56(SB)/8, $0x0007000700070007
GLOBL q6idx1<>(SB), RODATA|NOPTR, $64
DATA q6idx2<>+0(SB)/8, $0x0008000800080008
DATA q6idx2<>+8(SB)/8, $0x0008000800080008
DATA q6idx2<>+16(SB)/8, $0x0009000900090009
DATA q6idx2<>+24(SB)/8, $0x0009000900090009
DATA q6idx2<>+32(SB)/8, $0x000a000a000a000a
DATA q6idx2<>+40(SB)/8, $0x000a000a000a000a
DATA q6idx2<>+48(SB)/8, $0x000b000b000b000b
DATA q6idx2<>+56(SB)/8, $0x000b000b000b000b
GLOBL q6idx2<>(SB), RODATA|NOPTR, $64
DATA q6idx3<>+0(SB)/8, $0x000c000c000c000c
DATA q6idx3<>+8(SB)/8, $0x000c000c000c000c
DATA q6idx3<>+16(SB)/8, $0x000d000d000d000d
DATA q6idx3<>+24(SB)/8, $0x000d000d000d000d
DATA q6idx3<>+32(SB)/8, $0x000e000e000e000e
DATA q6idx3<>+40(SB)/8, $0x000e000e000e000e
DATA q6idx3<>+48(SB)/8, $0x000f000f000f000f
DATA q6idx3<>+56(SB)/8, $0x000f000f000f000f
GLOBL q6idx3<>(SB), RODATA|NOPTR, $64
DATA q6k32<>+0(SB)/4, $0x20202020
GLOBL q6k32<>(SB), RODATA|NOPTR, $4

// KSUM8 reduces the 8 float32 lanes of y (xmm name x) into the low lane of
// t1 as ggml's hsum_float_8: (l4+l0 + l6+l2) + (l5+l1 + l7+l3).
#define KSUM8(y, x, t1, t2) \
	VEXTRACTF128 $1, y, t1; \
	VADDPS       x, t1, t1; \
	VMOVHLPS     t1, t1, t2; \
	VADDPS       t2, t1, t1; \
	VMOVSHDUP    t1, t2; \
	VADDSS       t2, t1, t1

// KSUMM adds to the low lane of t1 lanes 8..11 of z reduced as ggml
// reduces its Q4_K min lanes: (l8+l10) + (l9+l11).
#define KSUMM(z, t1, t2, t3) \
	VEXTRACTF32X4 $2, z, t2; \
	VMOVHLPS      t2, t2, t3; \
	VADDPS        t3, t2, t2; \
	VMOVSHDUP     t2, t3; \
	VADDSS        t3, t2, t2; \
	VADDSS        t2, t1, t1

// KGATHER4 puts the low lanes of x4..x7 into the 4 lanes of x0.
#define KGATHER4(x4, x5, x6, x7, x0) \
	VINSERTPS $0x10, x5, x4, x4; \
	VINSERTPS $0x20, x6, x4, x4; \
	VINSERTPS $0x30, x7, x4, x4; \
	VMOVAPS   x4, x0

// Q6CHUNK adds into the dword lanes of Z6 the products of 64 6-bit quants
// (unsigned, in Z9) with the activations x, less 32·x (xs, precomputed),
// times the sub-block scales gathered by idx from Z4.
#define Q6CHUNK(x, xs, idx) \
	VPMADDUBSW x, Z9, Z9; \
	VPSUBW     xs, Z9, Z9; \
	VPERMW     Z4, idx, Z11; \
	VPDPWSSD   Z11, Z9, Z6

// Q6ROW accumulates into the 8 float32 lanes of f (a ymm register) the
// product of the Q6_K block at offset AX of the row at p with the
// activations: quants in Z16..Z19 (64 each), 32·quants summed by pairs in
// Z13, Z14, Z15, Z22, scale d in X21 (low lane). Constants: Z23..Z26 the
// scale gathers, Z27 the nibble shift, Z28 and Z29 the qh shifts, Z30 0x30
// bytes, Z31 0x0f bytes.
#define Q6ROW(p, f) \
	VPMOVSXBW       192(p)(AX*1), Y4; \
	VPXORD          Z6, Z6, Z6; \
	VMOVDQU64       (p)(AX*1), Z7; \
	VBROADCASTI64X4 128(p)(AX*1), Z8; \
	VPANDD          Z31, Z7, Z9; \
	VPSLLVW         Z29, Z8, Z10; \
	VPTERNLOGD      $0xf8, Z30, Z10, Z9; \
	Q6CHUNK(Z16, Z13, Z23); \
	VGF2P8AFFINEQB  $0, Z27, Z7, Z9; \
	VPSRLVW         Z28, Z8, Z10; \
	VPTERNLOGD      $0xf8, Z30, Z10, Z9; \
	Q6CHUNK(Z17, Z14, Z24); \
	VMOVDQU64       64(p)(AX*1), Z7; \
	VBROADCASTI64X4 160(p)(AX*1), Z8; \
	VPANDD          Z31, Z7, Z9; \
	VPSLLVW         Z29, Z8, Z10; \
	VPTERNLOGD      $0xf8, Z30, Z10, Z9; \
	Q6CHUNK(Z18, Z15, Z25); \
	VGF2P8AFFINEQB  $0, Z27, Z7, Z9; \
	VPSRLVW         Z28, Z8, Z10; \
	VPTERNLOGD      $0xf8, Z30, Z10, Z9; \
	Q6CHUNK(Z19, Z22, Z26); \
	VEXTRACTI64X4   $1, Z6, Y7; \
	VPADDD          Y7, Y6, Y6; \
	VCVTDQ2PS       Y6, Y6; \
	VPBROADCASTW    208(p)(AX*1), X12; \
	VCVTPH2PS       X12, X12; \
	VMULSS          X21, X12, X12; \
	VBROADCASTSS    X12, Y12; \
	VFMADD231PS     Y12, Y6, f

// func gemv4Q6_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q6_K blocks,
// ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not 0; x is
// a row of Q8_K blocks.
TEXT ·gemv4Q6_KVNNI(SB), NOSPLIT, $0-56
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z30
	VMOVDQU64    q6shl<>(SB), Z29
	VMOVDQU64    q6shr<>(SB), Z28
	MOVQ         $0x1020408000000000, AX
	VPBROADCASTQ AX, Z27
	VMOVDQU64    q6idx3<>(SB), Z26
	VMOVDQU64    q6idx2<>(SB), Z25
	VMOVDQU64    q6idx1<>(SB), Z24
	VMOVDQU64    q6idx0<>(SB), Z23
	MOVQ         w+0(FP), R8
	MOVQ         ldw+8(FP), BX
	MOVQ         x+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         y+32(FP), DX
	MOVQ         q+40(FP), R14
	MOVQ         R14, AX
	IMULQ        BX, AX
	LEAQ         (R8)(AX*1), R9
	LEAQ         (R9)(AX*1), R10
	LEAQ         (R10)(AX*1), R11
	MOVQ         R14, SI
	SHLQ         $2, SI
	TESTQ        R14, R14
	JZ           done

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     fin

blk:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	PREFETCHT0 PFD+128(R8)(AX*1)
	PREFETCHT0 PFD+128(R9)(AX*1)
	PREFETCHT0 PFD+128(R10)(AX*1)
	PREFETCHT0 PFD+128(R11)(AX*1)
	VMOVDQU64  4(R12), Z16
	VMOVDQU64  68(R12), Z17
	VMOVDQU64  132(R12), Z18
	VMOVDQU64  196(R12), Z19
	VMOVSS       (R12), X21
	VPBROADCASTD q6k32<>(SB), Z12
	VPMADDUBSW   Z16, Z12, Z13
	VPMADDUBSW   Z17, Z12, Z14
	VPMADDUBSW   Z18, Z12, Z15
	VPMADDUBSW   Z19, Z12, Z22
	Q6ROW(R8, Y0)
	Q6ROW(R9, Y1)
	Q6ROW(R10, Y2)
	Q6ROW(R11, Y3)
	ADDQ $210, AX
	ADDQ $292, R12
	DECQ R13
	JNZ  blk

fin:
	KSUM8(Y0, X0, X4, X8)
	KSUM8(Y1, X1, X5, X8)
	KSUM8(Y2, X2, X6, X8)
	KSUM8(Y3, X3, X7, X8)
	KGATHER4(X4, X5, X6, X7, X0)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

store:
	VMOVSS     X0, (DX)
	VEXTRACTPS $1, X0, (DX)(SI*1)
	VEXTRACTPS $2, X0, (R13)
	VEXTRACTPS $3, X0, (R13)(SI*1)
	ADDQ       $4, DX
	ADDQ       BX, R8
	ADDQ       BX, R9
	ADDQ       BX, R10
	ADDQ       BX, R11
	DECQ       R14
	JNZ        row

done:
	VZEROUPPER
	RET

// Q4_K: shifts that put the high nibbles of a 32-byte group in the upper
// half, the scale gathers per 64 values, the min gather, and the constants
// that unpack the 6-bit scales and mins.
DATA q4kshr<>+0(SB)/8, $0x0000000000000000
DATA q4kshr<>+8(SB)/8, $0x0000000000000000
DATA q4kshr<>+16(SB)/8, $0x0000000000000000
DATA q4kshr<>+24(SB)/8, $0x0000000000000000
DATA q4kshr<>+32(SB)/8, $0x0004000400040004
DATA q4kshr<>+40(SB)/8, $0x0004000400040004
DATA q4kshr<>+48(SB)/8, $0x0004000400040004
DATA q4kshr<>+56(SB)/8, $0x0004000400040004
GLOBL q4kshr<>(SB), RODATA|NOPTR, $64
DATA q4kidx0<>+0(SB)/8, $0x0000000000000000
DATA q4kidx0<>+8(SB)/8, $0x0000000000000000
DATA q4kidx0<>+16(SB)/8, $0x0000000000000000
DATA q4kidx0<>+24(SB)/8, $0x0000000000000000
DATA q4kidx0<>+32(SB)/8, $0x0001000100010001
DATA q4kidx0<>+40(SB)/8, $0x0001000100010001
DATA q4kidx0<>+48(SB)/8, $0x0001000100010001
DATA q4kidx0<>+56(SB)/8, $0x0001000100010001
GLOBL q4kidx0<>(SB), RODATA|NOPTR, $64
DATA q4kidx1<>+0(SB)/8, $0x0002000200020002
DATA q4kidx1<>+8(SB)/8, $0x0002000200020002
DATA q4kidx1<>+16(SB)/8, $0x0002000200020002
DATA q4kidx1<>+24(SB)/8, $0x0002000200020002
DATA q4kidx1<>+32(SB)/8, $0x0003000300030003
DATA q4kidx1<>+40(SB)/8, $0x0003000300030003
DATA q4kidx1<>+48(SB)/8, $0x0003000300030003
DATA q4kidx1<>+56(SB)/8, $0x0003000300030003
GLOBL q4kidx1<>(SB), RODATA|NOPTR, $64
DATA q4kidx2<>+0(SB)/8, $0x0004000400040004
DATA q4kidx2<>+8(SB)/8, $0x0004000400040004
DATA q4kidx2<>+16(SB)/8, $0x0004000400040004
DATA q4kidx2<>+24(SB)/8, $0x0004000400040004
DATA q4kidx2<>+32(SB)/8, $0x0005000500050005
DATA q4kidx2<>+40(SB)/8, $0x0005000500050005
DATA q4kidx2<>+48(SB)/8, $0x0005000500050005
DATA q4kidx2<>+56(SB)/8, $0x0005000500050005
GLOBL q4kidx2<>(SB), RODATA|NOPTR, $64
DATA q4kidx3<>+0(SB)/8, $0x0006000600060006
DATA q4kidx3<>+8(SB)/8, $0x0006000600060006
DATA q4kidx3<>+16(SB)/8, $0x0006000600060006
DATA q4kidx3<>+24(SB)/8, $0x0006000600060006
DATA q4kidx3<>+32(SB)/8, $0x0007000700070007
DATA q4kidx3<>+40(SB)/8, $0x0007000700070007
DATA q4kidx3<>+48(SB)/8, $0x0007000700070007
DATA q4kidx3<>+56(SB)/8, $0x0007000700070007
GLOBL q4kidx3<>(SB), RODATA|NOPTR, $64
DATA q4kidxm<>+0(SB)/8, $0x0009000900080008
DATA q4kidxm<>+8(SB)/8, $0x000b000b000a000a
DATA q4kidxm<>+16(SB)/8, $0x000d000d000c000c
DATA q4kidxm<>+24(SB)/8, $0x000f000f000e000e
DATA q4kidxm<>+32(SB)/8, $0x0000000000000000
DATA q4kidxm<>+40(SB)/8, $0x0000000000000000
DATA q4kidxm<>+48(SB)/8, $0x0000000000000000
DATA q4kidxm<>+56(SB)/8, $0x0000000000000000
GLOBL q4kidxm<>(SB), RODATA|NOPTR, $64
DATA q4ksh<>+0(SB)/8, $0x0000000000000000
DATA q4ksh<>+8(SB)/8, $0x0000000400000000
GLOBL q4ksh<>(SB), RODATA|NOPTR, $16
DATA q4km1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4km1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL q4km1<>(SB), RODATA|NOPTR, $16
DATA q4km2<>+0(SB)/8, $0x0303030300000000
DATA q4km2<>+8(SB)/8, $0x0303030300000000
GLOBL q4km2<>(SB), RODATA|NOPTR, $16

// The Q4_K kernel takes 64 bytes of quants (128 values) at a time: their
// low nibbles are sub-blocks 2c and 2c+2, their high nibbles 2c+1 and
// 2c+3, so the activations are regrouped once per block (shared by the 4
// rows) into [x sub-block 0 | x sub-block 2], [1 | 3], [4 | 6], [5 | 7];
// dword lane m of each product still holds values 4m..4m+3 of a 32-value
// sub-block, so the folded lanes are ggml's. The constants below gather
// the sub-block scales for those four groups, pick d (8 lanes) and dmin (4
// lanes) out of a block's first 16 bytes, and negate dx in the min lanes.
DATA q4kidxa0<>+0(SB)/8, $0x0000000000000000
DATA q4kidxa0<>+8(SB)/8, $0x0000000000000000
DATA q4kidxa0<>+16(SB)/8, $0x0000000000000000
DATA q4kidxa0<>+24(SB)/8, $0x0000000000000000
DATA q4kidxa0<>+32(SB)/8, $0x0002000200020002
DATA q4kidxa0<>+40(SB)/8, $0x0002000200020002
DATA q4kidxa0<>+48(SB)/8, $0x0002000200020002
DATA q4kidxa0<>+56(SB)/8, $0x0002000200020002
GLOBL q4kidxa0<>(SB), RODATA|NOPTR, $64
DATA q4kidxb0<>+0(SB)/8, $0x0001000100010001
DATA q4kidxb0<>+8(SB)/8, $0x0001000100010001
DATA q4kidxb0<>+16(SB)/8, $0x0001000100010001
DATA q4kidxb0<>+24(SB)/8, $0x0001000100010001
DATA q4kidxb0<>+32(SB)/8, $0x0003000300030003
DATA q4kidxb0<>+40(SB)/8, $0x0003000300030003
DATA q4kidxb0<>+48(SB)/8, $0x0003000300030003
DATA q4kidxb0<>+56(SB)/8, $0x0003000300030003
GLOBL q4kidxb0<>(SB), RODATA|NOPTR, $64
DATA q4kidxa1<>+0(SB)/8, $0x0004000400040004
DATA q4kidxa1<>+8(SB)/8, $0x0004000400040004
DATA q4kidxa1<>+16(SB)/8, $0x0004000400040004
DATA q4kidxa1<>+24(SB)/8, $0x0004000400040004
DATA q4kidxa1<>+32(SB)/8, $0x0006000600060006
DATA q4kidxa1<>+40(SB)/8, $0x0006000600060006
DATA q4kidxa1<>+48(SB)/8, $0x0006000600060006
DATA q4kidxa1<>+56(SB)/8, $0x0006000600060006
GLOBL q4kidxa1<>(SB), RODATA|NOPTR, $64
DATA q4kidxb1<>+0(SB)/8, $0x0005000500050005
DATA q4kidxb1<>+8(SB)/8, $0x0005000500050005
DATA q4kidxb1<>+16(SB)/8, $0x0005000500050005
DATA q4kidxb1<>+24(SB)/8, $0x0005000500050005
DATA q4kidxb1<>+32(SB)/8, $0x0007000700070007
DATA q4kidxb1<>+40(SB)/8, $0x0007000700070007
DATA q4kidxb1<>+48(SB)/8, $0x0007000700070007
DATA q4kidxb1<>+56(SB)/8, $0x0007000700070007
GLOBL q4kidxb1<>(SB), RODATA|NOPTR, $64
DATA q4kdm<>+0(SB)/8, $0x0000000000000000
DATA q4kdm<>+8(SB)/8, $0x0000000000000000
DATA q4kdm<>+16(SB)/8, $0x0001000100010001
DATA q4kdm<>+24(SB)/8, $0x0001000100010001
GLOBL q4kdm<>(SB), RODATA|NOPTR, $32
DATA q4ksgn<>+0(SB)/8, $0x0000000000000000
DATA q4ksgn<>+8(SB)/8, $0x0000000000000000
DATA q4ksgn<>+16(SB)/8, $0x0000000000000000
DATA q4ksgn<>+24(SB)/8, $0x0000000000000000
DATA q4ksgn<>+32(SB)/8, $0x8000000080000000
DATA q4ksgn<>+40(SB)/8, $0x8000000080000000
DATA q4ksgn<>+48(SB)/8, $0x0000000000000000
DATA q4ksgn<>+56(SB)/8, $0x0000000000000000
GLOBL q4ksgn<>(SB), RODATA|NOPTR, $64

// Q4KROW accumulates into f the product of the Q4_K block at offset AX of
// the row at p with the activations (regrouped quants Z16..Z19; the 8
// sub-block sums of the block as words in the high 128 bits of Y13, the
// low ones zero; [dx ×8, −dx ×4] in Z21): lanes 0..7 gain d·dx·Σ
// sc_j·(q·x)_j by lane, lanes 8..11 −dmin·dx·(m_2k·Σx_2k + m_2k+1·Σx_2k+1),
// one fused multiply-add per lane as ggml does. K1 selects lanes 0..7.
#define Q4KROW(p, f) \
	VMOVDQU       4(p)(AX*1), X4; \
	VPSHUFD       $0x98, X4, X5; \
	VPSHUFD       $0x50, X4, X6; \
	VPSRLVD       X24, X5, X5; \
	VPANDD        X23, X5, X5; \
	VPSRLD        $6, X6, X6; \
	VPANDD        X22, X6, X6; \
	VPSLLD        $4, X6, X6; \
	VPORD         X6, X5, X5; \
	VPMOVZXBW     X5, Y4; \
	VMOVDQU64     16(p)(AX*1), Z7; \
	VPSRLW        $4, Z7, Z8; \
	VPANDD        Z31, Z7, Z7; \
	VPANDD        Z31, Z8, Z8; \
	VPMADDUBSW    Z16, Z7, Z7; \
	VPMADDUBSW    Z17, Z8, Z8; \
	VPERMW        Z4, Z26, Z9; \
	VPERMW        Z4, Z27, Z10; \
	VPMADDWD      Z9, Z7, Z6; \
	VPDPWSSD      Z10, Z8, Z6; \
	VMOVDQU64     80(p)(AX*1), Z7; \
	VPSRLW        $4, Z7, Z8; \
	VPANDD        Z31, Z7, Z7; \
	VPANDD        Z31, Z8, Z8; \
	VPMADDUBSW    Z18, Z7, Z7; \
	VPMADDUBSW    Z19, Z8, Z8; \
	VPERMW        Z4, Z28, Z9; \
	VPERMW        Z4, Z29, Z10; \
	VPDPWSSD      Z9, Z7, Z6; \
	VPDPWSSD      Z10, Z8, Z6; \
	VPMADDWD      Y13, Y4, Y9; \
	VSHUFI64X2    $0x1e, Z9, Z6, Z10; \
	VPADDD        Z6, Z10, K1, Z10; \
	VCVTDQ2PS     Z10, Z10; \
	VPERMW        (p)(AX*1), Y25, Y11; \
	VCVTPH2PS     Y11, Z11; \
	VMULPS        Z21, Z11, Z11; \
	VFMADD231PS   Z11, Z10, f

// func gemv4Q4_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q6_KVNNI for Q4_K weights.
TEXT ·gemv4Q4_KVNNI(SB), NOSPLIT, $0-56
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0xff, AX
	KMOVW        AX, K1
	VMOVDQU64    q4kidxb1<>(SB), Z29
	VMOVDQU64    q4kidxa1<>(SB), Z28
	VMOVDQU64    q4kidxb0<>(SB), Z27
	VMOVDQU64    q4kidxa0<>(SB), Z26
	VMOVDQU64    q4kdm<>(SB), Y25
	VMOVDQU32    q4ksh<>(SB), X24
	VMOVDQU32    q4km1<>(SB), X23
	VMOVDQU32    q4km2<>(SB), X22
	VMOVDQU64    q4ksgn<>(SB), Z20
	MOVQ         w+0(FP), R8
	MOVQ         ldw+8(FP), BX
	MOVQ         x+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         y+32(FP), DX
	MOVQ         q+40(FP), R14
	MOVQ         R14, AX
	IMULQ        BX, AX
	LEAQ         (R8)(AX*1), R9
	LEAQ         (R9)(AX*1), R10
	LEAQ         (R10)(AX*1), R11
	MOVQ         R14, SI
	SHLQ         $2, SI
	TESTQ        R14, R14
	JZ           done

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     fin

blk:
	PREFETCHT0   PFD(R8)(AX*1)
	PREFETCHT0   PFD(R9)(AX*1)
	PREFETCHT0   PFD(R10)(AX*1)
	PREFETCHT0   PFD(R11)(AX*1)
	PREFETCHT0   PFD+128(R8)(AX*1)
	PREFETCHT0   PFD+128(R9)(AX*1)
	PREFETCHT0   PFD+128(R10)(AX*1)
	PREFETCHT0   PFD+128(R11)(AX*1)
	VMOVDQU64    4(R12), Z12
	VMOVDQU64    68(R12), Z14
	VSHUFI64X2   $0x44, Z14, Z12, Z16
	VSHUFI64X2   $0xee, Z14, Z12, Z17
	VMOVDQU64    132(R12), Z12
	VMOVDQU64    196(R12), Z14
	VSHUFI64X2   $0x44, Z14, Z12, Z18
	VSHUFI64X2   $0xee, Z14, Z12, Z19
	VMOVDQU      260(R12), Y14
	VEXTRACTI128 $1, Y14, X13
	VPHADDW      X13, X14, X13
	VPERMQ       $0x4e, Y13, Y13
	VBROADCASTSS (R12), Z21
	VXORPS       Z20, Z21, Z21
	Q4KROW(R8, Z0)
	Q4KROW(R9, Z1)
	Q4KROW(R10, Z2)
	Q4KROW(R11, Z3)
	ADDQ $144, AX
	ADDQ $292, R12
	DECQ R13
	JNZ  blk

fin:
	KSUM8(Y0, X0, X4, X8)
	KSUMM(Z0, X4, X9, X10)
	KSUM8(Y1, X1, X5, X8)
	KSUMM(Z1, X5, X9, X10)
	KSUM8(Y2, X2, X6, X8)
	KSUMM(Z2, X6, X9, X10)
	KSUM8(Y3, X3, X7, X8)
	KSUMM(Z3, X7, X9, X10)
	KGATHER4(X4, X5, X6, X7, X0)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

store:
	VMOVSS     X0, (DX)
	VEXTRACTPS $1, X0, (DX)(SI*1)
	VEXTRACTPS $2, X0, (R13)
	VEXTRACTPS $3, X0, (R13)(SI*1)
	ADDQ       $4, DX
	ADDQ       BX, R8
	ADDQ       BX, R9
	ADDQ       BX, R10
	ADDQ       BX, R11
	DECQ       R14
	JNZ        row

done:
	VZEROUPPER
	RET

// Q5_K: dword rotations that bring bit 2j (values of the low half) or
// 2j+1 (high half) of each qh byte to bit 4, for the 64-value chunk j.
DATA q5krot0<>+0(SB)/8, $0x0000000400000004
DATA q5krot0<>+8(SB)/8, $0x0000000400000004
DATA q5krot0<>+16(SB)/8, $0x0000000400000004
DATA q5krot0<>+24(SB)/8, $0x0000000400000004
DATA q5krot0<>+32(SB)/8, $0x0000000300000003
DATA q5krot0<>+40(SB)/8, $0x0000000300000003
DATA q5krot0<>+48(SB)/8, $0x0000000300000003
DATA q5krot0<>+56(SB)/8, $0x0000000300000003
GLOBL q5krot0<>(SB), RODATA|NOPTR, $64
DATA q5krot1<>+0(SB)/8, $0x0000000200000002
DATA q5krot1<>+8(SB)/8, $0x0000000200000002
DATA q5krot1<>+16(SB)/8, $0x0000000200000002
DATA q5krot1<>+24(SB)/8, $0x0000000200000002
DATA q5krot1<>+32(SB)/8, $0x0000000100000001
DATA q5krot1<>+40(SB)/8, $0x0000000100000001
DATA q5krot1<>+48(SB)/8, $0x0000000100000001
DATA q5krot1<>+56(SB)/8, $0x0000000100000001
GLOBL q5krot1<>(SB), RODATA|NOPTR, $64
DATA q5krot2<>+0(SB)/8, $0x0000000000000000
DATA q5krot2<>+8(SB)/8, $0x0000000000000000
DATA q5krot2<>+16(SB)/8, $0x0000000000000000
DATA q5krot2<>+24(SB)/8, $0x0000000000000000
DATA q5krot2<>+32(SB)/8, $0x0000001f0000001f
DATA q5krot2<>+40(SB)/8, $0x0000001f0000001f
DATA q5krot2<>+48(SB)/8, $0x0000001f0000001f
DATA q5krot2<>+56(SB)/8, $0x0000001f0000001f
GLOBL q5krot2<>(SB), RODATA|NOPTR, $64
DATA q5krot3<>+0(SB)/8, $0x0000001e0000001e
DATA q5krot3<>+8(SB)/8, $0x0000001e0000001e
DATA q5krot3<>+16(SB)/8, $0x0000001e0000001e
DATA q5krot3<>+24(SB)/8, $0x0000001e0000001e
DATA q5krot3<>+32(SB)/8, $0x0000001d0000001d
DATA q5krot3<>+40(SB)/8, $0x0000001d0000001d
DATA q5krot3<>+48(SB)/8, $0x0000001d0000001d
DATA q5krot3<>+56(SB)/8, $0x0000001d0000001d
GLOBL q5krot3<>(SB), RODATA|NOPTR, $64

// Q5KCHUNK accumulates into Z6 the 64 values of chunk j of the Q5_K block
// at offset AX of the row at p: Q4KCHUNK's nibbles (quants at byte off)
// with bit 4 from the qh bytes in Z15 rotated by rot; Z20 holds 0x10 bytes.
#define Q5KCHUNK(p, off, x, idx, rot) \
	VBROADCASTI64X4 off(p)(AX*1), Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VPROLVD         rot(SB), Z15, Z8; \
	VPTERNLOGD      $0xf8, Z20, Z8, Z7; \
	VPMADDUBSW      x, Z7, Z7; \
	VPERMW          Z4, idx, Z8; \
	VPDPWSSD        Z8, Z7, Z6

// Q5KROW accumulates into f the product of the Q5_K block at offset AX of
// the row at p with the activations (quants Z16..Z19 in stored order; the
// sub-block sums, scale signs and K1 as Q4KROW has them): lanes 0..7 gain
// d·dx·lane sums, lane 8 −dmin·dx·Σ m_j·Σx_j as one integer (ggml's summs;
// lanes 9..11 get the same, unread), the 16→8 lane fold and the min sum
// joined by one shuffle and a masked add, as in Q4KROW.
#define Q5KROW(p, f) \
	VMOVDQU         4(p)(AX*1), X4; \
	VPSHUFD         $0x98, X4, X5; \
	VPSHUFD         $0x50, X4, X6; \
	VPSRLVD         X24, X5, X5; \
	VPANDD          X23, X5, X5; \
	VPSRLD          $6, X6, X6; \
	VPANDD          X22, X6, X6; \
	VPSLLD          $4, X6, X6; \
	VPORD           X6, X5, X5; \
	VPMOVZXBW       X5, Y4; \
	VBROADCASTI64X4 16(p)(AX*1), Z15; \
	VPXORD          Z6, Z6, Z6; \
	Q5KCHUNK(p, 48, Z16, Z26, q5krot0<>); \
	Q5KCHUNK(p, 80, Z17, Z27, q5krot1<>); \
	Q5KCHUNK(p, 112, Z18, Z28, q5krot2<>); \
	Q5KCHUNK(p, 144, Z19, Z29, q5krot3<>); \
	VPMADDWD        Y13, Y4, Y9; \
	VPHADDD         Y9, Y9, Y9; \
	VPHADDD         Y9, Y9, Y9; \
	VSHUFI64X2      $0x1e, Z9, Z6, Z10; \
	VPADDD          Z6, Z10, K1, Z10; \
	VCVTDQ2PS       Z10, Z10; \
	VPERMW          (p)(AX*1), Y25, Y11; \
	VCVTPH2PS       Y11, Z11; \
	VMULPS          Z21, Z11, Z11; \
	VFMADD231PS     Z11, Z10, f

// KSUML8 adds lane 8 of z to the low lane of t1.
#define KSUML8(z, t1, t2) \
	VEXTRACTF32X4 $2, z, t2; \
	VADDSS        t2, t1, t1

// func gemv4Q5_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q6_KVNNI for Q5_K weights.
TEXT ·gemv4Q5_KVNNI(SB), NOSPLIT, $0-56
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z20
	VMOVDQU64    q4kshr<>(SB), Z30
	VMOVDQU64    q4kidx3<>(SB), Z29
	VMOVDQU64    q4kidx2<>(SB), Z28
	VMOVDQU64    q4kidx1<>(SB), Z27
	VMOVDQU64    q4kidx0<>(SB), Z26
	VMOVDQU32    q4ksh<>(SB), X24
	VMOVDQU32    q4km1<>(SB), X23
	VMOVDQU32    q4km2<>(SB), X22
	VMOVDQU64    q4kdm<>(SB), Y25
	MOVL         $0xff, AX
	KMOVW        AX, K1
	MOVQ         w+0(FP), R8
	MOVQ         ldw+8(FP), BX
	MOVQ         x+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         y+32(FP), DX
	MOVQ         q+40(FP), R14
	MOVQ         R14, AX
	IMULQ        BX, AX
	LEAQ         (R8)(AX*1), R9
	LEAQ         (R9)(AX*1), R10
	LEAQ         (R10)(AX*1), R11
	MOVQ         R14, SI
	SHLQ         $2, SI
	TESTQ        R14, R14
	JZ           q5done

q5row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     q5fin

q5blk:
	PREFETCHT0   PFD(R8)(AX*1)
	PREFETCHT0   PFD(R9)(AX*1)
	PREFETCHT0   PFD(R10)(AX*1)
	PREFETCHT0   PFD(R11)(AX*1)
	PREFETCHT0   PFD+128(R8)(AX*1)
	PREFETCHT0   PFD+128(R9)(AX*1)
	PREFETCHT0   PFD+128(R10)(AX*1)
	PREFETCHT0   PFD+128(R11)(AX*1)
	VMOVDQU64    4(R12), Z16
	VMOVDQU64    68(R12), Z17
	VMOVDQU64    132(R12), Z18
	VMOVDQU64    196(R12), Z19
	VMOVDQU      260(R12), Y14
	VEXTRACTI128 $1, Y14, X13
	VPHADDW      X13, X14, X13
	VPERMQ       $0x4e, Y13, Y13
	VBROADCASTSS (R12), Z21
	VXORPS       q4ksgn<>(SB), Z21, Z21
	Q5KROW(R8, Z0)
	Q5KROW(R9, Z1)
	Q5KROW(R10, Z2)
	Q5KROW(R11, Z3)
	ADDQ $176, AX
	ADDQ $292, R12
	DECQ R13
	JNZ  q5blk

q5fin:
	KSUM8(Y0, X0, X4, X8)
	KSUML8(Z0, X4, X9)
	KSUM8(Y1, X1, X5, X8)
	KSUML8(Z1, X5, X9)
	KSUM8(Y2, X2, X6, X8)
	KSUML8(Z2, X6, X9)
	KSUM8(Y3, X3, X7, X8)
	KSUML8(Z3, X7, X9)
	KGATHER4(X4, X5, X6, X7, X0)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       q5store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

q5store:
	VMOVSS     X0, (DX)
	VEXTRACTPS $1, X0, (DX)(SI*1)
	VEXTRACTPS $2, X0, (R13)
	VEXTRACTPS $3, X0, (R13)(SI*1)
	ADDQ       $4, DX
	ADDQ       BX, R8
	ADDQ       BX, R9
	ADDQ       BX, R10
	ADDQ       BX, R11
	DECQ       R14
	JNZ        q5row

q5done:
	VZEROUPPER
	RET

// Q3_K runs two rows per vector, as Q2_K does (see there): the pair's
// 32 quant bytes of half c side by side, [p | p'], against the values of
// plane s of half c broadcast to both halves. Two bytes per quant byte
// carry two planes each: R0 holds planes 0 and 1 (bits 0-3) with their
// hmask bits (4, 5), R1 planes 2 and 3 (bits 4-7) with theirs (0, 1); one
// GF2P8AFFINEQB per plane makes u = q2 + 4·h (0..7), and VPMADDUBSW(u, x)
// less 4·(x pair sums, once per call) is q3·x by pairs. The constants:
// the scale gathers of the eight planes (lane k of plane s of half c is
// sub-block 8c + 2s + k mod 2 of row p for k < 2, of row p' (words 16..31)
// otherwise) and the pick matrices.
DATA q3kpidx00<>+0(SB)/8, $0x0000000000000000
DATA q3kpidx00<>+8(SB)/8, $0x0000000000000000
DATA q3kpidx00<>+16(SB)/8, $0x0001000100010001
DATA q3kpidx00<>+24(SB)/8, $0x0001000100010001
DATA q3kpidx00<>+32(SB)/8, $0x0010001000100010
DATA q3kpidx00<>+40(SB)/8, $0x0010001000100010
DATA q3kpidx00<>+48(SB)/8, $0x0011001100110011
DATA q3kpidx00<>+56(SB)/8, $0x0011001100110011
GLOBL q3kpidx00<>(SB), RODATA|NOPTR, $64
DATA q3kpidx01<>+0(SB)/8, $0x0002000200020002
DATA q3kpidx01<>+8(SB)/8, $0x0002000200020002
DATA q3kpidx01<>+16(SB)/8, $0x0003000300030003
DATA q3kpidx01<>+24(SB)/8, $0x0003000300030003
DATA q3kpidx01<>+32(SB)/8, $0x0012001200120012
DATA q3kpidx01<>+40(SB)/8, $0x0012001200120012
DATA q3kpidx01<>+48(SB)/8, $0x0013001300130013
DATA q3kpidx01<>+56(SB)/8, $0x0013001300130013
GLOBL q3kpidx01<>(SB), RODATA|NOPTR, $64
DATA q3kpidx02<>+0(SB)/8, $0x0004000400040004
DATA q3kpidx02<>+8(SB)/8, $0x0004000400040004
DATA q3kpidx02<>+16(SB)/8, $0x0005000500050005
DATA q3kpidx02<>+24(SB)/8, $0x0005000500050005
DATA q3kpidx02<>+32(SB)/8, $0x0014001400140014
DATA q3kpidx02<>+40(SB)/8, $0x0014001400140014
DATA q3kpidx02<>+48(SB)/8, $0x0015001500150015
DATA q3kpidx02<>+56(SB)/8, $0x0015001500150015
GLOBL q3kpidx02<>(SB), RODATA|NOPTR, $64
DATA q3kpidx03<>+0(SB)/8, $0x0006000600060006
DATA q3kpidx03<>+8(SB)/8, $0x0006000600060006
DATA q3kpidx03<>+16(SB)/8, $0x0007000700070007
DATA q3kpidx03<>+24(SB)/8, $0x0007000700070007
DATA q3kpidx03<>+32(SB)/8, $0x0016001600160016
DATA q3kpidx03<>+40(SB)/8, $0x0016001600160016
DATA q3kpidx03<>+48(SB)/8, $0x0017001700170017
DATA q3kpidx03<>+56(SB)/8, $0x0017001700170017
GLOBL q3kpidx03<>(SB), RODATA|NOPTR, $64
DATA q3kpidx10<>+0(SB)/8, $0x0008000800080008
DATA q3kpidx10<>+8(SB)/8, $0x0008000800080008
DATA q3kpidx10<>+16(SB)/8, $0x0009000900090009
DATA q3kpidx10<>+24(SB)/8, $0x0009000900090009
DATA q3kpidx10<>+32(SB)/8, $0x0018001800180018
DATA q3kpidx10<>+40(SB)/8, $0x0018001800180018
DATA q3kpidx10<>+48(SB)/8, $0x0019001900190019
DATA q3kpidx10<>+56(SB)/8, $0x0019001900190019
GLOBL q3kpidx10<>(SB), RODATA|NOPTR, $64
DATA q3kpidx11<>+0(SB)/8, $0x000a000a000a000a
DATA q3kpidx11<>+8(SB)/8, $0x000a000a000a000a
DATA q3kpidx11<>+16(SB)/8, $0x000b000b000b000b
DATA q3kpidx11<>+24(SB)/8, $0x000b000b000b000b
DATA q3kpidx11<>+32(SB)/8, $0x001a001a001a001a
DATA q3kpidx11<>+40(SB)/8, $0x001a001a001a001a
DATA q3kpidx11<>+48(SB)/8, $0x001b001b001b001b
DATA q3kpidx11<>+56(SB)/8, $0x001b001b001b001b
GLOBL q3kpidx11<>(SB), RODATA|NOPTR, $64
DATA q3kpidx12<>+0(SB)/8, $0x000c000c000c000c
DATA q3kpidx12<>+8(SB)/8, $0x000c000c000c000c
DATA q3kpidx12<>+16(SB)/8, $0x000d000d000d000d
DATA q3kpidx12<>+24(SB)/8, $0x000d000d000d000d
DATA q3kpidx12<>+32(SB)/8, $0x001c001c001c001c
DATA q3kpidx12<>+40(SB)/8, $0x001c001c001c001c
DATA q3kpidx12<>+48(SB)/8, $0x001d001d001d001d
DATA q3kpidx12<>+56(SB)/8, $0x001d001d001d001d
GLOBL q3kpidx12<>(SB), RODATA|NOPTR, $64
DATA q3kpidx13<>+0(SB)/8, $0x000e000e000e000e
DATA q3kpidx13<>+8(SB)/8, $0x000e000e000e000e
DATA q3kpidx13<>+16(SB)/8, $0x000f000f000f000f
DATA q3kpidx13<>+24(SB)/8, $0x000f000f000f000f
DATA q3kpidx13<>+32(SB)/8, $0x001e001e001e001e
DATA q3kpidx13<>+40(SB)/8, $0x001e001e001e001e
DATA q3kpidx13<>+48(SB)/8, $0x001f001f001f001f
DATA q3kpidx13<>+56(SB)/8, $0x001f001f001f001f
GLOBL q3kpidx13<>(SB), RODATA|NOPTR, $64
DATA q3kmat<>+0(SB)/8, $0x0102100000000000
DATA q3kmat<>+8(SB)/8, $0x0408200000000000
DATA q3kmat<>+16(SB)/8, $0x1020010000000000
DATA q3kmat<>+24(SB)/8, $0x4080020000000000
GLOBL q3kmat<>(SB), RODATA|NOPTR, $32

// Q3KPLANE adds into acc the 64 values of plane s: u picked from r by the
// matrix mat, times the activations x less xs (4·pair sums), times the
// scales gathered by idx from sc.
#define Q3KPLANE(r, mat, x, xs, idx, sc, acc) \
	VGF2P8AFFINEQB $0, mat, r, Z8; \
	VPMADDUBSW     x, Z8, Z8; \
	VPSUBW         xs, Z8, Z8; \
	VPERMW         sc, idx, Z9; \
	VPDPWSSD       Z9, Z8, acc

// Q3_K's 6-bit scales, 16 per row, two rows at a time as bytes [p | p']:
// VPMULTISHIFTQB takes the low 4 bits of scale j from byte j mod 8 (bits
// 4·(j/8)..) and the high 2 from byte 8 + j mod 4 (bits 2·(j/4)..); one
// GF2P8AFFINEQB puts the high 2 in bits 4-5 and, with 0xe0 or-ed in,
// sets bits 5-7 to the inverse of the top bit: that is v − 32 for v =
// lo | hi<<4 in two's complement, the signed scale.
DATA q3kctl<>+0(SB)/8, $0x3830282018100800
DATA q3kctl<>+8(SB)/8, $0x3c342c241c140c04
DATA q3kctl<>+16(SB)/8, $0x3830282018100800
DATA q3kctl<>+24(SB)/8, $0x3c342c241c140c04
GLOBL q3kctl<>(SB), RODATA|NOPTR, $32
DATA q3kcth<>+0(SB)/8, $0x1a120a0218100800
DATA q3kcth<>+8(SB)/8, $0x1e160e061c140c04
DATA q3kcth<>+16(SB)/8, $0x1a120a0218100800
DATA q3kcth<>+24(SB)/8, $0x1e160e061c140c04
GLOBL q3kcth<>(SB), RODATA|NOPTR, $32
DATA q3kmh<>+0(SB)/8, $0x0000000001020202
DATA q3kmh<>+8(SB)/8, $0x0000000001020202
DATA q3kmh<>+16(SB)/8, $0x0000000001020202
DATA q3kmh<>+24(SB)/8, $0x0000000001020202
GLOBL q3kmh<>(SB), RODATA|NOPTR, $32

// Q3KSC2 unpacks the 6-bit scales (less 32) of the Q3_K blocks at offset
// AX of the rows at pa and pb into the words of Z4: pa's 16, then pb's. K2 selects the upper two qwords of a ymm.
#define Q3KSC2(pa, pb) \
	VPBROADCASTQ   96(pa)(AX*1), Y6; \
	VPBROADCASTQ   96(pb)(AX*1), K2, Y6; \
	VPBROADCASTQ   104(pa)(AX*1), Y7; \
	VPBROADCASTQ   104(pb)(AX*1), K2, Y7; \
	VMOVDQU        q3kctl<>(SB), Y8; \
	VPMULTISHIFTQB Y6, Y8, Y6; \
	VMOVDQU        q3kcth<>(SB), Y9; \
	VPMULTISHIFTQB Y7, Y9, Y7; \
	VGF2P8AFFINEQB $0xe0, q3kmh<>(SB), Y7, Y7; \
	VPTERNLOGD     $0xea, Y7, Y20, Y6; \
	VPMOVSXBW      Y6, Z4

// Q3KPAIR adds into f (zmm: lanes 0..7 row p, 8..15 row pb) d·dx times
// the lanes of the Q3_K blocks at offset AX of the rows at p and pb (their
// scales as words in Z4, from Q3KSC2), one fused multiply-add per lane as
// ggml does. The pair's hmask bytes are side by side in Z15, [p | pb], as
// are its quant bytes of each half c (values 128c..128c+127); the
// activations of the block are regrouped at R12: plane s of half c (its
// 32 values broadcast to both halves) at 64·(4c+s), their 4·pair sums at
// 512 + 64·(4c+s), dx ×16 at 1024. So dwords 0..7 of the integer sums
// are ggml's lanes of row p and 8..15 those of row pb, with no folding.
// Z20 holds 0x0f bytes, Z23..Z26 and Z12..Z14, Z16 the scale gathers of
// the planes of halves 0 and 1, Z27..Z30 the pick matrices, K1 the upper 8
// words (d of both rows spread by one masked broadcast).
#define Q3KPAIR(p, pb, f) \
	VMOVDQU        (p)(AX*1), Y15; \
	VINSERTI64X4   $1, (pb)(AX*1), Z15, Z15; \
	VMOVDQU        32(p)(AX*1), Y7; \
	VINSERTI64X4   $1, 32(pb)(AX*1), Z7, Z7; \
	VMOVDQU        64(p)(AX*1), Y6; \
	VINSERTI64X4   $1, 64(pb)(AX*1), Z6, Z6; \
	VPSLLW         $4, Z15, Z10; \
	VPTERNLOGD     $0xd8, Z20, Z7, Z10; \
	VPSRLW         $2, Z15, Z11; \
	VPTERNLOGD     $0xe4, Z20, Z7, Z11; \
	VPXORD         Z2, Z2, Z2; \
	VPXORD         Z3, Z3, Z3; \
	Q3KPLANE(Z10, Z27, 0(R12), 512(R12), Z23, Z4, Z2); \
	Q3KPLANE(Z10, Z28, 64(R12), 576(R12), Z24, Z4, Z2); \
	Q3KPLANE(Z11, Z29, 128(R12), 640(R12), Z25, Z4, Z2); \
	Q3KPLANE(Z11, Z30, 192(R12), 704(R12), Z26, Z4, Z2); \
	VPSRLW         $6, Z15, Z11; \
	VPTERNLOGD     $0xe4, Z20, Z6, Z11; \
	VPTERNLOGD     $0xe4, Z20, Z15, Z6; \
	Q3KPLANE(Z6, Z27, 256(R12), 768(R12), Z12, Z4, Z3); \
	Q3KPLANE(Z6, Z28, 320(R12), 832(R12), Z13, Z4, Z3); \
	Q3KPLANE(Z11, Z29, 384(R12), 896(R12), Z14, Z4, Z3); \
	Q3KPLANE(Z11, Z30, 448(R12), 960(R12), Z16, Z4, Z3); \
	VPADDD          Z3, Z2, Z2; \
	VCVTDQ2PS       Z2, Z2; \
	VPBROADCASTW    108(p)(AX*1), Y10; \
	VPBROADCASTW    108(pb)(AX*1), K1, Y10; \
	VCVTPH2PS       Y10, Z10; \
	VMULPS          1024(R12), Z10, Z10; \
	VFMADD231PS     Z10, Z2, f

// Q2_K runs two rows per vector: a pair of rows p, p' has its 32 quant
// bytes of half c (values 128c..128c+127) side by side in one zmm, [p |
// p'], and plane s (bits 2s, 2s+1) of byte l in a half is value 128c +
// 32s + l, so the activations of plane s of half c are those 32 values
// broadcast to both halves (regrouped once per call). Each
// 128-bit lane of a plane is one sub-block: 8c+2s (lanes 0, 2) or
// 8c+2s+1 (lanes 1, 3). One GF2P8AFFINEQB per plane picks its 2 bits and
// ors in 4s, one VPSHUFB looks up q·sc in the pair's table of half c
// (lane k, bytes 4s..4s+3: 0, sc, 2sc, 3sc of the lane's sub-block; sc ≤
// 15 so q·sc ≤ 45 fits a byte) and one VPDPBUSD adds q·sc·x by 4 values:
// dword lane m of each 256-bit half holds values 4m..4m+3 of a 32-value
// group, so dwords 0..7 are ggml's 8 lanes of row p and 8..15 those of
// row p', with no folding. The mins (VPMOVZXBW, shift, VPMADDWD with the
// block sums twice) come out in the same two halves. Constants: the
// scale-byte gathers of the two tables, the d and dmin spreads, the
// plane-pick matrices (q2kmat) and the sign that puts −dx beside dx.
DATA q2kmat<>+0(SB)/8, $0x0102000000000000
DATA q2kmat<>+8(SB)/8, $0x0408000000000000
DATA q2kmat<>+16(SB)/8, $0x1020000000000000
DATA q2kmat<>+24(SB)/8, $0x4080000000000000
GLOBL q2kmat<>(SB), RODATA|NOPTR, $32
DATA q2kperm0<>+0(SB)/8, $0x0202020200000000
DATA q2kperm0<>+8(SB)/8, $0x0606060604040404
DATA q2kperm0<>+16(SB)/8, $0x0303030301010101
DATA q2kperm0<>+24(SB)/8, $0x0707070705050505
DATA q2kperm0<>+32(SB)/8, $0x1212121210101010
DATA q2kperm0<>+40(SB)/8, $0x1616161614141414
DATA q2kperm0<>+48(SB)/8, $0x1313131311111111
DATA q2kperm0<>+56(SB)/8, $0x1717171715151515
GLOBL q2kperm0<>(SB), RODATA|NOPTR, $64
DATA q2kperm1<>+0(SB)/8, $0x0a0a0a0a08080808
DATA q2kperm1<>+8(SB)/8, $0x0e0e0e0e0c0c0c0c
DATA q2kperm1<>+16(SB)/8, $0x0b0b0b0b09090909
DATA q2kperm1<>+24(SB)/8, $0x0f0f0f0f0d0d0d0d
DATA q2kperm1<>+32(SB)/8, $0x1a1a1a1a18181818
DATA q2kperm1<>+40(SB)/8, $0x1e1e1e1e1c1c1c1c
DATA q2kperm1<>+48(SB)/8, $0x1b1b1b1b19191919
DATA q2kperm1<>+56(SB)/8, $0x1f1f1f1f1d1d1d1d
GLOBL q2kperm1<>(SB), RODATA|NOPTR, $64
DATA q2kdidx<>+0(SB)/8, $0x0000000000000000
DATA q2kdidx<>+8(SB)/8, $0x0000000000000000
DATA q2kdidx<>+16(SB)/8, $0x0000000000000000
DATA q2kdidx<>+24(SB)/8, $0x0000000000000000
DATA q2kdidx<>+32(SB)/8, $0x0000000200000002
DATA q2kdidx<>+40(SB)/8, $0x0000000200000002
DATA q2kdidx<>+48(SB)/8, $0x0000000200000002
DATA q2kdidx<>+56(SB)/8, $0x0000000200000002
GLOBL q2kdidx<>(SB), RODATA|NOPTR, $64
DATA q2kmidx<>+0(SB)/8, $0x0000000100000001
DATA q2kmidx<>+8(SB)/8, $0x0000000100000001
DATA q2kmidx<>+16(SB)/8, $0x0000000100000001
DATA q2kmidx<>+24(SB)/8, $0x0000000100000001
DATA q2kmidx<>+32(SB)/8, $0x0000000300000003
DATA q2kmidx<>+40(SB)/8, $0x0000000300000003
DATA q2kmidx<>+48(SB)/8, $0x0000000300000003
DATA q2kmidx<>+56(SB)/8, $0x0000000300000003
GLOBL q2kmidx<>(SB), RODATA|NOPTR, $64
DATA q2ksgn<>+0(SB)/8, $0x8000000000000000
DATA q2ksgn<>+8(SB)/8, $0x8000000000000000
GLOBL q2ksgn<>(SB), RODATA|NOPTR, $16

// Q2KPLANE adds into acc plane s of the quants q (pick matrix mat, or-ed
// constant 4s in imm), looked up in table tab, times the activations x.
#define Q2KPLANE(imm, mat, q, tab, x, t, acc) \
	VGF2P8AFFINEQB imm, mat, q, t; \
	VPSHUFB        t, tab, t; \
	VPDPBUSD       x, t, acc

// Q2KPAIR accumulates into f (zmm: lanes 0..7 row p, 8..15 row pb) the
// products of the Q2_K blocks at offset AX of the rows at p and pb with
// the activations of the block regrouped at R12 (kqx_amd64.go: the 8
// planes' 32 values broadcast to both halves, the block sums twice,
// [dx, −dx] ×2): first −dmin·dx·(m·Σx) by pairs of sub-blocks, then
// d·dx·lane sums, as ggml does. Z24..Z27 hold the plane-pick matrices,
// Z28, Z29 the table gathers, Z30 the words 0x000f, Z31 the words 0x0100,
// 0x0302, Z12, Z13 the d and dmin spreads.
#define Q2KPAIR(p, pb, f) \
	VMOVDQU        (p)(AX*1), X2; \
	VINSERTI128    $1, (pb)(AX*1), Y2, Y2; \
	VPMOVZXBW      Y2, Z5; \
	VPSRLW         $4, Z5, Z5; \
	VPMADDWD       512(R12), Z5, Z5; \
	VCVTDQ2PS      Z5, Z5; \
	VMOVD          80(p)(AX*1), X6; \
	VPINSRD        $1, 80(pb)(AX*1), X6, X6; \
	VCVTPH2PS      X6, X6; \
	VMULPS         576(R12), X6, X6; \
	VPERMPS        Z6, Z13, Z7; \
	VFMADD231PS    Z7, Z5, f; \
	VPERMPS        Z6, Z12, Z6; \
	VPERMB         Z2, Z28, Z3; \
	VPANDD         Z30, Z3, Z3; \
	VPMULLW        Z31, Z3, Z3; \
	VPERMB         Z2, Z29, Z4; \
	VPANDD         Z30, Z4, Z4; \
	VPMULLW        Z31, Z4, Z4; \
	VMOVDQU        16(p)(AX*1), Y8; \
	VINSERTI64X4   $1, 16(pb)(AX*1), Z8, Z8; \
	VMOVDQU        48(p)(AX*1), Y9; \
	VINSERTI64X4   $1, 48(pb)(AX*1), Z9, Z9; \
	VPXORD         Z10, Z10, Z10; \
	VPXORD         Z5, Z5, Z5; \
	Q2KPLANE($0, Z24, Z8, Z3, 0(R12), Z11, Z10); \
	Q2KPLANE($4, Z25, Z8, Z3, 64(R12), Z7, Z10); \
	Q2KPLANE($8, Z26, Z8, Z3, 128(R12), Z11, Z10); \
	Q2KPLANE($12, Z27, Z8, Z3, 192(R12), Z7, Z10); \
	Q2KPLANE($0, Z24, Z9, Z4, 256(R12), Z11, Z5); \
	Q2KPLANE($4, Z25, Z9, Z4, 320(R12), Z7, Z5); \
	Q2KPLANE($8, Z26, Z9, Z4, 384(R12), Z11, Z5); \
	Q2KPLANE($12, Z27, Z9, Z4, 448(R12), Z7, Z5); \
	VPADDD         Z5, Z10, Z10; \
	VCVTDQ2PS      Z10, Z10; \
	VFMADD231PS    Z6, Z10, f

// func gemv4Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int, xr unsafe.Pointer)
// As gemv4Q6_KVNNI for Q3_K weights.
TEXT ·gemv4Q3_KVNNI(SB), NOSPLIT, $0-64
	MOVL         $0xff00, AX
	KMOVW        AX, K1
	MOVL         $0x0c, AX
	KMOVW        AX, K2
	MOVL         $0x04040404, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z20
	VMOVDQU64    q3kpidx00<>(SB), Z23
	VMOVDQU64    q3kpidx01<>(SB), Z24
	VMOVDQU64    q3kpidx02<>(SB), Z25
	VMOVDQU64    q3kpidx03<>(SB), Z26
	VMOVDQU64    q3kpidx10<>(SB), Z12
	VMOVDQU64    q3kpidx11<>(SB), Z13
	VMOVDQU64    q3kpidx12<>(SB), Z14
	VMOVDQU64    q3kpidx13<>(SB), Z16
	VPBROADCASTQ q3kmat<>+0(SB), Z27
	VPBROADCASTQ q3kmat<>+8(SB), Z28
	VPBROADCASTQ q3kmat<>+16(SB), Z29
	VPBROADCASTQ q3kmat<>+24(SB), Z30
	MOVQ         x+16(FP), R12
	MOVQ         xr+56(FP), DI
	MOVQ         DI, SI
	MOVQ         nb+24(FP), CX
	MOVQ         CX, R13
	TESTQ        R13, R13
	JZ           q3built

q3build:
	VBROADCASTI64X4 4(R12), Z17
	VMOVDQU64       Z17, 0(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 512(SI)
	VBROADCASTI64X4 36(R12), Z17
	VMOVDQU64       Z17, 64(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 576(SI)
	VBROADCASTI64X4 68(R12), Z17
	VMOVDQU64       Z17, 128(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 640(SI)
	VBROADCASTI64X4 100(R12), Z17
	VMOVDQU64       Z17, 192(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 704(SI)
	VBROADCASTI64X4 132(R12), Z17
	VMOVDQU64       Z17, 256(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 768(SI)
	VBROADCASTI64X4 164(R12), Z17
	VMOVDQU64       Z17, 320(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 832(SI)
	VBROADCASTI64X4 196(R12), Z17
	VMOVDQU64       Z17, 384(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 896(SI)
	VBROADCASTI64X4 228(R12), Z17
	VMOVDQU64       Z17, 448(SI)
	VPMADDUBSW      Z17, Z31, Z17
	VMOVDQU64       Z17, 960(SI)
	VBROADCASTSS    (R12), Z21
	VMOVUPS         Z21, 1024(SI)
	ADDQ            $292, R12
	ADDQ            $1088, SI
	DECQ            R13
	JNZ             q3build

q3built:
	MOVQ         w+0(FP), R8
	MOVQ         ldw+8(FP), BX
	MOVQ         y+32(FP), DX
	MOVQ         q+40(FP), R14
	MOVQ         R14, AX
	IMULQ        BX, AX
	LEAQ         (R8)(AX*1), R9
	LEAQ         (R9)(AX*1), R10
	LEAQ         (R10)(AX*1), R11
	MOVQ         R14, SI
	SHLQ         $2, SI
	TESTQ        R14, R14
	JZ           q3done

q3row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     q3fin

q3blk:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	Q3KSC2(R8, R9)
	Q3KPAIR(R8, R9, Z0)
	Q3KSC2(R10, R11)
	Q3KPAIR(R10, R11, Z1)
	ADDQ $110, AX
	ADDQ $1088, R12
	DECQ R13
	JNZ  q3blk

q3fin:
	VEXTRACTF64X4 $1, Z0, Y2
	VEXTRACTF64X4 $1, Z1, Y3
	KSUM8(Y0, X0, X4, X8)
	KSUM8(Y2, X2, X5, X8)
	KSUM8(Y1, X1, X6, X8)
	KSUM8(Y3, X3, X7, X8)
	KGATHER4(X4, X5, X6, X7, X0)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       q3store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

q3store:
	VMOVSS     X0, (DX)
	VEXTRACTPS $1, X0, (DX)(SI*1)
	VEXTRACTPS $2, X0, (R13)
	VEXTRACTPS $3, X0, (R13)(SI*1)
	ADDQ       $4, DX
	ADDQ       BX, R8
	ADDQ       BX, R9
	ADDQ       BX, R10
	ADDQ       BX, R11
	DECQ       R14
	JNZ        q3row

q3done:
	VZEROUPPER
	RET

// func gemv4Q2_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int, xr unsafe.Pointer)
// As gemv4Q6_KVNNI for Q2_K weights.
TEXT ·gemv4Q2_KVNNI(SB), NOSPLIT, $0-64
	MOVL         $0x000f000f, AX
	VPBROADCASTD AX, Z30
	MOVL         $0x03020100, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64    q2kperm0<>(SB), Z28
	VMOVDQU64    q2kperm1<>(SB), Z29
	VMOVDQU64    q2kdidx<>(SB), Z12
	VMOVDQU64    q2kmidx<>(SB), Z13
	VPBROADCASTQ q2kmat<>+24(SB), Z27
	VPBROADCASTQ q2kmat<>+16(SB), Z26
	VPBROADCASTQ q2kmat<>+8(SB), Z25
	VPBROADCASTQ q2kmat<>+0(SB), Z24
	MOVQ         x+16(FP), R12
	MOVQ         xr+56(FP), DI
	MOVQ         DI, SI
	MOVQ         nb+24(FP), CX
	MOVQ         CX, R13
	TESTQ        R13, R13
	JZ           q2built

q2build:
	VBROADCASTI64X4 4(R12), Z16
	VBROADCASTI64X4 36(R12), Z17
	VBROADCASTI64X4 68(R12), Z18
	VBROADCASTI64X4 100(R12), Z19
	VBROADCASTI64X4 132(R12), Z20
	VBROADCASTI64X4 164(R12), Z21
	VBROADCASTI64X4 196(R12), Z22
	VBROADCASTI64X4 228(R12), Z23
	VBROADCASTI64X4 260(R12), Z15
	VBROADCASTSS    (R12), X14
	VXORPS          q2ksgn<>(SB), X14, X14
	VMOVDQU64       Z16, (SI)
	VMOVDQU64       Z17, 64(SI)
	VMOVDQU64       Z18, 128(SI)
	VMOVDQU64       Z19, 192(SI)
	VMOVDQU64       Z20, 256(SI)
	VMOVDQU64       Z21, 320(SI)
	VMOVDQU64       Z22, 384(SI)
	VMOVDQU64       Z23, 448(SI)
	VMOVDQU64       Z15, 512(SI)
	VMOVUPS         X14, 576(SI)
	ADDQ            $292, R12
	ADDQ            $640, SI
	DECQ            R13
	JNZ             q2build

q2built:
	MOVQ         w+0(FP), R8
	MOVQ         ldw+8(FP), BX
	MOVQ         y+32(FP), DX
	MOVQ         q+40(FP), R14
	MOVQ         R14, AX
	IMULQ        BX, AX
	LEAQ         (R8)(AX*1), R9
	LEAQ         (R9)(AX*1), R10
	LEAQ         (R10)(AX*1), R11
	MOVQ         R14, SI
	SHLQ         $2, SI
	TESTQ        R14, R14
	JZ           q2done

q2row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     q2fin

q2blk:
	PREFETCHT0       PFD(R8)(AX*1)
	PREFETCHT0       PFD(R9)(AX*1)
	PREFETCHT0       PFD(R10)(AX*1)
	PREFETCHT0       PFD(R11)(AX*1)
	Q2KPAIR(R8, R9, Z0)
	Q2KPAIR(R10, R11, Z1)
	ADDQ $84, AX
	ADDQ $640, R12
	DECQ R13
	JNZ  q2blk

q2fin:
	VEXTRACTF64X4 $1, Z0, Y2
	VEXTRACTF64X4 $1, Z1, Y3
	KSUM8(Y0, X0, X4, X8)
	KSUM8(Y2, X2, X5, X8)
	KSUM8(Y1, X1, X6, X8)
	KSUM8(Y3, X3, X7, X8)
	KGATHER4(X4, X5, X6, X7, X0)
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       q2store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

q2store:
	VMOVSS     X0, (DX)
	VEXTRACTPS $1, X0, (DX)(SI*1)
	VEXTRACTPS $2, X0, (R13)
	VEXTRACTPS $3, X0, (R13)(SI*1)
	ADDQ       $4, DX
	ADDQ       BX, R8
	ADDQ       BX, R9
	ADDQ       BX, R10
	ADDQ       BX, R11
	DECQ       R14
	JNZ        q2row

q2done:
	VZEROUPPER
	RET
