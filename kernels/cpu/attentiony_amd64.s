//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet: one kernel per function, little repeated between them (issue 18 item 3).

#include "textflag.h"

// Half-precision KV attention kernels, AVX2 + F16C: VCVTPH2PS widens 8
// halves to 8 floats; products and sums are float32.

// func axpyRowsF16Y(o, p *float32, v *uint16, stride uintptr, n, hd int)
// o[i] += Σ_{r<n} p[r]·f32(v[r·stride/2 + i]) for i < hd rounded down to 8.
TEXT ·axpyRowsF16Y(SB), NOSPLIT, $0-48
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
	LEAQ   (R8)(AX*2), R9
	XORQ   R13, R13
	MOVQ   CX, R14
	ANDQ   $-2, R14
	JMP    rtest

rows2:
	VBROADCASTSS (SI)(R13*4), Y4
	VBROADCASTSS 4(SI)(R13*4), Y5
	VCVTPH2PS    (R9), Y6
	VCVTPH2PS    (R9)(BX*1), Y7
	VFMADD231PS  Y6, Y4, Y0
	VFMADD231PS  Y7, Y5, Y1
	LEAQ         (R9)(BX*2), R9
	ADDQ         $2, R13

rtest:
	CMPQ R13, R14
	JB   rows2
	CMPQ R13, CX
	JAE  store
	VBROADCASTSS (SI)(R13*4), Y4
	VCVTPH2PS    (R9), Y6
	VFMADD231PS  Y6, Y4, Y0

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

// func roundF16Y(dst, src *float32, n int)
// dst[i] = src[i] rounded to the nearest half, for i < n rounded down to 8.
TEXT ·roundF16Y(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	JMP  test

loop:
	VMOVUPS   (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ      $8, AX

test:
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET
