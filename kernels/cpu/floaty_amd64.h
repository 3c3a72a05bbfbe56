// Kernel bodies for float-like weights (F32, F16, BF16) times float32
// activations, AVX2 + FMA + F16C. The kernels handle k rounded down to a
// multiple of 8; the Go wrappers add the remaining products. The including
// file defines:
//   ES          element size of the weights in bytes
//   O8          byte offset of 8 weight elements (8*ES)
//   LD(m, y)    load 8 weights at m as float32 into y
//   DOT, GEMV, GEMM  the symbol names

// REDUCE4 sums the lanes of y0..y3 (xmm names of the first two x0, x1) and
// stores the 4 sums as float32s at off(DX). It overwrites y0..y3.
#define REDUCE4(y0, y1, y2, y3, x0, x1, off) \
	VHADDPS      y1, y0, y0; \
	VHADDPS      y3, y2, y2; \
	VHADDPS      y2, y0, y0; \
	VEXTRACTF128 $1, y0, x1; \
	VADDPS       x1, x0, x0; \
	VMOVUPS      x0, off(DX)

// REDUCE4X sums the lanes of y0..y3 into the 4 lanes of x0.
#define REDUCE4X(y0, y1, y2, y3, x0, x1) \
	VHADDPS      y1, y0, y0; \
	VHADDPS      y3, y2, y2; \
	VHADDPS      y2, y0, y0; \
	VEXTRACTF128 $1, y0, x1; \
	VADDPS       x1, x0, x0

// STOREX stores the 4 floats of x at (DX), adding what is there when AX is
// not zero, and advances DX by BX.
#define STOREX(x) \
	TESTQ   AX, AX; \
	JEQ     2(PC); \
	VADDPS  (DX), x, x; \
	VMOVUPS x, (DX); \
	ADDQ    BX, DX

// func DOT(w unsafe.Pointer, x *float32, k int) float32
TEXT DOT(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), R8
	MOVQ   x+8(FP), DI
	MOVQ   k+16(FP), CX
	ANDQ   $-8, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-32, DX
	JZ     dtail

dloop:
	LD((R8)(AX*ES), Y4)
	LD(O8(R8)(AX*ES), Y5)
	LD(2*O8(R8)(AX*ES), Y6)
	LD(3*O8(R8)(AX*ES), Y7)
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ $32, AX
	CMPQ AX, DX
	JB   dloop

dtail:
	CMPQ AX, CX
	JAE  ddone
	LD((R8)(AX*ES), Y4)
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ $8, AX
	JMP  dtail

ddone:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func GEMV(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)
TEXT GEMV(SB), NOSPLIT, $0-40
	MOVQ   w+0(FP), R8
	MOVQ   ldw+8(FP), BX
	MOVQ   x+16(FP), DI
	MOVQ   k+24(FP), CX
	ANDQ   $-8, CX
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-16, DX
	JZ     vtail

vloop:
	VMOVUPS (DI)(AX*4), Y8
	VMOVUPS 32(DI)(AX*4), Y9
	LD((R8)(AX*ES), Y10)
	LD(O8(R8)(AX*ES), Y11)
	LD((R9)(AX*ES), Y12)
	LD(O8(R9)(AX*ES), Y13)
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y11, Y4
	VFMADD231PS Y8, Y12, Y1
	VFMADD231PS Y9, Y13, Y5
	LD((R10)(AX*ES), Y10)
	LD(O8(R10)(AX*ES), Y11)
	LD((R11)(AX*ES), Y12)
	LD(O8(R11)(AX*ES), Y13)
	VFMADD231PS Y8, Y10, Y2
	VFMADD231PS Y9, Y11, Y6
	VFMADD231PS Y8, Y12, Y3
	VFMADD231PS Y9, Y13, Y7
	ADDQ $16, AX
	CMPQ AX, DX
	JB   vloop

vtail:
	CMPQ AX, CX
	JAE  vdone
	VMOVUPS (DI)(AX*4), Y8
	LD((R8)(AX*ES), Y10)
	LD((R9)(AX*ES), Y11)
	LD((R10)(AX*ES), Y12)
	LD((R11)(AX*ES), Y13)
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y8, Y11, Y1
	VFMADD231PS Y8, Y12, Y2
	VFMADD231PS Y8, Y13, Y3
	ADDQ $8, AX

vdone:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	MOVQ   y+32(FP), DX
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1, 0)
	VZEROUPPER
	RET

// func GEMM(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)
// dst[t·ldd/4 + r] (+)= w_r·x_t for 4 rows and 2 tokens.
TEXT GEMM(SB), NOSPLIT, $0-64
	MOVQ   w+0(FP), R8
	MOVQ   ldw+8(FP), BX
	MOVQ   x+16(FP), DI
	MOVQ   ldx+24(FP), SI
	MOVQ   k+32(FP), CX
	ANDQ   $-8, CX
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	LEAQ   (DI)(SI*1), R12
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX
	CMPQ   AX, CX
	JAE    gdone

gloop:
	VMOVUPS (DI)(AX*4), Y8
	VMOVUPS (R12)(AX*4), Y9
	LD((R8)(AX*ES), Y10)
	LD((R9)(AX*ES), Y11)
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y4
	VFMADD231PS Y8, Y11, Y1
	VFMADD231PS Y9, Y11, Y5
	LD((R10)(AX*ES), Y12)
	LD((R11)(AX*ES), Y13)
	VFMADD231PS Y8, Y12, Y2
	VFMADD231PS Y9, Y12, Y6
	VFMADD231PS Y8, Y13, Y3
	VFMADD231PS Y9, Y13, Y7
	ADDQ $8, AX
	CMPQ AX, CX
	JB   gloop

gdone:
	MOVQ dst+40(FP), DX
	MOVQ ldd+48(FP), BX
	MOVQ acc+56(FP), AX
	REDUCE4X(Y0, Y1, Y2, Y3, X0, X1)
	STOREX(X0)
	REDUCE4X(Y4, Y5, Y6, Y7, X4, X5)
	STOREX(X4)
	VZEROUPPER
	RET
