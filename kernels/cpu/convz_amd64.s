//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet: one kernel per function, little repeated between them (issue 18 item 3).

#include "textflag.h"

// Element-type conversions, AVX-512 (F16C instructions on zmm).

// func f16ToF32Z(dst *float32, src *uint16, n int)
TEXT ·f16ToF32Z(SB), NOSPLIT, $0-24
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
	VCVTPH2PS (SI)(AX*2), Z0
	VMOVUPS   Z0, (DI)(AX*4)
	ADDQ      $16, AX
	JMP       loop

last:
	MOVL       $-1, R11
	BZHIL      DX, R11, R11
	KMOVW      R11, K1
	VMOVDQU16.Z (SI)(AX*2), K1, Y0
	VCVTPH2PS  Y0, Z0
	VMOVUPS    Z0, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// func bf16ToF32Z(dst *float32, src *uint16, n int)
TEXT ·bf16ToF32Z(SB), NOSPLIT, $0-24
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
	VPMOVZXWD (SI)(AX*2), Z0
	VPSLLD    $16, Z0, Z0
	VMOVUPS   Z0, (DI)(AX*4)
	ADDQ      $16, AX
	JMP       loop

last:
	MOVL        $-1, R11
	BZHIL       DX, R11, R11
	KMOVW       R11, K1
	VMOVDQU16.Z (SI)(AX*2), K1, Y0
	VPMOVZXWD   Y0, Z0
	VPSLLD      $16, Z0, Z0
	VMOVUPS     Z0, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// func f32ToF16Z(dst *uint16, src *float32, n int)
// Rounds to nearest even.
TEXT ·f32ToF16Z(SB), NOSPLIT, $0-24
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
	VMOVDQU   Y1, (DI)(AX*2)
	ADDQ      $16, AX
	JMP       loop

last:
	MOVL      $-1, R11
	BZHIL     DX, R11, R11
	KMOVW     R11, K1
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VCVTPS2PH $0, Z0, Y1
	VMOVDQU16 Y1, K1, (DI)(AX*2)

done:
	VZEROUPPER
	RET
