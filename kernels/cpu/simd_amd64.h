// Hand-written: macros of the hand-written AVX-512 files; the generators have their own (_gen/simd.go).

// Macros shared by the AVX-512 kernels.

// HSUM reduces the 16 lanes of z (y, x: its ymm and xmm names) into the low
// lane of x, using t (ymm yt, xmm xt) as scratch.
#define HSUM(z, y, x, yt, xt) \
	VEXTRACTF64X4 $1, z, yt; \
	VADDPS        yt, y, y; \
	VEXTRACTF128  $1, y, xt; \
	VADDPS        xt, x, x; \
	VPERMILPS     $0x4e, x, xt; \
	VADDPS        xt, x, x; \
	VPERMILPS     $0xb1, x, xt; \
	VADDSS        xt, x, x


// REDUCE4 sums the lanes of z0..z3 (their ymm names y0..y3, the xmm names
// of the first two x0, x1) and stores the 4 sums as float32s at off(DX).
// It overwrites z0..z3 and Z31.
#define REDUCE4(z0, z1, z2, z3, y0, y1, y2, y3, x0, x1, off) \
	VEXTRACTF64X4 $1, z0, Y31; \
	VADDPS        Y31, y0, y0; \
	VEXTRACTF64X4 $1, z1, Y31; \
	VADDPS        Y31, y1, y1; \
	VEXTRACTF64X4 $1, z2, Y31; \
	VADDPS        Y31, y2, y2; \
	VEXTRACTF64X4 $1, z3, Y31; \
	VADDPS        Y31, y3, y3; \
	VHADDPS       y1, y0, y0; \
	VHADDPS       y3, y2, y2; \
	VHADDPS       y2, y0, y0; \
	VEXTRACTF128  $1, y0, x1; \
	VADDPS        x1, x0, x0; \
	VMOVUPS       x0, off(DX)


// REDUCE4X sums the lanes of z0..z3 into the 4 lanes of x0 (xmm name of
// z0; x1 that of z1). It overwrites z0..z3 and the ymm register t.
#define REDUCE4X(z0, z1, z2, z3, y0, y1, y2, y3, x0, x1, t) \
	VEXTRACTF64X4 $1, z0, t; \
	VADDPS        t, y0, y0; \
	VEXTRACTF64X4 $1, z1, t; \
	VADDPS        t, y1, y1; \
	VEXTRACTF64X4 $1, z2, t; \
	VADDPS        t, y2, y2; \
	VEXTRACTF64X4 $1, z3, t; \
	VADDPS        t, y3, y3; \
	VHADDPS       y1, y0, y0; \
	VHADDPS       y3, y2, y2; \
	VHADDPS       y2, y0, y0; \
	VEXTRACTF128  $1, y0, x1; \
	VADDPS        x1, x0, x0

// STOREX stores the 4 floats of x at (DX), adding what is there when AX is
// not zero, and advances DX by BX.
#define STOREX(x) \
	TESTQ   AX, AX; \
	JEQ     2(PC); \
	VADDPS  (DX), x, x; \
	VMOVUPS x, (DX); \
	ADDQ    BX, DX
