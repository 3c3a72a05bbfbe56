// Hand-written rather than generated with avo: five short kernels that
// share their loop and sums through the same cpp macros as
// kquantif_amd64.s, which they follow; avo would only restate them.

//go:build amd64 && !noasm

#include "textflag.h"

// Inferflow's Q6_B64T1, Q5_B64T1, Q4_B32T1, Q3_B32T1 and Q2_B32T1 weights
// times Q8_0 activations, AVX-512 with VNNI and VBMI, four rows at a time
// sharing the activation loads. They compute exactly what kernels/quant's
// DotQ6_B64T1Q8_0 etc. compute: per 32-value activation block with scale
// dy, the exact integer sums S = Σq·qy and Y = Σqy, then
// sum += (scale·dy)·S + base·(Y·dy), each operation rounded to float32,
// one chain per row over the blocks (the four rows ride in the four lanes
// of X0).
//
// The 64-value formats keep their 4-bit parts in stored order (low
// nibbles, the even values, then high nibbles) against activations
// de-interleaved the same way, and take the top bits by multishifts of
// qh; a weight block meets two activation blocks A and B, whose products
// VPDPBUSD leaves in dwords 0-3 and 8-11 (A) and 4-7 and 12-15 (B). The
// 32-value formats take two blocks at a time the same way (Q3_B32T1 and
// Q2_B32T1 pick each value's bits by multishifts of broadcast qwords, in
// the de-interleaved order) and a last odd block alone in a YMM register.
//
// ifmPrep prepares the activations once per call for all the rows: per
// 64 values the de-interleaved quants, then dy and fl(Y·dy) of blocks A
// and B spread over four lanes each, so that a block's two products for
// the four rows are formed in one YMM register (A's in the low lanes) and
// added to the chains A first.

DATA ifmdeint<>+0(SB)/8, $0x0e0c0a0806040200
DATA ifmdeint<>+8(SB)/8, $0x1e1c1a1816141210
DATA ifmdeint<>+16(SB)/8, $0x0f0d0b0907050301
DATA ifmdeint<>+24(SB)/8, $0x1f1d1b1917151311
GLOBL ifmdeint<>(SB), RODATA|NOPTR, $32
DATA ifmshr<>+0(SB)/8, $0x0000000000000000
DATA ifmshr<>+8(SB)/8, $0x0000000000000000
DATA ifmshr<>+16(SB)/8, $0x0004000400040004
DATA ifmshr<>+24(SB)/8, $0x0004000400040004
GLOBL ifmshr<>(SB), RODATA|NOPTR, $32
DATA ifmdeint64<>+0(SB)/8, $0x0e0c0a0806040200
DATA ifmdeint64<>+8(SB)/8, $0x1e1c1a1816141210
DATA ifmdeint64<>+16(SB)/8, $0x2e2c2a2826242220
DATA ifmdeint64<>+24(SB)/8, $0x3e3c3a3836343230
DATA ifmdeint64<>+32(SB)/8, $0x0f0d0b0907050301
DATA ifmdeint64<>+40(SB)/8, $0x1f1d1b1917151311
DATA ifmdeint64<>+48(SB)/8, $0x2f2d2b2927252321
DATA ifmdeint64<>+56(SB)/8, $0x3f3d3b3937353331
GLOBL ifmdeint64<>(SB), RODATA|NOPTR, $64
DATA ifmshr64<>+0(SB)/8, $0x0000000000000000
DATA ifmshr64<>+8(SB)/8, $0x0000000000000000
DATA ifmshr64<>+16(SB)/8, $0x0000000000000000
DATA ifmshr64<>+24(SB)/8, $0x0000000000000000
DATA ifmshr64<>+32(SB)/8, $0x0004000400040004
DATA ifmshr64<>+40(SB)/8, $0x0004000400040004
DATA ifmshr64<>+48(SB)/8, $0x0004000400040004
DATA ifmshr64<>+56(SB)/8, $0x0004000400040004
GLOBL ifmshr64<>(SB), RODATA|NOPTR, $64
DATA ifmq6h<>+0(SB)/8, $0x1814100c0804003c
DATA ifmq6h<>+8(SB)/8, $0x3834302c2824201c
DATA ifmq6h<>+16(SB)/8, $0x1814100c0804003c
DATA ifmq6h<>+24(SB)/8, $0x3834302c2824201c
DATA ifmq6h<>+32(SB)/8, $0x1a16120e0a06023e
DATA ifmq6h<>+40(SB)/8, $0x3a36322e2a26221e
DATA ifmq6h<>+48(SB)/8, $0x1a16120e0a06023e
DATA ifmq6h<>+56(SB)/8, $0x3a36322e2a26221e
GLOBL ifmq6h<>(SB), RODATA|NOPTR, $64
DATA ifmq5h<>+0(SB)/8, $0x0a08060402003e3c
DATA ifmq5h<>+8(SB)/8, $0x1a18161412100e0c
DATA ifmq5h<>+16(SB)/8, $0x2a28262422201e1c
DATA ifmq5h<>+24(SB)/8, $0x3a38363432302e2c
DATA ifmq5h<>+32(SB)/8, $0x0b09070503013f3d
DATA ifmq5h<>+40(SB)/8, $0x1b19171513110f0d
DATA ifmq5h<>+48(SB)/8, $0x2b29272523211f1d
DATA ifmq5h<>+56(SB)/8, $0x3b39373533312f2d
GLOBL ifmq5h<>(SB), RODATA|NOPTR, $64
DATA ifmc2<>+0(SB)/8, $0x0e0c0a0806040200
DATA ifmc2<>+8(SB)/8, $0x1e1c1a1816141210
DATA ifmc2<>+16(SB)/8, $0x2e2c2a2826242220
DATA ifmc2<>+24(SB)/8, $0x3e3c3a3836343230
GLOBL ifmc2<>(SB), RODATA|NOPTR, $32
DATA ifmc3<>+0(SB)/8, $0x0504030201003f3e
DATA ifmc3<>+8(SB)/8, $0x0d0c0b0a09080706
DATA ifmc3<>+16(SB)/8, $0x1514131211100f0e
DATA ifmc3<>+24(SB)/8, $0x1d1c1b1a19181716
GLOBL ifmc3<>(SB), RODATA|NOPTR, $32
DATA ifmp2<>+0(SB)/8, $0x1c1814100c080400
DATA ifmp2<>+8(SB)/8, $0x3c3834302c282420
DATA ifmp2<>+16(SB)/8, $0x1c1814100c080400
DATA ifmp2<>+24(SB)/8, $0x3c3834302c282420
DATA ifmp2<>+32(SB)/8, $0x1e1a16120e0a0602
DATA ifmp2<>+40(SB)/8, $0x3e3a36322e2a2622
DATA ifmp2<>+48(SB)/8, $0x1e1a16120e0a0602
DATA ifmp2<>+56(SB)/8, $0x3e3a36322e2a2622
GLOBL ifmp2<>(SB), RODATA|NOPTR, $64
DATA ifmp3<>+0(SB)/8, $0x0c0a08060402003e
DATA ifmp3<>+8(SB)/8, $0x1c1a18161412100e
DATA ifmp3<>+16(SB)/8, $0x0c0a08060402003e
DATA ifmp3<>+24(SB)/8, $0x1c1a18161412100e
DATA ifmp3<>+32(SB)/8, $0x0d0b09070503013f
DATA ifmp3<>+40(SB)/8, $0x1d1b19171513110f
DATA ifmp3<>+48(SB)/8, $0x0d0b09070503013f
DATA ifmp3<>+56(SB)/8, $0x1d1b19171513110f
GLOBL ifmp3<>(SB), RODATA|NOPTR, $64
DATA ifmidx<>+0(SB)/8, $0x0101010100000000
DATA ifmidx<>+8(SB)/8, $0x0000000000000000
DATA ifmidx<>+16(SB)/8, $0x0e0c0a0806040200
DATA ifmidx<>+24(SB)/8, $0x0e0c0a0806040200
DATA ifmidx<>+32(SB)/8, $0x0f0d0b0907050301
DATA ifmidx<>+40(SB)/8, $0x0f0d0b0907050301
GLOBL ifmidx<>(SB), RODATA|NOPTR, $48
DATA ifmhk<>+0(SB)/8, $0x000000000b030800
DATA ifmhk<>+8(SB)/8, $0x000000000c040800
DATA ifmhk<>+16(SB)/8, $0x000000000d050800
DATA ifmhk<>+24(SB)/8, $0x0b0a030209080100
GLOBL ifmhk<>(SB), RODATA|NOPTR, $32

// IFMACT64 loads the two Q8_0 activation blocks at R12 (68 bytes): Z16
// gets their 64 quants de-interleaved (even values, then odd), Y18 dy of
// A in its low four lanes and of B in its high four, Y20 fl(Y·dy) the
// same way. Z15 must hold 0x01 bytes, Z29 the de-interleave table, Y19
// the dword indices 0,0,0,0,1,1,1,1.
#define IFMACT64 \
	VMOVDQU64     2(R12), Y16; \
	VINSERTI64X4  $1, 36(R12), Z16, Z16; \
	VPXORD        Z5, Z5, Z5; \
	VPDPBUSD      Z16, Z15, Z5; \
	VEXTRACTI64X4 $1, Z5, Y6; \
	VPHADDD       Y6, Y5, Y5; \
	VPHADDD       Y5, Y5, Y5; \
	VEXTRACTI128  $1, Y5, X6; \
	VPADDD        X6, X5, X5; \
	VCVTDQ2PS     X5, X5; \
	VPBROADCASTW  (R12), X7; \
	VPINSRW       $1, 34(R12), X7, X7; \
	VCVTPH2PS     X7, X7; \
	VMULPS        X7, X5, X5; \
	VPERMPS       Y7, Y19, Y18; \
	VPERMPS       Y5, Y19, Y20; \
	VPERMB        Z16, Z29, Z16

// IFMACT32 loads the Q8_0 activation block at R12 (34 bytes): Y16 gets
// its 32 quants, X20 dy broadcast, X25 fl(Y·dy) broadcast. Z15 must hold
// 0x01 bytes.
#define IFMACT32 \
	VMOVDQU64    2(R12), Y16; \
	VPXORD       Y5, Y5, Y5; \
	VPDPBUSD     Y16, Y15, Y5; \
	VEXTRACTI128 $1, Y5, X6; \
	VPADDD       X6, X5, X5; \
	VPHADDD      X5, X5, X5; \
	VPHADDD      X5, X5, X5; \
	VCVTDQ2PS    X5, X5; \
	VPBROADCASTW (R12), X20; \
	VCVTPH2PS    X20, X20; \
	VMULPS       X20, X5, X25

// IFMFOLD folds the 16 dword sums of a row in z (ymm name y, t a ymm
// temp) to 8: dwords 0-3 block A, 4-7 block B.
#define IFMFOLD(z, y, t) \
	VEXTRACTI64X4 $1, z, t; \
	VPADDD        t, y, y

// IFMHDR(off) loads the headers (base, scale f16) of the four rows'
// blocks at offset AX+off of R8..R11 and leaves their bases in X14,
// scales in X3.
#define IFMHDR(off) \
	VMOVD        off(R8)(AX*1), X12; \
	VPINSRD      $1, off(R9)(AX*1), X12, X12; \
	VPINSRD      $2, off(R10)(AX*1), X12, X12; \
	VPINSRD      $3, off(R11)(AX*1), X12, X12; \
	VCVTPH2PS    X12, Y12; \
	VEXTRACTF128 $1, Y12, X13; \
	VSHUFPS      $0x88, X13, X12, X14; \
	VSHUFPS      $0xdd, X13, X12, X3

// IFMHDR2 converts the headers of blocks A (in X12) and B (in X13) of
// the four rows: Y14 gets the bases (A's in the low four lanes, B's in
// the high four), Y3 the scales. Z21 and Z24 must hold the dword indices
// 0,2,..,14 and 1,3,..,15.
#define IFMHDR2 \
	VINSERTI128 $1, X13, Y12, Y12; \
	VCVTPH2PS   Y12, Z12; \
	VPERMPS     Z12, Z21, Z14; \
	VPERMPS     Z12, Z24, Z3

// IFMLDH(off, x) loads the headers of the four rows' blocks at offset
// AX+off of R8..R11 into x.
#define IFMLDH(off, x) \
	VMOVD   off(R8)(AX*1), x; \
	VPINSRD $1, off(R9)(AX*1), x, x; \
	VPINSRD $2, off(R10)(AX*1), x, x; \
	VPINSRD $3, off(R11)(AX*1), x, x

// IFMADD2 adds the four rows' A and B blocks to X0, A first: their sums
// (as float32) in Y8, A's in the low four lanes and B's in the high four,
// the activations' dy and fl(Y·dy) at 64(R12) and 96(R12) (see ifmPrep).
#define IFMADD2 \
	IFMHDR2; \
	IFMADD2X

// IFMADD2X is IFMADD2 with the bases and scales already in Y14 and Y3.
#define IFMADD2X \
	VMULPS       64(R12), Y3, Y9; \
	VMULPS       Y8, Y9, Y9; \
	VMULPS       96(R12), Y14, Y10; \
	VADDPS       Y10, Y9, Y9; \
	VADDPS       X9, X0, X0; \
	VEXTRACTF128 $1, Y9, X9; \
	VADDPS       X9, X0, X0

// IFMSUM64 adds the four rows' 64-value blocks to X0: the folded sums in
// Y8..Y11 (block A in each row's dwords 0-3, B in 4-7).
#define IFMSUM64 \
	VPHADDD   Y9, Y8, Y8; \
	VPHADDD   Y11, Y10, Y10; \
	VPHADDD   Y10, Y8, Y8; \
	VCVTDQ2PS Y8, Y8; \
	IFMLDH(0, X12); \
	VMOVDQA   X12, X13; \
	IFMADD2

// IFMSUM2(mov, t12, t13, t3, t14) is IFMSUM64 for a pair of 32-value
// blocks: each row's headers of blocks A and B come from one load (mov
// into the register named, X or Y, at its dwords 0 and k) and are
// gathered by VPERMT2D, Y18 holding the indices 0, 8, k, 8+k and Y19
// 0, 1, 8, 9, 2, 3, 10, 11.
#define IFMSUM2(mov, t12, t13, t3, t14) \
	VPHADDD   Y9, Y8, Y8; \
	VPHADDD   Y11, Y10, Y10; \
	VPHADDD   Y10, Y8, Y8; \
	VCVTDQ2PS Y8, Y8; \
	mov       (R8)(AX*1), t12; \
	mov       (R9)(AX*1), t13; \
	mov       (R10)(AX*1), t3; \
	mov       (R11)(AX*1), t14; \
	VPERMT2D  Y13, Y18, Y12; \
	VPERMT2D  Y14, Y18, Y3; \
	VPERMT2D  Y3, Y19, Y12; \
	VCVTPH2PS Y12, Z12; \
	VPERMPS   Z12, Z21, Z14; \
	VPERMPS   Z12, Z24, Z3; \
	IFMADD2X

// IFMSUM32 adds the four rows' 32-value blocks to X0: their 8 dword sums
// in Y8..Y11.
#define IFMSUM32 \
	VPHADDD      Y9, Y8, Y8; \
	VPHADDD      Y11, Y10, Y10; \
	VPHADDD      Y10, Y8, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VPADDD       X9, X8, X8; \
	VCVTDQ2PS    X8, X8; \
	IFMHDR(0); \
	VMULPS       X20, X3, X9; \
	VMULPS       X8, X9, X9; \
	VMULPS       X25, X14, X10; \
	VADDPS       X10, X9, X9; \
	VADDPS       X9, X0, X0

// IFMARGS loads the arguments and the four stream pointers.
#define IFMARGS \
	MOVQ  w+0(FP), R8; \
	MOVQ  ldw+8(FP), BX; \
	MOVQ  xp+24(FP), DI; \
	MOVQ  nb+32(FP), CX; \
	MOVQ  y+40(FP), DX; \
	MOVQ  q+48(FP), R14; \
	MOVQ  R14, AX; \
	IMULQ BX, AX; \
	LEAQ  (R8)(AX*1), R9; \
	LEAQ  (R9)(AX*1), R10; \
	LEAQ  (R10)(AX*1), R11; \
	MOVQ  R14, SI; \
	SHLQ  $2, SI

// IFMROWSTART clears a row's sums and points AX, R12 (the prepared
// activations), R13 (the count) at its first block.
#define IFMROWSTART \
	VPXORD X0, X0, X0; \
	XORQ   AX, AX; \
	MOVQ   DI, R12; \
	MOVQ   CX, R13

// IFMLOAD4 loads the four outputs into X4 (R13 = DX + 2·SI).
#define IFMLOAD4 \
	VMOVSS    (DX), X4; \
	VINSERTPS $0x10, (DX)(SI*1), X4, X4; \
	VINSERTPS $0x20, (R13), X4, X4; \
	VINSERTPS $0x30, (R13)(SI*1), X4, X4

// IFMSTORE4 stores X0's four lanes and steps to the next rows.
#define IFMSTORE4 \
	VMOVSS     X0, (DX); \
	VEXTRACTPS $1, X0, (DX)(SI*1); \
	VEXTRACTPS $2, X0, (R13); \
	VEXTRACTPS $3, X0, (R13)(SI*1); \
	ADDQ       $4, DX; \
	ADDQ       BX, R8; \
	ADDQ       BX, R9; \
	ADDQ       BX, R10; \
	ADDQ       BX, R11

// Q6ROW puts the 16 dword sums of the Q6_B64T1 block at offset AX of the
// row at p times the activations into z: the low nibbles as Q4_B64T1's
// (Z30 the word shifts, Z31 0x0f bytes), bits 4-5 by a multishift of qh
// (Z28 the controls) selected by Z17 (0x30 bytes).
#define Q6ROW(p, z) \
	VBROADCASTI64X4 20(p)(AX*1), Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VBROADCASTI32X4 4(p)(AX*1), Z1; \
	VPERMQ          $0x50, Z1, Z1; \
	VPMULTISHIFTQB  Z1, Z28, Z1; \
	VPTERNLOGD      $0xe2, Z7, Z17, Z1; \
	VPXORD          z, z, z; \
	VPDPBUSD        Z16, Z1, z

// Q5ROW is Q6ROW for Q5_B64T1: bit 4 from the qh qword (Z28 the controls,
// Z17 0x10 bytes).
#define Q5ROW(p, z) \
	VBROADCASTI64X4 12(p)(AX*1), Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VPBROADCASTQ    4(p)(AX*1), Z1; \
	VPMULTISHIFTQB  Z1, Z28, Z1; \
	VPTERNLOGD      $0xe2, Z7, Z17, Z1; \
	VPXORD          z, z, z; \
	VPDPBUSD        Z16, Z1, z

// Q4SROW puts the 8 dword sums of the Q4_B32T1 block at offset AX of the
// row at p times the de-interleaved activations into y (Y23 the word
// shifts, Y31 0x0f bytes).
#define Q4SROW(p, y) \
	VBROADCASTI32X4 4(p)(AX*1), Y7; \
	VPSRLVW         Y23, Y7, Y7; \
	VPANDD          Y31, Y7, Y7; \
	VPXORD          y, y, y; \
	VPDPBUSD        Y16, Y7, y

// Q3ROW puts the 8 dword sums of the Q3_B32T1 block at offset AX of the
// row at p times the activations into y: bits 0-1 by a multishift of qs
// (Y22 the controls), bit 2 by one of qh (Y23), joined by the 0x03 bytes
// of Y17 and cut by the 0x07 bytes of Y31.
#define Q3ROW(p, y) \
	VPBROADCASTQ   8(p)(AX*1), Y1; \
	VPMULTISHIFTQB Y1, Y22, Y1; \
	VPBROADCASTD   4(p)(AX*1), Y2; \
	VPMULTISHIFTQB Y2, Y23, Y2; \
	VPTERNLOGD     $0xe2, Y2, Y17, Y1; \
	VPANDD         Y31, Y1, Y1; \
	VPXORD         y, y, y; \
	VPDPBUSD       Y16, Y1, y

// Q2ROW puts the 8 dword sums of the Q2_B32T1 block at offset AX of the
// row at p times the activations into y (Y22 the controls, Y31 0x03
// bytes).
#define Q2ROW(p, y) \
	VPBROADCASTQ   4(p)(AX*1), Y1; \
	VPMULTISHIFTQB Y1, Y22, Y1; \
	VPANDD         Y31, Y1, Y1; \
	VPXORD         y, y, y; \
	VPDPBUSD       Y16, Y1, y

// Q4SPAIR puts the 16 dword sums of the two Q4_B32T1 blocks at offset AX
// of the row at p times the de-interleaved activations of two blocks into
// z, block A's in dwords 0-3 and 8-11, B's in 4-7 and 12-15 (Z30 the word
// shifts, Z31 0x0f bytes).
#define Q4SPAIR(p, z) \
	VBROADCASTI32X4 4(p)(AX*1), Z7; \
	VINSERTI32X4    $1, 24(p)(AX*1), Z7, Z7; \
	VINSERTI32X4    $3, 24(p)(AX*1), Z7, Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VPXORD          z, z, z; \
	VPDPBUSD        Z16, Z7, z

// Q3PAIR is Q4SPAIR for two Q3_B32T1 blocks: K1 (qwords 2, 3, 6, 7) and
// K2 (their dwords) merge block B's qs and qh into the qwords that meet
// its activations, Z26 and Z27 the multishift controls.
#define Q3PAIR(p, z) \
	VPBROADCASTQ   8(p)(AX*1), Z1; \
	VPBROADCASTQ   24(p)(AX*1), K1, Z1; \
	VPMULTISHIFTQB Z1, Z26, Z1; \
	VPBROADCASTD   4(p)(AX*1), Z2; \
	VPBROADCASTD   20(p)(AX*1), K2, Z2; \
	VPMULTISHIFTQB Z2, Z27, Z2; \
	VPTERNLOGD     $0xe2, Z2, Z17, Z1; \
	VPANDD         Z31, Z1, Z1; \
	VPXORD         z, z, z; \
	VPDPBUSD       Z16, Z1, z

// Q2PAIR is Q3PAIR for two Q2_B32T1 blocks.
#define Q2PAIR(p, z) \
	VPBROADCASTQ   4(p)(AX*1), Z1; \
	VPBROADCASTQ   16(p)(AX*1), K1, Z1; \
	VPMULTISHIFTQB Z1, Z26, Z1; \
	VPANDD         Z31, Z1, Z1; \
	VPXORD         z, z, z; \
	VPDPBUSD       Z16, Z1, z

// func ifmPrep(x unsafe.Pointer, n int, xp unsafe.Pointer)
// Prepares n pairs of Q8_0 activation blocks at x for the kernels above,
// 128 bytes a pair at xp: the 64 quants de-interleaved (IFMACT64's Z16),
// then dy (Y18) and fl(Y·dy) (Y20), A's in four lanes and B's in four.
TEXT ·ifmPrep(SB), NOSPLIT, $0-24
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifmidx<>(SB), Z19
	VMOVDQU64    ifmdeint64<>(SB), Z29
	MOVQ         x+0(FP), R12
	MOVQ         n+8(FP), CX
	MOVQ         xp+16(FP), DI
	TESTQ        CX, CX
	JZ           prepdone

prepblk:
	IFMACT64
	VMOVDQU64 Z16, (DI)
	VMOVUPS   Y18, 64(DI)
	VMOVUPS   Y20, 96(DI)
	ADDQ      $68, R12
	ADDQ      $128, DI
	DECQ      CX
	JNZ       prepblk

prepdone:
	VZEROUPPER
	RET

// func gemv4Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4SVNNI for Q6_B64T1 weights (52-byte 64-value blocks).
TEXT ·gemv4Q6_B64VNNI(SB), NOSPLIT, $0-64
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifmidx<>+16(SB), Z21
	VPMOVZXBD    ifmidx<>+32(SB), Z24
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifmshr64<>(SB), Z30
	VMOVDQU64    ifmq6h<>(SB), Z28
	IFMARGS
	TESTQ R14, R14
	JZ    q6done

q6row:
	IFMROWSTART
	TESTQ R13, R13
	JZ    q6fin

q6blk:
	VMOVDQU64 (R12), Z16
	Q6ROW(R8, Z8)
	Q6ROW(R9, Z9)
	Q6ROW(R10, Z10)
	Q6ROW(R11, Z11)
	IFMFOLD(Z8, Y8, Y4)
	IFMFOLD(Z9, Y9, Y4)
	IFMFOLD(Z10, Y10, Y4)
	IFMFOLD(Z11, Y11, Y4)
	IFMSUM64
	ADDQ $52, AX
	ADDQ $128, R12
	DECQ R13
	JNZ  q6blk

q6fin:
	LEAQ (DX)(SI*2), R13
	CMPQ acc+56(FP), $0
	JEQ  q6store
	IFMLOAD4
	VADDPS X4, X0, X0

q6store:
	IFMSTORE4
	DECQ R14
	JNZ  q6row

q6done:
	VZEROUPPER
	RET

// func gemv4Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4SVNNI for Q5_B64T1 weights (44-byte 64-value blocks).
TEXT ·gemv4Q5_B64VNNI(SB), NOSPLIT, $0-64
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifmidx<>+16(SB), Z21
	VPMOVZXBD    ifmidx<>+32(SB), Z24
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z17
	VMOVDQU64    ifmshr64<>(SB), Z30
	VMOVDQU64    ifmq5h<>(SB), Z28
	IFMARGS
	TESTQ R14, R14
	JZ    q5done

q5row:
	IFMROWSTART
	TESTQ R13, R13
	JZ    q5fin

q5blk:
	VMOVDQU64 (R12), Z16
	Q5ROW(R8, Z8)
	Q5ROW(R9, Z9)
	Q5ROW(R10, Z10)
	Q5ROW(R11, Z11)
	IFMFOLD(Z8, Y8, Y4)
	IFMFOLD(Z9, Y9, Y4)
	IFMFOLD(Z10, Y10, Y4)
	IFMFOLD(Z11, Y11, Y4)
	IFMSUM64
	ADDQ $44, AX
	ADDQ $128, R12
	DECQ R13
	JNZ  q5blk

q5fin:
	LEAQ (DX)(SI*2), R13
	CMPQ acc+56(FP), $0
	JEQ  q5store
	IFMLOAD4
	VADDPS X4, X0, X0

q5store:
	IFMSTORE4
	DECQ R14
	JNZ  q5row

q5done:
	VZEROUPPER
	RET

// func gemv4Q4SVNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_B32T1
// blocks, ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not
// 0; x is a row of Q8_0 blocks, given as its pairs of blocks prepared by
// ifmPrep (xp) and, for an odd nb, its last block (xt). Blocks go two at
// a time, as one 64-value block would, and a last odd one alone.
TEXT ·gemv4Q4SVNNI(SB), NOSPLIT, $0-64
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifmidx<>+16(SB), Z21
	VPMOVZXBD    ifmidx<>+32(SB), Z24
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64    ifmshr64<>(SB), Z30
	VMOVDQU64    ifmshr<>(SB), Y23
	VMOVDQU64    ifmdeint<>(SB), Y22
	VPMOVZXBD    ifmhk<>+16(SB), Y18
	VPMOVZXBD    ifmhk<>+24(SB), Y19
	IFMARGS
	TESTQ R14, R14
	JZ    q4sdone

q4srow:
	IFMROWSTART
	SHRQ  $1, R13
	JZ    q4stail

q4sblk:
	VMOVDQU64 (R12), Z16
	Q4SPAIR(R8, Z8)
	Q4SPAIR(R9, Z9)
	Q4SPAIR(R10, Z10)
	Q4SPAIR(R11, Z11)
	IFMFOLD(Z8, Y8, Y4)
	IFMFOLD(Z9, Y9, Y4)
	IFMFOLD(Z10, Y10, Y4)
	IFMFOLD(Z11, Y11, Y4)
	IFMSUM2(VMOVDQU, Y12, Y13, Y3, Y14)
	ADDQ $40, AX
	ADDQ $128, R12
	DECQ R13
	JNZ  q4sblk

q4stail:
	TESTQ $1, CX
	JZ    q4sfin
	MOVQ  xt+16(FP), R12
	IFMACT32
	VPERMB Y16, Y22, Y16
	Q4SROW(R8, Y8)
	Q4SROW(R9, Y9)
	Q4SROW(R10, Y10)
	Q4SROW(R11, Y11)
	IFMSUM32

q4sfin:
	LEAQ (DX)(SI*2), R13
	CMPQ acc+56(FP), $0
	JEQ  q4sstore
	IFMLOAD4
	VADDPS X4, X0, X0

q4sstore:
	IFMSTORE4
	DECQ R14
	JNZ  q4srow

q4sdone:
	VZEROUPPER
	RET

// func gemv4Q3SVNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4SVNNI for Q3_B32T1 weights (16-byte blocks).
TEXT ·gemv4Q3SVNNI(SB), NOSPLIT, $0-64
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifmidx<>+16(SB), Z21
	VPMOVZXBD    ifmidx<>+32(SB), Z24
	MOVL         $0x07070707, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z17
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	MOVL         $0xf0f0, AX
	KMOVW        AX, K2
	VMOVDQU64    ifmp2<>(SB), Z26
	VMOVDQU64    ifmp3<>(SB), Z27
	VMOVDQU64    ifmc2<>(SB), Y22
	VMOVDQU64    ifmc3<>(SB), Y23
	VPMOVZXBD    ifmhk<>+8(SB), Y18
	VPMOVZXBD    ifmhk<>+24(SB), Y19
	IFMARGS
	TESTQ R14, R14
	JZ    q3sdone

q3srow:
	IFMROWSTART
	SHRQ  $1, R13
	JZ    q3stail

q3sblk:
	VMOVDQU64 (R12), Z16
	Q3PAIR(R8, Z8)
	Q3PAIR(R9, Z9)
	Q3PAIR(R10, Z10)
	Q3PAIR(R11, Z11)
	IFMFOLD(Z8, Y8, Y4)
	IFMFOLD(Z9, Y9, Y4)
	IFMFOLD(Z10, Y10, Y4)
	IFMFOLD(Z11, Y11, Y4)
	IFMSUM2(VMOVDQU, Y12, Y13, Y3, Y14)
	ADDQ $32, AX
	ADDQ $128, R12
	DECQ R13
	JNZ  q3sblk

q3stail:
	TESTQ $1, CX
	JZ    q3sfin
	MOVQ  xt+16(FP), R12
	IFMACT32
	Q3ROW(R8, Y8)
	Q3ROW(R9, Y9)
	Q3ROW(R10, Y10)
	Q3ROW(R11, Y11)
	IFMSUM32

q3sfin:
	LEAQ (DX)(SI*2), R13
	CMPQ acc+56(FP), $0
	JEQ  q3sstore
	IFMLOAD4
	VADDPS X4, X0, X0

q3sstore:
	IFMSTORE4
	DECQ R14
	JNZ  q3srow

q3sdone:
	VZEROUPPER
	RET

// func gemv4Q2SVNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4SVNNI for Q2_B32T1 weights (12-byte blocks).
TEXT ·gemv4Q2SVNNI(SB), NOSPLIT, $0-64
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VPMOVZXBD    ifmidx<>+16(SB), Z21
	VPMOVZXBD    ifmidx<>+32(SB), Z24
	MOVL         $0x03030303, AX
	VPBROADCASTD AX, Z31
	MOVL         $0xcc, AX
	KMOVB        AX, K1
	VMOVDQU64    ifmp2<>(SB), Z26
	VMOVDQU64    ifmc2<>(SB), Y22
	VPMOVZXBD    ifmhk<>+0(SB), Y18
	VPMOVZXBD    ifmhk<>+24(SB), Y19
	IFMARGS
	TESTQ R14, R14
	JZ    q2sdone

q2srow:
	IFMROWSTART
	SHRQ  $1, R13
	JZ    q2stail

q2sblk:
	VMOVDQU64 (R12), Z16
	Q2PAIR(R8, Z8)
	Q2PAIR(R9, Z9)
	Q2PAIR(R10, Z10)
	Q2PAIR(R11, Z11)
	IFMFOLD(Z8, Y8, Y4)
	IFMFOLD(Z9, Y9, Y4)
	IFMFOLD(Z10, Y10, Y4)
	IFMFOLD(Z11, Y11, Y4)
	IFMSUM2(VMOVDQU, X12, X13, X3, X14)
	ADDQ $24, AX
	ADDQ $128, R12
	DECQ R13
	JNZ  q2sblk

q2stail:
	TESTQ $1, CX
	JZ    q2sfin
	MOVQ  xt+16(FP), R12
	IFMACT32
	Q2ROW(R8, Y8)
	Q2ROW(R9, Y9)
	Q2ROW(R10, Y10)
	Q2ROW(R11, Y11)
	IFMSUM32

q2sfin:
	LEAQ (DX)(SI*2), R13
	CMPQ acc+56(FP), $0
	JEQ  q2sstore
	IFMLOAD4
	VADDPS X4, X0, X0

q2sstore:
	IFMSTORE4
	DECQ R14
	JNZ  q2srow

q2sdone:
	VZEROUPPER
	RET

