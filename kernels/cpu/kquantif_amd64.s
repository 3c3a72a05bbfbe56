//go:build amd64 && !noasm

// Hand-written with cpp macros (IFACT, Q3HROW, the strip steps): each kernel
// is one loop over its blocks with a handful of table constants; the
// repeated parts are already macros, which avo would only restate.

#include "textflag.h"

// Inferflow's Q4_B64T1 and Q3H_B64T1 weights times Q8_0 activations,
// AVX-512 with VNNI and VBMI, four rows at a time. They compute exactly
// what kernels/quant's DotQ4_B64T1Q8_0 and DotQ3H_B64T1Q8_0 compute: per
// 32-value activation block with scale dy, the exact integer sums
// S = Σq·qy and Y = Σqy, then sum += (scale·dy)·S + base·(Y·dy), each
// operation rounded to float32, one chain per row over the blocks (the
// four rows ride in the four lanes of X0).
//
// A 64-value weight block meets two activation blocks A and B. The
// activations are loaded once per block for the four rows, their even
// values in bytes 0..31 and odd ones in 32..63, so that the weights'
// values can stay in their stored order: low nibbles (even values) then
// high nibbles (odd values). VPDPBUSD then leaves block A's products in
// dwords 0-3 and 8-11, block B's in 4-7 and 12-15.

DATA ifdeint<>+0(SB)/8, $0x0e0c0a0806040200
DATA ifdeint<>+8(SB)/8, $0x1e1c1a1816141210
DATA ifdeint<>+16(SB)/8, $0x2e2c2a2826242220
DATA ifdeint<>+24(SB)/8, $0x3e3c3a3836343230
DATA ifdeint<>+32(SB)/8, $0x0f0d0b0907050301
DATA ifdeint<>+40(SB)/8, $0x1f1d1b1917151311
DATA ifdeint<>+48(SB)/8, $0x2f2d2b2927252321
DATA ifdeint<>+56(SB)/8, $0x3f3d3b3937353331
GLOBL ifdeint<>(SB), RODATA|NOPTR, $64
DATA ifshr<>+0(SB)/8, $0x0000000000000000
DATA ifshr<>+8(SB)/8, $0x0000000000000000
DATA ifshr<>+16(SB)/8, $0x0000000000000000
DATA ifshr<>+24(SB)/8, $0x0000000000000000
DATA ifshr<>+32(SB)/8, $0x0004000400040004
DATA ifshr<>+40(SB)/8, $0x0004000400040004
DATA ifshr<>+48(SB)/8, $0x0004000400040004
DATA ifshr<>+56(SB)/8, $0x0004000400040004
GLOBL ifshr<>(SB), RODATA|NOPTR, $64
DATA q3hmod0<>+0(SB)/8, $0x0706050403020100
DATA q3hmod0<>+8(SB)/8, $0x04030201000a0908
DATA q3hmod0<>+16(SB)/8, $0x01000a0908070605
DATA q3hmod0<>+24(SB)/8, $0x0908070605040302
DATA q3hmod0<>+32(SB)/8, $0x060504030201000a
DATA q3hmod0<>+40(SB)/8, $0x030201000a090807
DATA q3hmod0<>+48(SB)/8, $0x000a090807060504
DATA q3hmod0<>+56(SB)/8, $0x0807060504030201
GLOBL q3hmod0<>(SB), RODATA|NOPTR, $64
DATA q3hmod1<>+0(SB)/8, $0x0504030201000a09
DATA q3hmod1<>+8(SB)/8, $0x0201000a09080706
DATA q3hmod1<>+16(SB)/8, $0x0a09080706050403
DATA q3hmod1<>+24(SB)/8, $0x0706050403020100
DATA q3hmod1<>+32(SB)/8, $0x04030201000a0908
DATA q3hmod1<>+40(SB)/8, $0x01000a0908070605
DATA q3hmod1<>+48(SB)/8, $0x0908070605040302
DATA q3hmod1<>+56(SB)/8, $0x060504030201000a
GLOBL q3hmod1<>(SB), RODATA|NOPTR, $64
DATA q3hdiv0<>+0(SB)/8, $0x0000000000000000
DATA q3hdiv0<>+8(SB)/8, $0x0101010101000000
DATA q3hdiv0<>+16(SB)/8, $0x0202010101010101
DATA q3hdiv0<>+24(SB)/8, $0x0202020202020202
DATA q3hdiv0<>+32(SB)/8, $0x0303030303030302
DATA q3hdiv0<>+40(SB)/8, $0x0404040403030303
DATA q3hdiv0<>+48(SB)/8, $0x0504040404040404
DATA q3hdiv0<>+56(SB)/8, $0x0505050505050505
GLOBL q3hdiv0<>(SB), RODATA|NOPTR, $64
DATA q3hdiv1<>+0(SB)/8, $0x0606060606060505
DATA q3hdiv1<>+8(SB)/8, $0x0707070606060606
DATA q3hdiv1<>+16(SB)/8, $0x0707070707070707
DATA q3hdiv1<>+24(SB)/8, $0x0808080808080808
DATA q3hdiv1<>+32(SB)/8, $0x0909090909080808
DATA q3hdiv1<>+40(SB)/8, $0x0a0a090909090909
DATA q3hdiv1<>+48(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q3hdiv1<>+56(SB)/8, $0x0b0b0b0b0b0b0b0a
GLOBL q3hdiv1<>(SB), RODATA|NOPTR, $64
DATA q3hcnib<>+0(SB)/8, $0x1c1814100c080400
DATA q3hcnib<>+8(SB)/8, $0x3c3834302c282420
DATA q3hcnib<>+16(SB)/8, $0x1c1814100c080400
DATA q3hcnib<>+24(SB)/8, $0x3c3834302c282420
DATA q3hcnib<>+32(SB)/8, $0x0000000000000000
DATA q3hcnib<>+40(SB)/8, $0x0000000000000000
DATA q3hcnib<>+48(SB)/8, $0x0000000000000000
DATA q3hcnib<>+56(SB)/8, $0x0000000000000000
GLOBL q3hcnib<>(SB), RODATA|NOPTR, $64
DATA q3hcqm<>+0(SB)/8, $0x0a08060402003e3c
DATA q3hcqm<>+8(SB)/8, $0x1a18161412100e0c
DATA q3hcqm<>+16(SB)/8, $0x2a28262422201e1c
DATA q3hcqm<>+24(SB)/8, $0x3a38363432302e2c
DATA q3hcqm<>+32(SB)/8, $0x0000000000000000
DATA q3hcqm<>+40(SB)/8, $0x0000000000000000
DATA q3hcqm<>+48(SB)/8, $0x0000000000000000
DATA q3hcqm<>+56(SB)/8, $0x0000000000000000
GLOBL q3hcqm<>(SB), RODATA|NOPTR, $64
DATA q3hcqh<>+0(SB)/8, $0x01003f3e3d3c3b3a
DATA q3hcqh<>+8(SB)/8, $0x0908070605040302
DATA q3hcqh<>+16(SB)/8, $0x11100f0e0d0c0b0a
DATA q3hcqh<>+24(SB)/8, $0x1918171615141312
DATA q3hcqh<>+32(SB)/8, $0x0000000000000000
DATA q3hcqh<>+40(SB)/8, $0x0000000000000000
DATA q3hcqh<>+48(SB)/8, $0x0000000000000000
DATA q3hcqh<>+56(SB)/8, $0x0000000000000000
GLOBL q3hcqh<>(SB), RODATA|NOPTR, $64

// IFACT loads the two Q8_0 activation blocks at R12 (68 bytes): Z16 gets
// their 64 quants de-interleaved (even values, then odd), X18/X19 dy of A
// and B broadcast, X20/X21 fl(Y·dy) of A and B broadcast. Z15 must hold
// 0x01 bytes.
#define IFACT \
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
	VBROADCASTSS  X7, X18; \
	VMOVSHDUP     X7, X7; \
	VBROADCASTSS  X7, X19; \
	VBROADCASTSS  X5, X20; \
	VMOVSHDUP     X5, X5; \
	VBROADCASTSS  X5, X21; \
	VPERMB        Z16, Z29, Z16

// IFFOLD folds the 16 dword sums of a row in z (ymm name y, t a ymm temp)
// to 8: dwords 0-3 block A, 4-7 block B.
#define IFFOLD(z, y, t) \
	VEXTRACTI64X4 $1, z, t; \
	VPADDD        t, y, y

// IFSUM adds the four rows' blocks to X0: the folded sums in Y8..Y11, the
// headers (base, scale f16) of the rows at offset AX of R8..R11.
#define IFSUM \
	VPHADDD      Y9, Y8, Y8; \
	VPHADDD      Y11, Y10, Y10; \
	VPHADDD      Y10, Y8, Y8; \
	VCVTDQ2PS    Y8, Y8; \
	VMOVD        (R8)(AX*1), X12; \
	VPINSRD      $1, (R9)(AX*1), X12, X12; \
	VPINSRD      $2, (R10)(AX*1), X12, X12; \
	VPINSRD      $3, (R11)(AX*1), X12, X12; \
	VCVTPH2PS    X12, Y12; \
	VEXTRACTF128 $1, Y12, X13; \
	VSHUFPS      $0x88, X13, X12, X14; \
	VSHUFPS      $0xdd, X13, X12, X3; \
	VMULPS       X18, X3, X9; \
	VMULPS       X8, X9, X9; \
	VMULPS       X20, X14, X10; \
	VADDPS       X10, X9, X9; \
	VADDPS       X9, X0, X0; \
	VEXTRACTF128 $1, Y8, X8; \
	VMULPS       X19, X3, X9; \
	VMULPS       X8, X9, X9; \
	VMULPS       X21, X14, X10; \
	VADDPS       X10, X9, X9; \
	VADDPS       X9, X0, X0

// IFARGS loads the arguments and the four stream pointers.
#define IFARGS \
	MOVQ  w+0(FP), R8; \
	MOVQ  ldw+8(FP), BX; \
	MOVQ  x+16(FP), DI; \
	MOVQ  nb+24(FP), CX; \
	MOVQ  y+32(FP), DX; \
	MOVQ  q+40(FP), R14; \
	MOVQ  R14, AX; \
	IMULQ BX, AX; \
	LEAQ  (R8)(AX*1), R9; \
	LEAQ  (R9)(AX*1), R10; \
	LEAQ  (R10)(AX*1), R11; \
	MOVQ  R14, SI; \
	SHLQ  $2, SI

// Q4B64ROW puts the 16 dword sums of the Q4_B64T1 block at offset AX of
// the row at p times the activations into z.
#define Q4B64ROW(p, z) \
	VBROADCASTI64X4 4(p)(AX*1), Z7; \
	VPSRLVW         Z30, Z7, Z7; \
	VPANDD          Z31, Z7, Z7; \
	VPXORD          z, z, z; \
	VPDPBUSD        Z16, Z7, z

// func gemv4Q4_B64VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_B64T1
// blocks, ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not
// 0; x is a row of Q8_0 blocks.
TEXT ·gemv4Q4_B64VNNI(SB), NOSPLIT, $0-56
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	VMOVDQU64    ifshr<>(SB), Z30
	VMOVDQU64    ifdeint<>(SB), Z29
	IFARGS
	TESTQ        R14, R14
	JZ           q4done

q4row:
	VPXORD X0, X0, X0
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     q4fin

q4blk:
	IFACT
	Q4B64ROW(R8, Z8)
	Q4B64ROW(R9, Z9)
	Q4B64ROW(R10, Z10)
	Q4B64ROW(R11, Z11)
	IFFOLD(Z8, Y8, Y4)
	IFFOLD(Z9, Y9, Y4)
	IFFOLD(Z10, Y10, Y4)
	IFFOLD(Z11, Y11, Y4)
	IFSUM
	ADDQ $36, AX
	ADDQ $68, R12
	DECQ R13
	JNZ  q4blk

q4fin:
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       q4store
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

q4store:
	VMOVSS     X0, (DX)
	VEXTRACTPS $1, X0, (DX)(SI*1)
	VEXTRACTPS $2, X0, (R13)
	VEXTRACTPS $3, X0, (R13)(SI*1)
	ADDQ       $4, DX
	ADDQ       BX, R8
	ADDQ       BX, R9
	ADDQ       BX, R10
	ADDQ       BX, R11
	DECQ R14
	JNZ  q4row

q4done:
	VZEROUPPER
	RET

// Q3HROW puts the 16 dword sums of the Q3H_B64T1 block at offset AX of the
// row at p times the activations into z: each pair's 7-bit code built by
// multishifts of qs (bits 0-3), qm (4-5) and qh (6) and two bit selects
// (bit 7 is left over; VPERMI2B reads 7 index bits), then split into its
// two values by the mod-11 and div-11 tables (the even value is the code
// mod 11). Constants: Z17 0x30 bytes, Z30 0x3f bytes, Z22..Z25 the tables,
// Z26..Z28 the multishift controls.
#define Q3HROW(p, z) \
	VMOVDQU         16(p)(AX*1), X1; \
	VPERMQ          $0x50, Y1, Y1; \
	VPMULTISHIFTQB  Y1, Y26, Y1; \
	VPBROADCASTQ    8(p)(AX*1), Y2; \
	VPMULTISHIFTQB  Y2, Y27, Y2; \
	VPBROADCASTQ    4(p)(AX*1), Y3; \
	VPMULTISHIFTQB  Y3, Y28, Y3; \
	VPTERNLOGD      $0xe2, Y1, Y17, Y2; \
	VPTERNLOGD      $0xe2, Y3, Y30, Y2; \
	VMOVDQA64       Z2, Z7; \
	VPERMI2B        Z23, Z22, Z2; \
	VPERMI2B        Z25, Z24, Z7; \
	VINSERTI64X4    $1, Y7, Z2, Z2; \
	VPXORD          z, z, z; \
	VPDPBUSD        Z16, Z2, z

// func gemv4Q3HVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4Q4_B64VNNI for Q3H_B64T1 weights.
TEXT ·gemv4Q3HVNNI(SB), NOSPLIT, $0-56
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z15
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z17
	MOVL         $0x3f3f3f3f, AX
	VPBROADCASTD AX, Z30
	VMOVDQU64    ifdeint<>(SB), Z29
	VMOVDQU64    q3hcqh<>(SB), Z28
	VMOVDQU64    q3hcqm<>(SB), Z27
	VMOVDQU64    q3hcnib<>(SB), Z26
	VMOVDQU64    q3hdiv1<>(SB), Z25
	VMOVDQU64    q3hdiv0<>(SB), Z24
	VMOVDQU64    q3hmod1<>(SB), Z23
	VMOVDQU64    q3hmod0<>(SB), Z22
	IFARGS
	TESTQ        R14, R14
	JZ           q3done

q3row:
	VPXORD X0, X0, X0
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     q3fin

q3blk:
	IFACT
	Q3HROW(R8, Z8)
	Q3HROW(R9, Z9)
	Q3HROW(R10, Z10)
	Q3HROW(R11, Z11)
	IFFOLD(Z8, Y8, Y4)
	IFFOLD(Z9, Y9, Y4)
	IFFOLD(Z10, Y10, Y4)
	IFFOLD(Z11, Y11, Y4)
	IFSUM
	ADDQ $32, AX
	ADDQ $68, R12
	DECQ R13
	JNZ  q3blk

q3fin:
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
	DECQ R14
	JNZ  q3row

q3done:
	VZEROUPPER
	RET

// The strip kernels (ifpack.go): 16 rows of a strip in the 16 dword
// lanes, activations in layout I broadcast a dword at a time.

// ifp7idx spreads 8 groups of 7 bytes to 8 qwords, ifp7ctl pulls the
// eight 7-bit fields of each (bit 7 is left over: VPERMI2B reads 7 index
// bits). ifdeint8 puts the even bytes of each 8 before the odd ones.
DATA ifp7idx<>+0(SB)/8, $0x0606050403020100
DATA ifp7idx<>+8(SB)/8, $0x0d0d0c0b0a090807
DATA ifp7idx<>+16(SB)/8, $0x1414131211100f0e
DATA ifp7idx<>+24(SB)/8, $0x1b1b1a1918171615
DATA ifp7idx<>+32(SB)/8, $0x222221201f1e1d1c
DATA ifp7idx<>+40(SB)/8, $0x2929282726252423
DATA ifp7idx<>+48(SB)/8, $0x30302f2e2d2c2b2a
DATA ifp7idx<>+56(SB)/8, $0x3737363534333231
GLOBL ifp7idx<>(SB), RODATA|NOPTR, $64
DATA ifp7ctl<>+0(SB)/8, $0x312a231c150e0700
GLOBL ifp7ctl<>(SB), RODATA|NOPTR, $8
DATA ifdeint8<>+0(SB)/8, $0x0705030106040200
DATA ifdeint8<>+8(SB)/8, $0x0f0d0b090e0c0a08
GLOBL ifdeint8<>(SB), RODATA|NOPTR, $16

// IFSTRIPARGS loads the arguments of a strip kernel.
#define IFSTRIPARGS \
	MOVQ w+0(FP), SI; \
	MOVQ a+8(FP), DI; \
	MOVQ nb+16(FP), CX; \
	MOVQ y+24(FP), DX; \
	MOVQ strips+32(FP), R8; \
	MOVQ acc+40(FP), R9

// IFZERO clears the block's integer sums: Z1, Z2 block A's (even, odd
// values), Z3, Z4 block B's.
#define IFZERO \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4

// IFEPI adds the block to the 16 rows' sums in Z0: per activation block,
// fl(fl(fl(scale·dy)·S) + fl(base·fl(Y·dy))), A then B; the f16 scales
// at sc(SI), the bases at ba(SI), dy and fl(Y·dy) of A at 32(R12), of B at
// 72(R12).
#define IFEPI(sc, ba) \
	VPADDD      Z2, Z1, Z1; \
	VPADDD      Z4, Z3, Z3; \
	VCVTDQ2PS   Z1, Z1; \
	VCVTDQ2PS   Z3, Z3; \
	VCVTPH2PS   sc(SI), Z7; \
	VCVTPH2PS   ba(SI), Z8; \
	VMULPS.BCST 32(R12), Z7, Z9; \
	VMULPS      Z1, Z9, Z9; \
	VMULPS.BCST 36(R12), Z8, Z10; \
	VADDPS      Z10, Z9, Z9; \
	VADDPS      Z9, Z0, Z0; \
	VMULPS.BCST 72(R12), Z7, Z9; \
	VMULPS      Z3, Z9, Z9; \
	VMULPS.BCST 76(R12), Z8, Z10; \
	VADDPS      Z10, Z9, Z9; \
	VADDPS      Z9, Z0, Z0

// IFSTORE stores (or adds) the strip's 16 sums and moves to the next.
#define IFSTORE(label) \
	TESTQ   R9, R9; \
	JZ      label; \
	VADDPS  (DX), Z0, Z0; \
label:; \
	VMOVUPS Z0, (DX); \
	ADDQ    $64, DX

// Q3HGRP adds group wo/56 of a Q3H strip block: 64 pair codes (4 per
// row) unpacked to their even values (code mod 11) times the activation
// dword at ae(R12) into ze, odd values (code div 11) times ao(R12) into zo.
#define Q3HGRP(wo, ae, ao, ze, zo) \
	VPERMB         wo(SI), Z26, Z5; \
	VPMULTISHIFTQB Z5, Z27, Z5; \
	VMOVDQA64      Z5, Z6; \
	VPERMI2B       Z23, Z22, Z5; \
	VPERMI2B       Z25, Z24, Z6; \
	VPDPBUSD.BCST  ae(R12), Z5, ze; \
	VPDPBUSD.BCST  ao(R12), Z6, zo

// func ifStripsQ3HVNNI(w, a unsafe.Pointer, nb int, y *float32, strips int, acc int)
// y[16s+r] (+)= row r of strip s times a, for strips ≥ 1 Q3H_B64T1 strips
// of nb ≥ 1 blocks at w; a in layout I.
TEXT ·ifStripsQ3HVNNI(SB), NOSPLIT, $0-48
	IFSTRIPARGS
	VMOVDQU64       q3hmod0<>(SB), Z22
	VMOVDQU64       q3hmod1<>(SB), Z23
	VMOVDQU64       q3hdiv0<>(SB), Z24
	VMOVDQU64       q3hdiv1<>(SB), Z25
	VMOVDQU64       ifp7idx<>(SB), Z26
	VPBROADCASTQ    ifp7ctl<>(SB), Z27

s3strip:
	VPXORD Z0, Z0, Z0
	MOVQ   DI, R12
	MOVQ   CX, R13

s3blk:
	IFZERO
	Q3HGRP(0, 0, 4, Z1, Z2)
	Q3HGRP(56, 8, 12, Z1, Z2)
	Q3HGRP(112, 16, 20, Z1, Z2)
	Q3HGRP(168, 24, 28, Z1, Z2)
	Q3HGRP(224, 40, 44, Z3, Z4)
	Q3HGRP(280, 48, 52, Z3, Z4)
	Q3HGRP(336, 56, 60, Z3, Z4)
	Q3HGRP(392, 64, 68, Z3, Z4)
	IFEPI(448, 480)
	ADDQ $512, SI
	ADDQ $80, R12
	DECQ R13
	JNZ  s3blk
	IFSTORE(s3st)
	DECQ R8
	JNZ  s3strip
	VZEROUPPER
	RET

// Q4GRP adds group wo/64 of a Q4_B64T1 strip block: low nibbles (even
// values) times the activation dword at ae(R12) into ze, high nibbles
// times ao(R12) into zo. Z31 holds 0x0f bytes.
#define Q4GRP(wo, ae, ao, ze, zo) \
	VPSRLW        $4, wo(SI), Z6; \
	VPANDD        wo(SI), Z31, Z5; \
	VPANDD        Z31, Z6, Z6; \
	VPDPBUSD.BCST ae(R12), Z5, ze; \
	VPDPBUSD.BCST ao(R12), Z6, zo

// func ifStripsQ4VNNI(w, a unsafe.Pointer, nb int, y *float32, strips int, acc int)
// As ifStripsQ3HVNNI for Q4_B64T1 strips.
TEXT ·ifStripsQ4VNNI(SB), NOSPLIT, $0-48
	IFSTRIPARGS
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31

s4strip:
	VPXORD Z0, Z0, Z0
	MOVQ   DI, R12
	MOVQ   CX, R13

s4blk:
	IFZERO
	Q4GRP(0, 0, 4, Z1, Z2)
	Q4GRP(64, 8, 12, Z1, Z2)
	Q4GRP(128, 16, 20, Z1, Z2)
	Q4GRP(192, 24, 28, Z1, Z2)
	Q4GRP(256, 40, 44, Z3, Z4)
	Q4GRP(320, 48, 52, Z3, Z4)
	Q4GRP(384, 56, 60, Z3, Z4)
	Q4GRP(448, 64, 68, Z3, Z4)
	IFEPI(512, 544)
	ADDQ $576, SI
	ADDQ $80, R12
	DECQ R13
	JNZ  s4blk
	IFSTORE(s4st)
	DECQ R8
	JNZ  s4strip
	VZEROUPPER
	RET

// The strip kernels for 4 tokens: each group of weights is unpacked
// once and multiplied with the 4 tokens' activations, at R12,
// R12+BX, R14 = R12+2·BX and R14+BX. Block A's sums of token t go to
// Z11+t, block B's to Z15+t, the rows' sums to Z0+t.

// IFZERO4 clears the 8 integer sums.
#define IFZERO4 \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18

// IFDOT4 multiplies the even values in Z5 and the odd ones in Z6 with the
// activation dwords at ae and ao of the 4 tokens, into z0..z3.
#define IFDOT4(ae, ao, z0, z1, z2, z3) \
	VPDPBUSD.BCST ae(R12), Z5, z0; \
	VPDPBUSD.BCST ao(R12), Z6, z0; \
	VPDPBUSD.BCST ae(R12)(BX*1), Z5, z1; \
	VPDPBUSD.BCST ao(R12)(BX*1), Z6, z1; \
	VPDPBUSD.BCST ae(R14), Z5, z2; \
	VPDPBUSD.BCST ao(R14), Z6, z2; \
	VPDPBUSD.BCST ae(R14)(BX*1), Z5, z3; \
	VPDPBUSD.BCST ao(R14)(BX*1), Z6, z3

// IFEPIT adds a block to one token's sums zs as IFEPI does: za, zb the
// integer sums of blocks A and B, the token's activations at ra, ra+40 (da, ya, db, yb the
// offsets of dy and fl(Y·dy)), the scales in Z7, the bases in Z8.
#define IFEPIT(da, ya, db, yb, za, zb, zs) \
	VCVTDQ2PS   za, za; \
	VCVTDQ2PS   zb, zb; \
	VMULPS.BCST da, Z7, Z9; \
	VMULPS      za, Z9, Z9; \
	VMULPS.BCST ya, Z8, Z10; \
	VADDPS      Z10, Z9, Z9; \
	VADDPS      Z9, zs, zs; \
	VMULPS.BCST db, Z7, Z9; \
	VMULPS      zb, Z9, Z9; \
	VMULPS.BCST yb, Z8, Z10; \
	VADDPS      Z10, Z9, Z9; \
	VADDPS      Z9, zs, zs

// IFEPI4 adds the block to the 4 tokens' sums; the headers at sc(SI) and
// ba(SI).
#define IFEPI4(sc, ba) \
	VCVTPH2PS sc(SI), Z7; \
	VCVTPH2PS ba(SI), Z8; \
	IFEPIT(32(R12), 36(R12), 72(R12), 76(R12), Z11, Z15, Z0); \
	IFEPIT(32(R12)(BX*1), 36(R12)(BX*1), 72(R12)(BX*1), 76(R12)(BX*1), Z12, Z16, Z1); \
	IFEPIT(32(R14), 36(R14), 72(R14), 76(R14), Z13, Z17, Z2); \
	IFEPIT(32(R14)(BX*1), 36(R14)(BX*1), 72(R14)(BX*1), 76(R14)(BX*1), Z14, Z18, Z3)

// IFSTRIP4START clears the 4 tokens' sums and points R12, R14 at the
// activations and R13 at the blocks.
#define IFSTRIP4START \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	MOVQ   DI, R12; \
	LEAQ   (DI)(BX*2), R14; \
	MOVQ   CX, R13

// IFSTORE4 stores (or adds) the 4 tokens' sums at DX, DX+R10, R11,
// R11+R10 (R11 = DX+2·R10) and moves to the next strip.
#define IFSTORE4(label) \
	LEAQ    (DX)(R10*2), R11; \
	TESTQ   R9, R9; \
	JZ      label; \
	VADDPS  (DX), Z0, Z0; \
	VADDPS  (DX)(R10*1), Z1, Z1; \
	VADDPS  (R11), Z2, Z2; \
	VADDPS  (R11)(R10*1), Z3, Z3; \
label:; \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, (DX)(R10*1); \
	VMOVUPS Z2, (R11); \
	VMOVUPS Z3, (R11)(R10*1); \
	ADDQ    $64, DX

// Q3HGRP4 unpacks group wo/56 of a Q3H strip block (as Q3HGRP) and adds
// it to the 4 tokens' sums z0..z3.
#define Q3HGRP4(wo, ae, ao, z0, z1, z2, z3) \
	VPERMB         wo(SI), Z26, Z5; \
	VPMULTISHIFTQB Z5, Z27, Z5; \
	VMOVDQA64      Z5, Z6; \
	VPERMI2B       Z23, Z22, Z5; \
	VPERMI2B       Z25, Z24, Z6; \
	IFDOT4(ae, ao, z0, z1, z2, z3)

// func ifStrips4Q3HVNNI(w, a unsafe.Pointer, lda, nb int, y *float32, ldy, strips, acc int)
// As ifStripsQ3HVNNI for 4 tokens: activations lda bytes apart, results
// ldy floats apart.
TEXT ·ifStrips4Q3HVNNI(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ lda+16(FP), BX
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ ldy+40(FP), R10
	SHLQ $2, R10
	MOVQ strips+48(FP), R8
	MOVQ acc+56(FP), R9
	VMOVDQU64    q3hmod0<>(SB), Z22
	VMOVDQU64    q3hmod1<>(SB), Z23
	VMOVDQU64    q3hdiv0<>(SB), Z24
	VMOVDQU64    q3hdiv1<>(SB), Z25
	VMOVDQU64    ifp7idx<>(SB), Z26
	VPBROADCASTQ ifp7ctl<>(SB), Z27

t3strip:
	IFSTRIP4START

t3blk:
	IFZERO4
	Q3HGRP4(0, 0, 4, Z11, Z12, Z13, Z14)
	Q3HGRP4(56, 8, 12, Z11, Z12, Z13, Z14)
	Q3HGRP4(112, 16, 20, Z11, Z12, Z13, Z14)
	Q3HGRP4(168, 24, 28, Z11, Z12, Z13, Z14)
	Q3HGRP4(224, 40, 44, Z15, Z16, Z17, Z18)
	Q3HGRP4(280, 48, 52, Z15, Z16, Z17, Z18)
	Q3HGRP4(336, 56, 60, Z15, Z16, Z17, Z18)
	Q3HGRP4(392, 64, 68, Z15, Z16, Z17, Z18)
	IFEPI4(448, 480)
	ADDQ $512, SI
	ADDQ $80, R12
	ADDQ $80, R14
	DECQ R13
	JNZ  t3blk
	IFSTORE4(t3st)
	DECQ R8
	JNZ  t3strip
	VZEROUPPER
	RET

// Q4GRP4 unpacks group wo/64 of a Q4_B64T1 strip block (as Q4GRP) and
// adds it to the 4 tokens' sums z0..z3.
#define Q4GRP4(wo, ae, ao, z0, z1, z2, z3) \
	VPSRLW $4, wo(SI), Z6; \
	VPANDD wo(SI), Z31, Z5; \
	VPANDD Z31, Z6, Z6; \
	IFDOT4(ae, ao, z0, z1, z2, z3)

// func ifStrips4Q4VNNI(w, a unsafe.Pointer, lda, nb int, y *float32, ldy, strips, acc int)
// As ifStrips4Q3HVNNI for Q4_B64T1 strips.
TEXT ·ifStrips4Q4VNNI(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ lda+16(FP), BX
	MOVQ nb+24(FP), CX
	MOVQ y+32(FP), DX
	MOVQ ldy+40(FP), R10
	SHLQ $2, R10
	MOVQ strips+48(FP), R8
	MOVQ acc+56(FP), R9
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31

t4strip:
	IFSTRIP4START

t4blk:
	IFZERO4
	Q4GRP4(0, 0, 4, Z11, Z12, Z13, Z14)
	Q4GRP4(64, 8, 12, Z11, Z12, Z13, Z14)
	Q4GRP4(128, 16, 20, Z11, Z12, Z13, Z14)
	Q4GRP4(192, 24, 28, Z11, Z12, Z13, Z14)
	Q4GRP4(256, 40, 44, Z15, Z16, Z17, Z18)
	Q4GRP4(320, 48, 52, Z15, Z16, Z17, Z18)
	Q4GRP4(384, 56, 60, Z15, Z16, Z17, Z18)
	Q4GRP4(448, 64, 68, Z15, Z16, Z17, Z18)
	IFEPI4(512, 544)
	ADDQ $576, SI
	ADDQ $80, R12
	ADDQ $80, R14
	DECQ R13
	JNZ  t4blk
	IFSTORE4(t4st)
	DECQ R8
	JNZ  t4strip
	VZEROUPPER
	RET

// func ifActQ8I(dst, src unsafe.Pointer, nb int)
// Rewrites nb Q8_0 blocks at src in layout I at dst.
TEXT ·ifActQ8I(SB), NOSPLIT, $0-24
	MOVQ           dst+0(FP), DI
	MOVQ           src+8(FP), SI
	MOVQ           nb+16(FP), CX
	VBROADCASTI128 ifdeint8<>(SB), Y14
	MOVL           $0x01010101, AX
	VPBROADCASTD   AX, Y15
	TESTQ          CX, CX
	JZ             actdone

actblk:
	VMOVDQU      2(SI), Y1
	VPSHUFB      Y14, Y1, Y2
	VMOVDQU      Y2, (DI)
	VPXORD       Y3, Y3, Y3
	VPDPBUSD     Y1, Y15, Y3
	VEXTRACTI128 $1, Y3, X4
	VPADDD       X4, X3, X3
	VPSHUFD      $0x4e, X3, X4
	VPADDD       X4, X3, X3
	VPSHUFD      $0xb1, X3, X4
	VPADDD       X4, X3, X3
	VCVTDQ2PS    X3, X3
	MOVWLZX      (SI), AX
	VMOVD        AX, X5
	VCVTPH2PS    X5, X5
	VMULSS       X5, X3, X3
	VMOVSS       X5, 32(DI)
	VMOVSS       X3, 36(DI)
	ADDQ         $34, SI
	ADDQ         $40, DI
	DECQ         CX
	JNZ          actblk

actdone:
	VZEROUPPER
	RET
