// Hand-written rather than generated with avo: fifteen short kernels
// (five formats, eight, four or two tokens) that share their loop, sums
// and stores through cpp macros, as ifmore_amd64.s (whose kernels they
// extend to several tokens) does; avo would only restate them.

//go:build amd64 && !noasm

#include "textflag.h"

// Inferflow's Q6_B64T1, Q5_B64T1, Q4_B32T1, Q3_B32T1 and Q2_B32T1 weights
// times eight (or four, or two) tokens' Q8_0 activations, AVX-512 with VNNI and
// VBMI: the blocks of four rows are unpacked once, as ifmore_amd64.s's
// kernels unpack them, and kept in Z15, Z20, Z25 and Z29 for all the
// tokens. Tokens go in pairs, whose activations ifgPrep prepared once per
// call, per 64 values: P1 (the first token's first 32 quants and the
// second's last 32), P2 (the first's last 32 and the second's first 32),
// both tokens' dy, both tokens' fl(Y·dy), 256 bytes, so that two VPDPBUSD
// (the second with the weights' halves swapped) give a row's sums already
// folded to four 128-bit lanes (block A of the first token, B of the
// first, A of the second, B of the second); the four rows' sums transpose
// into one zmm. Each (row, token) is one chain over
// the blocks, in lanes 0-3 (first token) or 8-11 (second) of one
// accumulator per pair (Z0, Z5, Z6, Z22), with exactly ifmore's (and
// kernels/quant's) arithmetic: per 32-value activation block with scale
// dy, the exact integer sums S = Σq·qy and Y = Σqy, then
// sum += (scale·dy)·S + base·(Y·dy), each operation rounded to float32,
// block A of a pair before block B.
//
// Registers: Z1, Z2, Z7, Z23 the unpacked blocks with their halves
// swapped (and unpacking temporaries); Z4 and Z16 a pair's activations;
// Z3 and Z14 the four rows' scales and bases (lanes 0-3 and 8-11 block
// A's, 4-7 and 12-15 B's); Z8..Z11 the rows' sums; Z12, Z13 temporaries;
// Z17..Z19, Z21, Z24, Z26..Z28, Z30, Z31, K1 and K2 constants as in
// ifmore_amd64.s, K3 the lanes 0-3 and 8-11.

DATA ifgshr64<>+0(SB)/8, $0x0000000000000000
DATA ifgshr64<>+8(SB)/8, $0x0000000000000000
DATA ifgshr64<>+16(SB)/8, $0x0000000000000000
DATA ifgshr64<>+24(SB)/8, $0x0000000000000000
DATA ifgshr64<>+32(SB)/8, $0x0004000400040004
DATA ifgshr64<>+40(SB)/8, $0x0004000400040004
DATA ifgshr64<>+48(SB)/8, $0x0004000400040004
DATA ifgshr64<>+56(SB)/8, $0x0004000400040004
GLOBL ifgshr64<>(SB), RODATA|NOPTR, $64
DATA ifgq6h<>+0(SB)/8, $0x1814100c0804003c
DATA ifgq6h<>+8(SB)/8, $0x3834302c2824201c
DATA ifgq6h<>+16(SB)/8, $0x1814100c0804003c
DATA ifgq6h<>+24(SB)/8, $0x3834302c2824201c
DATA ifgq6h<>+32(SB)/8, $0x1a16120e0a06023e
DATA ifgq6h<>+40(SB)/8, $0x3a36322e2a26221e
DATA ifgq6h<>+48(SB)/8, $0x1a16120e0a06023e
DATA ifgq6h<>+56(SB)/8, $0x3a36322e2a26221e
GLOBL ifgq6h<>(SB), RODATA|NOPTR, $64
DATA ifgq5h<>+0(SB)/8, $0x0a08060402003e3c
DATA ifgq5h<>+8(SB)/8, $0x1a18161412100e0c
DATA ifgq5h<>+16(SB)/8, $0x2a28262422201e1c
DATA ifgq5h<>+24(SB)/8, $0x3a38363432302e2c
DATA ifgq5h<>+32(SB)/8, $0x0b09070503013f3d
DATA ifgq5h<>+40(SB)/8, $0x1b19171513110f0d
DATA ifgq5h<>+48(SB)/8, $0x2b29272523211f1d
DATA ifgq5h<>+56(SB)/8, $0x3b39373533312f2d
GLOBL ifgq5h<>(SB), RODATA|NOPTR, $64
DATA ifgp2<>+0(SB)/8, $0x1c1814100c080400
DATA ifgp2<>+8(SB)/8, $0x3c3834302c282420
DATA ifgp2<>+16(SB)/8, $0x1c1814100c080400
DATA ifgp2<>+24(SB)/8, $0x3c3834302c282420
DATA ifgp2<>+32(SB)/8, $0x1e1a16120e0a0602
DATA ifgp2<>+40(SB)/8, $0x3e3a36322e2a2622
DATA ifgp2<>+48(SB)/8, $0x1e1a16120e0a0602
DATA ifgp2<>+56(SB)/8, $0x3e3a36322e2a2622
GLOBL ifgp2<>(SB), RODATA|NOPTR, $64
DATA ifgp3<>+0(SB)/8, $0x0c0a08060402003e
DATA ifgp3<>+8(SB)/8, $0x1c1a18161412100e
DATA ifgp3<>+16(SB)/8, $0x0c0a08060402003e
DATA ifgp3<>+24(SB)/8, $0x1c1a18161412100e
DATA ifgp3<>+32(SB)/8, $0x0d0b09070503013f
DATA ifgp3<>+40(SB)/8, $0x1d1b19171513110f
DATA ifgp3<>+48(SB)/8, $0x0d0b09070503013f
DATA ifgp3<>+56(SB)/8, $0x1d1b19171513110f
GLOBL ifgp3<>(SB), RODATA|NOPTR, $64
DATA ifgidx<>+0(SB)/8, $0x0e0c0a0806040200
DATA ifgidx<>+8(SB)/8, $0x0e0c0a0806040200
DATA ifgidx<>+16(SB)/8, $0x0f0d0b0907050301
DATA ifgidx<>+24(SB)/8, $0x0f0d0b0907050301
GLOBL ifgidx<>(SB), RODATA|NOPTR, $32
DATA ifghk<>+0(SB)/8, $0x000000000b030800
DATA ifghk<>+8(SB)/8, $0x000000000c040800
DATA ifghk<>+16(SB)/8, $0x000000000d050800
DATA ifghk<>+24(SB)/8, $0x0b0a030209080100
GLOBL ifghk<>(SB), RODATA|NOPTR, $32
DATA ifgdeint64<>+0(SB)/8, $0x0e0c0a0806040200
DATA ifgdeint64<>+8(SB)/8, $0x1e1c1a1816141210
DATA ifgdeint64<>+16(SB)/8, $0x2e2c2a2826242220
DATA ifgdeint64<>+24(SB)/8, $0x3e3c3a3836343230
DATA ifgdeint64<>+32(SB)/8, $0x0f0d0b0907050301
DATA ifgdeint64<>+40(SB)/8, $0x1f1d1b1917151311
DATA ifgdeint64<>+48(SB)/8, $0x2f2d2b2927252321
DATA ifgdeint64<>+56(SB)/8, $0x3f3d3b3937353331
GLOBL ifgdeint64<>(SB), RODATA|NOPTR, $64
DATA ifgact<>+0(SB)/8, $0x0101010100000000
GLOBL ifgact<>(SB), RODATA|NOPTR, $8

// IFGACT64 loads the two Q8_0 activation blocks at p (68 bytes): Z16
// gets their 64 quants de-interleaved (even values, then odd), Y18 dy of
// A in its low four lanes and of B in its high four, Y20 fl(Y·dy) the
// same way, as ifmore_amd64.s's IFMACT64. Z15 must hold 0x01 bytes, Z29
// the de-interleave table, Y19 the dword indices 0,0,0,0,1,1,1,1.
#define IFGACT64(p) \
	VMOVDQU64     2(p), Y16; \
	VINSERTI64X4  $1, 36(p), Z16, Z16; \
	VPXORD        Z5, Z5, Z5; \
	VPDPBUSD      Z16, Z15, Z5; \
	VEXTRACTI64X4 $1, Z5, Y6; \
	VPHADDD       Y6, Y5, Y5; \
	VPHADDD       Y5, Y5, Y5; \
	VEXTRACTI128  $1, Y5, X6; \
	VPADDD        X6, X5, X5; \
	VCVTDQ2PS     X5, X5; \
	VPBROADCASTW  (p), X7; \
	VPINSRW       $1, 34(p), X7, X7; \
	VCVTPH2PS     X7, X7; \
	VMULPS        X7, X5, X5; \
	VPERMPS       Y7, Y19, Y18; \
	VPERMPS       Y5, Y19, Y20; \
	VPERMB        Z16, Z29, Z16


// IFGDOT(w, w2, z) puts the dword sums of a row's block(s) in w (w2
// the same with its 256-bit halves swapped) times a pair of tokens a and
// b into z: Z16 holds a's activations' first half and b's second (P1),
// Z4 a's second and b's first (P2), so that z's 128-bit lanes sum block
// A of a, B of a, A of b, B of b.
#define IFGDOT(w, w2, z) \
	VPXORD   z, z, z; \
	VPDPBUSD Z16, w, z; \
	VPDPBUSD Z4, w2, z

// IFGPAIR(oa, ob, od, oy, x) adds the four rows' A and B blocks times
// the pair of tokens whose activations (P1 at oa(R12), P2 at ob(R12),
// both tokens' dy at od, their fl(Y·dy) at oy) to their chains in x
// (lanes 0-3 the first token's, 8-11 the second's; K3 selects them), A
// first.
#define IFGPAIR(oa, ob, od, oy, x) \
	VMOVDQU64     oa(R12), Z16; \
	VMOVDQU64     ob(R12), Z4; \
	IFGDOT(Z15, Z1, Z8); \
	IFGDOT(Z20, Z2, Z9); \
	IFGDOT(Z25, Z7, Z10); \
	IFGDOT(Z29, Z23, Z11); \
	VPUNPCKLDQ    Z9, Z8, Z12; \
	VPUNPCKHDQ    Z9, Z8, Z8; \
	VPADDD        Z12, Z8, Z8; \
	VPUNPCKLDQ    Z11, Z10, Z12; \
	VPUNPCKHDQ    Z11, Z10, Z10; \
	VPADDD        Z12, Z10, Z10; \
	VPUNPCKLQDQ   Z10, Z8, Z12; \
	VPUNPCKHQDQ   Z10, Z8, Z8; \
	VPADDD        Z12, Z8, Z8; \
	VCVTDQ2PS     Z8, Z8; \
	VMULPS        od(R12), Z3, Z12; \
	VMULPS        Z8, Z12, Z12; \
	VMULPS        oy(R12), Z14, Z13; \
	VADDPS        Z13, Z12, Z12; \
	VADDPS        Z12, x, K3, x; \
	VSHUFF32X4    $0xb1, Z12, Z12, Z12; \
	VADDPS        Z12, x, K3, x

// IFGSWAP puts the four rows' unpacked blocks with their 256-bit halves
// swapped in Z1, Z2, Z7 and Z23.
#define IFGSWAP \
	VSHUFI64X2 $0x4e, Z15, Z15, Z1; \
	VSHUFI64X2 $0x4e, Z20, Z20, Z2; \
	VSHUFI64X2 $0x4e, Z25, Z25, Z7; \
	VSHUFI64X2 $0x4e, Z29, Z29, Z23

// IFGHDR64 leaves the bases of the four rows' 64-value blocks at offset
// AX of R8..R11 in Z14, their scales in Z3, each four times (blocks A and
// B of two tokens).
#define IFGHDR64 \
	VMOVD       (R8)(AX*1), X12; \
	VPINSRD     $1, (R9)(AX*1), X12, X12; \
	VPINSRD     $2, (R10)(AX*1), X12, X12; \
	VPINSRD     $3, (R11)(AX*1), X12, X12; \
	VINSERTI128 $1, X12, Y12, Y12; \
	VCVTPH2PS   Y12, Z12; \
	VPERMPS     Z12, Z21, Z14; \
	VPERMPS     Z12, Z24, Z3

// IFGHDR2(mov, t12, t13, t3, t14) is IFGHDR64 for the four rows' pairs
// of 32-value blocks: each row's headers of blocks A and B come from one
// load (mov into the register named, X or Y, at its dwords 0 and k) and
// are gathered by VPERMT2D, Y18 holding the indices 0, 8, k, 8+k and Y19
// 0, 1, 8, 9, 2, 3, 10, 11.
#define IFGHDR2(mov, t12, t13, t3, t14) \
	mov       (R8)(AX*1), t12; \
	mov       (R9)(AX*1), t13; \
	mov       (R10)(AX*1), t3; \
	mov       (R11)(AX*1), t14; \
	VPERMT2D  Y13, Y18, Y12; \
	VPERMT2D  Y14, Y18, Y3; \
	VPERMT2D  Y3, Y19, Y12; \
	VCVTPH2PS Y12, Z12; \
	VPERMPS   Z12, Z21, Z14; \
	VPERMPS   Z12, Z24, Z3

// Q6W unpacks the Q6_B64T1 block at offset AX of the row at p into w,
// in stored order: the low nibbles (Z30 the word shifts, Z31 0x0f bytes)
// and bits 4-5 by a multishift of qh (Z28 the controls) selected by Z17
// (0x30 bytes).
#define Q6W(p, w) \
	VBROADCASTI64X4 20(p)(AX*1), Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VBROADCASTI32X4 4(p)(AX*1), w; \
	VPERMQ          $0x50, w, w; \
	VPMULTISHIFTQB  w, Z28, w; \
	VPTERNLOGD      $0xe2, Z7, Z17, w

// Q5W is Q6W for Q5_B64T1: bit 4 from the qh qword (Z28 the controls,
// Z17 0x10 bytes).
#define Q5W(p, w) \
	VBROADCASTI64X4 12(p)(AX*1), Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VPBROADCASTQ    4(p)(AX*1), w; \
	VPMULTISHIFTQB  w, Z28, w; \
	VPTERNLOGD      $0xe2, Z7, Z17, w

// Q4SW unpacks the two Q4_B32T1 blocks at offset AX of the row at p into
// w against de-interleaved activations: block A's values meet dwords 0-3
// and 8-11, B's 4-7 and 12-15 (Z30 the word shifts, Z31 0x0f bytes).
#define Q4SW(p, w) \
	VBROADCASTI32X4 4(p)(AX*1), w; \
	VINSERTI32X4    $1, 24(p)(AX*1), w, w; \
	VINSERTI32X4    $3, 24(p)(AX*1), w, w; \
	VPSRLVW         Z30, w, w; \
	VPANDD          Z31, w, w

// Q3W is Q4SW for two Q3_B32T1 blocks: bits 0-1 by a multishift of qs
// (Z26 the controls), bit 2 by one of qh (Z27), K1 (qwords 2, 3, 6, 7)
// and K2 (their dwords) bringing block B's bytes, joined by the 0x03
// bytes of Z17 and cut by the 0x07 bytes of Z31.
#define Q3W(p, w) \
	VPBROADCASTQ   8(p)(AX*1), w; \
	VPBROADCASTQ   24(p)(AX*1), K1, w; \
	VPMULTISHIFTQB w, Z26, w; \
	VPBROADCASTD   4(p)(AX*1), Z2; \
	VPBROADCASTD   20(p)(AX*1), K2, Z2; \
	VPMULTISHIFTQB Z2, Z27, Z2; \
	VPTERNLOGD     $0xe2, Z2, Z17, w; \
	VPANDD         Z31, w, w

// Q2W is Q3W for two Q2_B32T1 blocks (Z31 0x03 bytes).
#define Q2W(p, w) \
	VPBROADCASTQ   4(p)(AX*1), w; \
	VPBROADCASTQ   16(p)(AX*1), K1, w; \
	VPMULTISHIFTQB w, Z26, w; \
	VPANDD         Z31, w, w

// IFGARGS loads the arguments and the four stream pointers.
#define IFGARGS \
	MOVQ  w+0(FP), R8; \
	MOVQ  ldw+8(FP), BX; \
	MOVQ  xp+16(FP), DI; \
	MOVQ  nb+24(FP), CX; \
	MOVQ  y+32(FP), DX; \
	MOVQ  q+48(FP), R14; \
	MOVQ  R14, AX; \
	IMULQ BX, AX; \
	LEAQ  (R8)(AX*1), R9; \
	LEAQ  (R9)(AX*1), R10; \
	LEAQ  (R10)(AX*1), R11; \
	MOVQ  R14, SI; \
	SHLQ  $2, SI

// IFGROWSTART points AX, R12 (the prepared activations) and R13 (the
// count) at the first block.
#define IFGROWSTART \
	XORQ AX, AX; \
	MOVQ DI, R12; \
	MOVQ CX, R13

// IFGADD(x) adds the four outputs of the token at R12 (R12 + j·SI for
// stream j) to x and steps R12 to the next token (AX bytes on).
#define IFGADD(x) \
	LEAQ      (R12)(SI*2), R13; \
	VMOVSS    (R12), X4; \
	VINSERTPS $0x10, (R12)(SI*1), X4, X4; \
	VINSERTPS $0x20, (R13), X4, X4; \
	VINSERTPS $0x30, (R13)(SI*1), X4, X4; \
	VADDPS    X4, x, x; \
	ADDQ      AX, R12

// IFGPUT(x) stores x's four lanes as IFGADD reads them.
#define IFGPUT(x) \
	LEAQ       (R12)(SI*2), R13; \
	VMOVSS     x, (R12); \
	VEXTRACTPS $1, x, (R12)(SI*1); \
	VEXTRACTPS $2, x, (R13); \
	VEXTRACTPS $3, x, (R13)(SI*1); \
	ADDQ       AX, R12

// IFGSTEP steps to the next four rows.
#define IFGSTEP \
	ADDQ $4, DX; \
	ADDQ BX, R8; \
	ADDQ BX, R9; \
	ADDQ BX, R10; \
	ADDQ BX, R11

// func gemm4x8Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q6_B64T1
// blocks, ldw bytes apart) and 8 tokens t, y[t·ldy/4 + j·q+r] = w·x_t,
// or += when acc is not 0; the tokens' Q8_0 activations prepared by
// ifmPrep at xp, 1024 bytes per 64 values (token t's 128 at 128·t).
TEXT ·gemm4x8Q6_B64VNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifgshr64<>(SB), Z30
	VMOVDQU64    ifgq6h<>(SB), Z28
	IFGARGS
	TESTQ R14, R14
	JZ    q6g8done

q6g8row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z22, Z22, Z22
	IFGROWSTART
	TESTQ R13, R13
	JZ    q6g8fin

q6g8blk:
	Q6W(R8, Z15)
	Q6W(R9, Z20)
	Q6W(R10, Z25)
	Q6W(R11, Z29)
	IFGSWAP
	IFGHDR64
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	IFGPAIR(512, 576, 640, 704, Z6)
	IFGPAIR(768, 832, 896, 960, Z22)
	ADDQ $52, AX
	ADDQ $1024, R12
	DECQ R13
	JNZ  q6g8blk

q6g8fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q6g8put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5
	VEXTRACTF32X4 $2, Z6, X1
	IFGADD(X6)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z6, Z6
	VEXTRACTF32X4 $2, Z22, X1
	IFGADD(X22)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z22, Z22

q6g8put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGPUT(X6)
	VEXTRACTF32X4 $2, Z6, X1
	IFGPUT(X1)
	IFGPUT(X22)
	VEXTRACTF32X4 $2, Z22, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q6g8row

q6g8done:
	VZEROUPPER
	RET

// func gemm4x8Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q6_B64VNNI for Q5_B64T1 weights (44-byte 64-value blocks).
TEXT ·gemm4x8Q5_B64VNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifgshr64<>(SB), Z30
	VMOVDQU64    ifgq5h<>(SB), Z28
	IFGARGS
	TESTQ R14, R14
	JZ    q5g8done

q5g8row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z22, Z22, Z22
	IFGROWSTART
	TESTQ R13, R13
	JZ    q5g8fin

q5g8blk:
	Q5W(R8, Z15)
	Q5W(R9, Z20)
	Q5W(R10, Z25)
	Q5W(R11, Z29)
	IFGSWAP
	IFGHDR64
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	IFGPAIR(512, 576, 640, 704, Z6)
	IFGPAIR(768, 832, 896, 960, Z22)
	ADDQ $44, AX
	ADDQ $1024, R12
	DECQ R13
	JNZ  q5g8blk

q5g8fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q5g8put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5
	VEXTRACTF32X4 $2, Z6, X1
	IFGADD(X6)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z6, Z6
	VEXTRACTF32X4 $2, Z22, X1
	IFGADD(X22)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z22, Z22

q5g8put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGPUT(X6)
	VEXTRACTF32X4 $2, Z6, X1
	IFGPUT(X1)
	IFGPUT(X22)
	VEXTRACTF32X4 $2, Z22, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q5g8row

q5g8done:
	VZEROUPPER
	RET

// func gemm4x8Q4SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q6_B64VNNI for Q4_B32T1 weights (20-byte blocks, taken two at a time).
TEXT ·gemm4x8Q4SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64    ifgshr64<>(SB), Z30
	VPMOVZXBD    ifghk<>+16(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q4g8done

q4g8row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z22, Z22, Z22
	IFGROWSTART
	TESTQ R13, R13
	JZ    q4g8fin

q4g8blk:
	Q4SW(R8, Z15)
	Q4SW(R9, Z20)
	Q4SW(R10, Z25)
	Q4SW(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, Y12, Y13, Y3, Y14)
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	IFGPAIR(512, 576, 640, 704, Z6)
	IFGPAIR(768, 832, 896, 960, Z22)
	ADDQ $40, AX
	ADDQ $1024, R12
	DECQ R13
	JNZ  q4g8blk

q4g8fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q4g8put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5
	VEXTRACTF32X4 $2, Z6, X1
	IFGADD(X6)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z6, Z6
	VEXTRACTF32X4 $2, Z22, X1
	IFGADD(X22)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z22, Z22

q4g8put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGPUT(X6)
	VEXTRACTF32X4 $2, Z6, X1
	IFGPUT(X1)
	IFGPUT(X22)
	VEXTRACTF32X4 $2, Z22, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q4g8row

q4g8done:
	VZEROUPPER
	RET

// func gemm4x8Q3SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q6_B64VNNI for Q3_B32T1 weights (16-byte blocks, taken two at a time).
TEXT ·gemm4x8Q3SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x07070707, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z17
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	MOVL         $0xf0f0, AX
	KMOVW        AX, K2
	VMOVDQU64    ifgp2<>(SB), Z26
	VMOVDQU64    ifgp3<>(SB), Z27
	VPMOVZXBD    ifghk<>+8(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q3g8done

q3g8row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z22, Z22, Z22
	IFGROWSTART
	TESTQ R13, R13
	JZ    q3g8fin

q3g8blk:
	Q3W(R8, Z15)
	Q3W(R9, Z20)
	Q3W(R10, Z25)
	Q3W(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, Y12, Y13, Y3, Y14)
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	IFGPAIR(512, 576, 640, 704, Z6)
	IFGPAIR(768, 832, 896, 960, Z22)
	ADDQ $32, AX
	ADDQ $1024, R12
	DECQ R13
	JNZ  q3g8blk

q3g8fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q3g8put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5
	VEXTRACTF32X4 $2, Z6, X1
	IFGADD(X6)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z6, Z6
	VEXTRACTF32X4 $2, Z22, X1
	IFGADD(X22)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z22, Z22

q3g8put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGPUT(X6)
	VEXTRACTF32X4 $2, Z6, X1
	IFGPUT(X1)
	IFGPUT(X22)
	VEXTRACTF32X4 $2, Z22, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q3g8row

q3g8done:
	VZEROUPPER
	RET

// func gemm4x8Q2SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q6_B64VNNI for Q2_B32T1 weights (12-byte blocks, taken two at a time).
TEXT ·gemm4x8Q2SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z31
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	VMOVDQU64    ifgp2<>(SB), Z26
	VPMOVZXBD    ifghk<>+0(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q2g8done

q2g8row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z22, Z22, Z22
	IFGROWSTART
	TESTQ R13, R13
	JZ    q2g8fin

q2g8blk:
	Q2W(R8, Z15)
	Q2W(R9, Z20)
	Q2W(R10, Z25)
	Q2W(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, X12, X13, X3, X14)
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	IFGPAIR(512, 576, 640, 704, Z6)
	IFGPAIR(768, 832, 896, 960, Z22)
	ADDQ $24, AX
	ADDQ $1024, R12
	DECQ R13
	JNZ  q2g8blk

q2g8fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q2g8put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5
	VEXTRACTF32X4 $2, Z6, X1
	IFGADD(X6)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z6, Z6
	VEXTRACTF32X4 $2, Z22, X1
	IFGADD(X22)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z22, Z22

q2g8put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGPUT(X6)
	VEXTRACTF32X4 $2, Z6, X1
	IFGPUT(X1)
	IFGPUT(X22)
	VEXTRACTF32X4 $2, Z22, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q2g8row

q2g8done:
	VZEROUPPER
	RET

// func gemm4x4Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q6_B64VNNI for 4 tokens (512 bytes per 64 values).
TEXT ·gemm4x4Q6_B64VNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifgshr64<>(SB), Z30
	VMOVDQU64    ifgq6h<>(SB), Z28
	IFGARGS
	TESTQ R14, R14
	JZ    q6g4done

q6g4row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	IFGROWSTART
	TESTQ R13, R13
	JZ    q6g4fin

q6g4blk:
	Q6W(R8, Z15)
	Q6W(R9, Z20)
	Q6W(R10, Z25)
	Q6W(R11, Z29)
	IFGSWAP
	IFGHDR64
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	ADDQ $52, AX
	ADDQ $512, R12
	DECQ R13
	JNZ  q6g4blk

q6g4fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q6g4put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5

q6g4put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q6g4row

q6g4done:
	VZEROUPPER
	RET

// func gemm4x4Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q5_B64VNNI for 4 tokens (512 bytes per 64 values).
TEXT ·gemm4x4Q5_B64VNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifgshr64<>(SB), Z30
	VMOVDQU64    ifgq5h<>(SB), Z28
	IFGARGS
	TESTQ R14, R14
	JZ    q5g4done

q5g4row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	IFGROWSTART
	TESTQ R13, R13
	JZ    q5g4fin

q5g4blk:
	Q5W(R8, Z15)
	Q5W(R9, Z20)
	Q5W(R10, Z25)
	Q5W(R11, Z29)
	IFGSWAP
	IFGHDR64
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	ADDQ $44, AX
	ADDQ $512, R12
	DECQ R13
	JNZ  q5g4blk

q5g4fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q5g4put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5

q5g4put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q5g4row

q5g4done:
	VZEROUPPER
	RET

// func gemm4x4Q4SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q4SVNNI for 4 tokens (512 bytes per 64 values).
TEXT ·gemm4x4Q4SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64    ifgshr64<>(SB), Z30
	VPMOVZXBD    ifghk<>+16(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q4g4done

q4g4row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	IFGROWSTART
	TESTQ R13, R13
	JZ    q4g4fin

q4g4blk:
	Q4SW(R8, Z15)
	Q4SW(R9, Z20)
	Q4SW(R10, Z25)
	Q4SW(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, Y12, Y13, Y3, Y14)
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	ADDQ $40, AX
	ADDQ $512, R12
	DECQ R13
	JNZ  q4g4blk

q4g4fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q4g4put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5

q4g4put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q4g4row

q4g4done:
	VZEROUPPER
	RET

// func gemm4x4Q3SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q3SVNNI for 4 tokens (512 bytes per 64 values).
TEXT ·gemm4x4Q3SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x07070707, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z17
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	MOVL         $0xf0f0, AX
	KMOVW        AX, K2
	VMOVDQU64    ifgp2<>(SB), Z26
	VMOVDQU64    ifgp3<>(SB), Z27
	VPMOVZXBD    ifghk<>+8(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q3g4done

q3g4row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	IFGROWSTART
	TESTQ R13, R13
	JZ    q3g4fin

q3g4blk:
	Q3W(R8, Z15)
	Q3W(R9, Z20)
	Q3W(R10, Z25)
	Q3W(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, Y12, Y13, Y3, Y14)
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	ADDQ $32, AX
	ADDQ $512, R12
	DECQ R13
	JNZ  q3g4blk

q3g4fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q3g4put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5

q3g4put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q3g4row

q3g4done:
	VZEROUPPER
	RET

// func gemm4x4Q2SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q2SVNNI for 4 tokens (512 bytes per 64 values).
TEXT ·gemm4x4Q2SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z31
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	VMOVDQU64    ifgp2<>(SB), Z26
	VPMOVZXBD    ifghk<>+0(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q2g4done

q2g4row:
	VPXORD Z0, Z0, Z0
	VPXORD Z5, Z5, Z5
	IFGROWSTART
	TESTQ R13, R13
	JZ    q2g4fin

q2g4blk:
	Q2W(R8, Z15)
	Q2W(R9, Z20)
	Q2W(R10, Z25)
	Q2W(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, X12, X13, X3, X14)
	IFGPAIR(0, 64, 128, 192, Z0)
	IFGPAIR(256, 320, 384, 448, Z5)
	ADDQ $24, AX
	ADDQ $512, R12
	DECQ R13
	JNZ  q2g4blk

q2g4fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q2g4put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0
	VEXTRACTF32X4 $2, Z5, X1
	IFGADD(X5)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z5, Z5

q2g4put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGPUT(X5)
	VEXTRACTF32X4 $2, Z5, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q2g4row

q2g4done:
	VZEROUPPER
	RET

// func gemm4x2Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q6_B64VNNI for 2 tokens (256 bytes per 64 values).
TEXT ·gemm4x2Q6_B64VNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifgshr64<>(SB), Z30
	VMOVDQU64    ifgq6h<>(SB), Z28
	IFGARGS
	TESTQ R14, R14
	JZ    q6g2done

q6g2row:
	VPXORD Z0, Z0, Z0
	IFGROWSTART
	TESTQ R13, R13
	JZ    q6g2fin

q6g2blk:
	Q6W(R8, Z15)
	Q6W(R9, Z20)
	Q6W(R10, Z25)
	Q6W(R11, Z29)
	IFGSWAP
	IFGHDR64
	IFGPAIR(0, 64, 128, 192, Z0)
	ADDQ $52, AX
	ADDQ $256, R12
	DECQ R13
	JNZ  q6g2blk

q6g2fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q6g2put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0

q6g2put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q6g2row

q6g2done:
	VZEROUPPER
	RET

// func gemm4x2Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q5_B64VNNI for 2 tokens (256 bytes per 64 values).
TEXT ·gemm4x2Q5_B64VNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifgshr64<>(SB), Z30
	VMOVDQU64    ifgq5h<>(SB), Z28
	IFGARGS
	TESTQ R14, R14
	JZ    q5g2done

q5g2row:
	VPXORD Z0, Z0, Z0
	IFGROWSTART
	TESTQ R13, R13
	JZ    q5g2fin

q5g2blk:
	Q5W(R8, Z15)
	Q5W(R9, Z20)
	Q5W(R10, Z25)
	Q5W(R11, Z29)
	IFGSWAP
	IFGHDR64
	IFGPAIR(0, 64, 128, 192, Z0)
	ADDQ $44, AX
	ADDQ $256, R12
	DECQ R13
	JNZ  q5g2blk

q5g2fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q5g2put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0

q5g2put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q5g2row

q5g2done:
	VZEROUPPER
	RET

// func gemm4x2Q4SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q4SVNNI for 2 tokens (256 bytes per 64 values).
TEXT ·gemm4x2Q4SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64    ifgshr64<>(SB), Z30
	VPMOVZXBD    ifghk<>+16(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q4g2done

q4g2row:
	VPXORD Z0, Z0, Z0
	IFGROWSTART
	TESTQ R13, R13
	JZ    q4g2fin

q4g2blk:
	Q4SW(R8, Z15)
	Q4SW(R9, Z20)
	Q4SW(R10, Z25)
	Q4SW(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, Y12, Y13, Y3, Y14)
	IFGPAIR(0, 64, 128, 192, Z0)
	ADDQ $40, AX
	ADDQ $256, R12
	DECQ R13
	JNZ  q4g2blk

q4g2fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q4g2put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0

q4g2put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q4g2row

q4g2done:
	VZEROUPPER
	RET

// func gemm4x2Q3SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q3SVNNI for 2 tokens (256 bytes per 64 values).
TEXT ·gemm4x2Q3SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x07070707, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z17
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	MOVL         $0xf0f0, AX
	KMOVW        AX, K2
	VMOVDQU64    ifgp2<>(SB), Z26
	VMOVDQU64    ifgp3<>(SB), Z27
	VPMOVZXBD    ifghk<>+8(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q3g2done

q3g2row:
	VPXORD Z0, Z0, Z0
	IFGROWSTART
	TESTQ R13, R13
	JZ    q3g2fin

q3g2blk:
	Q3W(R8, Z15)
	Q3W(R9, Z20)
	Q3W(R10, Z25)
	Q3W(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, Y12, Y13, Y3, Y14)
	IFGPAIR(0, 64, 128, 192, Z0)
	ADDQ $32, AX
	ADDQ $256, R12
	DECQ R13
	JNZ  q3g2blk

q3g2fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q3g2put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0

q3g2put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q3g2row

q3g2done:
	VZEROUPPER
	RET

// func gemm4x2Q2SVNNI(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x8Q2SVNNI for 2 tokens (256 bytes per 64 values).
TEXT ·gemm4x2Q2SVNNI(SB), NOSPLIT, $0-64
	VPMOVZXBD    ifgidx<>+0(SB), Z21
	VPMOVZXBD    ifgidx<>+16(SB), Z24
	MOVL         $0x0f0f, AX
	KMOVW        AX, K3
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z31
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	VMOVDQU64    ifgp2<>(SB), Z26
	VPMOVZXBD    ifghk<>+0(SB), Y18
	VPMOVZXBD    ifghk<>+24(SB), Y19
	IFGARGS
	SHRQ  $1, CX
	TESTQ R14, R14
	JZ    q2g2done

q2g2row:
	VPXORD Z0, Z0, Z0
	IFGROWSTART
	TESTQ R13, R13
	JZ    q2g2fin

q2g2blk:
	Q2W(R8, Z15)
	Q2W(R9, Z20)
	Q2W(R10, Z25)
	Q2W(R11, Z29)
	IFGSWAP
	IFGHDR2(VMOVDQU, X12, X13, X3, X14)
	IFGPAIR(0, 64, 128, 192, Z0)
	ADDQ $24, AX
	ADDQ $256, R12
	DECQ R13
	JNZ  q2g2blk

q2g2fin:
	MOVQ ldy+40(FP), AX
	MOVQ DX, R12
	CMPQ acc+56(FP), $0
	JEQ  q2g2put
	VEXTRACTF32X4 $2, Z0, X1
	IFGADD(X0)
	IFGADD(X1)
	VINSERTF32X4  $2, X1, Z0, Z0

q2g2put:
	MOVQ DX, R12
	IFGPUT(X0)
	VEXTRACTF32X4 $2, Z0, X1
	IFGPUT(X1)
	IFGSTEP
	DECQ R14
	JNZ  q2g2row

q2g2done:
	VZEROUPPER
	RET

// func ifgPrep(x unsafe.Pointer, lda uintptr, np int, xp unsafe.Pointer, rec uintptr)
// Prepares the first np pairs of Q8_0 activation blocks of two tokens (at
// x and x+lda) for the kernels below, 256 bytes per 64 values, rec bytes
// apart, at xp: P1 (the first token's first 32 de-interleaved quants and
// the second's last 32), P2 (the first's last 32 and the second's first
// 32), the two tokens' dy (IFGACT64's Y18), then their fl(Y·dy) (Y20).
TEXT ·ifgPrep(SB), NOSPLIT, $0-40
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifgact<>(SB), Z19
	VMOVDQU64    ifgdeint64<>(SB), Z29
	MOVQ         x+0(FP), R12
	MOVQ         lda+8(FP), R13
	ADDQ         R12, R13
	MOVQ         np+16(FP), CX
	MOVQ         xp+24(FP), DI
	MOVQ         rec+32(FP), DX
	TESTQ        CX, CX
	JZ           ifgprepdone

ifgprepblk:
	IFGACT64(R12)
	VMOVDQU64      Y16, (DI)
	VEXTRACTI64X4  $1, Z16, 64(DI)
	VMOVUPS        Y18, 128(DI)
	VMOVUPS        Y20, 192(DI)
	IFGACT64(R13)
	VMOVDQU64      Y16, 96(DI)
	VEXTRACTI64X4  $1, Z16, 32(DI)
	VMOVUPS        Y18, 160(DI)
	VMOVUPS        Y20, 224(DI)
	ADDQ           $68, R12
	ADDQ           $68, R13
	ADDQ           DX, DI
	DECQ           CX
	JNZ            ifgprepblk

ifgprepdone:
	VZEROUPPER
	RET
