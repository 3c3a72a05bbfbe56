//go:build amd64 && !noasm

#include "textflag.h"
#include "simd_amd64.h"

// F32 weights.
#define ES 4
#define O16 64
#define LD(m, z) VMOVUPS m, z
#define LDM(m, z, y) VMOVUPS.Z m, K1, z
#define DOT ·dotF32Z
#define GEMV ·gemvF32Z
#define GEMM ·gemmF32Z
#include "floatz_amd64.h"
#undef ES
#undef O16
#undef LD
#undef LDM
#undef DOT
#undef GEMV
#undef GEMM
#undef GSTEP

// F16 weights: VCVTPH2PS widens 16 halves to 16 floats.
#define ES 2
#define O16 32
#define LD(m, z) VCVTPH2PS m, z
#define LDM(m, z, y) VMOVDQU16.Z m, K1, y; VCVTPH2PS y, z
#define DOT ·dotF16Z
#define GEMV ·gemvF16Z
#define GEMM ·gemmF16Z
#include "floatz_amd64.h"
#undef ES
#undef O16
#undef LD
#undef LDM
#undef DOT
#undef GEMV
#undef GEMM
#undef GSTEP

// BF16 weights: a bfloat16 is the high half of a float32.
#define ES 2
#define O16 32
#define LD(m, z) VPMOVZXWD m, z; VPSLLD $16, z, z
#define LDM(m, z, y) VMOVDQU16.Z m, K1, y; VPMOVZXWD y, z; VPSLLD $16, z, z
#define DOT ·dotBF16Z
#define GEMV ·gemvBF16Z
#define GEMM ·gemmBF16Z
#include "floatz_amd64.h"
