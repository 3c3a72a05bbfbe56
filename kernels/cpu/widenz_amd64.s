//go:build amd64 && !noasm

#include "textflag.h"

// Widening of weights into the GEMM tile layout (gemmz_amd64.s), one
// instance of widenz_amd64.h per element type.

// F32 weights.
#define O16 64
#define LDM(m, z, y) VMOVUPS.Z m, K1, z
#define WIDEN ·widenTileF32Z
#include "widenz_amd64.h"
#undef O16
#undef LDM
#undef WIDEN

// F16 weights: VCVTPH2PS widens 16 halves to 16 floats.
#define O16 32
#define LDM(m, z, y) VMOVDQU16.Z m, K1, y; VCVTPH2PS y, z
#define WIDEN ·widenTileF16Z
#include "widenz_amd64.h"
#undef O16
#undef LDM
#undef WIDEN

// BF16 weights: a bfloat16 is the high half of a float32.
#define O16 32
#define LDM(m, z, y) VMOVDQU16.Z m, K1, y; VPMOVZXWD y, z; VPSLLD $16, z, z
#define WIDEN ·widenTileBF16Z
#include "widenz_amd64.h"
