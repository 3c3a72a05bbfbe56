//go:build amd64 && !noasm

#include "textflag.h"

#define ES 4
#define O8 32
#define LD(m, y) VMOVUPS m, y
#define DOT ·dotF32Y
#define GEMV ·gemvF32Y
#define GEMM ·gemmF32Y
#include "floaty_amd64.h"
#undef ES
#undef O8
#undef LD
#undef DOT
#undef GEMV
#undef GEMM
#undef REDUCE4
#undef REDUCE4X
#undef STOREX

#define ES 2
#define O8 16
#define LD(m, y) VCVTPH2PS m, y
#define DOT ·dotF16Y
#define GEMV ·gemvF16Y
#define GEMM ·gemmF16Y
#include "floaty_amd64.h"
#undef ES
#undef O8
#undef LD
#undef DOT
#undef GEMV
#undef GEMM
#undef REDUCE4
#undef REDUCE4X
#undef STOREX

#define ES 2
#define O8 16
#define LD(m, y) VPMOVZXWD m, y; VPSLLD $16, y, y
#define DOT ·dotBF16Y
#define GEMV ·gemvBF16Y
#define GEMM ·gemmBF16Y
#include "floaty_amd64.h"
