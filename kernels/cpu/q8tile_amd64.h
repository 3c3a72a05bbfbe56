// Shared by the Q4_0/Q8_0 tiles (q8ilv_amd64.s) and the fused small-batch
// kernels (q8unpack_amd64.s): Z16..Z23 hold a block's 8 weight vectors of
// 16 rows and Z24 its 16 scales; DI points at the block's token records
// (layout C).

// TOK runs one block of the chain of the token whose record is at o(DI):
// the integer sums from the correction at corr+o(DI), then
// acc = fma(float(sum), dw·dx, acc); ti and tm are scratch.
#define TOK(o, corr, acc, ti, tm) \
	VPBROADCASTD  corr+o(DI), ti; \
	VPDPBUSD.BCST o(DI), Z16, ti; \
	VPDPBUSD.BCST o+4(DI), Z17, ti; \
	VPDPBUSD.BCST o+8(DI), Z18, ti; \
	VPDPBUSD.BCST o+12(DI), Z19, ti; \
	VPDPBUSD.BCST o+16(DI), Z20, ti; \
	VPDPBUSD.BCST o+20(DI), Z21, ti; \
	VPDPBUSD.BCST o+24(DI), Z22, ti; \
	VPDPBUSD.BCST o+28(DI), Z23, ti; \
	VCVTDQ2PS     ti, ti; \
	VMULPS.BCST   o+40(DI), Z24, tm; \
	VFMADD231PS   tm, ti, acc

