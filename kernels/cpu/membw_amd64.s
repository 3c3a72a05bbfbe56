//go:build amd64 && !noasm

// Hand-written: a bandwidth probe, a few lines with nothing repeated.

#include "textflag.h"

// func xorReadZ(p *byte, n int) uint64
// XORs n bytes (a multiple of 256) at p in 64-byte words and returns a
// fold of the result, so that the loads cannot be elided.
TEXT ·xorReadZ(SB), NOSPLIT, $0-24
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	SHRQ   $8, CX
	JZ     done

loop:
	VPXORQ (SI), Z0, Z0
	VPXORQ 64(SI), Z1, Z1
	VPXORQ 128(SI), Z2, Z2
	VPXORQ 192(SI), Z3, Z3
	ADDQ   $256, SI
	DECQ   CX
	JNZ    loop

done:
	VPXORQ        Z1, Z0, Z0
	VPXORQ        Z3, Z2, Z2
	VPXORQ        Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPXOR         Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPXOR         X1, X0, X0
	VPEXTRQ       $1, X0, AX
	VMOVQ         X0, BX
	XORQ          BX, AX
	VZEROUPPER
	MOVQ          AX, ret+16(FP)
	RET

// func xorReadY(p *byte, n int) uint64
// The AVX2 version of xorReadZ.
TEXT ·xorReadY(SB), NOSPLIT, $0-24
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	SHRQ  $7, CX
	JZ    done

loop:
	VPXOR (SI), Y0, Y0
	VPXOR 32(SI), Y1, Y1
	VPXOR 64(SI), Y2, Y2
	VPXOR 96(SI), Y3, Y3
	ADDQ  $128, SI
	DECQ  CX
	JNZ   loop

done:
	VPXOR        Y1, Y0, Y0
	VPXOR        Y3, Y2, Y2
	VPXOR        Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPXOR        X1, X0, X0
	VPEXTRQ      $1, X0, AX
	VMOVQ        X0, BX
	XORQ         BX, AX
	VZEROUPPER
	MOVQ         AX, ret+16(FP)
	RET

// func xorRead4Z(p *byte, n int) uint64
// As xorReadZ, reading the four quarters of the buffer side by side (four
// streams for the hardware prefetchers). n is a multiple of 1024.
TEXT ·xorRead4Z(SB), NOSPLIT, $0-24
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	SHRQ   $2, CX
	LEAQ   (SI)(CX*1), R8
	LEAQ   (R8)(CX*1), R9
	LEAQ   (R9)(CX*1), R10
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	XORQ   AX, AX
	TESTQ  CX, CX
	JZ     done

loop:
	VPXORQ (SI)(AX*1), Z0, Z0
	VPXORQ (R8)(AX*1), Z1, Z1
	VPXORQ (R9)(AX*1), Z2, Z2
	VPXORQ (R10)(AX*1), Z3, Z3
	VPXORQ 64(SI)(AX*1), Z0, Z0
	VPXORQ 64(R8)(AX*1), Z1, Z1
	VPXORQ 64(R9)(AX*1), Z2, Z2
	VPXORQ 64(R10)(AX*1), Z3, Z3
	ADDQ   $128, AX
	CMPQ   AX, CX
	JB     loop

done:
	VPXORQ        Z1, Z0, Z0
	VPXORQ        Z3, Z2, Z2
	VPXORQ        Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPXOR         Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPXOR         X1, X0, X0
	VPEXTRQ       $1, X0, AX
	VMOVQ         X0, BX
	XORQ          BX, AX
	VZEROUPPER
	MOVQ          AX, ret+16(FP)
	RET
