//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet: one kernel per function, little repeated between them (issue 18 item 3).

#include "textflag.h"
#include "simd_amd64.h"

// Half-precision KV attention kernels, AVX-512: VCVTPH2PS widens 16 halves
// to 16 floats; products and sums are float32.

// func dotRowsF16Z(out, q *float32, k *uint16, stride uintptr, n, hd int)
// out[r] = Σ_{i<hd} q[i]·f32(k[r·stride/2 + i]) for r < n (hd ≥ 1).
TEXT ·dotRowsF16Z(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	// K1: the lanes of the last (possibly partial) 16-wide chunk; R12:
	// the bytes of halves in the chunks before it (AX counts those bytes,
	// q is read at twice the offset).
	LEAQ  -1(R10), R11
	ANDQ  $15, R11
	INCQ  R11
	MOVL  $-1, R12
	BZHIL R11, R12, R12
	KMOVW R12, K1
	MOVQ  R10, R12
	SUBQ  R11, R12
	SHLQ  $1, R12

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
	JMP         chunk4

last4:
	VMOVUPS.Z   (SI)(AX*2), K1, Z4
	VMOVDQU16.Z (R8)(AX*1), K1, Y5
	VMOVDQU16.Z (R9)(AX*1), K1, Y6
	VMOVDQU16.Z (DI)(AX*1), K1, Y7
	VMOVDQU16.Z (R14)(AX*1), K1, Y8
	VCVTPH2PS   Y5, Z5
	VCVTPH2PS   Y6, Z6
	VCVTPH2PS   Y7, Z7
	VCVTPH2PS   Y8, Z8
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
	VMOVUPS     (SI)(AX*2), Z4
	VCVTPH2PS   (R8)(AX*1), Z5
	VFMADD231PS Z5, Z4, Z0
	ADDQ        $32, AX
	JMP         chunk1

last1:
	VMOVUPS.Z   (SI)(AX*2), K1, Z4
	VMOVDQU16.Z (R8)(AX*1), K1, Y5
	VCVTPH2PS   Y5, Z5
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

// func axpyRowsF16Z(o, p *float32, v *uint16, stride uintptr, n, hd int)
// o[i] += Σ_{r<n} p[r]·f32(v[r·stride/2 + i]) for i < hd (n ≥ 1).
// Whole groups of 64 columns go in one pass over the rows (one broadcast
// of p[r] for four vectors); the rest, 16 columns at a time.
TEXT ·axpyRowsF16Z(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ hd+40(FP), R10
	XORQ AX, AX // column of the chunk

wide:
	MOVQ   R10, DX
	SUBQ   AX, DX
	CMPQ   DX, $64
	JB     chunk
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	LEAQ   (R8)(AX*2), R9 // v row pointer at this column
	XORQ   R13, R13       // row index

wrow:
	VBROADCASTSS (SI)(R13*4), Z4
	VCVTPH2PS    (R9), Z5
	VCVTPH2PS    32(R9), Z6
	VCVTPH2PS    64(R9), Z7
	VCVTPH2PS    96(R9), Z8
	VFMADD231PS  Z5, Z4, Z0
	VFMADD231PS  Z6, Z4, Z1
	VFMADD231PS  Z7, Z4, Z2
	VFMADD231PS  Z8, Z4, Z3
	ADDQ         BX, R9
	INCQ         R13
	CMPQ         R13, CX
	JB           wrow
	VADDPS       (DI)(AX*4), Z0, Z0
	VADDPS       64(DI)(AX*4), Z1, Z1
	VADDPS       128(DI)(AX*4), Z2, Z2
	VADDPS       192(DI)(AX*4), Z3, Z3
	VMOVUPS      Z0, (DI)(AX*4)
	VMOVUPS      Z1, 64(DI)(AX*4)
	VMOVUPS      Z2, 128(DI)(AX*4)
	VMOVUPS      Z3, 192(DI)(AX*4)
	ADDQ         $64, AX
	JMP          wide

chunk:
	MOVQ    R10, DX
	SUBQ    AX, DX
	JLE     done
	MOVQ    $16, R11
	CMPQ    DX, R11
	CMOVQLT DX, R11
	MOVL    $-1, R12
	BZHIL   R11, R12, R12
	KMOVW   R12, K1
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	LEAQ    (R8)(AX*2), R9
	XORQ    R13, R13
	MOVQ    CX, R14
	ANDQ    $-2, R14

rows2:
	CMPQ         R13, R14
	JAE          row1
	VBROADCASTSS (SI)(R13*4), Z4
	VBROADCASTSS 4(SI)(R13*4), Z5
	VMOVDQU16.Z  (R9), K1, Y6
	VMOVDQU16.Z  (R9)(BX*1), K1, Y7
	VCVTPH2PS    Y6, Z6
	VCVTPH2PS    Y7, Z7
	VFMADD231PS  Z6, Z4, Z0
	VFMADD231PS  Z7, Z5, Z1
	LEAQ         (R9)(BX*2), R9
	ADDQ         $2, R13
	JMP          rows2

row1:
	CMPQ         R13, CX
	JAE          store
	VBROADCASTSS (SI)(R13*4), Z4
	VMOVDQU16.Z  (R9), K1, Y6
	VCVTPH2PS    Y6, Z6
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

// func roundF16Z(dst, src *float32, n int)
// dst[i] = src[i] rounded to the nearest half (ties to even).
TEXT ·roundF16Z(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   done
	CMPQ DX, $16
	JB   last
	VMOVUPS   (SI)(AX*4), Z0
	VCVTPS2PH $0, Z0, Y1
	VCVTPH2PS Y1, Z0
	VMOVUPS   Z0, (DI)(AX*4)
	ADDQ      $16, AX
	JMP       loop

last:
	MOVL      $-1, R11
	BZHIL     DX, R11, R11
	KMOVW     R11, K1
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VCVTPS2PH $0, Z0, Y1
	VCVTPH2PS Y1, Z0
	VMOVUPS   Z0, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET
