//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet: one kernel per function, little repeated between them (issue 18 item 3).

#include "textflag.h"

// Prefill GEMM for float32 weights, AVX-512: 12 weight rows × 32 tokens
// per tile. The activations come as a panel of 32 tokens transposed
// (k-major: 32 floats per k), the weights in tile layout (widenz_amd64.h):
// blocks of 8 elements of k, each the 12 rows' 8 values in turn (384
// bytes). Each k takes 2 vector loads, 12 broadcasts and 24 FMAs; the
// broadcasts read 6 cache lines at one-byte displacements from one
// register (R8, kept 192 bytes into the current block) instead of 12
// strided rows. (FMAs with the broadcast as their memory operand, 26
// micro-ops per k instead of 38, measured no faster: they load each
// weight twice, and the loads then compete with the core's other
// hyperthread.) Each accumulator holds 16 tokens of one row. The
// broadcasts rotate through Z24-Z27 (renaming makes more needless), which
// leaves Z28 and Z29 to the fused kernels' widening.

// KSTEP multiplies the 32 tokens at j·128(SI) with element j of the block
// at R8-192.
#define KSTEP(j) \
	VMOVUPS (j*128)(SI), Z30; \
	VMOVUPS (j*128+64)(SI), Z31; \
	VBROADCASTSS (j*4+0-192)(R8), Z24; \
	VBROADCASTSS (j*4+32-192)(R8), Z25; \
	VFMADD231PS  Z30, Z24, Z0; \
	VFMADD231PS  Z31, Z24, Z1; \
	VBROADCASTSS (j*4+64-192)(R8), Z26; \
	VFMADD231PS  Z30, Z25, Z2; \
	VFMADD231PS  Z31, Z25, Z3; \
	VBROADCASTSS (j*4+96-192)(R8), Z27; \
	VFMADD231PS  Z30, Z26, Z4; \
	VFMADD231PS  Z31, Z26, Z5; \
	VBROADCASTSS (j*4+128-192)(R8), Z24; \
	VFMADD231PS  Z30, Z27, Z6; \
	VFMADD231PS  Z31, Z27, Z7; \
	VBROADCASTSS (j*4+160-192)(R8), Z25; \
	VFMADD231PS  Z30, Z24, Z8; \
	VFMADD231PS  Z31, Z24, Z9; \
	VBROADCASTSS (j*4+192-192)(R8), Z26; \
	VFMADD231PS  Z30, Z25, Z10; \
	VFMADD231PS  Z31, Z25, Z11; \
	VBROADCASTSS (j*4+224-192)(R8), Z27; \
	VFMADD231PS  Z30, Z26, Z12; \
	VFMADD231PS  Z31, Z26, Z13; \
	VBROADCASTSS (j*4+256-192)(R8), Z24; \
	VFMADD231PS  Z30, Z27, Z14; \
	VFMADD231PS  Z31, Z27, Z15; \
	VBROADCASTSS (j*4+288-192)(R8), Z25; \
	VFMADD231PS  Z30, Z24, Z16; \
	VFMADD231PS  Z31, Z24, Z17; \
	VBROADCASTSS (j*4+320-192)(R8), Z26; \
	VFMADD231PS  Z30, Z25, Z18; \
	VFMADD231PS  Z31, Z25, Z19; \
	VBROADCASTSS (j*4+352-192)(R8), Z27; \
	VFMADD231PS  Z30, Z26, Z20; \
	VFMADD231PS  Z31, Z26, Z21; \
	VFMADD231PS  Z30, Z27, Z22; \
	VFMADD231PS  Z31, Z27, Z23

// BUFADD adds row i of the tile buffer at DI to lo, hi.
#define BUFADD(lo, hi, i) \
	VADDPS (i*128)(DI), lo, lo; \
	VADDPS (i*128+64)(DI), hi, hi

// BUFST stores lo, hi to row i of the tile buffer at DI.
#define BUFST(lo, hi, i) \
	VMOVUPS lo, (i*128)(DI); \
	VMOVUPS hi, (i*128+64)(DI)

// PREFETCH1 prefetches the next line of the region described at
// gemm12x32Z into L2, if any is left.
#define PREFETCH1 \
	TESTQ      R13, R13; \
	JEQ        8(PC); \
	PREFETCHT1 (R12)(R14*1); \
	DECQ       R13; \
	ADDQ       $64, R14; \
	CMPQ       R14, pfseg+64(FP); \
	JB         3(PC); \
	XORQ       R14, R14; \
	ADDQ       pfstride+56(FP), R12

// Fused widening (gemm12x32ZW*): the first panel of a tile converts the 12
// rows' weights to the tile layout itself, a block of 8 elements ahead of
// the one it multiplies, instead of widenTile*Z doing it in a pass of its
// own whose loads wait for the weights: here the loads' latency hides
// under the multiply-adds of the block before. Rows 0-11 of the source
// are at R9, R10, R11, AX (rows 0, 3, 6, 9) plus 0, 1 or 2 times BX (rb).
// Each WPAIR* writes rows 2p and 2p+1 of a block at disp(R8): 8 elements
// of each, as 16 float32s, through Z28 or Z29.

// WPAIRF16 converts 8 float16s of rows a and b.
#define WPAIRF16(a, b, z, y, x, disp) \
	VMOVDQU32    a, x; \
	VINSERTI32X4 $1, b, z, z; \
	VCVTPH2PS    y, z; \
	VMOVUPS      z, disp(R8)

// WPAIRBF16 widens 8 bfloat16s of rows a and b.
#define WPAIRBF16(a, b, z, y, x, disp) \
	VMOVDQU32    a, x; \
	VINSERTI32X4 $1, b, z, z; \
	VPMOVZXWD    y, z; \
	VPSLLD       $16, z, z; \
	VMOVUPS      z, disp(R8)

// WPAIRF32 copies 8 float32s of rows a and b.
#define WPAIRF32(a, b, z, y, x, disp) \
	VMOVUPS      a, y; \
	VINSERTF32X8 $1, b, z, z; \
	VMOVUPS      z, disp(R8)

// PREFETCHW1 is PREFETCH1 with the fused kernels' arguments.
#define PREFETCHW1 \
	TESTQ      R13, R13; \
	JEQ        8(PC); \
	PREFETCHT1 (R12)(R14*1); \
	DECQ       R13; \
	ADDQ       $64, R14; \
	CMPQ       R14, pfseg+80(FP); \
	JB         3(PC); \
	XORQ       R14, R14; \
	ADDQ       pfstride+72(FP), R12

// ZEROACC clears the 24 accumulators.
#define ZEROACC \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23

// ACCADD adds the tile buffer at DI to the accumulators; ACCST stores them
// there.
#define ACCADD \
	BUFADD(Z0, Z1, 0) \
	BUFADD(Z2, Z3, 1) \
	BUFADD(Z4, Z5, 2) \
	BUFADD(Z6, Z7, 3) \
	BUFADD(Z8, Z9, 4) \
	BUFADD(Z10, Z11, 5) \
	BUFADD(Z12, Z13, 6) \
	BUFADD(Z14, Z15, 7) \
	BUFADD(Z16, Z17, 8) \
	BUFADD(Z18, Z19, 9) \
	BUFADD(Z20, Z21, 10) \
	BUFADD(Z22, Z23, 11)

#define ACCST \
	BUFST(Z0, Z1, 0) \
	BUFST(Z2, Z3, 1) \
	BUFST(Z4, Z5, 2) \
	BUFST(Z6, Z7, 3) \
	BUFST(Z8, Z9, 4) \
	BUFST(Z10, Z11, 5) \
	BUFST(Z12, Z13, 6) \
	BUFST(Z14, Z15, 7) \
	BUFST(Z16, Z17, 8) \
	BUFST(Z18, Z19, 9) \
	BUFST(Z20, Z21, 10) \
	BUFST(Z22, Z23, 11)

// TRANSPOSE16 transposes the 16×16 floats in Z0-Z15 (row i in Zi) into
// Z0-Z15 (column j in Zj), through Z16-Z31: pairs of rows interleaved by
// floats, then by pairs of floats, then 128-bit lanes twice.
#define TRANSPOSE16 \
	VUNPCKLPS Z1, Z0, Z16; \
	VUNPCKHPS Z1, Z0, Z17; \
	VUNPCKLPS Z3, Z2, Z18; \
	VUNPCKHPS Z3, Z2, Z19; \
	VUNPCKLPS Z5, Z4, Z20; \
	VUNPCKHPS Z5, Z4, Z21; \
	VUNPCKLPS Z7, Z6, Z22; \
	VUNPCKHPS Z7, Z6, Z23; \
	VUNPCKLPS Z9, Z8, Z24; \
	VUNPCKHPS Z9, Z8, Z25; \
	VUNPCKLPS Z11, Z10, Z26; \
	VUNPCKHPS Z11, Z10, Z27; \
	VUNPCKLPS Z13, Z12, Z28; \
	VUNPCKHPS Z13, Z12, Z29; \
	VUNPCKLPS Z15, Z14, Z30; \
	VUNPCKHPS Z15, Z14, Z31; \
	VUNPCKLPD Z18, Z16, Z0; \
	VUNPCKHPD Z18, Z16, Z1; \
	VUNPCKLPD Z19, Z17, Z2; \
	VUNPCKHPD Z19, Z17, Z3; \
	VUNPCKLPD Z22, Z20, Z4; \
	VUNPCKHPD Z22, Z20, Z5; \
	VUNPCKLPD Z23, Z21, Z6; \
	VUNPCKHPD Z23, Z21, Z7; \
	VUNPCKLPD Z26, Z24, Z8; \
	VUNPCKHPD Z26, Z24, Z9; \
	VUNPCKLPD Z27, Z25, Z10; \
	VUNPCKHPD Z27, Z25, Z11; \
	VUNPCKLPD Z30, Z28, Z12; \
	VUNPCKHPD Z30, Z28, Z13; \
	VUNPCKLPD Z31, Z29, Z14; \
	VUNPCKHPD Z31, Z29, Z15; \
	VSHUFF32X4 $0x44, Z4, Z0, Z16; \
	VSHUFF32X4 $0xee, Z4, Z0, Z17; \
	VSHUFF32X4 $0x44, Z12, Z8, Z18; \
	VSHUFF32X4 $0xee, Z12, Z8, Z19; \
	VSHUFF32X4 $0x44, Z5, Z1, Z20; \
	VSHUFF32X4 $0xee, Z5, Z1, Z21; \
	VSHUFF32X4 $0x44, Z13, Z9, Z22; \
	VSHUFF32X4 $0xee, Z13, Z9, Z23; \
	VSHUFF32X4 $0x44, Z6, Z2, Z24; \
	VSHUFF32X4 $0xee, Z6, Z2, Z25; \
	VSHUFF32X4 $0x44, Z14, Z10, Z26; \
	VSHUFF32X4 $0xee, Z14, Z10, Z27; \
	VSHUFF32X4 $0x44, Z7, Z3, Z28; \
	VSHUFF32X4 $0xee, Z7, Z3, Z29; \
	VSHUFF32X4 $0x44, Z15, Z11, Z30; \
	VSHUFF32X4 $0xee, Z15, Z11, Z31; \
	VSHUFF32X4 $0x88, Z18, Z16, Z0; \
	VSHUFF32X4 $0xdd, Z18, Z16, Z4; \
	VSHUFF32X4 $0x88, Z19, Z17, Z8; \
	VSHUFF32X4 $0xdd, Z19, Z17, Z12; \
	VSHUFF32X4 $0x88, Z22, Z20, Z1; \
	VSHUFF32X4 $0xdd, Z22, Z20, Z5; \
	VSHUFF32X4 $0x88, Z23, Z21, Z9; \
	VSHUFF32X4 $0xdd, Z23, Z21, Z13; \
	VSHUFF32X4 $0x88, Z26, Z24, Z2; \
	VSHUFF32X4 $0xdd, Z26, Z24, Z6; \
	VSHUFF32X4 $0x88, Z27, Z25, Z10; \
	VSHUFF32X4 $0xdd, Z27, Z25, Z14; \
	VSHUFF32X4 $0x88, Z30, Z28, Z3; \
	VSHUFF32X4 $0xdd, Z30, Z28, Z7; \
	VSHUFF32X4 $0x88, Z31, Z29, Z11; \
	VSHUFF32X4 $0xdd, Z31, Z29, Z15

// func gemm12x32Z(w, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)
// Computes the 12-row × 32-token tile s[r][t] = Σ_{i<k} W[r][i]·xp[32i + t],
// with W in tile layout at w, over one reduction chunk and stores it to
// buf (row r at buf[32r]), adding what buf held when add ≠ 0. While it
// computes, it prefetches npf cache lines into L2 (one per 4 elements of
// k): the lines of segments pfseg bytes long that start pfstride bytes
// apart at pf, from byte pfoff of the first one on. That is where the next
// chunk of weights is read from.
TEXT ·gemm12x32Z(SB), NOSPLIT, $0-80
	MOVQ w+0(FP), R8
	MOVQ xp+8(FP), SI
	MOVQ k+16(FP), CX
	MOVQ pf+40(FP), R12
	MOVQ pfoff+48(FP), R14
	MOVQ npf+72(FP), R13
	ADDQ $192, R8
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
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ   CX, DX
	SHRQ   $3, DX
	JZ     tail

loop8:
	PREFETCH1
	KSTEP(0)
	KSTEP(1)
	KSTEP(2)
	KSTEP(3)
	PREFETCH1
	KSTEP(4)
	KSTEP(5)
	KSTEP(6)
	KSTEP(7)
	ADDQ $1024, SI
	ADDQ $384, R8
	DECQ DX
	JNZ  loop8

tail:
	ANDQ $7, CX
	JZ   epilogue

loop1:
	KSTEP(0)
	ADDQ $128, SI
	ADDQ $4, R8
	DECQ CX
	JNZ  loop1

epilogue:
	MOVQ  buf+24(FP), DI
	MOVQ  add+32(FP), AX
	TESTQ AX, AX
	JEQ   store
	BUFADD(Z0, Z1, 0)
	BUFADD(Z2, Z3, 1)
	BUFADD(Z4, Z5, 2)
	BUFADD(Z6, Z7, 3)
	BUFADD(Z8, Z9, 4)
	BUFADD(Z10, Z11, 5)
	BUFADD(Z12, Z13, 6)
	BUFADD(Z14, Z15, 7)
	BUFADD(Z16, Z17, 8)
	BUFADD(Z18, Z19, 9)
	BUFADD(Z20, Z21, 10)
	BUFADD(Z22, Z23, 11)

store:
	BUFST(Z0, Z1, 0)
	BUFST(Z2, Z3, 1)
	BUFST(Z4, Z5, 2)
	BUFST(Z6, Z7, 3)
	BUFST(Z8, Z9, 4)
	BUFST(Z10, Z11, 5)
	BUFST(Z12, Z13, 6)
	BUFST(Z14, Z15, 7)
	BUFST(Z16, Z17, 8)
	BUFST(Z18, Z19, 9)
	BUFST(Z20, Z21, 10)
	BUFST(Z22, Z23, 11)
	VZEROUPPER
	RET

// func unpanelZ(dst *float32, ldd uintptr, src *float32, rows, ntok, acc int)
// dst[t·ldd/4 + r] (+)= src[32r + t] for r < rows and t < ntok: the sums of
// a block's tiles (rows of 32 tokens, consecutive) into the token-major
// output, 16 rows per gather; with acc ≠ 0 added to dst.
TEXT ·unpanelZ(SB), NOSPLIT, $0-48
	MOVQ      dst+0(FP), DI
	MOVQ      ldd+8(FP), BX
	MOVQ      src+16(FP), SI
	MOVQ      rows+24(FP), CX
	MOVQ      ntok+32(FP), R8
	MOVQ      acc+40(FP), AX
	// Z30: byte offsets 128·l of rows l = 0..15 in src.
	VMOVDQU32 iota32<>(SB), Z30
	VPSLLD    $7, Z30, Z30
	// K2: the rows of the last group of 16.
	MOVQ      CX, R9
	ANDQ      $15, R9
	MOVL      $-1, R10
	BZHIQ     R9, R10, R10
	KMOVW     R10, K2
	SHRQ      $4, CX // full groups
	TESTQ     R8, R8
	JEQ       udone

utok:
	MOVQ SI, R11
	MOVQ DI, DX
	MOVQ CX, R9
	TESTQ R9, R9
	JEQ  utail

ugroup:
	KXNORW      K0, K0, K1
	VGATHERDPS  (R11)(Z30*1), K1, Z0
	TESTQ       AX, AX
	JEQ         4(PC)
	VADDPS      (DX), Z0, Z0
	VMOVUPS     Z0, (DX)
	JMP         2(PC)
	VMOVUPS     Z0, (DX)
	ADDQ        $2048, R11
	ADDQ        $64, DX
	DECQ        R9
	JNZ         ugroup

utail:
	KORTESTW    K2, K2
	JEQ         unext
	KMOVW       K2, K1
	VGATHERDPS  (R11)(Z30*1), K1, Z0
	TESTQ       AX, AX
	JEQ         3(PC)
	VMOVUPS.Z   (DX), K2, Z1
	VADDPS      Z1, Z0, Z0
	VMOVUPS     Z0, K2, (DX)

unext:
	ADDQ $4, SI
	ADDQ BX, DI
	DECQ R8
	JNZ  utok

udone:
	VZEROUPPER
	RET

// 0, 1, ..., 31 as int32.
DATA iota32<>+0(SB)/8, $0x0000000100000000
DATA iota32<>+8(SB)/8, $0x0000000300000002
DATA iota32<>+16(SB)/8, $0x0000000500000004
DATA iota32<>+24(SB)/8, $0x0000000700000006
DATA iota32<>+32(SB)/8, $0x0000000900000008
DATA iota32<>+40(SB)/8, $0x0000000b0000000a
DATA iota32<>+48(SB)/8, $0x0000000d0000000c
DATA iota32<>+56(SB)/8, $0x0000000f0000000e
DATA iota32<>+64(SB)/8, $0x0000001100000010
DATA iota32<>+72(SB)/8, $0x0000001300000012
DATA iota32<>+80(SB)/8, $0x0000001500000014
DATA iota32<>+88(SB)/8, $0x0000001700000016
DATA iota32<>+96(SB)/8, $0x0000001900000018
DATA iota32<>+104(SB)/8, $0x0000001b0000001a
DATA iota32<>+112(SB)/8, $0x0000001d0000001c
DATA iota32<>+120(SB)/8, $0x0000001f0000001e
GLOBL iota32<>(SB), RODATA|NOPTR, $128

// func packPanelZ(dst, x *float32, ld, cols, ntok int)
// dst[32c + t] = x[t·ld + c] for c < cols and t < 32 (0 for t ≥ ntok).
TEXT ·packPanelZ(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         ld+16(FP), BX
	MOVQ         cols+24(FP), CX
	MOVQ         ntok+32(FP), DX
	SHLQ         $2, BX
	VPBROADCASTD BX, Z26
	VMOVDQU32    iota32<>(SB), Z24
	VMOVDQU32    iota32<>+64(SB), Z25
	VPMULLD      Z26, Z24, Z24 // byte offsets of tokens 0-15
	VPMULLD      Z26, Z25, Z25 // and 16-31
	MOVL         $-1, R12
	BZHIQ        DX, R12, R12
	KMOVW        R12, K1
	SHRQ         $16, R12
	KMOVW        R12, K2
	TESTQ        CX, CX
	JZ           done

loop:
	KMOVW       K1, K3
	KMOVW       K2, K4
	VPXORD      Z0, Z0, Z0
	VPXORD      Z1, Z1, Z1
	VGATHERDPS  (SI)(Z24*1), K3, Z0
	VGATHERDPS  (SI)(Z25*1), K4, Z1
	VMOVUPS     Z0, (DI)
	VMOVUPS     Z1, 64(DI)
	ADDQ        $4, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         loop

done:
	VZEROUPPER
	RET

// func gemm12x32ZWF16(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)
// Is gemm12x32Z for k a positive multiple of 8 with the tile at w written
// first, from 12 rows of float16 weights rb bytes apart at src, as
// widenTileF16Z writes it.
TEXT ·gemm12x32ZWF16(SB), NOSPLIT, $0-96
	MOVQ w+0(FP), R8
	MOVQ src+8(FP), R9
	MOVQ rb+16(FP), BX
	MOVQ xp+24(FP), SI
	MOVQ k+32(FP), DX
	MOVQ pf+56(FP), R12
	MOVQ pfoff+64(FP), R14
	MOVQ npf+88(FP), R13
	LEAQ (R9)(BX*2), R10
	ADDQ BX, R10
	LEAQ (R10)(BX*2), R11
	ADDQ BX, R11
	LEAQ (R11)(BX*2), AX
	ADDQ BX, AX
	ADDQ $192, R8
	SHRQ $3, DX
	WPAIRF16((R9), (R9)(BX*1), Z28, Y28, X28, -192)
	WPAIRF16((R9)(BX*2), (R10), Z29, Y29, X29, -128)
	WPAIRF16((R10)(BX*1), (R10)(BX*2), Z28, Y28, X28, -64)
	WPAIRF16((R11), (R11)(BX*1), Z29, Y29, X29, 0)
	WPAIRF16((R11)(BX*2), (AX), Z28, Y28, X28, 64)
	WPAIRF16((AX)(BX*1), (AX)(BX*2), Z29, Y29, X29, 128)
	ZEROACC
	DECQ DX
	JZ   last

loop8:
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $16, AX
	PREFETCHW1
	KSTEP(0)
	WPAIRF16((R9), (R9)(BX*1), Z28, Y28, X28, 192)
	KSTEP(1)
	WPAIRF16((R9)(BX*2), (R10), Z29, Y29, X29, 256)
	KSTEP(2)
	WPAIRF16((R10)(BX*1), (R10)(BX*2), Z28, Y28, X28, 320)
	KSTEP(3)
	PREFETCHW1
	WPAIRF16((R11), (R11)(BX*1), Z29, Y29, X29, 384)
	KSTEP(4)
	WPAIRF16((R11)(BX*2), (AX), Z28, Y28, X28, 448)
	KSTEP(5)
	WPAIRF16((AX)(BX*1), (AX)(BX*2), Z29, Y29, X29, 512)
	KSTEP(6)
	KSTEP(7)
	ADDQ $1024, SI
	ADDQ $384, R8
	DECQ DX
	JNZ  loop8

last:
	PREFETCHW1
	KSTEP(0)
	KSTEP(1)
	KSTEP(2)
	KSTEP(3)
	PREFETCHW1
	KSTEP(4)
	KSTEP(5)
	KSTEP(6)
	KSTEP(7)
	MOVQ  buf+40(FP), DI
	MOVQ  add+48(FP), CX
	TESTQ CX, CX
	JEQ   store
	ACCADD

store:
	ACCST
	VZEROUPPER
	RET

// func gemm12x32ZWBF16(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)
// Is gemm12x32Z for k a positive multiple of 8 with the tile at w written
// first, from 12 rows of bfloat16 weights rb bytes apart at src, as
// widenTileBF16Z writes it.
TEXT ·gemm12x32ZWBF16(SB), NOSPLIT, $0-96
	MOVQ w+0(FP), R8
	MOVQ src+8(FP), R9
	MOVQ rb+16(FP), BX
	MOVQ xp+24(FP), SI
	MOVQ k+32(FP), DX
	MOVQ pf+56(FP), R12
	MOVQ pfoff+64(FP), R14
	MOVQ npf+88(FP), R13
	LEAQ (R9)(BX*2), R10
	ADDQ BX, R10
	LEAQ (R10)(BX*2), R11
	ADDQ BX, R11
	LEAQ (R11)(BX*2), AX
	ADDQ BX, AX
	ADDQ $192, R8
	SHRQ $3, DX
	WPAIRBF16((R9), (R9)(BX*1), Z28, Y28, X28, -192)
	WPAIRBF16((R9)(BX*2), (R10), Z29, Y29, X29, -128)
	WPAIRBF16((R10)(BX*1), (R10)(BX*2), Z28, Y28, X28, -64)
	WPAIRBF16((R11), (R11)(BX*1), Z29, Y29, X29, 0)
	WPAIRBF16((R11)(BX*2), (AX), Z28, Y28, X28, 64)
	WPAIRBF16((AX)(BX*1), (AX)(BX*2), Z29, Y29, X29, 128)
	ZEROACC
	DECQ DX
	JZ   last

loop8:
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $16, AX
	PREFETCHW1
	KSTEP(0)
	WPAIRBF16((R9), (R9)(BX*1), Z28, Y28, X28, 192)
	KSTEP(1)
	WPAIRBF16((R9)(BX*2), (R10), Z29, Y29, X29, 256)
	KSTEP(2)
	WPAIRBF16((R10)(BX*1), (R10)(BX*2), Z28, Y28, X28, 320)
	KSTEP(3)
	PREFETCHW1
	WPAIRBF16((R11), (R11)(BX*1), Z29, Y29, X29, 384)
	KSTEP(4)
	WPAIRBF16((R11)(BX*2), (AX), Z28, Y28, X28, 448)
	KSTEP(5)
	WPAIRBF16((AX)(BX*1), (AX)(BX*2), Z29, Y29, X29, 512)
	KSTEP(6)
	KSTEP(7)
	ADDQ $1024, SI
	ADDQ $384, R8
	DECQ DX
	JNZ  loop8

last:
	PREFETCHW1
	KSTEP(0)
	KSTEP(1)
	KSTEP(2)
	KSTEP(3)
	PREFETCHW1
	KSTEP(4)
	KSTEP(5)
	KSTEP(6)
	KSTEP(7)
	MOVQ  buf+40(FP), DI
	MOVQ  add+48(FP), CX
	TESTQ CX, CX
	JEQ   store
	ACCADD

store:
	ACCST
	VZEROUPPER
	RET

// func gemm12x32ZWF32(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)
// Is gemm12x32Z for k a positive multiple of 8 with the tile at w written
// first, from 12 rows of float32 weights rb bytes apart at src, as
// widenTileF32Z writes it.
TEXT ·gemm12x32ZWF32(SB), NOSPLIT, $0-96
	MOVQ w+0(FP), R8
	MOVQ src+8(FP), R9
	MOVQ rb+16(FP), BX
	MOVQ xp+24(FP), SI
	MOVQ k+32(FP), DX
	MOVQ pf+56(FP), R12
	MOVQ pfoff+64(FP), R14
	MOVQ npf+88(FP), R13
	LEAQ (R9)(BX*2), R10
	ADDQ BX, R10
	LEAQ (R10)(BX*2), R11
	ADDQ BX, R11
	LEAQ (R11)(BX*2), AX
	ADDQ BX, AX
	ADDQ $192, R8
	SHRQ $3, DX
	WPAIRF32((R9), (R9)(BX*1), Z28, Y28, X28, -192)
	WPAIRF32((R9)(BX*2), (R10), Z29, Y29, X29, -128)
	WPAIRF32((R10)(BX*1), (R10)(BX*2), Z28, Y28, X28, -64)
	WPAIRF32((R11), (R11)(BX*1), Z29, Y29, X29, 0)
	WPAIRF32((R11)(BX*2), (AX), Z28, Y28, X28, 64)
	WPAIRF32((AX)(BX*1), (AX)(BX*2), Z29, Y29, X29, 128)
	ZEROACC
	DECQ DX
	JZ   last

loop8:
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, AX
	PREFETCHW1
	KSTEP(0)
	WPAIRF32((R9), (R9)(BX*1), Z28, Y28, X28, 192)
	KSTEP(1)
	WPAIRF32((R9)(BX*2), (R10), Z29, Y29, X29, 256)
	KSTEP(2)
	WPAIRF32((R10)(BX*1), (R10)(BX*2), Z28, Y28, X28, 320)
	KSTEP(3)
	PREFETCHW1
	WPAIRF32((R11), (R11)(BX*1), Z29, Y29, X29, 384)
	KSTEP(4)
	WPAIRF32((R11)(BX*2), (AX), Z28, Y28, X28, 448)
	KSTEP(5)
	WPAIRF32((AX)(BX*1), (AX)(BX*2), Z29, Y29, X29, 512)
	KSTEP(6)
	KSTEP(7)
	ADDQ $1024, SI
	ADDQ $384, R8
	DECQ DX
	JNZ  loop8

last:
	PREFETCHW1
	KSTEP(0)
	KSTEP(1)
	KSTEP(2)
	KSTEP(3)
	PREFETCHW1
	KSTEP(4)
	KSTEP(5)
	KSTEP(6)
	KSTEP(7)
	MOVQ  buf+40(FP), DI
	MOVQ  add+48(FP), CX
	TESTQ CX, CX
	JEQ   store
	ACCADD

store:
	ACCST
	VZEROUPPER
	RET

// func packPanel16Z(dst, x *float32, ld uintptr, groups int)
// Is packPanelZ for 32 tokens (ld bytes apart) and 16·groups elements,
// by 16×16 transposes instead of gathers: dst[32c + t] = x[t·ld/4 + c].
TEXT ·packPanel16Z(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  x+8(FP), R8
	MOVQ  ld+16(FP), BX
	MOVQ  groups+24(FP), CX
	TESTQ CX, CX
	JEQ   pdone

pgroup:
	MOVQ R8, SI
	XORQ DX, DX

phalf:
	VMOVUPS (SI), Z0
	ADDQ    BX, SI
	VMOVUPS (SI), Z1
	ADDQ    BX, SI
	VMOVUPS (SI), Z2
	ADDQ    BX, SI
	VMOVUPS (SI), Z3
	ADDQ    BX, SI
	VMOVUPS (SI), Z4
	ADDQ    BX, SI
	VMOVUPS (SI), Z5
	ADDQ    BX, SI
	VMOVUPS (SI), Z6
	ADDQ    BX, SI
	VMOVUPS (SI), Z7
	ADDQ    BX, SI
	VMOVUPS (SI), Z8
	ADDQ    BX, SI
	VMOVUPS (SI), Z9
	ADDQ    BX, SI
	VMOVUPS (SI), Z10
	ADDQ    BX, SI
	VMOVUPS (SI), Z11
	ADDQ    BX, SI
	VMOVUPS (SI), Z12
	ADDQ    BX, SI
	VMOVUPS (SI), Z13
	ADDQ    BX, SI
	VMOVUPS (SI), Z14
	ADDQ    BX, SI
	VMOVUPS (SI), Z15
	ADDQ    BX, SI
	TRANSPOSE16
	VMOVUPS Z0, 0(DI)(DX*1)
	VMOVUPS Z1, 128(DI)(DX*1)
	VMOVUPS Z2, 256(DI)(DX*1)
	VMOVUPS Z3, 384(DI)(DX*1)
	VMOVUPS Z4, 512(DI)(DX*1)
	VMOVUPS Z5, 640(DI)(DX*1)
	VMOVUPS Z6, 768(DI)(DX*1)
	VMOVUPS Z7, 896(DI)(DX*1)
	VMOVUPS Z8, 1024(DI)(DX*1)
	VMOVUPS Z9, 1152(DI)(DX*1)
	VMOVUPS Z10, 1280(DI)(DX*1)
	VMOVUPS Z11, 1408(DI)(DX*1)
	VMOVUPS Z12, 1536(DI)(DX*1)
	VMOVUPS Z13, 1664(DI)(DX*1)
	VMOVUPS Z14, 1792(DI)(DX*1)
	VMOVUPS Z15, 1920(DI)(DX*1)
	ADDQ $64, DX
	CMPQ DX, $128
	JB   phalf
	ADDQ $64, R8
	ADDQ $2048, DI
	DECQ CX
	JNZ  pgroup

pdone:
	VZEROUPPER
	RET

// func unpanel16Z(dst *float32, ldd uintptr, src *float32, groups, acc int)
// Is unpanelZ for 32 tokens and 16·groups rows, by 16×16 transposes
// instead of gathers: dst[t·ldd/4 + r] (+)= src[32r + t].
TEXT ·unpanel16Z(SB), NOSPLIT, $0-40
	MOVQ  dst+0(FP), DI
	MOVQ  ldd+8(FP), BX
	MOVQ  src+16(FP), SI
	MOVQ  groups+24(FP), CX
	MOVQ  acc+32(FP), AX
	TESTQ CX, CX
	JEQ   udone16

ugroup16:
	MOVQ DI, DX
	XORQ R9, R9

uhalf16:
	VMOVUPS 0(SI)(R9*1), Z0
	VMOVUPS 128(SI)(R9*1), Z1
	VMOVUPS 256(SI)(R9*1), Z2
	VMOVUPS 384(SI)(R9*1), Z3
	VMOVUPS 512(SI)(R9*1), Z4
	VMOVUPS 640(SI)(R9*1), Z5
	VMOVUPS 768(SI)(R9*1), Z6
	VMOVUPS 896(SI)(R9*1), Z7
	VMOVUPS 1024(SI)(R9*1), Z8
	VMOVUPS 1152(SI)(R9*1), Z9
	VMOVUPS 1280(SI)(R9*1), Z10
	VMOVUPS 1408(SI)(R9*1), Z11
	VMOVUPS 1536(SI)(R9*1), Z12
	VMOVUPS 1664(SI)(R9*1), Z13
	VMOVUPS 1792(SI)(R9*1), Z14
	VMOVUPS 1920(SI)(R9*1), Z15
	TRANSPOSE16
	TESTQ AX, AX
	JEQ   ustore16
	VADDPS (DX), Z0, Z0
	VMOVUPS Z0, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z1, Z1
	VMOVUPS Z1, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z2, Z2
	VMOVUPS Z2, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z3, Z3
	VMOVUPS Z3, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z4, Z4
	VMOVUPS Z4, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z5, Z5
	VMOVUPS Z5, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z6, Z6
	VMOVUPS Z6, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z7, Z7
	VMOVUPS Z7, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z8, Z8
	VMOVUPS Z8, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z9, Z9
	VMOVUPS Z9, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z10, Z10
	VMOVUPS Z10, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z11, Z11
	VMOVUPS Z11, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z12, Z12
	VMOVUPS Z12, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z13, Z13
	VMOVUPS Z13, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z14, Z14
	VMOVUPS Z14, (DX)
	ADDQ   BX, DX
	VADDPS (DX), Z15, Z15
	VMOVUPS Z15, (DX)
	ADDQ   BX, DX
	JMP   unext16

ustore16:
	VMOVUPS Z0, (DX)
	ADDQ   BX, DX
	VMOVUPS Z1, (DX)
	ADDQ   BX, DX
	VMOVUPS Z2, (DX)
	ADDQ   BX, DX
	VMOVUPS Z3, (DX)
	ADDQ   BX, DX
	VMOVUPS Z4, (DX)
	ADDQ   BX, DX
	VMOVUPS Z5, (DX)
	ADDQ   BX, DX
	VMOVUPS Z6, (DX)
	ADDQ   BX, DX
	VMOVUPS Z7, (DX)
	ADDQ   BX, DX
	VMOVUPS Z8, (DX)
	ADDQ   BX, DX
	VMOVUPS Z9, (DX)
	ADDQ   BX, DX
	VMOVUPS Z10, (DX)
	ADDQ   BX, DX
	VMOVUPS Z11, (DX)
	ADDQ   BX, DX
	VMOVUPS Z12, (DX)
	ADDQ   BX, DX
	VMOVUPS Z13, (DX)
	ADDQ   BX, DX
	VMOVUPS Z14, (DX)
	ADDQ   BX, DX
	VMOVUPS Z15, (DX)
	ADDQ   BX, DX

unext16:
	ADDQ $64, R9
	CMPQ R9, $128
	JB   uhalf16
	ADDQ $64, DI
	ADDQ $2048, SI
	DECQ CX
	JNZ  ugroup16

udone16:
	VZEROUPPER
	RET
