//go:build amd64 && !noasm

// Hand-written: the exp/activation/conversion row kernels, each one of a kind; the element-wise ones are generated (rowsew_amd64.s).

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

// Constants of GGEXPY, 8 copies each: 0 0x1.8p23, 32 log2e, 64 1, 96 and
// 128 ln2 high and low, 160..288 the polynomial's coefficients, 320 192,
// 352 +Inf, 384 0x7fffffff, 416 -0.0, 448 int32 127.
DATA ggy<>+0(SB)/8, $0x4b4000004b400000 // R
DATA ggy<>+8(SB)/8, $0x4b4000004b400000
DATA ggy<>+16(SB)/8, $0x4b4000004b400000
DATA ggy<>+24(SB)/8, $0x4b4000004b400000
DATA ggy<>+32(SB)/8, $0x3fb8aa3b3fb8aa3b // L2E
DATA ggy<>+40(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA ggy<>+48(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA ggy<>+56(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA ggy<>+64(SB)/8, $0x3f8000003f800000 // ONE
DATA ggy<>+72(SB)/8, $0x3f8000003f800000
DATA ggy<>+80(SB)/8, $0x3f8000003f800000
DATA ggy<>+88(SB)/8, $0x3f8000003f800000
DATA ggy<>+96(SB)/8, $0x3f3172003f317200 // LN2HI
DATA ggy<>+104(SB)/8, $0x3f3172003f317200
DATA ggy<>+112(SB)/8, $0x3f3172003f317200
DATA ggy<>+120(SB)/8, $0x3f3172003f317200
DATA ggy<>+128(SB)/8, $0x35bfbe8e35bfbe8e // LN2LO
DATA ggy<>+136(SB)/8, $0x35bfbe8e35bfbe8e
DATA ggy<>+144(SB)/8, $0x35bfbe8e35bfbe8e
DATA ggy<>+152(SB)/8, $0x35bfbe8e35bfbe8e
DATA ggy<>+160(SB)/8, $0x3c0720103c072010 // P5
DATA ggy<>+168(SB)/8, $0x3c0720103c072010
DATA ggy<>+176(SB)/8, $0x3c0720103c072010
DATA ggy<>+184(SB)/8, $0x3c0720103c072010
DATA ggy<>+192(SB)/8, $0x3d2b9f173d2b9f17 // P4
DATA ggy<>+200(SB)/8, $0x3d2b9f173d2b9f17
DATA ggy<>+208(SB)/8, $0x3d2b9f173d2b9f17
DATA ggy<>+216(SB)/8, $0x3d2b9f173d2b9f17
DATA ggy<>+224(SB)/8, $0x3e2aaf333e2aaf33 // P3
DATA ggy<>+232(SB)/8, $0x3e2aaf333e2aaf33
DATA ggy<>+240(SB)/8, $0x3e2aaf333e2aaf33
DATA ggy<>+248(SB)/8, $0x3e2aaf333e2aaf33
DATA ggy<>+256(SB)/8, $0x3efffedb3efffedb // P2
DATA ggy<>+264(SB)/8, $0x3efffedb3efffedb
DATA ggy<>+272(SB)/8, $0x3efffedb3efffedb
DATA ggy<>+280(SB)/8, $0x3efffedb3efffedb
DATA ggy<>+288(SB)/8, $0x3f7ffff63f7ffff6 // P1
DATA ggy<>+296(SB)/8, $0x3f7ffff63f7ffff6
DATA ggy<>+304(SB)/8, $0x3f7ffff63f7ffff6
DATA ggy<>+312(SB)/8, $0x3f7ffff63f7ffff6
DATA ggy<>+320(SB)/8, $0x4340000043400000 // 192
DATA ggy<>+328(SB)/8, $0x4340000043400000
DATA ggy<>+336(SB)/8, $0x4340000043400000
DATA ggy<>+344(SB)/8, $0x4340000043400000
DATA ggy<>+352(SB)/8, $0x7f8000007f800000 // +Inf
DATA ggy<>+360(SB)/8, $0x7f8000007f800000
DATA ggy<>+368(SB)/8, $0x7f8000007f800000
DATA ggy<>+376(SB)/8, $0x7f8000007f800000
DATA ggy<>+384(SB)/8, $0x7fffffff7fffffff // abs
DATA ggy<>+392(SB)/8, $0x7fffffff7fffffff
DATA ggy<>+400(SB)/8, $0x7fffffff7fffffff
DATA ggy<>+408(SB)/8, $0x7fffffff7fffffff
DATA ggy<>+416(SB)/8, $0x8000000080000000 // -0
DATA ggy<>+424(SB)/8, $0x8000000080000000
DATA ggy<>+432(SB)/8, $0x8000000080000000
DATA ggy<>+440(SB)/8, $0x8000000080000000
DATA ggy<>+448(SB)/8, $0x0000007f0000007f // 127
DATA ggy<>+456(SB)/8, $0x0000007f0000007f
DATA ggy<>+464(SB)/8, $0x0000007f0000007f
DATA ggy<>+472(SB)/8, $0x0000007f0000007f
GLOBL ggy<>(SB), RODATA|NOPTR, $480

// ggmask<>+4·(16-r) holds r lanes of ones, then zeros: the mask of a
// partial chunk of r < 16 floats, in two ymm.
DATA ggmask<>+0(SB)/8, $0xffffffffffffffff
DATA ggmask<>+8(SB)/8, $0xffffffffffffffff
DATA ggmask<>+16(SB)/8, $0xffffffffffffffff
DATA ggmask<>+24(SB)/8, $0xffffffffffffffff
DATA ggmask<>+32(SB)/8, $0xffffffffffffffff
DATA ggmask<>+40(SB)/8, $0xffffffffffffffff
DATA ggmask<>+48(SB)/8, $0xffffffffffffffff
DATA ggmask<>+56(SB)/8, $0xffffffffffffffff
DATA ggmask<>+64(SB)/8, $0
DATA ggmask<>+72(SB)/8, $0
DATA ggmask<>+80(SB)/8, $0
DATA ggmask<>+88(SB)/8, $0
DATA ggmask<>+96(SB)/8, $0
DATA ggmask<>+104(SB)/8, $0
DATA ggmask<>+112(SB)/8, $0
DATA ggmask<>+120(SB)/8, $0
GLOBL ggmask<>(SB), RODATA|NOPTR, $128

// GGEXPY sets p to expf(a) lane by lane, with expf's (ggml_v_expf's)
// bits, as GGEXPZ does. AVX2 has no VSCALEFPS: 2^n is applied as two
// factors 2^h·2^(n-h), h = n>>1, both normal for |n| ≤ 192, so j·2^h is
// exact and the second product rounds j·2^n once, subnormal or overflowing
// as math.Ldexp then float32 does. Lanes with |n| > 192 (or an infinite
// n) become 0 or +Inf by the sign of n. a is overwritten; n, u, q, r are
// scratch.
#define GGEXPY(a, n, u, p, q, r) \
	VMOVUPS      ggy<>+0(SB), r; \
	VFMADD231PS  ggy<>+32(SB), a, r; \
	VSUBPS       ggy<>+0(SB), r, n; \
	VFNMADD231PS ggy<>+96(SB), n, a; \
	VFNMADD231PS ggy<>+128(SB), n, a; \
	VMULPS       a, a, u; \
	VMOVUPS      ggy<>+160(SB), p; \
	VFMADD213PS  ggy<>+192(SB), a, p; \
	VMOVUPS      ggy<>+224(SB), q; \
	VFMADD213PS  ggy<>+256(SB), a, q; \
	VFMADD213PS  q, u, p; \
	VMOVUPS      ggy<>+288(SB), q; \
	VFMADD213PS  ggy<>+64(SB), a, q; \
	VFMADD213PS  q, u, p; \
	VCVTPS2DQ    n, r; \
	VPSRAD       $1, r, a; \
	VPSUBD       a, r, r; \
	VPADDD       ggy<>+448(SB), a, a; \
	VPSLLD       $23, a, a; \
	VPADDD       ggy<>+448(SB), r, r; \
	VPSLLD       $23, r, r; \
	VMULPS       a, p, p; \
	VMULPS       r, p, p; \
	VANDPS       ggy<>+384(SB), n, u; \
	VCMPPS       $0x1e, ggy<>+320(SB), u, u; \
	VPSRAD       $31, n, q; \
	VPANDN       ggy<>+352(SB), q, q; \
	VBLENDVPS    u, q, p, p

// GGSILUY sets v = siluf(v) = v / (1 + expf(-v)); it uses Y2..Y7.
#define GGSILUY(v) \
	VXORPS  ggy<>+416(SB), v, Y2; \
	GGEXPY(Y2, Y3, Y4, Y5, Y6, Y7); \
	VADDPS  ggy<>+64(SB), Y5, Y5; \
	VDIVPS  Y5, v, v

// func siluY(dst, x *float32, n int)
// dst[i] = siluf(x[i]) for i < n rounded down to 8.
TEXT ·siluY(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VMOVUPS (SI)(AX*4), Y1
	GGSILUY(Y1)
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func swigluY(dst, gate, up *float32, n int)
// dst[i] = siluf(g[i])·u[i] for i < n rounded down to 8.
TEXT ·swigluY(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ n+24(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VMOVUPS (SI)(AX*4), Y1
	GGSILUY(Y1)
	VMULPS  (R8)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// HSUM16Y sets the low lane of xh to hsum16 of the 16 floats in lo (lanes
// 0..7) and hi (8..15), whose xmm name is xh; xt is scratch. hi is
// overwritten.
#define HSUM16Y(lo, hi, xh, yt, xt) \
	VADDPS       lo, hi, hi; \
	VEXTRACTF128 $1, hi, xt; \
	VADDPS       xt, xh, xh; \
	VPERMILPS    $0x4e, xh, xt; \
	VADDPS       xt, xh, xh; \
	VPERMILPS    $0xb1, xh, xt; \
	VADDSS       xt, xh, xh

// func expSumGGY(x *float32, n int, m float32) float64
// x[i] = expf(x[i]-m) for i < n (n ≥ 1); returns Σ over the 16-element
// chunks of x, the last one padded with zeros, of float64(hsum16(chunk)),
// added in order.
TEXT ·expSumGGY(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y15
	VXORPD       X14, X14, X14
	XORQ         AX, AX

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS (DI)(AX*4), Y1
	VSUBPS  Y15, Y1, Y1
	GGEXPY(Y1, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS Y5, (DI)(AX*4)
	VMOVUPS 32(DI)(AX*4), Y2
	VSUBPS  Y15, Y2, Y2
	GGEXPY(Y2, Y3, Y4, Y8, Y6, Y7)
	VMOVUPS Y8, 32(DI)(AX*4)
	HSUM16Y(Y5, Y8, X8, Y9, X9)
	VCVTSS2SD X8, X8, X8
	VADDSD    X8, X14, X14
	ADDQ    $16, AX
	JMP     loop

last:
	LEAQ       ggmask<>+64(SB), R9
	SHLQ       $2, DX
	SUBQ       DX, R9
	VMOVUPS    (R9), Y12
	VMOVUPS    32(R9), Y13
	VMASKMOVPS (DI)(AX*4), Y12, Y1
	VMASKMOVPS 32(DI)(AX*4), Y13, Y2
	VSUBPS     Y15, Y1, Y1
	VSUBPS     Y15, Y2, Y2
	GGEXPY(Y1, Y3, Y4, Y5, Y6, Y7)
	GGEXPY(Y2, Y3, Y4, Y8, Y6, Y7)
	VANDPS     Y12, Y5, Y5
	VANDPS     Y13, Y8, Y8
	VMASKMOVPS Y5, Y12, (DI)(AX*4)
	VMASKMOVPS Y8, Y13, 32(DI)(AX*4)
	HSUM16Y(Y5, Y8, X8, Y9, X9)
	VCVTSS2SD  X8, X8, X8
	VADDSD     X8, X14, X14

done:
	VZEROUPPER
	MOVSD X14, ret+24(FP)
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

// scaleY, scaleMulY, addY, mulY and axpyY: generated, in rowsew_amd64.s.

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
