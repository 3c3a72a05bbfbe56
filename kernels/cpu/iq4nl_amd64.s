//go:build amd64 && !noasm

// Hand-written, as kquantz_amd64.s (four kernels sharing a few macros,
// no repetitive runs to generate; not yet moved to the avo generator).

#include "textflag.h"
#include "simd_amd64.h"

// IQ4_NL weights (blocks of 32: f16 d, 16 bytes of 4-bit indices into
// ggml's kvalues_iq4nl) times Q8_0 activations, AVX-512 with VNNI.
//
// ggml's x86 kernel takes blocks in pairs: each block's products summed
// exactly in 8 dword lanes (lane m: values 4m..4m+3), the first block of
// the pair fused into accumulator 1 and the second into accumulator 2
// with d = dy·dx, then hsum8(accum1 + accum2). Here a zmm holds a pair:
// lanes 0..7 the first block, 8..15 the second, so one 16-lane fused
// multiply-add does both. The table lookup gives the levels plus 128
// (unsigned, for VPDPBUSD); the accumulator starts at −128·Σ4 x, computed
// once per pair of activation blocks for the 4 rows, so each dword lane
// ends exactly at Σ level·x.

#define PFD 2048

// The levels + 128, and word indices that pick the two blocks' f16 scales
// out of a pair of weight blocks (words 0 and 9) and of activation blocks
// (words 0 and 17), 8 lanes each; nibble shifts 0 (values 0..15) and 4
// (16..31) per 128-bit lane.
DATA iq4lut<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA iq4lut<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL iq4lut<>(SB), RODATA|NOPTR, $16
DATA iq4wd<>+0(SB)/8, $0x0000000000000000
DATA iq4wd<>+8(SB)/8, $0x0000000000000000
DATA iq4wd<>+16(SB)/8, $0x0009000900090009
DATA iq4wd<>+24(SB)/8, $0x0009000900090009
GLOBL iq4wd<>(SB), RODATA|NOPTR, $32
DATA iq4xd<>+0(SB)/8, $0x0000000000000000
DATA iq4xd<>+8(SB)/8, $0x0000000000000000
DATA iq4xd<>+16(SB)/8, $0x0011001100110011
DATA iq4xd<>+24(SB)/8, $0x0011001100110011
DATA iq4xd<>+32(SB)/8, $0x0000000000000000
DATA iq4xd<>+40(SB)/8, $0x0000000000000000
DATA iq4xd<>+48(SB)/8, $0x0000000000000000
DATA iq4xd<>+56(SB)/8, $0x0000000000000000
GLOBL iq4xd<>(SB), RODATA|NOPTR, $64
DATA iq4shr<>+0(SB)/8, $0x0000000000000000
DATA iq4shr<>+8(SB)/8, $0x0000000000000000
DATA iq4shr<>+16(SB)/8, $0x0004000400040004
DATA iq4shr<>+24(SB)/8, $0x0004000400040004
DATA iq4shr<>+32(SB)/8, $0x0000000000000000
DATA iq4shr<>+40(SB)/8, $0x0000000000000000
DATA iq4shr<>+48(SB)/8, $0x0004000400040004
DATA iq4shr<>+56(SB)/8, $0x0004000400040004
GLOBL iq4shr<>(SB), RODATA|NOPTR, $64

// KSUM8B reduces the 8 float32 lanes of y (xmm name x) into the low lane
// of t1 as ggml's hsum_float_8.
#define KSUM8B(y, x, t1, t2) \
	VEXTRACTF128 $1, y, t1; \
	VADDPS       x, t1, t1; \
	VMOVHLPS     t1, t1, t2; \
	VADDPS       t2, t1, t1; \
	VMOVSHDUP    t1, t2; \
	VADDSS       t2, t1, t1

// IQ4SUM reduces the accumulator z (ymm y, xmm x) as ggml does, hsum8 of
// lanes 0..7 plus lanes 8..15, into the low lane of tx (ymm ty).
#define IQ4SUM(z, y, x, ty, tx, t2) \
	VEXTRACTF64X4 $1, z, ty; \
	VADDPS        y, ty, y; \
	VEXTRACTF128  $1, y, tx; \
	VADDPS        x, tx, tx; \
	VMOVHLPS      tx, tx, t2; \
	VADDPS        t2, tx, tx; \
	VMOVSHDUP     tx, t2; \
	VADDSS        t2, tx, tx

// IQ4ROW accumulates into f the product of the pair of IQ4_NL blocks at
// offset AX of the row at p with the activations (quants in Z16, −128·Σ4
// in Z17, [dy1 ×8, dy2 ×8] in Z18). Constants: Z31 0x0f bytes, Z30 the
// shifts, Z29 the table in every 128-bit lane, Y28 the scale pick.
#define IQ4ROW(p, f) \
	IQ4SUMS(p); \
	VFMADD231PS  Z8, Z6, f

// IQ4ROWB is IQ4ROW in the order of ggml's batched matmul (llamafile's
// tinyBLAS): the pair's first block, then its second, fused into the
// same 8 lanes of f (a ymm register).
#define IQ4ROWB(p, f) \
	IQ4SUMS(p); \
	VFMADD231PS   Y8, Y6, f; \
	VEXTRACTF64X4 $1, Z8, Y8; \
	VEXTRACTF64X4 $1, Z6, Y6; \
	VFMADD231PS   Y8, Y6, f

// IQ4SUMS leaves in Z6 the exact lane sums of the pair of blocks at
// offset AX of the row at p, as float32, and in Z8 their scales dy·dx.
#define IQ4SUMS(p) \
	VMOVDQU      2(p)(AX*1), X7; \
	VINSERTI128  $1, 20(p)(AX*1), Y7, Y7; \
	VSHUFI64X2   $0x50, Z7, Z7, Z7; \
	VPSRLVW      Z30, Z7, Z7; \
	VPANDD       Z31, Z7, Z7; \
	VPSHUFB      Z7, Z29, Z7; \
	VMOVDQA32    Z17, Z6; \
	VPDPBUSD     Z16, Z7, Z6; \
	VCVTDQ2PS    Z6, Z6; \
	VPERMW       (p)(AX*1), Y28, Y8; \
	VCVTPH2PS    Y8, Z8; \
	VMULPS       Z18, Z8, Z8

// IQ4GEMMSETUP loads the constants and arguments both gemm kernels share:
// Z31 the low-nibble mask, Z27 0x80 bytes, Z30 the nibble shifts, Z29 the
// IQ4_NL table in each lane, K1 all ones when acc (else none), R8..R11 the
// four rows of the first quarter (q rows apart), BX ldw, R13 ldx, CX the
// row's bytes, DX y, R14 q and SI 4q.
#define IQ4GEMMSETUP \
	MOVL            $0x0f0f0f0f, AX \
	VPBROADCASTD    AX, Z31 \
	MOVL            $0x80808080, AX \
	VPBROADCASTD    AX, Z27 \
	VMOVDQU64       iq4shr<>(SB), Z30 \
	VBROADCASTI32X4 iq4lut<>(SB), Z29 \
	MOVQ            acc+64(FP), AX \
	NEGQ            AX \
	KMOVW           AX, K1 \
	MOVQ            w+0(FP), R8 \
	MOVQ            ldw+8(FP), BX \
	MOVQ            ldx+24(FP), R13 \
	MOVQ            nb+32(FP), CX \
	IMULQ           $18, CX \
	MOVQ            y+40(FP), DX \
	MOVQ            q+56(FP), R14 \
	MOVQ            R14, AX \
	IMULQ           BX, AX \
	LEAQ            (R8)(AX*1), R9 \
	LEAQ            (R9)(AX*1), R10 \
	LEAQ            (R10)(AX*1), R11 \
	MOVQ            R14, SI \
	SHLQ            $2, SI

// func gemv4IQ4_NLVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb IQ4_NL blocks,
// nb even, ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is
// not 0; x is a row of Q8_0 blocks.
TEXT ·gemv4IQ4_NLVNNI(SB), NOSPLIT, $0-56
	MOVL           $0x0f0f0f0f, AX
	VPBROADCASTD   AX, Z31
	MOVL           $0x80808080, AX
	VPBROADCASTD   AX, Z27
	VMOVDQU64      iq4shr<>(SB), Z30
	VBROADCASTI32X4 iq4lut<>(SB), Z29
	VMOVDQU64      iq4wd<>(SB), Y28
	VMOVDQU64      iq4xd<>(SB), Z26
	MOVQ           w+0(FP), R8
	MOVQ           ldw+8(FP), BX
	MOVQ           x+16(FP), DI
	MOVQ           nb+24(FP), CX
	SHRQ           $1, CX
	MOVQ           y+32(FP), DX
	MOVQ           q+40(FP), R14
	MOVQ           R14, AX
	IMULQ          BX, AX
	LEAQ           (R8)(AX*1), R9
	LEAQ           (R9)(AX*1), R10
	LEAQ           (R10)(AX*1), R11
	MOVQ           R14, SI
	SHLQ           $2, SI
	TESTQ          R14, R14
	JZ             done

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
	PREFETCHT0    PFD(R8)(AX*1)
	PREFETCHT0    PFD(R9)(AX*1)
	PREFETCHT0    PFD(R10)(AX*1)
	PREFETCHT0    PFD(R11)(AX*1)
	VMOVDQU64     2(R12), Y16
	VINSERTI64X4  $1, 36(R12), Z16, Z16
	VPXORD        Z17, Z17, Z17
	VPDPBUSD      Z16, Z27, Z17
	VPXORD        Z18, Z18, Z18
	VPSUBD        Z17, Z18, Z17
	VPERMW        (R12), Z26, Z18
	VCVTPH2PS     Y18, Z18
	IQ4ROW(R8, Z0)
	IQ4ROW(R9, Z1)
	IQ4ROW(R10, Z2)
	IQ4ROW(R11, Z3)
	ADDQ $36, AX
	ADDQ $68, R12
	DECQ R13
	JNZ  blk

fin:
	IQ4SUM(Z0, Y0, X0, Y4, X4, X8)
	IQ4SUM(Z1, Y1, X1, Y5, X5, X8)
	IQ4SUM(Z2, Y2, X2, Y6, X6, X8)
	IQ4SUM(Z3, Y3, X3, Y7, X7, X8)
	VINSERTPS $0x10, X5, X4, X4
	VINSERTPS $0x20, X6, X4, X4
	VINSERTPS $0x30, X7, X4, X4
	VMOVAPS   X4, X0
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

// func gemv4IQ4_NLBVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)
// As gemv4IQ4_NLVNNI in the order of ggml's batched matmul, for a matmul
// of two or more tokens.
TEXT ·gemv4IQ4_NLBVNNI(SB), NOSPLIT, $0-56
	MOVL           $0x0f0f0f0f, AX
	VPBROADCASTD   AX, Z31
	MOVL           $0x80808080, AX
	VPBROADCASTD   AX, Z27
	VMOVDQU64      iq4shr<>(SB), Z30
	VBROADCASTI32X4 iq4lut<>(SB), Z29
	VMOVDQU64      iq4wd<>(SB), Y28
	VMOVDQU64      iq4xd<>(SB), Z26
	MOVQ           w+0(FP), R8
	MOVQ           ldw+8(FP), BX
	MOVQ           x+16(FP), DI
	MOVQ           nb+24(FP), CX
	SHRQ           $1, CX
	MOVQ           y+32(FP), DX
	MOVQ           q+40(FP), R14
	MOVQ           R14, AX
	IMULQ          BX, AX
	LEAQ           (R8)(AX*1), R9
	LEAQ           (R9)(AX*1), R10
	LEAQ           (R10)(AX*1), R11
	MOVQ           R14, SI
	SHLQ           $2, SI
	TESTQ          R14, R14
	JZ             bdone

brow:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   DI, R12
	MOVQ   CX, R13
	TESTQ  R13, R13
	JZ     bfin

bblk:
	PREFETCHT0    PFD(R8)(AX*1)
	PREFETCHT0    PFD(R9)(AX*1)
	PREFETCHT0    PFD(R10)(AX*1)
	PREFETCHT0    PFD(R11)(AX*1)
	VMOVDQU64     2(R12), Y16
	VINSERTI64X4  $1, 36(R12), Z16, Z16
	VPXORD        Z17, Z17, Z17
	VPDPBUSD      Z16, Z27, Z17
	VPXORD        Z18, Z18, Z18
	VPSUBD        Z17, Z18, Z17
	VPERMW        (R12), Z26, Z18
	VCVTPH2PS     Y18, Z18
	IQ4ROWB(R8, Y0)
	IQ4ROWB(R9, Y1)
	IQ4ROWB(R10, Y2)
	IQ4ROWB(R11, Y3)
	ADDQ $36, AX
	ADDQ $68, R12
	DECQ R13
	JNZ  bblk

bfin:
	KSUM8B(Y0, X0, X4, X8)
	KSUM8B(Y1, X1, X5, X8)
	KSUM8B(Y2, X2, X6, X8)
	KSUM8B(Y3, X3, X7, X8)
	VINSERTPS $0x10, X5, X4, X4
	VINSERTPS $0x20, X6, X4, X4
	VINSERTPS $0x30, X7, X4, X4
	VMOVAPS   X4, X0
	LEAQ      (DX)(SI*2), R13
	CMPQ      acc+48(FP), $0
	JEQ       bstore
	VMOVSS    (DX), X4
	VINSERTPS $0x10, (DX)(SI*1), X4, X4
	VINSERTPS $0x20, (R13), X4, X4
	VINSERTPS $0x30, (R13)(SI*1), X4, X4
	VADDPS    X4, X0, X0

bstore:
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
	JNZ        brow

bdone:
	VZEROUPPER
	RET

// The multi-token kernel: 4 rows × 4 tokens of a matmul of two or more
// tokens, each weight block unpacked once for the 4 tokens. A zmm holds
// one block for two tokens: lanes 0..7 the block's 8 dword sums with the
// first token, lanes 8..15 with the second (the weight levels broadcast to
// both halves), so each of a row's two accumulators per token pair fuses
// block after block into 8 lanes per token in ggml's batched order: no
// lane crosses, and a row of any number of blocks runs here.
//
// Registers: Z31 0x0f bytes, Z30 the shifts, Z29 the table, Z27 0x80
// bytes. Tokens 0,1: quants Z16, −128·Σ4 x Z17, [dx0 ×8, dx1 ×8] Z18;
// tokens 2,3: Z19, Z20, Z21. Accumulators: row j, pair k in Z(2j+k).

// IQ4ACT loads the Q8_0 blocks at a and a+R13 (two tokens) into quants
// qz, correction cz and scales sz (its ymm sy, xmm sx); Z12, X13 scratch.
#define IQ4ACT(a, qz, cz, sz, sy, sx) \
	VMOVDQU64       2(a), Y12; \
	VINSERTI64X4    $1, 2(a)(R13*1), Z12, qz; \
	VPXORD          cz, cz, cz; \
	VPDPBUSD        qz, Z27, cz; \
	VPXORD          Z12, Z12, Z12; \
	VPSUBD          cz, Z12, cz; \
	VPBROADCASTW    (a), sx; \
	VPBROADCASTW    (a)(R13*1), X13; \
	VINSERTI32X4    $1, X13, sy, sy; \
	VCVTPH2PS       sy, sz

// IQ4ROW4 unpacks the block at offset AX of the row at p once and fuses
// its products with the 4 tokens into a0 (tokens 0,1) and a1 (2,3).
#define IQ4ROW4(p, a0, a1) \
	VBROADCASTI32X4 2(p)(AX*1), Z8; \
	VPSRLVW         Z30, Z8, Z8; \
	VPANDD          Z31, Z8, Z8; \
	VPSHUFB         Z8, Z29, Z8; \
	VPBROADCASTW    (p)(AX*1), Y9; \
	VCVTPH2PS       Y9, Z9; \
	VMULPS          Z18, Z9, Z10; \
	VMOVDQA32       Z17, Z12; \
	VPDPBUSD        Z16, Z8, Z12; \
	VCVTDQ2PS       Z12, Z12; \
	VFMADD231PS     Z12, Z10, a0; \
	VMULPS          Z21, Z9, Z11; \
	VMOVDQA32       Z20, Z13; \
	VPDPBUSD        Z19, Z8, Z13; \
	VCVTDQ2PS       Z13, Z13; \
	VFMADD231PS     Z13, Z11, a1

// IQ4H8X2 reduces each 8-lane half of z as hsum8 (ggml's hsum_float_8):
// the first token's sum ends in lane 0, the second's in lane 8.
#define IQ4H8X2(z) \
	VSHUFF32X4 $0xb1, z, z, Z8; \
	VADDPS     Z8, z, z; \
	VPERMILPS  $0x4e, z, Z8; \
	VADDPS     Z8, z, z; \
	VPERMILPS  $0xb1, z, Z8; \
	VADDPS     Z8, z, z

// IQ4STORE4 writes (or, under K1, adds to) the 4 rows' values in x for the
// token whose outputs start at DI (rows SI bytes apart); X12 is scratch.
#define IQ4STORE4(x) \
	LEAQ       (DI)(SI*2), R12; \
	VMOVSS     (DI), X12; \
	VINSERTPS  $0x10, (DI)(SI*1), X12, X12; \
	VINSERTPS  $0x20, (R12), X12, X12; \
	VINSERTPS  $0x30, (R12)(SI*1), X12, X12; \
	VADDPS     X12, x, K1, x; \
	VMOVSS     x, (DI); \
	VEXTRACTPS $1, x, (DI)(SI*1); \
	VEXTRACTPS $2, x, (R12); \
	VEXTRACTPS $3, x, (R12)(SI*1)

// func gemm4x4IQ4_NLBVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb IQ4_NL blocks,
// ldw bytes apart) and 4 tokens t (rows of Q8_0 blocks at x, ldx bytes
// apart), y[t·ldy/4 + j·q + r] = w_{j·q+r}·x_t in ggml's batched order,
// or += when acc is not 0.
TEXT ·gemm4x4IQ4_NLBVNNI(SB), NOSPLIT, $0-72
	IQ4GEMMSETUP
	TESTQ           R14, R14
	JZ              mdone
	TESTQ           CX, CX
	JZ              mdone

mrow:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   x+16(FP), R12
	LEAQ   (R12)(R13*2), DI
	XORQ   AX, AX

mblk:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	IQ4ACT(R12, Z16, Z17, Z18, Y18, X18)
	IQ4ACT(DI, Z19, Z20, Z21, Y21, X21)
	IQ4ROW4(R8, Z0, Z1)
	IQ4ROW4(R9, Z2, Z3)
	IQ4ROW4(R10, Z4, Z5)
	IQ4ROW4(R11, Z6, Z7)
	ADDQ $18, AX
	ADDQ $34, R12
	ADDQ $34, DI
	CMPQ AX, CX
	JB   mblk

	IQ4H8X2(Z0)
	IQ4H8X2(Z1)
	IQ4H8X2(Z2)
	IQ4H8X2(Z3)
	IQ4H8X2(Z4)
	IQ4H8X2(Z5)
	IQ4H8X2(Z6)
	IQ4H8X2(Z7)

	// Token 0 (lane 0 of the even accumulators), then 1 (their lane 8),
	// 2 and 3 (the odd ones'), 4 rows to an xmm.
	VEXTRACTF32X4 $2, Z0, X16
	VEXTRACTF32X4 $2, Z2, X17
	VEXTRACTF32X4 $2, Z4, X18
	VEXTRACTF32X4 $2, Z6, X19
	VEXTRACTF32X4 $2, Z1, X20
	VEXTRACTF32X4 $2, Z3, X21
	VEXTRACTF32X4 $2, Z5, X22
	VEXTRACTF32X4 $2, Z7, X23
	VINSERTPS     $0x10, X2, X0, X0
	VINSERTPS     $0x20, X4, X0, X0
	VINSERTPS     $0x30, X6, X0, X0
	VINSERTPS     $0x10, X3, X1, X1
	VINSERTPS     $0x20, X5, X1, X1
	VINSERTPS     $0x30, X7, X1, X1
	VINSERTPS     $0x10, X17, X16, X16
	VINSERTPS     $0x20, X18, X16, X16
	VINSERTPS     $0x30, X19, X16, X16
	VINSERTPS     $0x10, X21, X20, X20
	VINSERTPS     $0x20, X22, X20, X20
	VINSERTPS     $0x30, X23, X20, X20
	MOVQ          DX, DI
	IQ4STORE4(X0)
	ADDQ          ldy+48(FP), DI
	IQ4STORE4(X16)
	ADDQ          ldy+48(FP), DI
	IQ4STORE4(X1)
	ADDQ          ldy+48(FP), DI
	IQ4STORE4(X20)
	ADDQ          $4, DX
	ADDQ          BX, R8
	ADDQ          BX, R9
	ADDQ          BX, R10
	ADDQ          BX, R11
	DECQ          R14
	JNZ           mrow

mdone:
	VZEROUPPER
	RET

// The 6-token kernel: as gemm4x4IQ4_NLBVNNI with three token pairs.
// Tokens 4,5: Z22, Z23, Z24; accumulators: row j, pair k in Z(3j+k);
// scratch Z12..Z15, Z25, Z26.

// IQ4ACTA is IQ4ACT with the two tokens' quants at qa, qb and scales at
// sa, sb (memory operands).
#define IQ4ACTA(qa, qb, sa, sb, qz, cz, sz, sy, sx) \
	VMOVDQU64       qa, Y12; \
	VINSERTI64X4    $1, qb, Z12, qz; \
	VPXORD          cz, cz, cz; \
	VPDPBUSD        qz, Z27, cz; \
	VPXORD          Z12, Z12, Z12; \
	VPSUBD          cz, Z12, cz; \
	VPBROADCASTW    sa, sx; \
	VPBROADCASTW    sb, X13; \
	VINSERTI32X4    $1, X13, sy, sy; \
	VCVTPH2PS       sy, sz

// IQ4ROW6 is IQ4ROW4 for 6 tokens: a0 (tokens 0,1), a1 (2,3), a2 (4,5).
#define IQ4ROW6(p, a0, a1, a2) \
	VBROADCASTI32X4 2(p)(AX*1), Z12; \
	VPSRLVW         Z30, Z12, Z12; \
	VPANDD          Z31, Z12, Z12; \
	VPSHUFB         Z12, Z29, Z12; \
	VPBROADCASTW    (p)(AX*1), Y13; \
	VCVTPH2PS       Y13, Z13; \
	VMULPS          Z18, Z13, Z14; \
	VMOVDQA32       Z17, Z15; \
	VPDPBUSD        Z16, Z12, Z15; \
	VCVTDQ2PS       Z15, Z15; \
	VFMADD231PS     Z15, Z14, a0; \
	VMULPS          Z21, Z13, Z25; \
	VMOVDQA32       Z20, Z26; \
	VPDPBUSD        Z19, Z12, Z26; \
	VCVTDQ2PS       Z26, Z26; \
	VFMADD231PS     Z26, Z25, a1; \
	VMULPS          Z24, Z13, Z14; \
	VMOVDQA32       Z23, Z15; \
	VPDPBUSD        Z22, Z12, Z15; \
	VCVTDQ2PS       Z15, Z15; \
	VFMADD231PS     Z15, Z14, a2

// IQ4H8X2T is IQ4H8X2 with scratch Z12.
#define IQ4H8X2T(z) \
	VSHUFF32X4 $0xb1, z, z, Z12; \
	VADDPS     Z12, z, z; \
	VPERMILPS  $0x4e, z, Z12; \
	VADDPS     Z12, z, z; \
	VPERMILPS  $0xb1, z, Z12; \
	VADDPS     Z12, z, z

// IQ4OUT2 stores the two tokens of the 4 rows' accumulators a0..a3 (xmm
// x0..x3) at DI and DI+ldy, and leaves DI two tokens on.
#define IQ4OUT2(a0, a1, a2, a3, x0, x1, x2, x3) \
	VEXTRACTF32X4 $2, a0, X16; \
	VEXTRACTF32X4 $2, a1, X17; \
	VEXTRACTF32X4 $2, a2, X18; \
	VEXTRACTF32X4 $2, a3, X19; \
	VINSERTPS     $0x10, x1, x0, x0; \
	VINSERTPS     $0x20, x2, x0, x0; \
	VINSERTPS     $0x30, x3, x0, x0; \
	VINSERTPS     $0x10, X17, X16, X16; \
	VINSERTPS     $0x20, X18, X16, X16; \
	VINSERTPS     $0x30, X19, X16, X16; \
	IQ4STORE4(x0); \
	ADDQ          ldy+48(FP), DI; \
	IQ4STORE4(X16); \
	ADDQ          ldy+48(FP), DI

// func gemm4x6IQ4_NLBVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)
// As gemm4x4IQ4_NLBVNNI for 6 tokens.
TEXT ·gemm4x6IQ4_NLBVNNI(SB), NOSPLIT, $0-72
	IQ4GEMMSETUP
	TESTQ           R14, R14
	JZ              sdone
	TESTQ           CX, CX
	JZ              sdone

srow:
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
	MOVQ   x+16(FP), R12
	LEAQ   (R12)(R13*2), DI
	ADDQ   R13, DI
	XORQ   AX, AX

	// Tokens: 0 at R12, 1 R12+R13, 2 R12+2·R13, 3 DI, 4 DI+R13, 5 DI+2·R13.
sblk:
	PREFETCHT0 PFD(R8)(AX*1)
	PREFETCHT0 PFD(R9)(AX*1)
	PREFETCHT0 PFD(R10)(AX*1)
	PREFETCHT0 PFD(R11)(AX*1)
	IQ4ACTA(2(R12), 2(R12)(R13*1), (R12), (R12)(R13*1), Z16, Z17, Z18, Y18, X18)
	IQ4ACTA(2(R12)(R13*2), 2(DI), (R12)(R13*2), (DI), Z19, Z20, Z21, Y21, X21)
	IQ4ACTA(2(DI)(R13*1), 2(DI)(R13*2), (DI)(R13*1), (DI)(R13*2), Z22, Z23, Z24, Y24, X24)
	IQ4ROW6(R8, Z0, Z1, Z2)
	IQ4ROW6(R9, Z3, Z4, Z5)
	IQ4ROW6(R10, Z6, Z7, Z8)
	IQ4ROW6(R11, Z9, Z10, Z11)
	ADDQ $18, AX
	ADDQ $34, R12
	ADDQ $34, DI
	CMPQ AX, CX
	JB   sblk

	IQ4H8X2T(Z0)
	IQ4H8X2T(Z1)
	IQ4H8X2T(Z2)
	IQ4H8X2T(Z3)
	IQ4H8X2T(Z4)
	IQ4H8X2T(Z5)
	IQ4H8X2T(Z6)
	IQ4H8X2T(Z7)
	IQ4H8X2T(Z8)
	IQ4H8X2T(Z9)
	IQ4H8X2T(Z10)
	IQ4H8X2T(Z11)
	MOVQ DX, DI
	IQ4OUT2(Z0, Z3, Z6, Z9, X0, X3, X6, X9)
	IQ4OUT2(Z1, Z4, Z7, Z10, X1, X4, X7, X10)
	IQ4OUT2(Z2, Z5, Z8, Z11, X2, X5, X8, X11)
	ADDQ BX, R8
	ADDQ BX, R9
	ADDQ BX, R10
	ADDQ BX, R11
	ADDQ $4, DX
	DECQ R14
	JNZ  srow

sdone:
	VZEROUPPER
	RET
