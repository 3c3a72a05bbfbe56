//go:build amd64 && !noasm

// Hand-written: the AVX2 twin of q8quantz_amd64.s (same blocks, same layouts), its repeated block already one macro (QBLOCKY); to be generated together with q8quantz, not alone.

#include "textflag.h"

// Quantization of float32 activations to ggml Q8_0 blocks, AVX2: bit-exact
// with quant.QuantizeActivationQ8_0 (see q8quantz_amd64.s).

DATA q8ypack<>+0(SB)/4, $0
DATA q8ypack<>+4(SB)/4, $4
DATA q8ypack<>+8(SB)/4, $1
DATA q8ypack<>+12(SB)/4, $5
DATA q8ypack<>+16(SB)/4, $2
DATA q8ypack<>+20(SB)/4, $6
DATA q8ypack<>+24(SB)/4, $3
DATA q8ypack<>+28(SB)/4, $7
GLOBL q8ypack<>(SB), RODATA|NOPTR, $32

// ROUNDY rounds the 8 floats of v half to even and converts them to int32
// in v.
#define ROUNDY(v) \
	VROUNDPS   $0, v, v; \
	VCVTTPS2DQ v, v

// QBLOCKY quantizes the 32 floats at (SI): Y0..Y3 get the int32 quants of
// elements 0-7, 8-15, 16-23, 24-31 (before packing), X4 d (low lane).
#define QBLOCKY \
	VMOVUPS      (SI), Y0; \
	VMOVUPS      32(SI), Y1; \
	VMOVUPS      64(SI), Y2; \
	VMOVUPS      96(SI), Y3; \
	VANDPS       Y15, Y0, Y4; \
	VANDPS       Y15, Y1, Y5; \
	VANDPS       Y15, Y2, Y6; \
	VANDPS       Y15, Y3, Y7; \
	VMAXPS       Y5, Y4, Y4; \
	VMAXPS       Y7, Y6, Y6; \
	VMAXPS       Y6, Y4, Y4; \
	VEXTRACTF128 $1, Y4, X5; \
	VMAXPS       X5, X4, X4; \
	VPERMILPS    $0x4e, X4, X5; \
	VMAXPS       X5, X4, X4; \
	VPERMILPS    $0xb1, X4, X5; \
	VMAXPS       X5, X4, X4; \
	VDIVSS       X4, X11, X5; \
	VDIVSS       X11, X4, X4; \
	VCMPSS       $1, X13, X5, X8; \
	VANDPS       X8, X5, X5; \
	VBROADCASTSS X5, Y5; \
	VMULPS       Y5, Y0, Y0; \
	VMULPS       Y5, Y1, Y1; \
	VMULPS       Y5, Y2, Y2; \
	VMULPS       Y5, Y3, Y3; \
	ROUNDY(Y0); \
	ROUNDY(Y1); \
	ROUNDY(Y2); \
	ROUNDY(Y3)

// QCONSTY loads the constants: Y15 |x| mask, X13 +Inf, X11 127.
#define QCONSTY \
	MOVL         $0x7fffffff, AX; \
	MOVD         AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL         $0x7f800000, AX; \
	MOVD         AX, X13; \
	MOVL         $0x42fe0000, AX; \
	MOVD         AX, X11

// PACKQ packs the int32 quants in Y0..Y3 into the 32 bytes of Y9 (Y5
// scratch).
#define PACKQ \
	VPACKSSDW Y1, Y0, Y9; \
	VPACKSSDW Y3, Y2, Y5; \
	VPACKSSWB Y5, Y9, Y9; \
	VMOVDQU   q8ypack<>(SB), Y5; \
	VPERMD    Y9, Y5, Y9

// func quantQ8_0Y(dst *byte, src *float32, nb int)
TEXT ·quantQ8_0Y(SB), NOSPLIT, $0-24
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  nb+16(FP), CX
	QCONSTY
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCKY
	PACKQ
	VCVTPS2PH $0, X4, X6
	VMOVD     X6, AX
	MOVW      AX, (DI)
	VMOVDQU   Y9, 2(DI)
	ADDQ      $128, SI
	ADDQ      $34, DI
	DECQ      CX
	JNZ       loop

done:
	VZEROUPPER
	RET

// DROUND sets X7 to d (X4) rounded to f16 and back.
#define DROUND \
	VCVTPS2PH $0, X4, X6; \
	VCVTPH2PS X6, X7

// func packQ8AY(dst *byte, src *float32, nb int, shift int)
// Writes nb blocks in layout A (shift 3) or B (shift 7); the caller zeroes
// a partial last group.
TEXT ·packQ8AY(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  nb+16(FP), CX
	MOVQ  shift+24(FP), AX
	VMOVQ AX, X12
	QCONSTY
	XORQ  DX, DX
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCKY
	// -2^shift·(Σ q[4l:4l+4] + Σ q[16+4l:20+4l]), l = 0..3
	VPADDD       Y2, Y0, Y10
	VPADDD       Y3, Y1, Y6
	VPHADDD      Y6, Y10, Y10
	VPHADDD      Y10, Y10, Y10
	VMOVDQU      q8ypack<>(SB), Y6
	VPERMD       Y10, Y6, Y10
	VPSLLD       X12, X10, X10
	VPXOR        X6, X6, X6
	VPSUBD       X10, X6, X10
	PACKQ
	DROUND
	MOVQ         DX, R8
	ANDQ         $3, R8
	SHLQ         $4, R8
	MOVQ         DX, R9
	SHRQ         $2, R9
	SHLQ         $8, R9
	ADDQ         DI, R9
	VMOVDQU      X9, (R9)(R8*1)
	VEXTRACTI128 $1, Y9, X6
	VMOVDQU      X6, 64(R9)(R8*1)
	VMOVDQU      X10, 128(R9)(R8*1)
	VBROADCASTSS X7, X6
	VMOVUPS      X6, 192(R9)(R8*1)
	ADDQ         $128, SI
	INCQ         DX
	CMPQ         DX, CX
	JB           loop

done:
	VZEROUPPER
	RET

// func packQ8PY(dst *byte, src *float32, nb int)
// Writes nb blocks in layout P; the caller zeroes a partial last pair.
TEXT ·packQ8PY(SB), NOSPLIT, $0-24
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  nb+16(FP), CX
	QCONSTY
	XORQ  DX, DX
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCKY
	// -128·Σ q[4l:4l+4], l = 0..7
	VPHADDD      Y1, Y0, Y10
	VPHADDD      Y3, Y2, Y6
	VPHADDD      Y6, Y10, Y10
	VMOVDQU      q8ypack<>(SB), Y6
	VPERMD       Y10, Y6, Y10
	VPSLLD       $7, Y10, Y10
	VPXOR        Y6, Y6, Y6
	VPSUBD       Y10, Y6, Y10
	PACKQ
	DROUND
	MOVQ         DX, R8
	ANDQ         $1, R8
	SHLQ         $5, R8
	MOVQ         DX, R9
	SHRQ         $1, R9
	IMUL3Q       $192, R9, R9
	ADDQ         DI, R9
	VMOVDQU      Y9, (R9)(R8*1)
	VMOVDQU      Y10, 64(R9)(R8*1)
	VBROADCASTSS X7, Y6
	VMOVUPS      Y6, 128(R9)(R8*1)
	ADDQ         $128, SI
	INCQ         DX
	CMPQ         DX, CX
	JB           loop

done:
	VZEROUPPER
	RET
