//go:build arm64 && !noasm

#include "textflag.h"
#include "neon_arm64.h"

// Half-precision attention kernels for arm64 NEON, in ggml's orders
// (attention.go). Every product is of two f16 values (the query and the
// probabilities are rounded to f16), exact in float32, so FMLA's one
// rounding is the sum's.

// HSUM16(a, b, c, d, t, u, Vt, Vu) leaves in Sa the sum of the 16 lanes
// of Va..Vd in hsum16's order: (c+a) + (d+b), then the halves, then (t0+t2)+(t1+t3).
#define HSUM16(a, b, c, d, t, u, Vt, Vu) \
	FADD(t, c, a) \
	FADD(u, d, b) \
	FADD(t, u, t) \
	VEXT $8, Vt.B16, Vt.B16, Vu.B16 \
	FADD2(t, t, u) \
	FADDPS(a, t)

// STEP16(Va, Vb, Vc, Vd): 16 values of q (R7) times 16 halves of k (R8) into
// lanes Va..Vd.
#define STEP16(Va, Vb, Vc, Vd) \
	VLD1.P 64(R7), [V16.S4, V17.S4, V18.S4, V19.S4] \
	VLD1.P 32(R8), [V20.H8, V21.H8] \
	FCVTL(22, 20) \
	FCVTL2(23, 20) \
	FCVTL(24, 21) \
	FCVTL2(25, 21) \
	VFMLA V22.S4, V16.S4, Va.S4 \
	VFMLA V23.S4, V17.S4, Vb.S4 \
	VFMLA V24.S4, V18.S4, Vc.S4 \
	VFMLA V25.S4, V19.S4, Vd.S4

// func dotRowsF16GGNEON(out, q *float32, k *uint16, stride uintptr, n, hd, batched int)
//
// sets out[r] for n rows of k (stride bytes apart) to q·k_r over hd
// values in ggml's order: batched (hd a multiple of 16), 16 lanes, lane l
// adding the products i ≡ l (mod 16) in order, then hsum16; otherwise
// (hd a multiple of 64) ggml_vec_dot_f16's 4×16 lanes, folded as
// foldLanes, then hsum16 (the caller adds any values past hd in float64).
TEXT ·dotRowsF16GGNEON(SB), NOSPLIT, $0-56
	MOVD out+0(FP), R0
	MOVD q+8(FP), R1
	MOVD k+16(FP), R2
	MOVD stride+24(FP), R3
	MOVD n+32(FP), R4
	MOVD hd+40(FP), R5
	MOVD batched+48(FP), R6
row:
	MOVD R1, R7
	MOVD R2, R8
	MOVD R5, R9
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	CBZ R6, single
batch:
	STEP16(V0, V1, V2, V3)
	SUB $16, R9
	CBNZ R9, batch
	B sum
single:
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
chunk:
	STEP16(V0, V1, V2, V3)
	STEP16(V4, V5, V6, V7)
	STEP16(V8, V9, V10, V11)
	STEP16(V12, V13, V14, V15)
	SUB $64, R9
	CBNZ R9, chunk
	FADD(0, 0, 8)
	FADD(4, 4, 12)
	FADD(0, 0, 4)
	FADD(1, 1, 9)
	FADD(5, 5, 13)
	FADD(1, 1, 5)
	FADD(2, 2, 10)
	FADD(6, 6, 14)
	FADD(2, 2, 6)
	FADD(3, 3, 11)
	FADD(7, 7, 15)
	FADD(3, 3, 7)
sum:
	HSUM16(0, 1, 2, 3, 16, 17, V16, V17)
	FMOVS F0, (R0)
	ADD $4, R0
	ADD R3, R2
	SUB $1, R4
	CBNZ R4, row
	RET

// func axpyRotF16NEON(acc *float32, mask, j0 int, p *float32, v *uint16, stride uintptr, n, hd int)
//
// adds p[r]·v_r (f16 rows stride bytes apart, hd values, a multiple of 8)
// to row (j0+r)&mask of acc (rows of hd floats), for r < n in order.
TEXT ·axpyRotF16NEON(SB), NOSPLIT, $0-64
	MOVD acc+0(FP), R0
	MOVD mask+8(FP), R1
	MOVD j0+16(FP), R2
	MOVD p+24(FP), R3
	MOVD v+32(FP), R4
	MOVD stride+40(FP), R5
	MOVD n+48(FP), R6
	MOVD hd+56(FP), R7
	LSL $2, R7, R10
rotrow:
	AND R1, R2, R8
	MUL R10, R8
	ADD R0, R8
	MOVD R4, R9
	MOVD R7, R11
	FMOVS (R3), F30
	VDUP V30.S[0], V30.S4
	ADD $4, R3
rotcol:
	VLD1.P 16(R9), [V20.H8]
	FCVTL(22, 20)
	FCVTL2(23, 20)
	VLD1 (R8), [V0.S4, V1.S4]
	VFMLA V22.S4, V30.S4, V0.S4
	VFMLA V23.S4, V30.S4, V1.S4
	VST1.P [V0.S4, V1.S4], 32(R8)
	SUB $8, R11
	CBNZ R11, rotcol
	ADD $1, R2
	ADD R5, R4
	SUB $1, R6
	CBNZ R6, rotrow
	RET

// func axpyRowsF16DNEON(o *float64, p *float32, v *uint16, stride uintptr, n, hd int)
//
// adds float64(p[r]·v_r[i]) to o[i] for r < n in order (v's f16 rows
// stride bytes apart), i < hd (a multiple of 8): 8 values of o at a time
// in V0..V3, over every row.
TEXT ·axpyRowsF16DNEON(SB), NOSPLIT, $0-48
	MOVD o+0(FP), R0
	MOVD p+8(FP), R1
	MOVD v+16(FP), R2
	MOVD stride+24(FP), R3
	MOVD n+32(FP), R4
	MOVD hd+40(FP), R5
dcol:
	VLD1 (R0), [V0.D2, V1.D2, V2.D2, V3.D2]
	MOVD R1, R6
	MOVD R2, R7
	MOVD R4, R8
drow:
	FMOVS (R6), F30
	VDUP V30.S[0], V30.S4
	ADD $4, R6
	VLD1 (R7), [V20.H8]
	ADD R3, R7
	FCVTL(22, 20)
	FCVTL2(23, 20)
	FMUL(22, 22, 30)
	FMUL(23, 23, 30)
	FCVTLD(24, 22)
	FCVTL2D(25, 22)
	FCVTLD(26, 23)
	FCVTL2D(27, 23)
	FADDD(0, 0, 24)
	FADDD(1, 1, 25)
	FADDD(2, 2, 26)
	FADDD(3, 3, 27)
	SUB $1, R8
	CBNZ R8, drow
	VST1.P [V0.D2, V1.D2, V2.D2, V3.D2], 64(R0)
	ADD $16, R2
	SUB $8, R5
	CBNZ R5, dcol
	RET

// func roundF16NEON(dst, src *float32, n int)
//
// sets dst[i] to src[i] rounded to the nearest f16 (ties to even; beyond
// the range ±Inf) for n values (a positive multiple of 4): FCVTN, FCVTL.
TEXT ·roundF16NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
roundloop:
	VLD1.P 16(R1), [V0.S4]
	FCVTN(1, 0)
	FCVTL(1, 1)
	VST1.P [V1.S4], 16(R0)
	SUB $4, R2
	CBNZ R2, roundloop
	RET
