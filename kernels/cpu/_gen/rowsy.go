package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// rowsy generates rowsy_amd64.s: the AVX2 + FMA + F16C twins of rowsz's
// kernels and the conversions. They process n rounded down to a multiple
// of 8 (expSumGGY: all of n); the Go wrappers finish the rest.
func rowsy(a *asm) {
	y := rowsYData(a)
	expSumY(a, y)
	siluY(a, y, false)
	siluY(a, y, true)
	expSumGGY(a, y)
	geluTanhY(a, y)
	maxY(a)
	sumSqLanesY(a)
	axpyRowsY(a, false)
	convY(a)
}

// rowsYGlobals are the constants in memory of the AVX2 row kernels.
type rowsYGlobals struct {
	expy   operand.Mem // expY's: log2(e), ln2 high and low, 1/7!..1/3!, int32 127
	ggy    operand.Mem // ggExpY's, 8 copies each (ggy* offsets)
	ggmask operand.Mem // +4·(16-r): r lanes of ones, then zeros, in two ymm
}

// The offsets of ggy's constants.
const (
	ggyR     = 0   // 0x1.8p23
	ggyL2E   = 32  // log2(e)
	ggyOne   = 64  // 1
	ggyLn2Hi = 96  // ln2, high part
	ggyLn2Lo = 128 // ln2, low part
	ggyP5    = 160 // the polynomial's coefficients, P5..P1 32 bytes apart
	ggy192   = 320
	ggyInf   = 352 // +Inf
	ggyAbs   = 384 // 0x7fffffff
	ggyNeg0  = 416 // -0.0
	ggy127   = 448 // int32 127
)

// rowsYData emits the globals of the AVX2 row kernels.
func rowsYData(a *asm) rowsYGlobals {
	var g rowsYGlobals
	g.expy = a.StaticGlobal("expy")
	a.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, v := range []uint32{0x3fb8aa3b, 0x3f317200, 0x35bfbe8e, 0x39500d01, 0x3ab60b61, 0x3c088889, 0x3d2aaaab, 0x3e2aaaab, 127} {
		a.AddDatum(4*i, operand.U32(v))
	}
	var ggy []uint64
	for _, v := range []uint64{0x4b400000, 0x3fb8aa3b, 0x3f800000, 0x3f317200, 0x35bfbe8e,
		0x3c072010, 0x3d2b9f17, 0x3e2aaf33, 0x3efffedb, 0x3f7ffff6,
		0x43400000, 0x7f800000, 0x7fffffff, 0x80000000, 127} {
		for range 4 {
			ggy = append(ggy, v<<32|v)
		}
	}
	g.ggy = a.global("ggy", ggy...)
	mask := make([]uint64, 16)
	for i := range 8 {
		mask[i] = ^uint64(0)
	}
	g.ggmask = a.global("ggmask", mask...)
	return g
}

// expConstY loads the clamps and polynomial constants of expY: Y15 -104,
// Y14 89, Y13 1.0, Y12 0.5; the rest come from memory.
func (a *asm) expConstY() {
	for _, c := range []struct {
		v uint32
		r int
	}{{0xc2d00000, 15}, {0x42b20000, 14}, {0x3f800000, 13}, {0x3f000000, 12}} {
		a.broadcastY(c.v, c.r)
	}
}

// broadcastY loads v into every lane of Y<r>, through EAX.
func (a *asm) broadcastY(v uint32, r int) {
	a.MOVL(operand.U32(v), reg.EAX)
	a.MOVD(reg.RAX, xr[r])
	a.VPBROADCASTD(xr[r], yr[r])
}

// expY replaces the 8 floats of x by exp(x), as expZ does (degree-7
// Taylor polynomial of e^r, x = k·ln2 + r), scaling by 2^k as two factors
// 2^(k/2)·2^(k-k/2) that stay normal over the clamped range. k, p, t are
// scratch.
func (a *asm) expY(g rowsYGlobals, x, k, p, t reg.VecPhysical) {
	c := func(i int) operand.Mem { return g.expy.Offset(4 * i) }
	a.VMAXPS(x, reg.Y15, x)
	a.VMINPS(x, reg.Y14, x)
	a.VBROADCASTSS(c(0), k)
	a.VMULPS(k, x, k)
	a.VROUNDPS(operand.U8(0), k, k)
	a.VBROADCASTSS(c(1), t)
	a.VFNMADD231PS(t, k, x)
	a.VBROADCASTSS(c(2), t)
	a.VFNMADD231PS(t, k, x)
	a.VBROADCASTSS(c(3), p)
	for i := 4; i < 8; i++ {
		a.VBROADCASTSS(c(i), t)
		a.VFMADD213PS(t, x, p)
	}
	a.VFMADD213PS(reg.Y12, x, p)
	a.VFMADD213PS(reg.Y13, x, p)
	a.VFMADD213PS(reg.Y13, x, p)
	a.VCVTPS2DQ(k, k)
	a.VPSRAD(operand.U8(1), k, t)
	a.VPSUBD(t, k, k)
	a.VPBROADCASTD(c(8), x)
	a.VPADDD(x, t, t)
	a.VPADDD(x, k, k)
	a.VPSLLD(operand.U8(23), t, t)
	a.VPSLLD(operand.U8(23), k, k)
	a.VMULPS(t, p, p)
	a.VMULPS(k, p, x)
}

// ggExpY sets p to expf(x) lane by lane, with expf's (ggml_v_expf's)
// bits, as ggExpZ does. AVX2 has no VSCALEFPS: 2^n is applied as two
// factors 2^h·2^(n-h), h = n>>1, both normal for |n| ≤ 192, so j·2^h is
// exact and the second product rounds j·2^n once, subnormal or overflowing
// as math.Ldexp then float32 does. Lanes with |n| > 192 (or an infinite
// n) become 0 or +Inf by the sign of n. x is overwritten; n, u, q, r are
// scratch.
func (a *asm) ggExpY(g rowsYGlobals, x, n, u, p, q, r reg.VecPhysical) {
	c := g.ggy.Offset
	a.VMOVUPS(c(ggyR), r)
	a.VFMADD231PS(c(ggyL2E), x, r)
	a.VSUBPS(c(ggyR), r, n)
	a.VFNMADD231PS(c(ggyLn2Hi), n, x)
	a.VFNMADD231PS(c(ggyLn2Lo), n, x)
	a.VMULPS(x, x, u)
	a.VMOVUPS(c(ggyP5), p)
	a.VFMADD213PS(c(ggyP5+32), x, p)
	a.VMOVUPS(c(ggyP5+64), q)
	a.VFMADD213PS(c(ggyP5+96), x, q)
	a.VFMADD213PS(q, u, p)
	a.VMOVUPS(c(ggyP5+128), q)
	a.VFMADD213PS(c(ggyOne), x, q)
	a.VFMADD213PS(q, u, p)
	a.VCVTPS2DQ(n, r)
	a.VPSRAD(operand.U8(1), r, x)
	a.VPSUBD(x, r, r)
	a.VPADDD(c(ggy127), x, x)
	a.VPSLLD(operand.U8(23), x, x)
	a.VPADDD(c(ggy127), r, r)
	a.VPSLLD(operand.U8(23), r, r)
	a.VMULPS(x, p, p)
	a.VMULPS(r, p, p)
	a.VANDPS(c(ggyAbs), n, u)
	a.VCMPPS(operand.U8(0x1e), c(ggy192), u, u)
	a.VPSRAD(operand.U8(31), n, q)
	a.VPANDN(c(ggyInf), q, q)
	a.VBLENDVPS(u, q, p, p)
}

// ggSiluY sets v = siluf(v) = v / (1 + expf(-v)); it uses Y2..Y7.
func (a *asm) ggSiluY(g rowsYGlobals, v reg.VecPhysical) {
	a.VXORPS(g.ggy.Offset(ggyNeg0), v, reg.Y2)
	a.ggExpY(g, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7)
	a.VADDPS(g.ggy.Offset(ggyOne), reg.Y5, reg.Y5)
	a.VDIVPS(reg.Y5, v, v)
}

// hsum8y reduces the 8 lanes of Y<y> into the low lane of X<y>, combining
// each step with op (VADDPS or VMAXPS; the last step of a sum VADDSS), X<t>
// the scratch.
func (a *asm) hsum8y(y, t int, max bool) {
	op := a.VADDPS
	if max {
		op = a.VMAXPS
	}
	a.VEXTRACTF128(operand.U8(1), yr[y], xr[t])
	op(xr[t], xr[y], xr[y])
	a.VPERMILPS(operand.U8(0x4e), xr[y], xr[t])
	op(xr[t], xr[y], xr[y])
	a.VPERMILPS(operand.U8(0xb1), xr[y], xr[t])
	if max {
		op(xr[t], xr[y], xr[y])
	} else {
		a.VADDSS(xr[t], xr[y], xr[y])
	}
}

func expSumY(a *asm, g rowsYGlobals) {
	a.text("expSumY", attr.NOSPLIT, "func(x *float32, n int, m float32) float32")
	a.load("x", reg.RDI)
	a.load("n", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	a.VBROADCASTSS(a.arg("m"), reg.Y11)
	a.expConstY()
	a.VXORPS(reg.Y0, reg.Y0, reg.Y0)
	a.XORQ(reg.RAX, reg.RAX)
	a.loopY(func() {
		a.VMOVUPS(xmem(reg.RDI, 0), reg.Y1)
		a.VSUBPS(reg.Y11, reg.Y1, reg.Y1)
		a.expY(g, reg.Y1, reg.Y2, reg.Y3, reg.Y4)
		a.VMOVUPS(reg.Y1, xmem(reg.RDI, 0))
		a.VADDPS(reg.Y1, reg.Y0, reg.Y0)
	})
	a.hsum8y(0, 1, false)
	a.VZEROUPPER()
	a.MOVSS(reg.X0, a.ret())
	a.RET()
}

// siluY generates siluY, or swigluY (swiglu).
func siluY(a *asm, g rowsYGlobals, swiglu bool) {
	if swiglu {
		a.text("swigluY", attr.NOSPLIT, "func(dst, gate, up *float32, n int)",
			"dst[i] = siluf(g[i])·u[i] for i < n rounded down to 8.")
		a.load("dst", reg.RDI)
		a.load("gate", reg.RSI)
		a.load("up", reg.R8)
	} else {
		a.text("siluY", attr.NOSPLIT, "func(dst, x *float32, n int)",
			"dst[i] = siluf(x[i]) for i < n rounded down to 8.")
		a.load("dst", reg.RDI)
		a.load("x", reg.RSI)
	}
	a.load("n", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	a.XORQ(reg.RAX, reg.RAX)
	a.loopY(func() {
		a.VMOVUPS(xmem(reg.RSI, 0), reg.Y1)
		a.ggSiluY(g, reg.Y1)
		if swiglu {
			a.VMULPS(xmem(reg.R8, 0), reg.Y1, reg.Y1)
		}
		a.VMOVUPS(reg.Y1, xmem(reg.RDI, 0))
	})
	a.VZEROUPPER()
	a.RET()
}

// hsum16yHi sets the low lane of X<hi> to hsum16 of the 16 floats in Y<lo>
// (lanes 0..7) and Y<hi> (8..15); X<t> is scratch. Y<hi> is overwritten.
func (a *asm) hsum16yHi(lo, hi, t int) {
	a.VADDPS(yr[lo], yr[hi], yr[hi])
	a.VEXTRACTF128(operand.U8(1), yr[hi], xr[t])
	a.VADDPS(xr[t], xr[hi], xr[hi])
	a.VPERMILPS(operand.U8(0x4e), xr[hi], xr[t])
	a.VADDPS(xr[t], xr[hi], xr[hi])
	a.VPERMILPS(operand.U8(0xb1), xr[hi], xr[t])
	a.VADDSS(xr[t], xr[hi], xr[hi])
}

func expSumGGY(a *asm, g rowsYGlobals) {
	a.text("expSumGGY", attr.NOSPLIT, "func(x *float32, n int, m float32) float64",
		"x[i] = expf(x[i]-m) for i < n (n ≥ 1); returns Σ over the 16-element",
		"chunks of x, the last one padded with zeros, of float64(hsum16(chunk)),",
		"added in order.")
	a.load("x", reg.RDI)
	a.load("n", reg.RCX)
	a.VBROADCASTSS(a.arg("m"), reg.Y15)
	a.VXORPD(reg.X14, reg.X14, reg.X14)
	a.XORQ(reg.RAX, reg.RAX)
	// add adds float64(hsum16) of Y5, Y8 to X14.
	add := func() {
		a.hsum16yHi(5, 8, 9)
		a.VCVTSS2SD(reg.X8, reg.X8, reg.X8)
		a.VADDSD(reg.X8, reg.X14, reg.X14)
	}
	a.loop16("loop", func() {
		a.VMOVUPS(xmem(reg.RDI, 0), reg.Y1)
		a.VSUBPS(reg.Y15, reg.Y1, reg.Y1)
		a.ggExpY(g, reg.Y1, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7)
		a.VMOVUPS(reg.Y5, xmem(reg.RDI, 0))
		a.VMOVUPS(xmem(reg.RDI, 32), reg.Y2)
		a.VSUBPS(reg.Y15, reg.Y2, reg.Y2)
		a.ggExpY(g, reg.Y2, reg.Y3, reg.Y4, reg.Y8, reg.Y6, reg.Y7)
		a.VMOVUPS(reg.Y8, xmem(reg.RDI, 32))
		add()
	}, func() {
		a.LEAQ(g.ggmask.Offset(64), reg.R9)
		a.SHLQ(operand.U8(2), reg.RDX)
		a.SUBQ(reg.RDX, reg.R9)
		a.VMOVUPS(mem(reg.R9, 0), reg.Y12)
		a.VMOVUPS(mem(reg.R9, 32), reg.Y13)
		a.VMASKMOVPS(xmem(reg.RDI, 0), reg.Y12, reg.Y1)
		a.VMASKMOVPS(xmem(reg.RDI, 32), reg.Y13, reg.Y2)
		a.VSUBPS(reg.Y15, reg.Y1, reg.Y1)
		a.VSUBPS(reg.Y15, reg.Y2, reg.Y2)
		a.ggExpY(g, reg.Y1, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7)
		a.ggExpY(g, reg.Y2, reg.Y3, reg.Y4, reg.Y8, reg.Y6, reg.Y7)
		a.VANDPS(reg.Y12, reg.Y5, reg.Y5)
		a.VANDPS(reg.Y13, reg.Y8, reg.Y8)
		a.VMASKMOVPS(reg.Y5, reg.Y12, xmem(reg.RDI, 0))
		a.VMASKMOVPS(reg.Y8, reg.Y13, xmem(reg.RDI, 32))
		add()
	})
	a.VZEROUPPER()
	a.MOVSD(reg.X14, a.ret())
	a.RET()
}

func geluTanhY(a *asm, g rowsYGlobals) {
	a.text("geluTanhY", attr.NOSPLIT, "func(dst, x *float32, n int)")
	a.load("dst", reg.RDI)
	a.load("x", reg.RSI)
	a.load("n", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	a.expConstY()
	a.broadcastY(0x3d372713, 10) // 0.044715
	a.broadcastY(0xbfcc422a, 9)  // -2·sqrt(2/π)
	a.XORQ(reg.RAX, reg.RAX)
	a.loopY(func() {
		a.VMOVUPS(xmem(reg.RSI, 0), reg.Y1)
		a.VMULPS(reg.Y1, reg.Y1, reg.Y2)
		a.VMULPS(reg.Y10, reg.Y2, reg.Y2)
		a.VFMADD213PS(reg.Y1, reg.Y1, reg.Y2)
		a.VMULPS(reg.Y9, reg.Y2, reg.Y2)
		// Y1 / (1 + exp(Y2)).
		a.expY(g, reg.Y2, reg.Y3, reg.Y4, reg.Y5)
		a.VADDPS(reg.Y13, reg.Y2, reg.Y2)
		a.VDIVPS(reg.Y2, reg.Y1, reg.Y1)
		a.VMOVUPS(reg.Y1, xmem(reg.RDI, 0))
	})
	a.VZEROUPPER()
	a.RET()
}

func maxY(a *asm) {
	a.text("maxY", attr.NOSPLIT, "func(x *float32, n int) float32", "n ≥ 8.")
	a.load("x", reg.RDI)
	a.load("n", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	a.VMOVUPS(mem(reg.RDI, 0), reg.Y0)
	a.MOVQ(operand.U32(8), reg.RAX)
	a.loopY(func() {
		a.VMAXPS(xmem(reg.RDI, 0), reg.Y0, reg.Y0)
	})
	a.hsum8y(0, 1, true)
	a.VZEROUPPER()
	a.MOVSS(reg.X0, a.ret())
	a.RET()
}

func sumSqLanesY(a *asm) {
	a.text("sumSqLanesY", attr.NOSPLIT, "func(l *[8]float64, x *float32, n int)",
		"l[j] = Σ x[i]² over i < n (a multiple of 8) with i%8 = j: each square",
		"rounded to float32, widened and added in float64 in order of i. Y0",
		"holds lanes 0-3, Y2 lanes 4-7.")
	a.load("l", reg.RDI)
	a.load("x", reg.RSI)
	a.load("n", reg.RCX)
	a.VXORPD(reg.Y0, reg.Y0, reg.Y0)
	a.VXORPD(reg.Y2, reg.Y2, reg.Y2)
	a.XORQ(reg.RAX, reg.RAX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))

	a.Label("loop")
	a.VMOVUPS(xmem(reg.RSI, 0), reg.Y1)
	a.VMULPS(reg.Y1, reg.Y1, reg.Y1)
	a.VCVTPS2PD(reg.X1, reg.Y3)
	a.VEXTRACTF128(operand.U8(1), reg.Y1, reg.X1)
	a.VCVTPS2PD(reg.X1, reg.Y1)
	a.VADDPD(reg.Y3, reg.Y0, reg.Y0)
	a.VADDPD(reg.Y1, reg.Y2, reg.Y2)
	a.ADDQ(operand.U8(8), reg.RAX)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("loop"))

	a.Label("done")
	a.VMOVUPD(reg.Y0, mem(reg.RDI, 0))
	a.VMOVUPD(reg.Y2, mem(reg.RDI, 32))
	a.VZEROUPPER()
	a.RET()
}

// axpyRowsY generates axpyRowsY, or axpyRowsF16Y (f16: the v rows are
// halves, widened by VCVTPH2PS).
func axpyRowsY(a *asm, f16 bool) {
	es := 4
	if f16 {
		es = 2
		a.text("axpyRowsF16Y", attr.NOSPLIT, "func(o, p *float32, v *uint16, stride uintptr, n, hd int)",
			"o[i] += Σ_{r<n} p[r]·f32(v[r·stride/2 + i]) for i < hd rounded down to 8.")
	} else {
		a.text("axpyRowsY", attr.NOSPLIT, "func(o, p, v *float32, stride uintptr, n, hd int)",
			"o[i] += Σ_{r<n} p[r]·v[r·stride/4 + i] for i < hd rounded down to 8.")
	}
	a.load("o", reg.RDI)
	a.load("p", reg.RSI)
	a.load("v", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	a.ANDQ(operand.I8(-8), reg.R10)
	a.XORQ(reg.RAX, reg.RAX)
	a.JMP(label("ctest"))

	pmem := func(disp int) operand.Mem {
		return operand.Mem{Base: reg.RSI, Index: reg.R13, Scale: 4, Disp: disp}
	}
	// fmas adds Y<4+i> times the 8 elements at m[i] to Y<i>, through
	// Y<6+i> for halves.
	fmas := func(m ...operand.Mem) {
		if !f16 {
			for i, m := range m {
				a.VFMADD231PS(m, yr[4+i], yr[i])
			}
			return
		}
		for i, m := range m {
			a.VCVTPH2PS(m, yr[6+i])
		}
		for i := range m {
			a.VFMADD231PS(yr[6+i], yr[4+i], yr[i])
		}
	}
	a.Label("chunk")
	a.VXORPS(reg.Y0, reg.Y0, reg.Y0)
	a.VXORPS(reg.Y1, reg.Y1, reg.Y1)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: uint8(es)}, reg.R9)
	a.XORQ(reg.R13, reg.R13)
	a.MOVQ(reg.RCX, reg.R14)
	a.ANDQ(operand.I8(-2), reg.R14)
	a.JMP(label("rtest"))

	a.Label("rows2")
	a.VBROADCASTSS(pmem(0), reg.Y4)
	a.VBROADCASTSS(pmem(4), reg.Y5)
	fmas(mem(reg.R9, 0), operand.Mem{Base: reg.R9, Index: reg.RBX, Scale: 1})
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.RBX, Scale: 2}, reg.R9)
	a.ADDQ(operand.U8(2), reg.R13)

	a.Label("rtest")
	a.CMPQ(reg.R13, reg.R14)
	a.JB(label("rows2"))
	a.CMPQ(reg.R13, reg.RCX)
	a.JAE(label("store"))
	a.VBROADCASTSS(pmem(0), reg.Y4)
	fmas(mem(reg.R9, 0))

	a.Label("store")
	a.VADDPS(reg.Y1, reg.Y0, reg.Y0)
	a.VADDPS(xmem(reg.RDI, 0), reg.Y0, reg.Y0)
	a.VMOVUPS(reg.Y0, xmem(reg.RDI, 0))
	a.ADDQ(operand.U8(8), reg.RAX)

	a.Label("ctest")
	a.CMPQ(reg.RAX, reg.R10)
	a.JB(label("chunk"))
	a.VZEROUPPER()
	a.RET()
}
