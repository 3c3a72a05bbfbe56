//go:build amd64 && !noasm

// Hand-written: one benchmark-only loop (dotQ4_0F32Z, for BenchmarkQ4_0Activations; matmuls do not use it), nothing repeated to generate.

#include "textflag.h"
#include "simd_amd64.h"

// func dotQ4_0F32Z(w unsafe.Pointer, x *float32, nb int) float32
// The dot product of nb Q4_0 blocks with float32 activations: each block
// widened to 32 floats. It exists to compare against the Q8_0-activation
// kernels (BenchmarkQ4_0Activations); matmuls do not use it.
TEXT ·dotQ4_0F32Z(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVL         $15, AX
	VPBROADCASTD AX, Z31
	MOVL         $8, AX
	VPBROADCASTD AX, Z30
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	TESTQ        CX, CX
	JZ           done

loop:
	VPMOVZXBD    2(SI), Z2
	VPSRLD       $4, Z2, Z3
	VPANDD       Z31, Z2, Z2
	VPSUBD       Z30, Z2, Z2
	VPSUBD       Z30, Z3, Z3
	VCVTDQ2PS    Z2, Z2
	VCVTDQ2PS    Z3, Z3
	VMULPS       (DI), Z2, Z4
	VFMADD231PS  64(DI), Z3, Z4
	VPBROADCASTW (SI), X5
	VCVTPH2PS    X5, X5
	VBROADCASTSS X5, Z5
	VFMADD231PS  Z5, Z4, Z0
	ADDQ         $18, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          loop

done:
	VADDPS Z1, Z0, Z0
	HSUM(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET
