//go:build !noasm

#include "textflag.h"

// func streamAVX2(dst, src *byte, n int)
// Copies n bytes, a positive multiple of 256, to a 32-byte aligned dst
// with non-temporal stores (VMOVNTDQ), prefetching the source ahead, and
// fences them before returning.
TEXT ·streamAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

loop:
	PREFETCHNTA 1024(SI)
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVNTDQ Y0, (DI)
	VMOVNTDQ Y1, 32(DI)
	VMOVNTDQ Y2, 64(DI)
	VMOVNTDQ Y3, 96(DI)
	PREFETCHNTA 1152(SI)
	VMOVDQU 128(SI), Y0
	VMOVDQU 160(SI), Y1
	VMOVDQU 192(SI), Y2
	VMOVDQU 224(SI), Y3
	VMOVNTDQ Y0, 128(DI)
	VMOVNTDQ Y1, 160(DI)
	VMOVNTDQ Y2, 192(DI)
	VMOVNTDQ Y3, 224(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JNZ  loop
	SFENCE
	VZEROUPPER
	RET
