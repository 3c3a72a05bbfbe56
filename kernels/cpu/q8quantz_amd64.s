//go:build amd64 && !noasm

// Hand-written: not moved to the avo generators (_gen) yet: one kernel per function, little repeated between them (issue 18 item 3).

#include "textflag.h"

// Quantization of float32 activations to 8 bits per block of 32, bit-exact
// with quant.QuantizeActivationQ8_0, which is how ggml's x86 CPU backend
// quantizes activations (d = amax/127 stored rounded to f16,
// q = x·(127/amax) rounded half to even; zero quants where 127/amax is
// not finite), AVX-512.
// Output forms: ggml Q8_0 blocks, layouts A/B and P (q8pack.go), and
// layout C records.

DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $8
DATA q8perm<>+12(SB)/4, $12
DATA q8perm<>+16(SB)/4, $16
DATA q8perm<>+20(SB)/4, $20
DATA q8perm<>+24(SB)/4, $24
DATA q8perm<>+28(SB)/4, $28
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// QCONST sets up the constants: Z31 |x| mask, Z29 +Inf, Z20 127.0, Y25
// the lane gather indices.
#define QCONST \
	MOVL         $0x7fffffff, AX; \
	VPBROADCASTD AX, Z31; \
	MOVL         $0x7f800000, AX; \
	VPBROADCASTD AX, Z29; \
	MOVL         $0x42fe0000, AX; \
	VPBROADCASTD AX, Z20; \
	VMOVDQU32    q8perm<>(SB), Y25

// ROUNDQ rounds the 16 floats of v half to even and converts them to int32
// in v.
#define ROUNDQ(v) \
	VRNDSCALEPS $0x08, v, v; \
	VCVTTPS2DQ  v, v

// QBLOCK quantizes the 32 floats at (SI): Z0 and Z1 get the int32 quants of
// elements 0-15 and 16-31, X11 and X12 the same as bytes, X6 the f16 bits
// of d (low word) and X7 d rounded to f16, as float32 (low lane).
#define QBLOCK \
	VMOVUPS       (SI), Z0; \
	VMOVUPS       64(SI), Z1; \
	VANDPS        Z31, Z0, Z2; \
	VANDPS        Z31, Z1, Z3; \
	VMAXPS        Z3, Z2, Z2; \
	VEXTRACTF64X4 $1, Z2, Y3; \
	VMAXPS        Y3, Y2, Y2; \
	VEXTRACTF128  $1, Y2, X3; \
	VMAXPS        X3, X2, X2; \
	VPERMILPS     $0x4e, X2, X3; \
	VMAXPS        X3, X2, X2; \
	VPERMILPS     $0xb1, X2, X3; \
	VMAXPS        X3, X2, X2; \
	VDIVSS        X2, X20, X5; \
	VDIVSS        X20, X2, X4; \
	VMOVAPS       X29, X8; \
	VCMPSS        $1, X8, X5, X8; \
	VANDPS        X8, X5, X5; \
	VBROADCASTSS  X5, Z5; \
	VMULPS        Z5, Z0, Z0; \
	VMULPS        Z5, Z1, Z1; \
	ROUNDQ(Z0); \
	ROUNDQ(Z1); \
	VPMOVDB       Z0, X11; \
	VPMOVDB       Z1, X12; \
	VCVTPS2PH     $0, X4, X6; \
	VCVTPH2PS     X6, X7

// func quantQ8_0Z(dst *byte, src *float32, nb int)
// Writes nb ggml Q8_0 blocks (34 bytes each).
TEXT ·quantQ8_0Z(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	QCONST
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCK
	VMOVD   X6, AX
	MOVW    AX, (DI)
	VMOVDQU X11, 2(DI)
	VMOVDQU X12, 18(DI)
	ADDQ    $128, SI
	ADDQ    $34, DI
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	RET

// func packQ8AZ(dst *byte, src *float32, nb int, shift int)
// Writes nb blocks in layout A (shift 3) or B (shift 7); the caller zeroes
// a partial last group.
TEXT ·packQ8AZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ shift+24(FP), AX
	VMOVQ AX, X9
	QCONST
	XORQ  DX, DX // block index
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCK
	MOVQ DX, R8
	ANDQ $3, R8
	SHLQ $4, R8 // 16·(block within group)
	MOVQ DX, R9
	SHRQ $2, R9
	SHLQ $8, R9
	ADDQ DI, R9 // group base
	VMOVDQU X11, (R9)(R8*1)
	VMOVDQU X12, 64(R9)(R8*1)
	// -2^shift·(Σ q[4i:4i+4] + Σ q[16+4i:20+4i]) for i = 0..3
	VPADDD       Z1, Z0, Z13
	VPSHUFD      $0x4e, Z13, Z14
	VPADDD       Z14, Z13, Z13
	VPSHUFD      $0xb1, Z13, Z14
	VPADDD       Z14, Z13, Z13
	VPERMD       Z13, Z25, Z13
	VPSLLD       X9, X13, X13
	VPXOR        X14, X14, X14
	VPSUBD       X13, X14, X13
	VMOVDQU      X13, 128(R9)(R8*1)
	VBROADCASTSS X7, X15
	VMOVUPS      X15, 192(R9)(R8*1)
	ADDQ         $128, SI
	INCQ         DX
	CMPQ         DX, CX
	JB           loop

done:
	VZEROUPPER
	RET

// func packQ8PZ(dst *byte, src *float32, nb int)
// Writes nb blocks in layout P; the caller zeroes a partial last pair.
TEXT ·packQ8PZ(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	QCONST
	XORQ  DX, DX
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCK
	MOVQ DX, R8
	ANDQ $1, R8
	SHLQ $5, R8 // 32·(block within pair)
	MOVQ DX, R9
	SHRQ $1, R9
	IMUL3Q $192, R9, R9
	ADDQ DI, R9 // pair base
	VMOVDQU X11, (R9)(R8*1)
	VMOVDQU X12, 16(R9)(R8*1)
	// -128·Σ q[4l:4l+4] for l = 0..7
	VPSHUFD      $0x4e, Z0, Z14
	VPADDD       Z14, Z0, Z13
	VPSHUFD      $0xb1, Z13, Z14
	VPADDD       Z14, Z13, Z13
	VPSHUFD      $0x4e, Z1, Z14
	VPADDD       Z14, Z1, Z15
	VPSHUFD      $0xb1, Z15, Z14
	VPADDD       Z14, Z15, Z15
	VPERMT2D     Z15, Z25, Z13
	VPSLLD       $7, Y13, Y13
	VPXOR        Y14, Y14, Y14
	VPSUBD       Y13, Y14, Y13
	VMOVDQU      Y13, 64(R9)(R8*1)
	VBROADCASTSS X7, Y15
	VMOVUPS      Y15, 128(R9)(R8*1)
	ADDQ         $128, SI
	INCQ         DX
	CMPQ         DX, CX
	JB           loop

done:
	VZEROUPPER
	RET

// func packQ8CZ(dst *byte, src *float32, nb int)
// Writes nb blocks of one token as layout C records, 768 bytes apart: the
// 32 quants, -8·Σq, d, -128·Σq, d.
TEXT ·packQ8CZ(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	QCONST
	TESTQ CX, CX
	JZ    done

loop:
	QBLOCK
	VMOVDQU       X11, (DI)
	VMOVDQU       X12, 16(DI)
	VPADDD        Z1, Z0, Z13
	VEXTRACTI64X4 $1, Z13, Y14
	VPADDD        Y14, Y13, Y13
	VEXTRACTI128  $1, Y13, X14
	VPADDD        X14, X13, X13
	VPSHUFD       $0x4e, X13, X14
	VPADDD        X14, X13, X13
	VPSHUFD       $0xb1, X13, X14
	VPADDD        X14, X13, X13
	VMOVD         X13, AX
	MOVL          AX, R8
	SHLL          $3, R8
	NEGL          R8
	MOVL          R8, 32(DI)
	VMOVSS        X7, 36(DI)
	SHLL          $7, AX
	NEGL          AX
	MOVL          AX, 40(DI)
	VMOVSS        X7, 44(DI)
	ADDQ          $128, SI
	ADDQ          $768, DI
	DECQ          CX
	JNZ           loop

done:
	VZEROUPPER
	RET
