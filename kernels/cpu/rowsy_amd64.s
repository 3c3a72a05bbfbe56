//go:build amd64 && !noasm

#include "textflag.h"

// Row kernels and conversions, AVX2 + FMA + F16C. They process n rounded
// down to a multiple of 8; the Go wrappers finish the rest.

// EXPCONSTY loads the clamps and polynomial constants of EXPY: Y15 -104,
// Y14 89, Y13 1.0, Y12 0.5; the rest come from memory.
#define EXPCONSTY \
	MOVL $0xc2d00000, AX; MOVD AX, X15; VPBROADCASTD X15, Y15; \
	MOVL $0x42b20000, AX; MOVD AX, X14; VPBROADCASTD X14, Y14; \
	MOVL $0x3f800000, AX; MOVD AX, X13; VPBROADCASTD X13, Y13; \
	MOVL $0x3f000000, AX; MOVD AX, X12; VPBROADCASTD X12, Y12

DATA expy<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expy<>+4(SB)/4, $0x3f317200  // ln2 high
DATA expy<>+8(SB)/4, $0x35bfbe8e  // ln2 low
DATA expy<>+12(SB)/4, $0x39500d01 // 1/7!
DATA expy<>+16(SB)/4, $0x3ab60b61 // 1/6!
DATA expy<>+20(SB)/4, $0x3c088889 // 1/5!
DATA expy<>+24(SB)/4, $0x3d2aaaab // 1/4!
DATA expy<>+28(SB)/4, $0x3e2aaaab // 1/3!
DATA expy<>+32(SB)/4, $127
GLOBL expy<>(SB), RODATA|NOPTR, $36

// EXPY replaces the 8 floats of x by exp(x), as EXPZ does (degree-7
// Taylor polynomial of e^r, x = k·ln2 + r), scaling by 2^k as two factors
// 2^(k/2)·2^(k-k/2) that stay normal over the clamped range. k, p, t are
// scratch.
#define EXPY(x, k, p, t) \
	VMAXPS       x, Y15, x; \
	VMINPS       x, Y14, x; \
	VBROADCASTSS expy<>+0(SB), k; \
	VMULPS       k, x, k; \
	VROUNDPS     $0, k, k; \
	VBROADCASTSS expy<>+4(SB), t; \
	VFNMADD231PS t, k, x; \
	VBROADCASTSS expy<>+8(SB), t; \
	VFNMADD231PS t, k, x; \
	VBROADCASTSS expy<>+12(SB), p; \
	VBROADCASTSS expy<>+16(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS expy<>+20(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS expy<>+24(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS expy<>+28(SB), t; \
	VFMADD213PS  t, x, p; \
	VFMADD213PS  Y12, x, p; \
	VFMADD213PS  Y13, x, p; \
	VFMADD213PS  Y13, x, p; \
	VCVTPS2DQ    k, k; \
	VPSRAD       $1, k, t; \
	VPSUBD       t, k, k; \
	VPBROADCASTD expy<>+32(SB), x; \
	VPADDD       x, t, t; \
	VPADDD       x, k, k; \
	VPSLLD       $23, t, t; \
	VPSLLD       $23, k, k; \
	VMULPS       t, p, p; \
	VMULPS       k, p, x

// func expSumY(x *float32, n int, m float32) float32
TEXT ·expSumY(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	ANDQ         $-8, CX
	VBROADCASTSS m+16(FP), Y11
	EXPCONSTY
	VXORPS       Y0, Y0, Y0
	XORQ         AX, AX
	JMP          test

loop:
	VMOVUPS (DI)(AX*4), Y1
	VSUBPS  Y11, Y1, Y1
	EXPY(Y1, Y2, Y3, Y4)
	VMOVUPS Y1, (DI)(AX*4)
	VADDPS  Y1, Y0, Y0
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// SIGMOIDY sets v = v / (1 + exp(u)), overwriting u; t1..t3 scratch.
#define SIGMOIDY(v, u, t1, t2, t3) \
	EXPY(u, t1, t2, t3); \
	VADDPS Y13, u, u; \
	VDIVPS u, v, v

// func siluY(dst, x *float32, n int)
TEXT ·siluY(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	EXPCONSTY
	MOVL         $0x80000000, AX
	MOVD         AX, X10
	VPBROADCASTD X10, Y10
	XORQ         AX, AX
	JMP          test

loop:
	VMOVUPS (SI)(AX*4), Y1
	VXORPS  Y10, Y1, Y2
	SIGMOIDY(Y1, Y2, Y3, Y4, Y5)
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func swigluY(dst, gate, up *float32, n int)
TEXT ·swigluY(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ n+24(FP), CX
	ANDQ $-8, CX
	EXPCONSTY
	MOVL         $0x80000000, AX
	MOVD         AX, X10
	VPBROADCASTD X10, Y10
	XORQ         AX, AX
	JMP          test

loop:
	VMOVUPS (SI)(AX*4), Y1
	VXORPS  Y10, Y1, Y2
	SIGMOIDY(Y1, Y2, Y3, Y4, Y5)
	VMULPS  (R8)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func geluTanhY(dst, x *float32, n int)
TEXT ·geluTanhY(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	EXPCONSTY
	MOVL         $0x3d372713, AX // 0.044715
	MOVD         AX, X10
	VPBROADCASTD X10, Y10
	MOVL         $0xbfcc422a, AX // -2·sqrt(2/π)
	MOVD         AX, X9
	VPBROADCASTD X9, Y9
	XORQ         AX, AX
	JMP          test

loop:
	VMOVUPS     (SI)(AX*4), Y1
	VMULPS      Y1, Y1, Y2
	VMULPS      Y10, Y2, Y2
	VFMADD213PS Y1, Y1, Y2
	VMULPS      Y9, Y2, Y2
	SIGMOIDY(Y1, Y2, Y3, Y4, Y5)
	VMOVUPS     Y1, (DI)(AX*4)
	ADDQ        $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func maxY(x *float32, n int) float32
// n ≥ 8.
TEXT ·maxY(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), DI
	MOVQ    n+8(FP), CX
	ANDQ    $-8, CX
	VMOVUPS (DI), Y0
	MOVQ    $8, AX
	JMP     test

loop:
	VMAXPS (DI)(AX*4), Y0, Y0
	ADDQ   $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func sumSqLanesY(l *[8]float64, x *float32, n int)
// l[j] = Σ x[i]² over i < n (a multiple of 8) with i%8 = j: each square
// rounded to float32, widened and added in float64 in order of i. Y0
// holds lanes 0-3, Y2 lanes 4-7.
TEXT ·sumSqLanesY(SB), NOSPLIT, $0-24
	MOVQ   l+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y2, Y2, Y2
	XORQ   AX, AX
	TESTQ  CX, CX
	JZ     done

loop:
	VMOVUPS      (SI)(AX*4), Y1
	VMULPS       Y1, Y1, Y1
	VCVTPS2PD    X1, Y3
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD    X1, Y1
	VADDPD       Y3, Y0, Y0
	VADDPD       Y1, Y2, Y2
	ADDQ         $8, AX
	CMPQ         AX, CX
	JB           loop

done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y2, 32(DI)
	VZEROUPPER
	RET

// func scaleY(dst, x *float32, n int, a float32)
TEXT ·scaleY(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	ANDQ         $-8, CX
	VBROADCASTSS a+24(FP), Y9
	XORQ         AX, AX
	JMP          test

loop:
	VMULPS  (SI)(AX*4), Y9, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func scaleMulY(dst, x, w *float32, n int, a float32)
TEXT ·scaleMulY(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), R8
	MOVQ         n+24(FP), CX
	ANDQ         $-8, CX
	VBROADCASTSS a+32(FP), Y9
	XORQ         AX, AX
	JMP          test

loop:
	VMULPS  (SI)(AX*4), Y9, Y1
	VMULPS  (R8)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func addY(dst, a, b *float32, n int)
TEXT ·addY(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VMOVUPS (SI)(AX*4), Y1
	VADDPS  (R8)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func mulY(dst, a, b *float32, n int)
TEXT ·mulY(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VMOVUPS (SI)(AX*4), Y1
	VMULPS  (R8)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func axpyY(y, x *float32, n int, a float32)
TEXT ·axpyY(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	ANDQ         $-8, CX
	VBROADCASTSS a+24(FP), Y9
	XORQ         AX, AX
	JMP          test

loop:
	VMOVUPS     (DI)(AX*4), Y1
	VFMADD231PS (SI)(AX*4), Y9, Y1
	VMOVUPS     Y1, (DI)(AX*4)
	ADDQ        $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func axpyRowsY(o, p, v *float32, stride uintptr, n, hd int)
// o[i] += Σ_{r<n} p[r]·v[r·stride/4 + i] for i < hd rounded down to 8.
TEXT ·axpyRowsY(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	ANDQ $-8, R10
	XORQ AX, AX
	JMP  ctest

chunk:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	LEAQ   (R8)(AX*4), R9
	XORQ   R13, R13
	MOVQ   CX, R14
	ANDQ   $-2, R14
	JMP    rtest

rows2:
	VBROADCASTSS (SI)(R13*4), Y4
	VBROADCASTSS 4(SI)(R13*4), Y5
	VFMADD231PS  (R9), Y4, Y0
	VFMADD231PS  (R9)(BX*1), Y5, Y1
	LEAQ         (R9)(BX*2), R9
	ADDQ         $2, R13

rtest:
	CMPQ R13, R14
	JB   rows2
	CMPQ R13, CX
	JAE  store
	VBROADCASTSS (SI)(R13*4), Y4
	VFMADD231PS  (R9), Y4, Y0

store:
	VADDPS  Y1, Y0, Y0
	VADDPS  (DI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX

ctest:
	CMPQ AX, R10
	JB   chunk
	VZEROUPPER
	RET

// func f16ToF32Y(dst *float32, src *uint16, n int)
TEXT ·f16ToF32Y(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VCVTPH2PS (SI)(AX*2), Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ      $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func bf16ToF32Y(dst *float32, src *uint16, n int)
TEXT ·bf16ToF32Y(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VPMOVZXWD (SI)(AX*2), Y0
	VPSLLD    $16, Y0, Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ      $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func f32ToF16Y(dst *uint16, src *float32, n int)
TEXT ·f32ToF16Y(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VMOVUPS   (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU   X1, (DI)(AX*2)
	ADDQ      $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET
