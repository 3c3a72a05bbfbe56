//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet: one kernel per function, little repeated between them (issue 18 item 3).

#include "textflag.h"

// Half-precision attention kernels in ggml's summation orders, AVX-512
// (see dotF16GG and attendV16 in attention.go). Every product is of an
// f16 value and a float32 holding an f16 value, so it is exact and a
// fused multiply-add adds it with one rounding, as ggml's do.

// HSUM16 sums the 16 lanes of z (ymm name y, xmm name x) into the low
// lane of x in _mm512_reduce_add_ps's order: halves, quarters, then
// (t0+t2) + (t1+t3). Clobbers t (a ymm register; tx its xmm name).
#define HSUM16(z, y, x, t, tx) \
	VEXTRACTF64X4 $1, z, t; \
	VADDPS        t, y, y; \
	VEXTRACTF128  $1, y, tx; \
	VADDPS        tx, x, x; \
	VMOVHLPS      x, x, tx; \
	VADDPS        tx, x, x; \
	VMOVSHDUP     x, tx; \
	VADDSS        tx, x, x

// func dotRowsF16GGZ(out, q *float32, k *uint16, stride uintptr, n, hd, batched int)
// out[r] = q·k[r] (hd halves from k + r·stride bytes) for r < n. batched
// != 0: llamafile's order, one 16-lane accumulator over the chunks, hd a
// multiple of 16; else ggml_vec_dot_f16's, four accumulators over 64-wide
// steps folded as (a0+a2)+(a1+a3), hd a multiple of 64.
TEXT ·dotRowsF16GGZ(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DX
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	MOVQ batched+48(FP), R11
	SHLQ $1, R10 // bytes of halves per row
	TESTQ CX, CX
	JZ    done
	TESTQ R11, R11
	JZ    single2

	// Four rows at a time (independent chains), then one by one.
batch4:
	CMPQ   CX, $4
	JB     batch
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), DI
	LEAQ   (DI)(BX*1), R14
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX

b4chunk:
	VMOVUPS     (SI)(AX*2), Z4
	VCVTPH2PS   (R8)(AX*1), Z5
	VCVTPH2PS   (R9)(AX*1), Z6
	VCVTPH2PS   (DI)(AX*1), Z7
	VCVTPH2PS   (R14)(AX*1), Z8
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3
	ADDQ        $32, AX
	CMPQ        AX, R10
	JB          b4chunk
	HSUM16(Z0, Y0, X0, Y12, X12)
	HSUM16(Z1, Y1, X1, Y13, X13)
	HSUM16(Z2, Y2, X2, Y14, X14)
	HSUM16(Z3, Y3, X3, Y15, X15)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	ADDQ   $16, DX
	LEAQ   (R14)(BX*1), R8
	SUBQ   $4, CX
	JMP    batch4

batch:
	TESTQ  CX, CX
	JZ     done
	VPXORD Z0, Z0, Z0
	XORQ   AX, AX

bchunk:
	VCVTPH2PS   (R8)(AX*1), Z5
	VFMADD231PS (SI)(AX*2), Z5, Z0
	ADDQ        $32, AX
	CMPQ        AX, R10
	JB          bchunk
	HSUM16(Z0, Y0, X0, Y15, X15)
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, R8
	DECQ   CX
	JMP    batch

	// ggml_vec_dot_f16: two rows at a time, then one.
single2:
	CMPQ   CX, $2
	JB     single
	LEAQ   (R8)(BX*1), R9
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	XORQ   AX, AX

s2chunk:
	VMOVUPS     (SI)(AX*2), Z20
	VMOVUPS     64(SI)(AX*2), Z21
	VMOVUPS     128(SI)(AX*2), Z22
	VMOVUPS     192(SI)(AX*2), Z23
	VCVTPH2PS   (R8)(AX*1), Z5
	VCVTPH2PS   32(R8)(AX*1), Z6
	VCVTPH2PS   64(R8)(AX*1), Z7
	VCVTPH2PS   96(R8)(AX*1), Z8
	VFMADD231PS Z20, Z5, Z0
	VFMADD231PS Z21, Z6, Z1
	VFMADD231PS Z22, Z7, Z2
	VFMADD231PS Z23, Z8, Z3
	VCVTPH2PS   (R9)(AX*1), Z5
	VCVTPH2PS   32(R9)(AX*1), Z6
	VCVTPH2PS   64(R9)(AX*1), Z7
	VCVTPH2PS   96(R9)(AX*1), Z8
	VFMADD231PS Z20, Z5, Z16
	VFMADD231PS Z21, Z6, Z17
	VFMADD231PS Z22, Z7, Z18
	VFMADD231PS Z23, Z8, Z19
	ADDQ        $128, AX
	CMPQ        AX, R10
	JB          s2chunk
	VADDPS      Z2, Z0, Z0
	VADDPS      Z3, Z1, Z1
	VADDPS      Z1, Z0, Z0
	VADDPS      Z18, Z16, Z16
	VADDPS      Z19, Z17, Z17
	VADDPS      Z17, Z16, Z1
	HSUM16(Z0, Y0, X0, Y14, X14)
	HSUM16(Z1, Y1, X1, Y15, X15)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	ADDQ   $8, DX
	LEAQ   (R9)(BX*1), R8
	SUBQ   $2, CX
	JMP    single2

single:
	TESTQ  CX, CX
	JZ     done
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX

schunk:
	VCVTPH2PS   (R8)(AX*1), Z5
	VCVTPH2PS   32(R8)(AX*1), Z6
	VCVTPH2PS   64(R8)(AX*1), Z7
	VCVTPH2PS   96(R8)(AX*1), Z8
	VFMADD231PS (SI)(AX*2), Z5, Z0
	VFMADD231PS 64(SI)(AX*2), Z6, Z1
	VFMADD231PS 128(SI)(AX*2), Z7, Z2
	VFMADD231PS 192(SI)(AX*2), Z8, Z3
	ADDQ        $128, AX
	CMPQ        AX, R10
	JB          schunk
	VADDPS      Z2, Z0, Z0
	VADDPS      Z3, Z1, Z1
	VADDPS      Z1, Z0, Z0
	HSUM16(Z0, Y0, X0, Y15, X15)
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   BX, R8
	DECQ   CX
	JMP    single

done:
	VZEROUPPER
	RET

// func axpyRotF16Z(acc *float32, mask, j0 int, p *float32, v *uint16, stride uintptr, n, hd int)
// For r < n: acc[((j0+r)&mask)·hd + i] += p[r]·f32(v[r·stride/2 + i]),
// i < hd (a multiple of 16): cell j0+r of the sequence goes to the
// accumulator row of its lane, each row a chain in cell order.
TEXT ·axpyRotF16Z(SB), NOSPLIT, $0-64
	MOVQ acc+0(FP), DI
	MOVQ mask+8(FP), R12
	MOVQ j0+16(FP), R13
	MOVQ p+24(FP), SI
	MOVQ v+32(FP), R8
	MOVQ stride+40(FP), BX
	MOVQ n+48(FP), CX
	MOVQ hd+56(FP), R10
	TESTQ CX, CX
	JZ    rdone
	LEAQ  (R10*4), R14 // bytes per accumulator row
	SHLQ  $1, R10      // bytes of halves per row

rrow:
	MOVQ         R13, AX
	ANDQ         R12, AX
	IMULQ        R14, AX
	LEAQ         (DI)(AX*1), R9 // this cell's accumulator row
	VBROADCASTSS (SI), Z4
	XORQ         AX, AX

rchunk:
	VCVTPH2PS   (R8)(AX*1), Z5
	VMOVUPS     (R9)(AX*2), Z6
	VFMADD231PS Z5, Z4, Z6
	VMOVUPS     Z6, (R9)(AX*2)
	ADDQ        $32, AX
	CMPQ        AX, R10
	JB          rchunk
	ADDQ        $4, SI
	ADDQ        BX, R8
	INCQ        R13
	DECQ        CX
	JNZ         rrow

rdone:
	VZEROUPPER
	RET

// func axpyRowsF16DZ(o *float64, p *float32, v *uint16, stride uintptr, n, hd int)
// o[i] += float64(p[r]·f32(v[r·stride/2 + i])) for r < n in order, i < hd
// (a multiple of 16): ggml_vec_dot_f16's leftover, summed in double.
TEXT ·axpyRowsF16DZ(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	TESTQ CX, CX
	JZ    ddone
	SHLQ  $1, R10
	XORQ  AX, AX // byte offset of the chunk in a row of halves

dchunk:
	VMOVUPD (DI)(AX*4), Z0
	VMOVUPD 64(DI)(AX*4), Z1
	LEAQ    (R8)(AX*1), R9
	MOVQ    SI, R11
	MOVQ    CX, R13

drow:
	VCVTPH2PS     (R9), Z5
	VMULPS.BCST   (R11), Z5, Z5
	VCVTPS2PD     Y5, Z6
	VEXTRACTF64X4 $1, Z5, Y7
	VCVTPS2PD     Y7, Z7
	VADDPD        Z6, Z0, Z0
	VADDPD        Z7, Z1, Z1
	ADDQ          $4, R11
	ADDQ          BX, R9
	DECQ          R13
	JNZ           drow
	VMOVUPD       Z0, (DI)(AX*4)
	VMOVUPD       Z1, 64(DI)(AX*4)
	ADDQ          $32, AX
	CMPQ          AX, R10
	JB            dchunk

ddone:
	VZEROUPPER
	RET
