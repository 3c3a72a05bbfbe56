//go:build amd64 && !noasm

// Hand-written: the exp/activation/attention row kernels, each one of a kind; the element-wise ones are generated (rowsew_amd64.s).

#include "textflag.h"
#include "simd_amd64.h"

// Row kernels, AVX-512: exp-based activations and softmax, norms'
// reductions, element-wise arithmetic and the attention inner loops.
// Every kernel takes any length: the last partial vector is handled with
// a mask in K1.

// TAILMASK sets K1 to the low DX bits (DX in 1..16); it uses R11.
#define TAILMASK \
	MOVL  $-1, R11; \
	BZHIL DX, R11, R11; \
	KMOVW R11, K1

// EXPCONST loads the constants of EXPZ into Z20..Z31.
#define EXPCONST \
	MOVL $0xc2d00000, AX; VPBROADCASTD AX, Z20; \
	MOVL $0x42b20000, AX; VPBROADCASTD AX, Z21; \
	MOVL $0x3f800000, AX; VPBROADCASTD AX, Z22; \
	MOVL $0x3f000000, AX; VPBROADCASTD AX, Z23; \
	MOVL $0x3e2aaaab, AX; VPBROADCASTD AX, Z24; \
	MOVL $0x3d2aaaab, AX; VPBROADCASTD AX, Z25; \
	MOVL $0x3c088889, AX; VPBROADCASTD AX, Z26; \
	MOVL $0x3ab60b61, AX; VPBROADCASTD AX, Z27; \
	MOVL $0x39500d01, AX; VPBROADCASTD AX, Z28; \
	MOVL $0x35bfbe8e, AX; VPBROADCASTD AX, Z29; \
	MOVL $0x3f317200, AX; VPBROADCASTD AX, Z30; \
	MOVL $0x3fb8aa3b, AX; VPBROADCASTD AX, Z31

// EXPZ replaces the 16 floats of x by exp(x): x = k·ln2 + r with k an
// integer and |r| ≤ ln2/2, e^r by its Taylor polynomial of degree 7
// (truncation error below 6e-9), scaled by 2^k. x is clamped to [-104, 89]
// first, beyond which exp underflows to 0 or overflows to +Inf; NaN stays
// NaN. k and p are scratch.
#define EXPZ(x, k, p) \
	VMAXPS       x, Z20, x; \
	VMINPS       x, Z21, x; \
	VMULPS       Z31, x, k; \
	VRNDSCALEPS  $0x08, k, k; \
	VFNMADD231PS Z30, k, x; \
	VFNMADD231PS Z29, k, x; \
	VMOVAPS      Z28, p; \
	VFMADD213PS  Z27, x, p; \
	VFMADD213PS  Z26, x, p; \
	VFMADD213PS  Z25, x, p; \
	VFMADD213PS  Z24, x, p; \
	VFMADD213PS  Z23, x, p; \
	VFMADD213PS  Z22, x, p; \
	VFMADD213PS  Z22, x, p; \
	VSCALEFPS    k, p, x

// func expSumZ(x *float32, n int, m float32) float32
// x[i] = exp(x[i]-m); returns the sum.
TEXT ·expSumZ(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Z19
	EXPCONST
	VPXORD       Z0, Z0, Z0
	VPXORD       Z5, Z5, Z5
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-32, DX
	JZ           tail16

loop32:
	VMOVUPS (DI)(AX*4), Z1
	VMOVUPS 64(DI)(AX*4), Z6
	VSUBPS  Z19, Z1, Z1
	VSUBPS  Z19, Z6, Z6
	EXPZ(Z1, Z2, Z3)
	EXPZ(Z6, Z7, Z8)
	VMOVUPS Z1, (DI)(AX*4)
	VMOVUPS Z6, 64(DI)(AX*4)
	VADDPS  Z1, Z0, Z0
	VADDPS  Z6, Z5, Z5
	ADDQ    $32, AX
	CMPQ    AX, DX
	JB      loop32

tail16:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS (DI)(AX*4), Z1
	VSUBPS  Z19, Z1, Z1
	EXPZ(Z1, Z2, Z3)
	VMOVUPS Z1, (DI)(AX*4)
	VADDPS  Z1, Z0, Z0
	ADDQ    $16, AX
	JMP     tail16

last:
	TAILMASK
	VMOVUPS.Z (DI)(AX*4), K1, Z1
	VSUBPS    Z19, Z1, Z1
	EXPZ(Z1, Z2, Z3)
	VMOVUPS   Z1, K1, (DI)(AX*4)
	VADDPS    Z1, Z0, K1, Z0

done:
	VADDPS Z5, Z0, Z0
	HSUM(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func maxZ(x *float32, n int) float32
// Returns the largest of x[0:n] (n ≥ 1).
TEXT ·maxZ(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS (DI), Z0
	VMOVAPS      Z0, Z1
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-32, DX
	JZ           tail16

loop32:
	VMAXPS (DI)(AX*4), Z0, Z0
	VMAXPS 64(DI)(AX*4), Z1, Z1
	ADDQ   $32, AX
	CMPQ   AX, DX
	JB     loop32

tail16:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMAXPS (DI)(AX*4), Z0, Z0
	ADDQ   $16, AX
	JMP    tail16

last:
	TAILMASK
	VMAXPS (DI)(AX*4), Z0, K1, Z0

done:
	VMAXPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+16(FP)
	RET

// scaleZ and scaleMulZ: generated, in rowsew_amd64.s.

// func sumSqLanesZ(l *[8]float64, x *float32, n int)
// l[j] = Σ x[i]² over i < n (a multiple of 8) with i%8 = j: each square
// rounded to float32, widened and added in float64 in order of i.
TEXT ·sumSqLanesZ(SB), NOSPLIT, $0-24
	MOVQ   l+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VPXORQ Z0, Z0, Z0
	XORQ   AX, AX
	TESTQ  CX, CX
	JZ     done

loop:
	VMOVUPS   (SI)(AX*4), Y1
	VMULPS    Y1, Y1, Y1
	VCVTPS2PD Y1, Z1
	VADDPD    Z1, Z0, Z0
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        loop

done:
	VMOVUPD Z0, (DI)
	VZEROUPPER
	RET

// addZ, mulZ and axpyZ: generated, in rowsew_amd64.s.

// SIGMOIDMUL sets x = v / (1 + exp(u)) given u in u (overwritten); t1, t2
// scratch.
#define SIGMOIDMUL(v, u, t1, t2) \
	EXPZ(u, t1, t2); \
	VADDPS Z22, u, u; \
	VDIVPS u, v, v

// GGCONST loads the constants of GGEXPZ into Z18 and Z20..Z31.
#define GGCONST \
	MOVL $0x4b400000, AX; VPBROADCASTD AX, Z20; \
	MOVL $0x3fb8aa3b, AX; VPBROADCASTD AX, Z21; \
	MOVL $0x3f800000, AX; VPBROADCASTD AX, Z22; \
	MOVL $0x3f317200, AX; VPBROADCASTD AX, Z23; \
	MOVL $0x35bfbe8e, AX; VPBROADCASTD AX, Z24; \
	MOVL $0x3c072010, AX; VPBROADCASTD AX, Z25; \
	MOVL $0x3d2b9f17, AX; VPBROADCASTD AX, Z26; \
	MOVL $0x3e2aaf33, AX; VPBROADCASTD AX, Z27; \
	MOVL $0x3efffedb, AX; VPBROADCASTD AX, Z28; \
	MOVL $0x3f7ffff6, AX; VPBROADCASTD AX, Z29; \
	MOVL $0x43400000, AX; VPBROADCASTD AX, Z30; \
	MOVL $0x7f800000, AX; VPBROADCASTD AX, Z31; \
	MOVL $0xc3400000, AX; VPBROADCASTD AX, Z18

// GGEXPZ sets r to expf(x) lane by lane, with expf's (ggml_v_expf's)
// bits: z = fma(x, log2e, 0x1.8p23), n = z - 0x1.8p23, b = x - n·ln2 in
// two fused steps, j = the degree-5 polynomial in b (fused multiply-adds
// in expf's order), r = j·2^n (VSCALEFPS rounds j·2^n once, as
// math.Ldexp then float32 does), then +Inf where n > 192 and 0 where
// n < -192. x is kept; n, b, u, p, q are scratch; it uses K2 and K3.
// Constants (GGCONST): Z20 0x1.8p23, Z21 log2e, Z22 1, Z23 and Z24 ln2
// high and low, Z25..Z29 the coefficients, Z30 192, Z31 +Inf, Z18 -192.
#define GGEXPZ(x, r, n, b, u, p, q) \
	VMOVAPS      Z20, r; \
	VFMADD231PS  Z21, x, r; \
	VSUBPS       Z20, r, n; \
	VMOVAPS      x, b; \
	VFNMADD231PS Z23, n, b; \
	VFNMADD231PS Z24, n, b; \
	VMULPS       b, b, u; \
	VMOVAPS      Z25, p; \
	VFMADD213PS  Z26, b, p; \
	VMOVAPS      Z27, q; \
	VFMADD213PS  Z28, b, q; \
	VFMADD213PS  q, u, p; \
	VMOVAPS      Z29, q; \
	VFMADD213PS  Z22, b, q; \
	VFMADD213PS  q, u, p; \
	VSCALEFPS    n, p, r; \
	VCMPPS       $0x1e, Z30, n, K2; \
	VCMPPS       $0x11, Z18, n, K3; \
	VMOVAPS      Z31, K2, r; \
	VPXORD       r, r, K3, r

// GGSILUZ sets v = siluf(v) = v / (1 + expf(-v)), with Z19 = -0.0 (sign
// mask); it uses Z2..Z8.
#define GGSILUZ(v) \
	VXORPS  Z19, v, Z2; \
	GGEXPZ(Z2, Z3, Z4, Z5, Z6, Z7, Z8); \
	VADDPS  Z22, Z3, Z3; \
	VDIVPS  Z3, v, v

// func siluZ(dst, x *float32, n int)
// dst[i] = siluf(x[i]) = x[i] / (1 + expf(-x[i])).
TEXT ·siluZ(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	GGCONST
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z19
	XORQ AX, AX

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS (SI)(AX*4), Z1
	GGSILUZ(Z1)
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     loop

last:
	TAILMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	GGSILUZ(Z1)
	VMOVUPS   Z1, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// func swigluZ(dst, gate, up *float32, n int)
// dst[i] = siluf(g[i])·u[i], the product rounded on its own.
TEXT ·swigluZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ n+24(FP), CX
	GGCONST
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z19
	XORQ AX, AX

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS (SI)(AX*4), Z1
	GGSILUZ(Z1)
	VMULPS  (R8)(AX*4), Z1, Z1
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     loop

last:
	TAILMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VMOVUPS.Z (R8)(AX*4), K1, Z9
	GGSILUZ(Z1)
	VMULPS    Z9, Z1, Z1
	VMOVUPS   Z1, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// func expSumGGZ(x *float32, n int, m float32) float64
// x[i] = expf(x[i]-m); returns Σ over the 16-element chunks of x, the
// last one padded with zeros, of float64(hsum16(chunk)), added in order.
TEXT ·expSumGGZ(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Z17
	GGCONST
	VXORPD       X0, X0, X0
	XORQ         AX, AX

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS (DI)(AX*4), Z1
	VSUBPS  Z17, Z1, Z1
	GGEXPZ(Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	VMOVUPS Z2, (DI)(AX*4)
	HSUM(Z2, Y2, X2, Y3, X3)
	VCVTSS2SD X2, X2, X2
	VADDSD    X2, X0, X0
	ADDQ    $16, AX
	JMP     loop

last:
	TAILMASK
	VMOVUPS.Z (DI)(AX*4), K1, Z1
	VSUBPS    Z17, Z1, Z1
	GGEXPZ(Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	VMOVUPS   Z2, K1, (DI)(AX*4)
	VMOVAPS.Z Z2, K1, Z2
	HSUM(Z2, Y2, X2, Y3, X3)
	VCVTSS2SD X2, X2, X2
	VADDSD    X2, X0, X0

done:
	VZEROUPPER
	MOVSD X0, ret+24(FP)
	RET

// func geluTanhZ(dst, x *float32, n int)
// dst[i] = 0.5·x·(1 + tanh(c·(x + 0.044715·x³))) = x / (1 + exp(-2c·(x + 0.044715·x³))).
TEXT ·geluTanhZ(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	EXPCONST
	MOVL $0x3d372713, AX // 0.044715
	VPBROADCASTD AX, Z17
	MOVL $0xbfcc422a, AX // -2·sqrt(2/π)
	VPBROADCASTD AX, Z16
	XORQ AX, AX

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS (SI)(AX*4), Z1
	VMULPS  Z1, Z1, Z2
	VMULPS  Z17, Z2, Z2
	VFMADD213PS Z1, Z1, Z2 // x³·0.044715 + x
	VMULPS  Z16, Z2, Z2
	SIGMOIDMUL(Z1, Z2, Z3, Z4)
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     loop

last:
	TAILMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VMULPS  Z1, Z1, Z2
	VMULPS  Z17, Z2, Z2
	VFMADD213PS Z1, Z1, Z2
	VMULPS  Z16, Z2, Z2
	SIGMOIDMUL(Z1, Z2, Z3, Z4)
	VMOVUPS   Z1, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// func dotRowsZ(out, q, k *float32, stride uintptr, n, hd int)
// out[r] = Σ_{i<hd} q[i]·k[r·stride/4 + i] for r < n (hd ≥ 1).
TEXT ·dotRowsZ(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	// K1: the lanes of the last (possibly partial) 16-wide chunk; R12:
	// the bytes of the chunks before it.
	LEAQ  -1(R10), R11
	ANDQ  $15, R11
	INCQ  R11
	MOVL  $-1, R12
	BZHIL R11, R12, R12
	KMOVW R12, K1
	MOVQ  R10, R12
	SUBQ  R11, R12
	SHLQ  $2, R12

rows4:
	CMPQ   CX, $4
	JB     rows1
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), DI
	LEAQ   (DI)(BX*1), R14
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX

chunk4:
	CMPQ        AX, R12
	JAE         last4
	VMOVUPS     (SI)(AX*1), Z4
	VFMADD231PS (R8)(AX*1), Z4, Z0
	VFMADD231PS (R9)(AX*1), Z4, Z1
	VFMADD231PS (DI)(AX*1), Z4, Z2
	VFMADD231PS (R14)(AX*1), Z4, Z3
	ADDQ        $64, AX
	JMP         chunk4

last4:
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (R8)(AX*1), K1, Z5
	VMOVUPS.Z   (R9)(AX*1), K1, Z6
	VMOVUPS.Z   (DI)(AX*1), K1, Z7
	VMOVUPS.Z   (R14)(AX*1), K1, Z8
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, X1, 0)
	ADDQ $16, DX
	LEAQ (R14)(BX*1), R8
	SUBQ $4, CX
	JMP  rows4

rows1:
	TESTQ  CX, CX
	JZ     done
	VPXORD Z0, Z0, Z0
	XORQ   AX, AX

chunk1:
	CMPQ        AX, R12
	JAE         last1
	VMOVUPS     (SI)(AX*1), Z4
	VFMADD231PS (R8)(AX*1), Z4, Z0
	ADDQ        $64, AX
	JMP         chunk1

last1:
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (R8)(AX*1), K1, Z5
	VFMADD231PS Z5, Z4, Z0
	HSUM(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, R8
	DECQ   CX
	JMP    rows1

done:
	VZEROUPPER
	RET

// func axpyRowsZ(o, p, v *float32, stride uintptr, n, hd int)
// o[i] += Σ_{r<n} p[r]·v[r·stride/4 + i] for i < hd.
TEXT ·axpyRowsZ(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	XORQ AX, AX // byte offset of the chunk

chunk:
	MOVQ  R10, DX
	SUBQ  AX, DX // elements left... in bytes/4
	JLE   done
	MOVQ  $16, R11
	CMPQ  DX, R11
	CMOVQLT DX, R11
	MOVL  $-1, R12
	BZHIL R11, R12, R12
	KMOVW R12, K1
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	LEAQ   (R8)(AX*4), R9 // v row pointer at this chunk
	XORQ   R13, R13       // row index
	MOVQ   CX, R14
	ANDQ   $-2, R14

rows2:
	CMPQ         R13, R14
	JAE          row1
	VBROADCASTSS (SI)(R13*4), Z4
	VBROADCASTSS 4(SI)(R13*4), Z5
	VMOVUPS.Z    (R9), K1, Z6
	VMOVUPS.Z    (R9)(BX*1), K1, Z7
	VFMADD231PS  Z6, Z4, Z0
	VFMADD231PS  Z7, Z5, Z1
	LEAQ         (R9)(BX*2), R9
	ADDQ         $2, R13
	JMP          rows2

row1:
	CMPQ         R13, CX
	JAE          store
	VBROADCASTSS (SI)(R13*4), Z4
	VMOVUPS.Z    (R9), K1, Z6
	VFMADD231PS  Z6, Z4, Z0

store:
	VADDPS    Z1, Z0, Z0
	VMOVUPS.Z (DI)(AX*4), K1, Z2
	VADDPS    Z2, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(AX*4)
	ADDQ      $16, AX
	JMP       chunk

done:
	VZEROUPPER
	RET
