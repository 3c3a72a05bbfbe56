//go:build amd64 && !noasm

// Hand-written with macros, as kquantz_amd64.s: each kind's kernels are
// its unpack macro and token step repeated for 8 or 4 tokens, a 2×8 and a
// 2×4 body per kind that differ only in the number of token steps. They
// are a candidate for the avo generator (kernels/cpu/_gen), written
// outside it while it was being reorganized.

#include "textflag.h"

// K-quant weights times Q8_K activations for several tokens at a time
// (prefill), AVX-512 with VNNI and VBMI: each kernel unpacks a super-block
// of 2 rows once (quants in natural order, 64 to a zmm; scales gathered
// per word for VPMADDWD) and takes it through 8 (or 4) tokens, whose
// quants it reads straight from their Q8_K blocks. The integer sums are
// exact, so their grouping is free; the float operations per (row, token)
// are those of kernels/quant's K-quant dot products (ggml's x86 order):
// per super-block, dword lane m of a 64-value chunk holds values
// 4m..4m+3, lanes m and m+8 fold to ggml's lane m (values v with
// (v mod 32)/4 = m), and the (row, token)'s float accumulator gains
// d·dx·lane in one fused multiply-add per lane. The mins: Q4_K's four min
// lanes (−dmin·dx·(m_2k·Σx_2k + m_2k+1·Σx_2k+1)) ride in lanes 8, 10, 12,
// 14 of a 16-lane accumulator, Q5_K's one min sum in lane 8 (the other
// upper lanes gather junk that is never read), each added after
// hsum_float_8 as ggml does; Q2_K's min products take their own fused
// multiply-add per lane before the lane sums'. Q6_K and Q3_K, whose
// values are signed, multiply x+128 (unsigned) by q−32 or q−4, less
// 128·Σ sc·q by lane, computed once per row-block.
//
// Registers: accumulators Z0..Z7 (row a, tokens 0..7) and Z8..Z15 (row
// b; their ymm halves for the kinds without min lanes); the unpacked
// super-block of the current row in Z16..Z26; scratch Z27..Z30; Z31 0x0f
// bytes; K1 lanes 0..7; K2 bit 0 when adding to y.

// Q4_K: the 6-bit scale and min unpack (as kquantz_amd64.s), the scale
// gathers per 64-value chunk (words 0..15 sub-block 2c, 16..31 sub-block
// 2c+1), the min gather (each min twice, for the block sums by 16), d and
// dmin picked from the block's first words, the sign of the min lanes and
// the word shifts that bring the high nibbles of the upper half down.
DATA kq4sh<>+0(SB)/8, $0x0000000000000000
DATA kq4sh<>+8(SB)/8, $0x0000000400000000
GLOBL kq4sh<>(SB), RODATA|NOPTR, $16
DATA kq4m1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4m1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL kq4m1<>(SB), RODATA|NOPTR, $16
DATA kq4m2<>+0(SB)/8, $0x0303030300000000
DATA kq4m2<>+8(SB)/8, $0x0303030300000000
GLOBL kq4m2<>(SB), RODATA|NOPTR, $16
DATA kq4idx0<>+0(SB)/8, $0x0000000000000000
DATA kq4idx0<>+8(SB)/8, $0x0000000000000000
DATA kq4idx0<>+16(SB)/8, $0x0000000000000000
DATA kq4idx0<>+24(SB)/8, $0x0000000000000000
DATA kq4idx0<>+32(SB)/8, $0x0001000100010001
DATA kq4idx0<>+40(SB)/8, $0x0001000100010001
DATA kq4idx0<>+48(SB)/8, $0x0001000100010001
DATA kq4idx0<>+56(SB)/8, $0x0001000100010001
GLOBL kq4idx0<>(SB), RODATA|NOPTR, $64
DATA kq4idx1<>+0(SB)/8, $0x0002000200020002
DATA kq4idx1<>+8(SB)/8, $0x0002000200020002
DATA kq4idx1<>+16(SB)/8, $0x0002000200020002
DATA kq4idx1<>+24(SB)/8, $0x0002000200020002
DATA kq4idx1<>+32(SB)/8, $0x0003000300030003
DATA kq4idx1<>+40(SB)/8, $0x0003000300030003
DATA kq4idx1<>+48(SB)/8, $0x0003000300030003
DATA kq4idx1<>+56(SB)/8, $0x0003000300030003
GLOBL kq4idx1<>(SB), RODATA|NOPTR, $64
DATA kq4idx2<>+0(SB)/8, $0x0004000400040004
DATA kq4idx2<>+8(SB)/8, $0x0004000400040004
DATA kq4idx2<>+16(SB)/8, $0x0004000400040004
DATA kq4idx2<>+24(SB)/8, $0x0004000400040004
DATA kq4idx2<>+32(SB)/8, $0x0005000500050005
DATA kq4idx2<>+40(SB)/8, $0x0005000500050005
DATA kq4idx2<>+48(SB)/8, $0x0005000500050005
DATA kq4idx2<>+56(SB)/8, $0x0005000500050005
GLOBL kq4idx2<>(SB), RODATA|NOPTR, $64
DATA kq4idx3<>+0(SB)/8, $0x0006000600060006
DATA kq4idx3<>+8(SB)/8, $0x0006000600060006
DATA kq4idx3<>+16(SB)/8, $0x0006000600060006
DATA kq4idx3<>+24(SB)/8, $0x0006000600060006
DATA kq4idx3<>+32(SB)/8, $0x0007000700070007
DATA kq4idx3<>+40(SB)/8, $0x0007000700070007
DATA kq4idx3<>+48(SB)/8, $0x0007000700070007
DATA kq4idx3<>+56(SB)/8, $0x0007000700070007
GLOBL kq4idx3<>(SB), RODATA|NOPTR, $64
DATA kq4idxm<>+0(SB)/8, $0x0009000900080008
DATA kq4idxm<>+8(SB)/8, $0x000b000b000a000a
DATA kq4idxm<>+16(SB)/8, $0x000d000d000c000c
DATA kq4idxm<>+24(SB)/8, $0x000f000f000e000e
GLOBL kq4idxm<>(SB), RODATA|NOPTR, $32
DATA kq4dm<>+0(SB)/8, $0x0000000000000000
DATA kq4dm<>+8(SB)/8, $0x0000000000000000
DATA kq4dm<>+16(SB)/8, $0x0001000100010001
DATA kq4dm<>+24(SB)/8, $0x0001000100010001
GLOBL kq4dm<>(SB), RODATA|NOPTR, $32
DATA kq4sgn<>+0(SB)/8, $0x0000000000000000
DATA kq4sgn<>+8(SB)/8, $0x0000000000000000
DATA kq4sgn<>+16(SB)/8, $0x0000000000000000
DATA kq4sgn<>+24(SB)/8, $0x0000000000000000
DATA kq4sgn<>+32(SB)/8, $0x8000000080000000
DATA kq4sgn<>+40(SB)/8, $0x8000000080000000
DATA kq4sgn<>+48(SB)/8, $0x8000000080000000
DATA kq4sgn<>+56(SB)/8, $0x8000000080000000
GLOBL kq4sgn<>(SB), RODATA|NOPTR, $64
DATA kq4shr<>+0(SB)/8, $0x0000000000000000
DATA kq4shr<>+8(SB)/8, $0x0000000000000000
DATA kq4shr<>+16(SB)/8, $0x0000000000000000
DATA kq4shr<>+24(SB)/8, $0x0000000000000000
DATA kq4shr<>+32(SB)/8, $0x0004000400040004
DATA kq4shr<>+40(SB)/8, $0x0004000400040004
DATA kq4shr<>+48(SB)/8, $0x0004000400040004
DATA kq4shr<>+56(SB)/8, $0x0004000400040004
GLOBL kq4shr<>(SB), RODATA|NOPTR, $64

// KQSETUP loads Z31 (0x0f bytes), K1 (lanes 0..7) and K2 (bit 0 when acc
// is not 0), and the arguments: R8, R9 the rows of the first pair (ldw =
// BX apart), R12 the tokens (ldx = R13 apart), CX nb, DX y, R14 q.
#define KQSETUP \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31; \
	MOVL         $0xff, AX; \
	KMOVW        AX, K1; \
	MOVQ         acc+64(FP), AX; \
	ANDQ         $1, AX; \
	KMOVW        AX, K2; \
	MOVQ         w+0(FP), R8; \
	MOVQ         ldw+8(FP), BX; \
	LEAQ         (R8)(BX*1), R9; \
	MOVQ         ldx+24(FP), R13; \
	MOVQ         nb+32(FP), CX; \
	MOVQ         y+40(FP), DX; \
	MOVQ         q+56(FP), R14

// Q4KUNPACK unpacks the Q4_K block at offset AX of the row at p: quants
// of chunk c (values 64c..64c+63) in Z16+c, the scales for VPMADDWD of
// chunk c in Z20+c, the mins (each twice) in Y25, [d ×8, −dmin ×8] in
// Z26.
#define Q4KUNPACK(p) \
	VMOVDQU32       4(p)(AX*1), X24; \
	VPSHUFD         $0x98, X24, X29; \
	VPSHUFD         $0x50, X24, X30; \
	VPSRLVD         kq4sh<>(SB), X29, X29; \
	VPANDD          kq4m1<>(SB), X29, X29; \
	VPSRLD          $6, X30, X30; \
	VPANDD          kq4m2<>(SB), X30, X30; \
	VPSLLD          $4, X30, X30; \
	VPORD           X30, X29, X29; \
	VPMOVZXBW       X29, Y24; \
	VMOVDQU64       kq4idx0<>(SB), Z27; \
	VPERMW          Z24, Z27, Z20; \
	VMOVDQU64       kq4idx1<>(SB), Z28; \
	VPERMW          Z24, Z28, Z21; \
	VMOVDQU64       kq4idx2<>(SB), Z27; \
	VPERMW          Z24, Z27, Z22; \
	VMOVDQU64       kq4idx3<>(SB), Z28; \
	VPERMW          Z24, Z28, Z23; \
	VMOVDQU64       kq4idxm<>(SB), Y27; \
	VPERMW          Y24, Y27, Y25; \
	VMOVDQU64       kq4dm<>(SB), Y28; \
	VPERMW          (p)(AX*1), Y28, Y30; \
	VCVTPH2PS       Y30, Z26; \
	VXORPS          kq4sgn<>(SB), Z26, Z26; \
	VBROADCASTI64X4 16(p)(AX*1), Z16; \
	VPSRLVW         kq4shr<>(SB), Z16, Z16; \
	VPANDD          Z31, Z16, Z16; \
	VBROADCASTI64X4 48(p)(AX*1), Z17; \
	VPSRLVW         kq4shr<>(SB), Z17, Z17; \
	VPANDD          Z31, Z17, Z17; \
	VBROADCASTI64X4 80(p)(AX*1), Z18; \
	VPSRLVW         kq4shr<>(SB), Z18, Z18; \
	VPANDD          Z31, Z18, Z18; \
	VBROADCASTI64X4 112(p)(AX*1), Z19; \
	VPSRLVW         kq4shr<>(SB), Z19, Z19; \
	VPANDD          Z31, Z19, Z19

// Q4KTOK adds into f the unpacked block times the Q8_K block at x, and
// moves x to the next token.
#define Q4KTOK(f) \
	VPMADDUBSW  4(R11), Z16, Z27; \
	VPMADDWD    Z20, Z27, Z27; \
	VPMADDUBSW  68(R11), Z17, Z28; \
	VPDPWSSD    Z21, Z28, Z27; \
	VPMADDUBSW  132(R11), Z18, Z28; \
	VPDPWSSD    Z22, Z28, Z27; \
	VPMADDUBSW  196(R11), Z19, Z28; \
	VPDPWSSD    Z23, Z28, Z27; \
	VPMADDWD    260(R11), Y25, Y29; \
	VPSRLQ      $32, Y29, Y30; \
	VPADDD      Y30, Y29, Y29; \
	VSHUFI64X2  $0x4e, Z29, Z27, Z30; \
	VPADDD      Z27, Z30, K1, Z30; \
	VCVTDQ2PS   Z30, Z30; \
	VMULPS.BCST (R11), Z26, Z28; \
	VFMADD231PS Z28, Z30, f; \
	ADDQ        R13, R11

// KQRED reduces the accumulator z (ymm y, xmm x) into the low lane of x:
// hsum_float_8 of lanes 0..7, plus (l8+l12) + (l10+l14).
#define KQRED(z, y, x) \
	VEXTRACTF32X4 $2, z, X28; \
	VEXTRACTF32X4 $3, z, X29; \
	VADDPS        X29, X28, X28; \
	VMOVHLPS      X28, X28, X29; \
	VADDSS        X29, X28, X28; \
	VEXTRACTF32X4 $1, y, X29; \
	VADDPS        x, X29, X29; \
	VMOVHLPS      X29, X29, X30; \
	VADDPS        X30, X29, X29; \
	VMOVSHDUP     X29, X30; \
	VADDSS        X30, X29, X29; \
	VADDSS        X28, X29, x

// KQOUT reduces the accumulators of rows a and b of one token and stores
// (or, under K2, adds) them at DI and 4(DI); DI moves to the next token.
#define KQOUT(za, ya, xa, zb, yb, xb) \
	KQRED(za, ya, xa); \
	KQRED(zb, yb, xb); \
	VADDSS (DI), xa, K2, xa; \
	VADDSS 4(DI), xb, K2, xb; \
	VMOVSS xa, (DI); \
	VMOVSS xb, 4(DI); \
	ADDQ   ldy+48(FP), DI

#define KQZERO8(a, b, c, d, e, f, g, h) \
	VPXORD a, a, a; \
	VPXORD b, b, b; \
	VPXORD c, c, c; \
	VPXORD d, d, d; \
	VPXORD e, e, e; \
	VPXORD f, f, f; \
	VPXORD g, g, g; \
	VPXORD h, h, h

// func gemm2x8Q4_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// For q pairs of rows (rows 2i and 2i+1 of nb Q4_K blocks, ldw bytes
// apart) and 8 tokens t (rows of Q8_K blocks at x, ldx bytes apart),
// y[t·ldy/4 + r] = w_r·x_t, or += when acc is not 0.
TEXT ·gemm2x8Q4_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	IMULQ $144, CX
	TESTQ R14, R14
	JZ    q8done
	TESTQ CX, CX
	JZ    q8done

q8pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	KQZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ x+16(FP), R12
	XORQ AX, AX

q8blk:
	Q4KUNPACK(R8)
	MOVQ R12, R11
	Q4KTOK(Z0)
	Q4KTOK(Z1)
	Q4KTOK(Z2)
	Q4KTOK(Z3)
	Q4KTOK(Z4)
	Q4KTOK(Z5)
	Q4KTOK(Z6)
	Q4KTOK(Z7)
	Q4KUNPACK(R9)
	MOVQ R12, R11
	Q4KTOK(Z8)
	Q4KTOK(Z9)
	Q4KTOK(Z10)
	Q4KTOK(Z11)
	Q4KTOK(Z12)
	Q4KTOK(Z13)
	Q4KTOK(Z14)
	Q4KTOK(Z15)
	ADDQ $144, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   q8blk

	MOVQ  DX, DI
	KQOUT(Z0, Y0, X0, Z8, Y8, X8)
	KQOUT(Z1, Y1, X1, Z9, Y9, X9)
	KQOUT(Z2, Y2, X2, Z10, Y10, X10)
	KQOUT(Z3, Y3, X3, Z11, Y11, X11)
	KQOUT(Z4, Y4, X4, Z12, Y12, X12)
	KQOUT(Z5, Y5, X5, Z13, Y13, X13)
	KQOUT(Z6, Y6, X6, Z14, Y14, X14)
	KQOUT(Z7, Y7, X7, Z15, Y15, X15)
	ADDQ  $8, DX
	LEAQ  (R8)(BX*2), R8
	LEAQ  (R9)(BX*2), R9
	DECQ  R14
	JNZ   q8pair

q8done:
	VZEROUPPER
	RET

// func gemm2x4Q4_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q4_KVNNI for 4 tokens.
TEXT ·gemm2x4Q4_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	IMULQ $144, CX
	TESTQ R14, R14
	JZ    q4done
	TESTQ CX, CX
	JZ    q4done

q4pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	MOVQ x+16(FP), R12
	XORQ AX, AX

q4blk:
	Q4KUNPACK(R8)
	MOVQ R12, R11
	Q4KTOK(Z0)
	Q4KTOK(Z1)
	Q4KTOK(Z2)
	Q4KTOK(Z3)
	Q4KUNPACK(R9)
	MOVQ R12, R11
	Q4KTOK(Z8)
	Q4KTOK(Z9)
	Q4KTOK(Z10)
	Q4KTOK(Z11)
	ADDQ $144, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   q4blk

	MOVQ  DX, DI
	KQOUT(Z0, Y0, X0, Z8, Y8, X8)
	KQOUT(Z1, Y1, X1, Z9, Y9, X9)
	KQOUT(Z2, Y2, X2, Z10, Y10, X10)
	KQOUT(Z3, Y3, X3, Z11, Y11, X11)
	ADDQ  $8, DX
	LEAQ  (R8)(BX*2), R8
	LEAQ  (R9)(BX*2), R9
	DECQ  R14
	JNZ   q4pair

q4done:
	VZEROUPPER
	RET

// Q6_K: the word shifts that bring the 2 high bits of a value (in qh) to
// bits 4-5 of its byte (left by 4 and 2 for the first 64 values of a half,
// right by 0 and 2 for the last 64), the scale gathers per 64-value chunk
// (words 8k..8k+7 sub-block 4c+k), 0x30 and 0x20 bytes.
DATA kq6shl<>+0(SB)/8, $0x0004000400040004
DATA kq6shl<>+8(SB)/8, $0x0004000400040004
DATA kq6shl<>+16(SB)/8, $0x0004000400040004
DATA kq6shl<>+24(SB)/8, $0x0004000400040004
DATA kq6shl<>+32(SB)/8, $0x0002000200020002
DATA kq6shl<>+40(SB)/8, $0x0002000200020002
DATA kq6shl<>+48(SB)/8, $0x0002000200020002
DATA kq6shl<>+56(SB)/8, $0x0002000200020002
GLOBL kq6shl<>(SB), RODATA|NOPTR, $64
DATA kq6shr<>+0(SB)/8, $0x0000000000000000
DATA kq6shr<>+8(SB)/8, $0x0000000000000000
DATA kq6shr<>+16(SB)/8, $0x0000000000000000
DATA kq6shr<>+24(SB)/8, $0x0000000000000000
DATA kq6shr<>+32(SB)/8, $0x0002000200020002
DATA kq6shr<>+40(SB)/8, $0x0002000200020002
DATA kq6shr<>+48(SB)/8, $0x0002000200020002
DATA kq6shr<>+56(SB)/8, $0x0002000200020002
GLOBL kq6shr<>(SB), RODATA|NOPTR, $64
DATA kq6idx0<>+0(SB)/8, $0x0000000000000000
DATA kq6idx0<>+8(SB)/8, $0x0000000000000000
DATA kq6idx0<>+16(SB)/8, $0x0001000100010001
DATA kq6idx0<>+24(SB)/8, $0x0001000100010001
DATA kq6idx0<>+32(SB)/8, $0x0002000200020002
DATA kq6idx0<>+40(SB)/8, $0x0002000200020002
DATA kq6idx0<>+48(SB)/8, $0x0003000300030003
DATA kq6idx0<>+56(SB)/8, $0x0003000300030003
GLOBL kq6idx0<>(SB), RODATA|NOPTR, $64
DATA kq6idx1<>+0(SB)/8, $0x0004000400040004
DATA kq6idx1<>+8(SB)/8, $0x0004000400040004
DATA kq6idx1<>+16(SB)/8, $0x0005000500050005
DATA kq6idx1<>+24(SB)/8, $0x0005000500050005
DATA kq6idx1<>+32(SB)/8, $0x0006000600060006
DATA kq6idx1<>+40(SB)/8, $0x0006000600060006
DATA kq6idx1<>+48(SB)/8, $0x0007000700070007
DATA kq6idx1<>+56(SB)/8, $0x0007000700070007
GLOBL kq6idx1<>(SB), RODATA|NOPTR, $64
DATA kq6idx2<>+0(SB)/8, $0x0008000800080008
DATA kq6idx2<>+8(SB)/8, $0x0008000800080008
DATA kq6idx2<>+16(SB)/8, $0x0009000900090009
DATA kq6idx2<>+24(SB)/8, $0x0009000900090009
DATA kq6idx2<>+32(SB)/8, $0x000a000a000a000a
DATA kq6idx2<>+40(SB)/8, $0x000a000a000a000a
DATA kq6idx2<>+48(SB)/8, $0x000b000b000b000b
DATA kq6idx2<>+56(SB)/8, $0x000b000b000b000b
GLOBL kq6idx2<>(SB), RODATA|NOPTR, $64
DATA kq6idx3<>+0(SB)/8, $0x000c000c000c000c
DATA kq6idx3<>+8(SB)/8, $0x000c000c000c000c
DATA kq6idx3<>+16(SB)/8, $0x000d000d000d000d
DATA kq6idx3<>+24(SB)/8, $0x000d000d000d000d
DATA kq6idx3<>+32(SB)/8, $0x000e000e000e000e
DATA kq6idx3<>+40(SB)/8, $0x000e000e000e000e
DATA kq6idx3<>+48(SB)/8, $0x000f000f000f000f
DATA kq6idx3<>+56(SB)/8, $0x000f000f000f000f
GLOBL kq6idx3<>(SB), RODATA|NOPTR, $64
DATA kq620<>+0(SB)/8, $0x2020202020202020
DATA kq620<>+8(SB)/8, $0x2020202020202020
DATA kq620<>+16(SB)/8, $0x2020202020202020
DATA kq620<>+24(SB)/8, $0x2020202020202020
DATA kq620<>+32(SB)/8, $0x2020202020202020
DATA kq620<>+40(SB)/8, $0x2020202020202020
DATA kq620<>+48(SB)/8, $0x2020202020202020
DATA kq620<>+56(SB)/8, $0x2020202020202020
GLOBL kq620<>(SB), RODATA|NOPTR, $64
DATA kq630<>+0(SB)/4, $0x30303030
GLOBL kq630<>(SB), RODATA|NOPTR, $4

// Q6_K meets its activations the other way round: x+128 (x XOR 0x80,
// unsigned) times the signed values q−32, so that the correction,
// 128·Σ sc·(q−32) per dword lane, depends on the row only: the unpack
// computes it once, negated, and each token's integer sums start there.

// Q6KHALF unpacks the 128 values of half h of the Q6_K block at offset AX
// of the row at p (ql at lo, qh at hi) as q−32 into za (values 0..63 of
// the half) and zb (64..127).
#define Q6KHALF(p, lo, hi, za, zb) \
	VMOVDQU64       lo(p)(AX*1), Z27; \
	VBROADCASTI64X4 hi(p)(AX*1), Z28; \
	VPANDD          Z31, Z27, za; \
	VPSLLVW         kq6shl<>(SB), Z28, Z29; \
	VPTERNLOGD.BCST $0xf8, kq630<>(SB), Z29, za; \
	VPSUBB          kq620<>(SB), za, za; \
	VPSRLW          $4, Z27, Z27; \
	VPANDD          Z31, Z27, zb; \
	VPSRLVW         kq6shr<>(SB), Z28, Z29; \
	VPTERNLOGD.BCST $0xf8, kq630<>(SB), Z29, zb; \
	VPSUBB          kq620<>(SB), zb, zb

// Q6KUNPACK unpacks the Q6_K block at offset AX of the row at p: q−32 of
// chunk c (values 64c..64c+63) in Z16+c, the scales for VPMADDWD of chunk
// c in Z20+c, −128·Σ sc·(q−32) by dword lane in Z24, d ×8 in Y25.
#define Q6KUNPACK(p) \
	Q6KHALF(p, 0, 128, Z16, Z17); \
	Q6KHALF(p, 64, 160, Z18, Z19); \
	VPMOVSXBW    192(p)(AX*1), Y24; \
	VMOVDQU64    kq6idx0<>(SB), Z27; \
	VPERMW       Z24, Z27, Z20; \
	VMOVDQU64    kq6idx1<>(SB), Z28; \
	VPERMW       Z24, Z28, Z21; \
	VMOVDQU64    kq6idx2<>(SB), Z27; \
	VPERMW       Z24, Z27, Z22; \
	VMOVDQU64    kq6idx3<>(SB), Z28; \
	VPERMW       Z24, Z28, Z23; \
	VPBROADCASTW 208(p)(AX*1), X25; \
	VCVTPH2PS    X25, Y25; \
	VPMADDUBSW   Z16, Z26, Z27; \
	VPMADDWD     Z20, Z27, Z24; \
	VPMADDUBSW   Z17, Z26, Z27; \
	VPDPWSSD     Z21, Z27, Z24; \
	VPMADDUBSW   Z18, Z26, Z27; \
	VPDPWSSD     Z22, Z27, Z24; \
	VPMADDUBSW   Z19, Z26, Z27; \
	VPDPWSSD     Z23, Z27, Z24; \
	VPXORD       Z27, Z27, Z27; \
	VPSUBD       Z24, Z27, Z24

// Q6KTOK adds into f (a ymm register) the unpacked block times the Q8_K
// block at R11, and moves R11 to the next token.
#define Q6KTOK(f) \
	VMOVDQA64   Z24, Z29; \
	VPXORD      4(R11), Z26, Z27; \
	VPMADDUBSW  Z16, Z27, Z27; \
	VPDPWSSD    Z20, Z27, Z29; \
	VPXORD      68(R11), Z26, Z28; \
	VPMADDUBSW  Z17, Z28, Z28; \
	VPDPWSSD    Z21, Z28, Z29; \
	VPXORD      132(R11), Z26, Z27; \
	VPMADDUBSW  Z18, Z27, Z27; \
	VPDPWSSD    Z22, Z27, Z29; \
	VPXORD      196(R11), Z26, Z28; \
	VPMADDUBSW  Z19, Z28, Z28; \
	VPDPWSSD    Z23, Z28, Z29; \
	VEXTRACTI64X4 $1, Z29, Y30; \
	VPADDD      Y30, Y29, Y29; \
	VCVTDQ2PS   Y29, Y29; \
	VMULPS.BCST (R11), Y25, Y30; \
	VFMADD231PS Y30, Y29, f; \
	ADDQ        R13, R11

// KQRED8 reduces the 8 lanes of y (xmm x) into the low lane of x as
// hsum_float_8.
#define KQRED8(y, x) \
	VEXTRACTF32X4 $1, y, X29; \
	VADDPS        x, X29, X29; \
	VMOVHLPS      X29, X29, X30; \
	VADDPS        X30, X29, X29; \
	VMOVSHDUP     X29, X30; \
	VADDSS        X30, X29, x

// KQOUT8 is KQOUT for accumulators reduced by KQRED8.
#define KQOUT8(ya, xa, yb, xb) \
	KQRED8(ya, xa); \
	KQRED8(yb, xb); \
	VADDSS (DI), xa, K2, xa; \
	VADDSS 4(DI), xb, K2, xb; \
	VMOVSS xa, (DI); \
	VMOVSS xb, 4(DI); \
	ADDQ   ldy+48(FP), DI

// func gemm2x8Q6_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q4_KVNNI for Q6_K weights.
TEXT ·gemm2x8Q6_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z26
	IMULQ        $210, CX
	TESTQ        R14, R14
	JZ           s8done
	TESTQ        CX, CX
	JZ           s8done

s8pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	KQZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ x+16(FP), R12
	XORQ AX, AX

s8blk:
	Q6KUNPACK(R8)
	MOVQ R12, R11
	Q6KTOK(Y0)
	Q6KTOK(Y1)
	Q6KTOK(Y2)
	Q6KTOK(Y3)
	Q6KTOK(Y4)
	Q6KTOK(Y5)
	Q6KTOK(Y6)
	Q6KTOK(Y7)
	Q6KUNPACK(R9)
	MOVQ R12, R11
	Q6KTOK(Y8)
	Q6KTOK(Y9)
	Q6KTOK(Y10)
	Q6KTOK(Y11)
	Q6KTOK(Y12)
	Q6KTOK(Y13)
	Q6KTOK(Y14)
	Q6KTOK(Y15)
	ADDQ $210, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   s8blk

	MOVQ   DX, DI
	KQOUT8(Y0, X0, Y8, X8)
	KQOUT8(Y1, X1, Y9, X9)
	KQOUT8(Y2, X2, Y10, X10)
	KQOUT8(Y3, X3, Y11, X11)
	KQOUT8(Y4, X4, Y12, X12)
	KQOUT8(Y5, X5, Y13, X13)
	KQOUT8(Y6, X6, Y14, X14)
	KQOUT8(Y7, X7, Y15, X15)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    s8pair

s8done:
	VZEROUPPER
	RET

// func gemm2x4Q6_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q6_KVNNI for 4 tokens.
TEXT ·gemm2x4Q6_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z26
	IMULQ        $210, CX
	TESTQ        R14, R14
	JZ           s4done
	TESTQ        CX, CX
	JZ           s4done

s4pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	MOVQ x+16(FP), R12
	XORQ AX, AX

s4blk:
	Q6KUNPACK(R8)
	MOVQ R12, R11
	Q6KTOK(Y0)
	Q6KTOK(Y1)
	Q6KTOK(Y2)
	Q6KTOK(Y3)
	Q6KUNPACK(R9)
	MOVQ R12, R11
	Q6KTOK(Y8)
	Q6KTOK(Y9)
	Q6KTOK(Y10)
	Q6KTOK(Y11)
	ADDQ $210, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   s4blk

	MOVQ   DX, DI
	KQOUT8(Y0, X0, Y8, X8)
	KQOUT8(Y1, X1, Y9, X9)
	KQOUT8(Y2, X2, Y10, X10)
	KQOUT8(Y3, X3, Y11, X11)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    s4pair

s4done:
	VZEROUPPER
	RET

// Q5_K: per 64-value chunk c, the word shifts that bring bit 2c (values
// of the lower half) and 2c+1 (upper half) of each qh byte to bit 4: left
// for chunks 0 and 1, right for 2 and 3; and 0x10 bytes.
DATA kq5sh0<>+0(SB)/8, $0x0004000400040004
DATA kq5sh0<>+8(SB)/8, $0x0004000400040004
DATA kq5sh0<>+16(SB)/8, $0x0004000400040004
DATA kq5sh0<>+24(SB)/8, $0x0004000400040004
DATA kq5sh0<>+32(SB)/8, $0x0003000300030003
DATA kq5sh0<>+40(SB)/8, $0x0003000300030003
DATA kq5sh0<>+48(SB)/8, $0x0003000300030003
DATA kq5sh0<>+56(SB)/8, $0x0003000300030003
GLOBL kq5sh0<>(SB), RODATA|NOPTR, $64
DATA kq5sh1<>+0(SB)/8, $0x0002000200020002
DATA kq5sh1<>+8(SB)/8, $0x0002000200020002
DATA kq5sh1<>+16(SB)/8, $0x0002000200020002
DATA kq5sh1<>+24(SB)/8, $0x0002000200020002
DATA kq5sh1<>+32(SB)/8, $0x0001000100010001
DATA kq5sh1<>+40(SB)/8, $0x0001000100010001
DATA kq5sh1<>+48(SB)/8, $0x0001000100010001
DATA kq5sh1<>+56(SB)/8, $0x0001000100010001
GLOBL kq5sh1<>(SB), RODATA|NOPTR, $64
DATA kq5sh2<>+0(SB)/8, $0x0000000000000000
DATA kq5sh2<>+8(SB)/8, $0x0000000000000000
DATA kq5sh2<>+16(SB)/8, $0x0000000000000000
DATA kq5sh2<>+24(SB)/8, $0x0000000000000000
DATA kq5sh2<>+32(SB)/8, $0x0001000100010001
DATA kq5sh2<>+40(SB)/8, $0x0001000100010001
DATA kq5sh2<>+48(SB)/8, $0x0001000100010001
DATA kq5sh2<>+56(SB)/8, $0x0001000100010001
GLOBL kq5sh2<>(SB), RODATA|NOPTR, $64
DATA kq5sh3<>+0(SB)/8, $0x0002000200020002
DATA kq5sh3<>+8(SB)/8, $0x0002000200020002
DATA kq5sh3<>+16(SB)/8, $0x0002000200020002
DATA kq5sh3<>+24(SB)/8, $0x0002000200020002
DATA kq5sh3<>+32(SB)/8, $0x0003000300030003
DATA kq5sh3<>+40(SB)/8, $0x0003000300030003
DATA kq5sh3<>+48(SB)/8, $0x0003000300030003
DATA kq5sh3<>+56(SB)/8, $0x0003000300030003
GLOBL kq5sh3<>(SB), RODATA|NOPTR, $64
DATA kq510<>+0(SB)/4, $0x10101010
GLOBL kq510<>(SB), RODATA|NOPTR, $4

// Q5KCHUNK unpacks chunk c of the Q5_K block at offset AX of the row at p
// into z: the nibbles of qs at off, bit 4 from the qh bytes in Z28
// shifted by sh (VPSLLVW or VPSRLVW) by the counts at cnt.
#define Q5KCHUNK(p, off, z, sh, cnt) \
	VBROADCASTI64X4 off(p)(AX*1), z; \
	VPSRLVW         kq4shr<>(SB), z, z; \
	VPANDD          Z31, z, z; \
	sh              cnt, Z28, Z29; \
	VPTERNLOGD.BCST $0xf8, kq510<>(SB), Z29, z

// Q5KUNPACK unpacks the Q5_K block at offset AX of the row at p as
// Q4KUNPACK does a Q4_K block.
#define Q5KUNPACK(p) \
	VMOVDQU32       4(p)(AX*1), X24; \
	VPSHUFD         $0x98, X24, X29; \
	VPSHUFD         $0x50, X24, X30; \
	VPSRLVD         kq4sh<>(SB), X29, X29; \
	VPANDD          kq4m1<>(SB), X29, X29; \
	VPSRLD          $6, X30, X30; \
	VPANDD          kq4m2<>(SB), X30, X30; \
	VPSLLD          $4, X30, X30; \
	VPORD           X30, X29, X29; \
	VPMOVZXBW       X29, Y24; \
	VMOVDQU64       kq4idx0<>(SB), Z27; \
	VPERMW          Z24, Z27, Z20; \
	VMOVDQU64       kq4idx1<>(SB), Z28; \
	VPERMW          Z24, Z28, Z21; \
	VMOVDQU64       kq4idx2<>(SB), Z27; \
	VPERMW          Z24, Z27, Z22; \
	VMOVDQU64       kq4idx3<>(SB), Z28; \
	VPERMW          Z24, Z28, Z23; \
	VMOVDQU64       kq4idxm<>(SB), Y27; \
	VPERMW          Y24, Y27, Y25; \
	VMOVDQU64       kq4dm<>(SB), Y28; \
	VPERMW          (p)(AX*1), Y28, Y30; \
	VCVTPH2PS       Y30, Z26; \
	VXORPS          kq4sgn<>(SB), Z26, Z26; \
	VBROADCASTI64X4 16(p)(AX*1), Z28; \
	Q5KCHUNK(p, 48, Z16, VPSLLVW, kq5sh0<>(SB)); \
	Q5KCHUNK(p, 80, Z17, VPSLLVW, kq5sh1<>(SB)); \
	Q5KCHUNK(p, 112, Z18, VPSRLVW, kq5sh2<>(SB)); \
	Q5KCHUNK(p, 144, Z19, VPSRLVW, kq5sh3<>(SB))

// Q5KTOK is Q4KTOK for Q5_K: its min sum, Σ m_j·Σx_j as one integer
// (ggml's summs), goes to lane 8; lanes 9..11 get junk that is never
// read.
#define Q5KTOK(f) \
	VPMADDUBSW    4(R11), Z16, Z27; \
	VPMADDWD      Z20, Z27, Z27; \
	VPMADDUBSW    68(R11), Z17, Z28; \
	VPDPWSSD      Z21, Z28, Z27; \
	VPMADDUBSW    132(R11), Z18, Z28; \
	VPDPWSSD      Z22, Z28, Z27; \
	VPMADDUBSW    196(R11), Z19, Z28; \
	VPDPWSSD      Z23, Z28, Z27; \
	VPMADDWD      260(R11), Y25, Y29; \
	VPSRLQ        $32, Y29, Y30; \
	VPADDD        Y30, Y29, Y29; \
	VEXTRACTI32X4 $1, Y29, X30; \
	VPADDD        X30, X29, X29; \
	VPSHUFD       $0xee, X29, X30; \
	VPADDD        X30, X29, X29; \
	VSHUFI64X2    $0x4e, Z29, Z27, Z30; \
	VPADDD        Z27, Z30, K1, Z30; \
	VCVTDQ2PS     Z30, Z30; \
	VMULPS.BCST   (R11), Z26, Z28; \
	VFMADD231PS   Z28, Z30, f; \
	ADDQ          R13, R11

// KQOUT5 is KQOUT for Q5_K: hsum_float_8 of lanes 0..7, plus lane 8.
#define KQOUT5(za, ya, xa, zb, yb, xb) \
	VEXTRACTF32X4 $2, za, X28; \
	KQRED8(ya, xa); \
	VADDSS        X28, xa, xa; \
	VEXTRACTF32X4 $2, zb, X28; \
	KQRED8(yb, xb); \
	VADDSS        X28, xb, xb; \
	VADDSS        (DI), xa, K2, xa; \
	VADDSS        4(DI), xb, K2, xb; \
	VMOVSS        xa, (DI); \
	VMOVSS        xb, 4(DI); \
	ADDQ          ldy+48(FP), DI

// func gemm2x8Q5_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q4_KVNNI for Q5_K weights.
TEXT ·gemm2x8Q5_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	IMULQ $176, CX
	TESTQ R14, R14
	JZ    f8done
	TESTQ CX, CX
	JZ    f8done

f8pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	KQZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ x+16(FP), R12
	XORQ AX, AX

f8blk:
	Q5KUNPACK(R8)
	MOVQ R12, R11
	Q5KTOK(Z0)
	Q5KTOK(Z1)
	Q5KTOK(Z2)
	Q5KTOK(Z3)
	Q5KTOK(Z4)
	Q5KTOK(Z5)
	Q5KTOK(Z6)
	Q5KTOK(Z7)
	Q5KUNPACK(R9)
	MOVQ R12, R11
	Q5KTOK(Z8)
	Q5KTOK(Z9)
	Q5KTOK(Z10)
	Q5KTOK(Z11)
	Q5KTOK(Z12)
	Q5KTOK(Z13)
	Q5KTOK(Z14)
	Q5KTOK(Z15)
	ADDQ $176, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   f8blk

	MOVQ   DX, DI
	KQOUT5(Z0, Y0, X0, Z8, Y8, X8)
	KQOUT5(Z1, Y1, X1, Z9, Y9, X9)
	KQOUT5(Z2, Y2, X2, Z10, Y10, X10)
	KQOUT5(Z3, Y3, X3, Z11, Y11, X11)
	KQOUT5(Z4, Y4, X4, Z12, Y12, X12)
	KQOUT5(Z5, Y5, X5, Z13, Y13, X13)
	KQOUT5(Z6, Y6, X6, Z14, Y14, X14)
	KQOUT5(Z7, Y7, X7, Z15, Y15, X15)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    f8pair

f8done:
	VZEROUPPER
	RET

// func gemm2x4Q5_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q5_KVNNI for 4 tokens.
TEXT ·gemm2x4Q5_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	IMULQ $176, CX
	TESTQ R14, R14
	JZ    f4done
	TESTQ CX, CX
	JZ    f4done

f4pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	MOVQ x+16(FP), R12
	XORQ AX, AX

f4blk:
	Q5KUNPACK(R8)
	MOVQ R12, R11
	Q5KTOK(Z0)
	Q5KTOK(Z1)
	Q5KTOK(Z2)
	Q5KTOK(Z3)
	Q5KUNPACK(R9)
	MOVQ R12, R11
	Q5KTOK(Z8)
	Q5KTOK(Z9)
	Q5KTOK(Z10)
	Q5KTOK(Z11)
	ADDQ $176, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   f4blk

	MOVQ   DX, DI
	KQOUT5(Z0, Y0, X0, Z8, Y8, X8)
	KQOUT5(Z1, Y1, X1, Z9, Y9, X9)
	KQOUT5(Z2, Y2, X2, Z10, Y10, X10)
	KQOUT5(Z3, Y3, X3, Z11, Y11, X11)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    f4pair

f4done:
	VZEROUPPER
	RET

// Q3_K and Q2_K: per 64-value chunk, the word shifts that bring bit pair
// 2s of each quant byte down (planes 0, 1 for even chunks, 2, 3 for odd
// ones); Q3_K's hmask shifts that bring bit 4c+s to bit 2 (left for chunk
// 0, right for the others); the dword shifts of its scales' high bits,
// and 0x03, 0x04 bytes and 0x20 words.
DATA kq3qs0<>+0(SB)/8, $0x0000000000000000
DATA kq3qs0<>+8(SB)/8, $0x0000000000000000
DATA kq3qs0<>+16(SB)/8, $0x0000000000000000
DATA kq3qs0<>+24(SB)/8, $0x0000000000000000
DATA kq3qs0<>+32(SB)/8, $0x0002000200020002
DATA kq3qs0<>+40(SB)/8, $0x0002000200020002
DATA kq3qs0<>+48(SB)/8, $0x0002000200020002
DATA kq3qs0<>+56(SB)/8, $0x0002000200020002
GLOBL kq3qs0<>(SB), RODATA|NOPTR, $64
DATA kq3qs1<>+0(SB)/8, $0x0004000400040004
DATA kq3qs1<>+8(SB)/8, $0x0004000400040004
DATA kq3qs1<>+16(SB)/8, $0x0004000400040004
DATA kq3qs1<>+24(SB)/8, $0x0004000400040004
DATA kq3qs1<>+32(SB)/8, $0x0006000600060006
DATA kq3qs1<>+40(SB)/8, $0x0006000600060006
DATA kq3qs1<>+48(SB)/8, $0x0006000600060006
DATA kq3qs1<>+56(SB)/8, $0x0006000600060006
GLOBL kq3qs1<>(SB), RODATA|NOPTR, $64
DATA kq3hs0<>+0(SB)/8, $0x0002000200020002
DATA kq3hs0<>+8(SB)/8, $0x0002000200020002
DATA kq3hs0<>+16(SB)/8, $0x0002000200020002
DATA kq3hs0<>+24(SB)/8, $0x0002000200020002
DATA kq3hs0<>+32(SB)/8, $0x0001000100010001
DATA kq3hs0<>+40(SB)/8, $0x0001000100010001
DATA kq3hs0<>+48(SB)/8, $0x0001000100010001
DATA kq3hs0<>+56(SB)/8, $0x0001000100010001
GLOBL kq3hs0<>(SB), RODATA|NOPTR, $64
DATA kq3hs1<>+0(SB)/8, $0x0000000000000000
DATA kq3hs1<>+8(SB)/8, $0x0000000000000000
DATA kq3hs1<>+16(SB)/8, $0x0000000000000000
DATA kq3hs1<>+24(SB)/8, $0x0000000000000000
DATA kq3hs1<>+32(SB)/8, $0x0001000100010001
DATA kq3hs1<>+40(SB)/8, $0x0001000100010001
DATA kq3hs1<>+48(SB)/8, $0x0001000100010001
DATA kq3hs1<>+56(SB)/8, $0x0001000100010001
GLOBL kq3hs1<>(SB), RODATA|NOPTR, $64
DATA kq3hs2<>+0(SB)/8, $0x0002000200020002
DATA kq3hs2<>+8(SB)/8, $0x0002000200020002
DATA kq3hs2<>+16(SB)/8, $0x0002000200020002
DATA kq3hs2<>+24(SB)/8, $0x0002000200020002
DATA kq3hs2<>+32(SB)/8, $0x0003000300030003
DATA kq3hs2<>+40(SB)/8, $0x0003000300030003
DATA kq3hs2<>+48(SB)/8, $0x0003000300030003
DATA kq3hs2<>+56(SB)/8, $0x0003000300030003
GLOBL kq3hs2<>(SB), RODATA|NOPTR, $64
DATA kq3hs3<>+0(SB)/8, $0x0004000400040004
DATA kq3hs3<>+8(SB)/8, $0x0004000400040004
DATA kq3hs3<>+16(SB)/8, $0x0004000400040004
DATA kq3hs3<>+24(SB)/8, $0x0004000400040004
DATA kq3hs3<>+32(SB)/8, $0x0005000500050005
DATA kq3hs3<>+40(SB)/8, $0x0005000500050005
DATA kq3hs3<>+48(SB)/8, $0x0005000500050005
DATA kq3hs3<>+56(SB)/8, $0x0005000500050005
GLOBL kq3hs3<>(SB), RODATA|NOPTR, $64
DATA kq3hsh<>+0(SB)/8, $0x0000000200000000
DATA kq3hsh<>+8(SB)/8, $0x0000000600000004
GLOBL kq3hsh<>(SB), RODATA|NOPTR, $16
DATA kq303<>+0(SB)/4, $0x03030303
GLOBL kq303<>(SB), RODATA|NOPTR, $4
DATA kq304<>+0(SB)/4, $0x04040404
GLOBL kq304<>(SB), RODATA|NOPTR, $4
DATA kq304b<>+0(SB)/8, $0x0404040404040404
DATA kq304b<>+8(SB)/8, $0x0404040404040404
DATA kq304b<>+16(SB)/8, $0x0404040404040404
DATA kq304b<>+24(SB)/8, $0x0404040404040404
DATA kq304b<>+32(SB)/8, $0x0404040404040404
DATA kq304b<>+40(SB)/8, $0x0404040404040404
DATA kq304b<>+48(SB)/8, $0x0404040404040404
DATA kq304b<>+56(SB)/8, $0x0404040404040404
GLOBL kq304b<>(SB), RODATA|NOPTR, $64
DATA kq3w32<>+0(SB)/8, $0x0020002000200020
DATA kq3w32<>+8(SB)/8, $0x0020002000200020
DATA kq3w32<>+16(SB)/8, $0x0020002000200020
DATA kq3w32<>+24(SB)/8, $0x0020002000200020
GLOBL kq3w32<>(SB), RODATA|NOPTR, $32

// Q3KCHUNK unpacks chunk k of the Q3_K block at offset AX of the row at p
// into z as q−4 (signed): bit pairs of the quants at off shifted by qs,
// bit 2 from the hmask bytes in Z30 shifted by sh (VPSLLVW or VPSRLVW) by
// the counts at hs.
#define Q3KCHUNK(p, off, z, qs, sh, hs) \
	VBROADCASTI64X4 off(p)(AX*1), z; \
	VPSRLVW         qs, z, z; \
	VPANDD.BCST     kq303<>(SB), z, z; \
	sh              hs, Z30, Z29; \
	VPTERNLOGD.BCST $0xf8, kq304<>(SB), Z29, z; \
	VPSUBB          kq304b<>(SB), z, z

// Q3KUNPACK unpacks the Q3_K block at offset AX of the row at p as
// Q6KUNPACK does a Q6_K block (q−4 in Z16..Z19, scales for VPMADDWD in
// Z20..Z23, −128·Σ sc·(q−4) by dword lane in Z24, d ×8 in Y25).
#define Q3KUNPACK(p) \
	VMOVQ           96(p)(AX*1), X24; \
	VPSRLW          $4, X24, X29; \
	VPUNPCKLQDQ     X29, X24, X24; \
	VPANDD          Z31, Z24, Z24; \
	VPBROADCASTD    104(p)(AX*1), X29; \
	VPSRLVD         kq3hsh<>(SB), X29, X29; \
	VPANDD.BCST     kq303<>(SB), X29, X29; \
	VPSLLD          $4, X29, X29; \
	VPORD           X29, X24, X24; \
	VPMOVZXBW       X24, Y24; \
	VPSUBW          kq3w32<>(SB), Y24, Y24; \
	VBROADCASTI64X4 (p)(AX*1), Z30; \
	Q3KCHUNK(p, 32, Z16, kq3qs0<>(SB), VPSLLVW, kq3hs0<>(SB)); \
	Q3KCHUNK(p, 32, Z17, kq3qs1<>(SB), VPSRLVW, kq3hs1<>(SB)); \
	Q3KCHUNK(p, 64, Z18, kq3qs0<>(SB), VPSRLVW, kq3hs2<>(SB)); \
	Q3KCHUNK(p, 64, Z19, kq3qs1<>(SB), VPSRLVW, kq3hs3<>(SB)); \
	VMOVDQU64       kq6idx0<>(SB), Z27; \
	VPERMW          Z24, Z27, Z20; \
	VMOVDQU64       kq6idx1<>(SB), Z28; \
	VPERMW          Z24, Z28, Z21; \
	VMOVDQU64       kq6idx2<>(SB), Z27; \
	VPERMW          Z24, Z27, Z22; \
	VMOVDQU64       kq6idx3<>(SB), Z28; \
	VPERMW          Z24, Z28, Z23; \
	VPBROADCASTW    108(p)(AX*1), X25; \
	VCVTPH2PS       X25, Y25; \
	VPMADDUBSW      Z16, Z26, Z27; \
	VPMADDWD        Z20, Z27, Z24; \
	VPMADDUBSW      Z17, Z26, Z27; \
	VPDPWSSD        Z21, Z27, Z24; \
	VPMADDUBSW      Z18, Z26, Z27; \
	VPDPWSSD        Z22, Z27, Z24; \
	VPMADDUBSW      Z19, Z26, Z27; \
	VPDPWSSD        Z23, Z27, Z24; \
	VPXORD          Z27, Z27, Z27; \
	VPSUBD          Z24, Z27, Z24

// func gemm2x8Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q6_KVNNI for Q3_K weights.
TEXT ·gemm2x8Q3_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z26
	IMULQ        $110, CX
	TESTQ        R14, R14
	JZ           t8done
	TESTQ        CX, CX
	JZ           t8done

t8pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	KQZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ x+16(FP), R12
	XORQ AX, AX

t8blk:
	Q3KUNPACK(R8)
	MOVQ R12, R11
	Q6KTOK(Y0)
	Q6KTOK(Y1)
	Q6KTOK(Y2)
	Q6KTOK(Y3)
	Q6KTOK(Y4)
	Q6KTOK(Y5)
	Q6KTOK(Y6)
	Q6KTOK(Y7)
	Q3KUNPACK(R9)
	MOVQ R12, R11
	Q6KTOK(Y8)
	Q6KTOK(Y9)
	Q6KTOK(Y10)
	Q6KTOK(Y11)
	Q6KTOK(Y12)
	Q6KTOK(Y13)
	Q6KTOK(Y14)
	Q6KTOK(Y15)
	ADDQ $110, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   t8blk

	MOVQ   DX, DI
	KQOUT8(Y0, X0, Y8, X8)
	KQOUT8(Y1, X1, Y9, X9)
	KQOUT8(Y2, X2, Y10, X10)
	KQOUT8(Y3, X3, Y11, X11)
	KQOUT8(Y4, X4, Y12, X12)
	KQOUT8(Y5, X5, Y13, X13)
	KQOUT8(Y6, X6, Y14, X14)
	KQOUT8(Y7, X7, Y15, X15)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    t8pair

t8done:
	VZEROUPPER
	RET

// func gemm2x4Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q3_KVNNI for 4 tokens.
TEXT ·gemm2x4Q3_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z26
	IMULQ        $110, CX
	TESTQ        R14, R14
	JZ           t4done
	TESTQ        CX, CX
	JZ           t4done

t4pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	MOVQ x+16(FP), R12
	XORQ AX, AX

t4blk:
	Q3KUNPACK(R8)
	MOVQ R12, R11
	Q6KTOK(Y0)
	Q6KTOK(Y1)
	Q6KTOK(Y2)
	Q6KTOK(Y3)
	Q3KUNPACK(R9)
	MOVQ R12, R11
	Q6KTOK(Y8)
	Q6KTOK(Y9)
	Q6KTOK(Y10)
	Q6KTOK(Y11)
	ADDQ $110, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   t4blk

	MOVQ   DX, DI
	KQOUT8(Y0, X0, Y8, X8)
	KQOUT8(Y1, X1, Y9, X9)
	KQOUT8(Y2, X2, Y10, X10)
	KQOUT8(Y3, X3, Y11, X11)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    t4pair

t4done:
	VZEROUPPER
	RET

// Q2_K: each row-token first adds −dmin·dx·(m·Σx by pairs of sub-blocks
// of 16) to its 8 lanes, then d·dx·(lane sums), as ggml does.

// Q2KCHUNK unpacks chunk k of the Q2_K block at offset AX of the row at p
// into z (0..3): bit pairs of the quants at off shifted by qs.
#define Q2KCHUNK(p, off, z, qs) \
	VBROADCASTI64X4 off(p)(AX*1), z; \
	VPSRLVW         qs, z, z; \
	VPANDD.BCST     kq303<>(SB), z, z

// Q2KUNPACK unpacks the Q2_K block at offset AX of the row at p: quants
// of chunk c in Z16+c, the scales for VPMADDWD of chunk c in Z20+c, the
// 16 mins as words in Y25, [d ×8, −dmin ×8] in Z26.
#define Q2KUNPACK(p) \
	VPMOVZXBW       (p)(AX*1), Y24; \
	VPSRLW          $4, Y24, Y25; \
	VPANDD          Y31, Y24, Y24; \
	Q2KCHUNK(p, 16, Z16, kq3qs0<>(SB)); \
	Q2KCHUNK(p, 16, Z17, kq3qs1<>(SB)); \
	Q2KCHUNK(p, 48, Z18, kq3qs0<>(SB)); \
	Q2KCHUNK(p, 48, Z19, kq3qs1<>(SB)); \
	VMOVDQU64       kq6idx0<>(SB), Z27; \
	VPERMW          Z24, Z27, Z20; \
	VMOVDQU64       kq6idx1<>(SB), Z28; \
	VPERMW          Z24, Z28, Z21; \
	VMOVDQU64       kq6idx2<>(SB), Z27; \
	VPERMW          Z24, Z27, Z22; \
	VMOVDQU64       kq6idx3<>(SB), Z28; \
	VPERMW          Z24, Z28, Z23; \
	VPBROADCASTW    80(p)(AX*1), X27; \
	VPBROADCASTW    82(p)(AX*1), X28; \
	VINSERTI32X4    $1, X28, Y27, Y27; \
	VCVTPH2PS       Y27, Z26; \
	VXORPS          kq4sgn<>(SB), Z26, Z26

// Q2KTOK adds into f (a ymm register) the unpacked block times the Q8_K
// block at R11, and moves R11 to the next token.
#define Q2KTOK(f) \
	VPMADDUBSW    4(R11), Z16, Z27; \
	VPMADDWD      Z20, Z27, Z27; \
	VPMADDUBSW    68(R11), Z17, Z28; \
	VPDPWSSD      Z21, Z28, Z27; \
	VPMADDUBSW    132(R11), Z18, Z28; \
	VPDPWSSD      Z22, Z28, Z27; \
	VPMADDUBSW    196(R11), Z19, Z28; \
	VPDPWSSD      Z23, Z28, Z27; \
	VEXTRACTI64X4 $1, Z27, Y28; \
	VPADDD        Y28, Y27, Y27; \
	VCVTDQ2PS     Y27, Y27; \
	VPMADDWD      260(R11), Y25, Y29; \
	VCVTDQ2PS     Y29, Y29; \
	VMULPS.BCST   (R11), Z26, Z28; \
	VEXTRACTF64X4 $1, Z28, Y30; \
	VFMADD231PS   Y30, Y29, f; \
	VFMADD231PS   Y28, Y27, f; \
	ADDQ          R13, R11

// func gemm2x8Q2_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q4_KVNNI for Q2_K weights.
TEXT ·gemm2x8Q2_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	IMULQ $84, CX
	TESTQ R14, R14
	JZ    u8done
	TESTQ CX, CX
	JZ    u8done

u8pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	KQZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ x+16(FP), R12
	XORQ AX, AX

u8blk:
	Q2KUNPACK(R8)
	MOVQ R12, R11
	Q2KTOK(Y0)
	Q2KTOK(Y1)
	Q2KTOK(Y2)
	Q2KTOK(Y3)
	Q2KTOK(Y4)
	Q2KTOK(Y5)
	Q2KTOK(Y6)
	Q2KTOK(Y7)
	Q2KUNPACK(R9)
	MOVQ R12, R11
	Q2KTOK(Y8)
	Q2KTOK(Y9)
	Q2KTOK(Y10)
	Q2KTOK(Y11)
	Q2KTOK(Y12)
	Q2KTOK(Y13)
	Q2KTOK(Y14)
	Q2KTOK(Y15)
	ADDQ $84, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   u8blk

	MOVQ   DX, DI
	KQOUT8(Y0, X0, Y8, X8)
	KQOUT8(Y1, X1, Y9, X9)
	KQOUT8(Y2, X2, Y10, X10)
	KQOUT8(Y3, X3, Y11, X11)
	KQOUT8(Y4, X4, Y12, X12)
	KQOUT8(Y5, X5, Y13, X13)
	KQOUT8(Y6, X6, Y14, X14)
	KQOUT8(Y7, X7, Y15, X15)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    u8pair

u8done:
	VZEROUPPER
	RET

// func gemm2x4Q2_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm2x8Q2_KVNNI for 4 tokens.
TEXT ·gemm2x4Q2_KVNNI(SB), NOSPLIT, $0-72
	KQSETUP
	IMULQ $84, CX
	TESTQ R14, R14
	JZ    u4done
	TESTQ CX, CX
	JZ    u4done

u4pair:
	KQZERO8(Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	MOVQ x+16(FP), R12
	XORQ AX, AX

u4blk:
	Q2KUNPACK(R8)
	MOVQ R12, R11
	Q2KTOK(Y0)
	Q2KTOK(Y1)
	Q2KTOK(Y2)
	Q2KTOK(Y3)
	Q2KUNPACK(R9)
	MOVQ R12, R11
	Q2KTOK(Y8)
	Q2KTOK(Y9)
	Q2KTOK(Y10)
	Q2KTOK(Y11)
	ADDQ $84, AX
	ADDQ $292, R12
	CMPQ AX, CX
	JB   u4blk

	MOVQ   DX, DI
	KQOUT8(Y0, X0, Y8, X8)
	KQOUT8(Y1, X1, Y9, X9)
	KQOUT8(Y2, X2, Y10, X10)
	KQOUT8(Y3, X3, Y11, X11)
	ADDQ   $8, DX
	LEAQ   (R8)(BX*2), R8
	LEAQ   (R9)(BX*2), R9
	DECQ   R14
	JNZ    u4pair

u4done:
	VZEROUPPER
	RET
