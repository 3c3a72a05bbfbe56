package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// rowsz generates rowsz_amd64.s: the AVX-512 row kernels built on exp
// (softmax's exp-and-sum, SiLU, SwiGLU, GELU), the max, the squares'
// lanes of the norms and the f32 attention inner loops. Every kernel takes
// any length: the last partial vector is handled with a mask in K1. The
// element-wise ones are in rowsew_amd64.s.
func rowsz(a *asm) {
	expSumZ(a)
	maxZ(a)
	sumSqLanesZ(a)
	siluZ(a, false)
	siluZ(a, true)
	expSumGGZ(a)
	geluTanhZ(a)
	dotRowsZ(a, false)
	axpyRowsZ(a, false)
}

// broadcasts loads each constant c[i].v into every lane of c[i].z,
// through EAX.
func (a *asm) broadcasts(c []vconst) {
	for _, k := range c {
		a.MOVL(operand.U32(k.v), reg.EAX)
		a.VPBROADCASTD(reg.EAX, k.z)
	}
}

// A vconst is a 32-bit constant for every lane of a vector register.
type vconst struct {
	v uint32
	z reg.VecPhysical
}

// expConstZ are the constants of expZ.
var expConstZ = []vconst{
	{0xc2d00000, reg.Z20}, // -104
	{0x42b20000, reg.Z21}, // 89
	{0x3f800000, reg.Z22}, // 1
	{0x3f000000, reg.Z23}, // 1/2!
	{0x3e2aaaab, reg.Z24}, // 1/3!
	{0x3d2aaaab, reg.Z25}, // 1/4!
	{0x3c088889, reg.Z26}, // 1/5!
	{0x3ab60b61, reg.Z27}, // 1/6!
	{0x39500d01, reg.Z28}, // 1/7!
	{0x35bfbe8e, reg.Z29}, // ln2, low part
	{0x3f317200, reg.Z30}, // ln2, high part
	{0x3fb8aa3b, reg.Z31}, // log2(e)
}

// expZ replaces the 16 floats of x by exp(x): x = k·ln2 + r with k an
// integer and |r| ≤ ln2/2, e^r by its Taylor polynomial of degree 7
// (truncation error below 6e-9), scaled by 2^k. x is clamped to [-104, 89]
// first, beyond which exp underflows to 0 or overflows to +Inf; NaN stays
// NaN. k and p are scratch; the constants are expConstZ's.
func (a *asm) expZ(x, k, p reg.VecPhysical) {
	a.VMAXPS(x, reg.Z20, x)
	a.VMINPS(x, reg.Z21, x)
	a.VMULPS(reg.Z31, x, k)
	a.VRNDSCALEPS(operand.U8(0x08), k, k)
	a.VFNMADD231PS(reg.Z30, k, x)
	a.VFNMADD231PS(reg.Z29, k, x)
	a.VMOVAPS(reg.Z28, p)
	for _, c := range []reg.VecPhysical{reg.Z27, reg.Z26, reg.Z25, reg.Z24, reg.Z23, reg.Z22, reg.Z22} {
		a.VFMADD213PS(c, x, p)
	}
	a.VSCALEFPS(k, p, x)
}

// sigmoidMulZ sets v = v / (1 + exp(u)) given u (overwritten); t1, t2
// scratch.
func (a *asm) sigmoidMulZ(v, u, t1, t2 reg.VecPhysical) {
	a.expZ(u, t1, t2)
	a.VADDPS(reg.Z22, u, u)
	a.VDIVPS(u, v, v)
}

// ggConstZ are the constants of ggExpZ.
var ggConstZ = []vconst{
	{0x4b400000, reg.Z20}, // 0x1.8p23
	{0x3fb8aa3b, reg.Z21}, // log2(e)
	{0x3f800000, reg.Z22}, // 1
	{0x3f317200, reg.Z23}, // ln2, high part
	{0x35bfbe8e, reg.Z24}, // ln2, low part
	{0x3c072010, reg.Z25}, // the coefficients
	{0x3d2b9f17, reg.Z26},
	{0x3e2aaf33, reg.Z27},
	{0x3efffedb, reg.Z28},
	{0x3f7ffff6, reg.Z29},
	{0x43400000, reg.Z30}, // 192
	{0x7f800000, reg.Z31}, // +Inf
	{0xc3400000, reg.Z18}, // -192
}

// ggExpZ sets r to expf(x) lane by lane, with expf's (ggml_v_expf's)
// bits: z = fma(x, log2e, 0x1.8p23), n = z - 0x1.8p23, b = x - n·ln2 in
// two fused steps, j = the degree-5 polynomial in b (fused multiply-adds
// in expf's order), r = j·2^n (VSCALEFPS rounds j·2^n once, as
// math.Ldexp then float32 does), then +Inf where n > 192 and 0 where
// n < -192. x is kept; n, b, u, p, q are scratch; it uses K2 and K3 and
// the constants ggConstZ.
func (a *asm) ggExpZ(x, r, n, b, u, p, q reg.VecPhysical) {
	a.VMOVAPS(reg.Z20, r)
	a.VFMADD231PS(reg.Z21, x, r)
	a.VSUBPS(reg.Z20, r, n)
	a.VMOVAPS(x, b)
	a.VFNMADD231PS(reg.Z23, n, b)
	a.VFNMADD231PS(reg.Z24, n, b)
	a.VMULPS(b, b, u)
	a.VMOVAPS(reg.Z25, p)
	a.VFMADD213PS(reg.Z26, b, p)
	a.VMOVAPS(reg.Z27, q)
	a.VFMADD213PS(reg.Z28, b, q)
	a.VFMADD213PS(q, u, p)
	a.VMOVAPS(reg.Z29, q)
	a.VFMADD213PS(reg.Z22, b, q)
	a.VFMADD213PS(q, u, p)
	a.VSCALEFPS(n, p, r)
	a.VCMPPS(operand.U8(0x1e), reg.Z30, n, reg.K2)
	a.VCMPPS(operand.U8(0x11), reg.Z18, n, reg.K3)
	a.VMOVAPS(reg.Z31, reg.K2, r)
	a.VPXORD(r, r, reg.K3, r)
}

// ggSiluZ sets v = siluf(v) = v / (1 + expf(-v)), with Z19 = -0.0 (the
// sign mask); it uses Z2..Z8.
func (a *asm) ggSiluZ(v reg.VecPhysical) {
	a.VXORPS(reg.Z19, v, reg.Z2)
	a.ggExpZ(reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8)
	a.VADDPS(reg.Z22, reg.Z3, reg.Z3)
	a.VDIVPS(reg.Z3, v, v)
}

// ret is the frame address of the result.
func (a *asm) ret() operand.Mem {
	r, err := a.ReturnIndex(0).Resolve()
	if err != nil {
		panic(err)
	}
	return r.Addr
}

// loop32Z emits a loop over the elements from AX (0 on entry) to CX
// rounded down to 32, labelled loop32, body computing the 32 at AX; it
// goes on at the label tail16.
func (a *asm) loop32Z(body func()) {
	a.MOVQ(reg.RCX, reg.RDX)
	a.ANDQ(operand.I8(-32), reg.RDX)
	a.JZ(label("tail16"))

	a.Label("loop32")
	body()
	a.ADDQ(operand.U8(32), reg.RAX)
	a.CMPQ(reg.RAX, reg.RDX)
	a.JB(label("loop32"))
}

func expSumZ(a *asm) {
	a.text("expSumZ", attr.NOSPLIT, "func(x *float32, n int, m float32) float32",
		"x[i] = exp(x[i]-m); returns the sum.")
	a.load("x", reg.RDI)
	a.load("n", reg.RCX)
	a.VBROADCASTSS(a.arg("m"), reg.Z19)
	a.broadcasts(expConstZ)
	a.VPXORD(reg.Z0, reg.Z0, reg.Z0)
	a.VPXORD(reg.Z5, reg.Z5, reg.Z5)
	a.XORQ(reg.RAX, reg.RAX)
	a.loop32Z(func() {
		a.VMOVUPS(xmem(reg.RDI, 0), reg.Z1)
		a.VMOVUPS(xmem(reg.RDI, 64), reg.Z6)
		a.VSUBPS(reg.Z19, reg.Z1, reg.Z1)
		a.VSUBPS(reg.Z19, reg.Z6, reg.Z6)
		a.expZ(reg.Z1, reg.Z2, reg.Z3)
		a.expZ(reg.Z6, reg.Z7, reg.Z8)
		a.VMOVUPS(reg.Z1, xmem(reg.RDI, 0))
		a.VMOVUPS(reg.Z6, xmem(reg.RDI, 64))
		a.VADDPS(reg.Z1, reg.Z0, reg.Z0)
		a.VADDPS(reg.Z6, reg.Z5, reg.Z5)
	})
	a.loop16Z("tail16", func() {
		a.VMOVUPS(xmem(reg.RDI, 0), reg.Z1)
		a.VSUBPS(reg.Z19, reg.Z1, reg.Z1)
		a.expZ(reg.Z1, reg.Z2, reg.Z3)
		a.VMOVUPS(reg.Z1, xmem(reg.RDI, 0))
		a.VADDPS(reg.Z1, reg.Z0, reg.Z0)
	}, func() {
		a.VMOVUPS_Z(xmem(reg.RDI, 0), reg.K1, reg.Z1)
		a.VSUBPS(reg.Z19, reg.Z1, reg.Z1)
		a.expZ(reg.Z1, reg.Z2, reg.Z3)
		a.VMOVUPS(reg.Z1, reg.K1, xmem(reg.RDI, 0))
		a.VADDPS(reg.Z1, reg.Z0, reg.K1, reg.Z0)
	})
	a.VADDPS(reg.Z5, reg.Z0, reg.Z0)
	a.hsum(0, 1)
	a.VZEROUPPER()
	a.MOVSS(reg.X0, a.ret())
	a.RET()
}

func maxZ(a *asm) {
	a.text("maxZ", attr.NOSPLIT, "func(x *float32, n int) float32",
		"Returns the largest of x[0:n] (n ≥ 1).")
	a.load("x", reg.RDI)
	a.load("n", reg.RCX)
	a.VBROADCASTSS(mem(reg.RDI, 0), reg.Z0)
	a.VMOVAPS(reg.Z0, reg.Z1)
	a.XORQ(reg.RAX, reg.RAX)
	a.loop32Z(func() {
		a.VMAXPS(xmem(reg.RDI, 0), reg.Z0, reg.Z0)
		a.VMAXPS(xmem(reg.RDI, 64), reg.Z1, reg.Z1)
	})
	a.loop16Z("tail16", func() {
		a.VMAXPS(xmem(reg.RDI, 0), reg.Z0, reg.Z0)
	}, func() {
		a.VMAXPS(xmem(reg.RDI, 0), reg.Z0, reg.K1, reg.Z0)
	})
	a.VMAXPS(reg.Z1, reg.Z0, reg.Z0)
	a.VEXTRACTF64X4(operand.U8(1), reg.Z0, reg.Y1)
	a.VMAXPS(reg.Y1, reg.Y0, reg.Y0)
	a.VEXTRACTF128(operand.U8(1), reg.Y0, reg.X1)
	a.VMAXPS(reg.X1, reg.X0, reg.X0)
	a.VPERMILPS(operand.U8(0x4e), reg.X0, reg.X1)
	a.VMAXPS(reg.X1, reg.X0, reg.X0)
	a.VPERMILPS(operand.U8(0xb1), reg.X0, reg.X1)
	a.VMAXPS(reg.X1, reg.X0, reg.X0)
	a.VZEROUPPER()
	a.MOVSS(reg.X0, a.ret())
	a.RET()
}

func sumSqLanesZ(a *asm) {
	a.text("sumSqLanesZ", attr.NOSPLIT, "func(l *[8]float64, x *float32, n int)",
		"l[j] = Σ x[i]² over i < n (a multiple of 8) with i%8 = j: each square",
		"rounded to float32, widened and added in float64 in order of i.")
	a.load("l", reg.RDI)
	a.load("x", reg.RSI)
	a.load("n", reg.RCX)
	a.VPXORQ(reg.Z0, reg.Z0, reg.Z0)
	a.XORQ(reg.RAX, reg.RAX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))

	a.Label("loop")
	a.VMOVUPS(xmem(reg.RSI, 0), reg.Y1)
	a.VMULPS(reg.Y1, reg.Y1, reg.Y1)
	a.VCVTPS2PD(reg.Y1, reg.Z1)
	a.VADDPD(reg.Z1, reg.Z0, reg.Z0)
	a.ADDQ(operand.U8(8), reg.RAX)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("loop"))

	a.Label("done")
	a.VMOVUPD(reg.Z0, mem(reg.RDI, 0))
	a.VZEROUPPER()
	a.RET()
}

// siluZ generates siluZ, or swigluZ (swiglu).
func siluZ(a *asm, swiglu bool) {
	if swiglu {
		a.text("swigluZ", attr.NOSPLIT, "func(dst, gate, up *float32, n int)",
			"dst[i] = siluf(g[i])·u[i], the product rounded on its own.")
		a.load("dst", reg.RDI)
		a.load("gate", reg.RSI)
		a.load("up", reg.R8)
	} else {
		a.text("siluZ", attr.NOSPLIT, "func(dst, x *float32, n int)",
			"dst[i] = siluf(x[i]) = x[i] / (1 + expf(-x[i])).")
		a.load("dst", reg.RDI)
		a.load("x", reg.RSI)
	}
	a.load("n", reg.RCX)
	a.broadcasts(ggConstZ)
	a.broadcasts([]vconst{{0x80000000, reg.Z19}})
	a.XORQ(reg.RAX, reg.RAX)
	a.loop16Z("loop", func() {
		a.VMOVUPS(xmem(reg.RSI, 0), reg.Z1)
		a.ggSiluZ(reg.Z1)
		if swiglu {
			a.VMULPS(xmem(reg.R8, 0), reg.Z1, reg.Z1)
		}
		a.VMOVUPS(reg.Z1, xmem(reg.RDI, 0))
	}, func() {
		a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, reg.Z1)
		if swiglu {
			a.VMOVUPS_Z(xmem(reg.R8, 0), reg.K1, reg.Z9)
		}
		a.ggSiluZ(reg.Z1)
		if swiglu {
			a.VMULPS(reg.Z9, reg.Z1, reg.Z1)
		}
		a.VMOVUPS(reg.Z1, reg.K1, xmem(reg.RDI, 0))
	})
	a.VZEROUPPER()
	a.RET()
}

func expSumGGZ(a *asm) {
	a.text("expSumGGZ", attr.NOSPLIT, "func(x *float32, n int, m float32) float64",
		"x[i] = expf(x[i]-m); returns Σ over the 16-element chunks of x, the",
		"last one padded with zeros, of float64(hsum16(chunk)), added in order.")
	a.load("x", reg.RDI)
	a.load("n", reg.RCX)
	a.VBROADCASTSS(a.arg("m"), reg.Z17)
	a.broadcasts(ggConstZ)
	a.VXORPD(reg.X0, reg.X0, reg.X0)
	a.XORQ(reg.RAX, reg.RAX)
	// chunk computes the chunk at AX, masked or not.
	chunk := func(masked bool) {
		if masked {
			a.VMOVUPS_Z(xmem(reg.RDI, 0), reg.K1, reg.Z1)
		} else {
			a.VMOVUPS(xmem(reg.RDI, 0), reg.Z1)
		}
		a.VSUBPS(reg.Z17, reg.Z1, reg.Z1)
		a.ggExpZ(reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7)
		if masked {
			a.VMOVUPS(reg.Z2, reg.K1, xmem(reg.RDI, 0))
			a.VMOVAPS_Z(reg.Z2, reg.K1, reg.Z2)
		} else {
			a.VMOVUPS(reg.Z2, xmem(reg.RDI, 0))
		}
		a.hsum(2, 3)
		a.VCVTSS2SD(reg.X2, reg.X2, reg.X2)
		a.VADDSD(reg.X2, reg.X0, reg.X0)
	}
	a.loop16Z("loop", func() { chunk(false) }, func() { chunk(true) })
	a.VZEROUPPER()
	a.MOVSD(reg.X0, a.ret())
	a.RET()
}

func geluTanhZ(a *asm) {
	a.text("geluTanhZ", attr.NOSPLIT, "func(dst, x *float32, n int)",
		"dst[i] = 0.5·x·(1 + tanh(c·(x + 0.044715·x³))) = x / (1 + exp(-2c·(x + 0.044715·x³))).")
	a.load("dst", reg.RDI)
	a.load("x", reg.RSI)
	a.load("n", reg.RCX)
	a.broadcasts(expConstZ)
	a.broadcasts([]vconst{
		{0x3d372713, reg.Z17}, // 0.044715
		{0xbfcc422a, reg.Z16}, // -2·sqrt(2/π)
	})
	a.XORQ(reg.RAX, reg.RAX)
	gelu := func() {
		a.VMULPS(reg.Z1, reg.Z1, reg.Z2)
		a.VMULPS(reg.Z17, reg.Z2, reg.Z2)
		a.VFMADD213PS(reg.Z1, reg.Z1, reg.Z2) // x³·0.044715 + x
		a.VMULPS(reg.Z16, reg.Z2, reg.Z2)
		a.sigmoidMulZ(reg.Z1, reg.Z2, reg.Z3, reg.Z4)
	}
	a.loop16Z("loop", func() {
		a.VMOVUPS(xmem(reg.RSI, 0), reg.Z1)
		gelu()
		a.VMOVUPS(reg.Z1, xmem(reg.RDI, 0))
	}, func() {
		a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, reg.Z1)
		gelu()
		a.VMOVUPS(reg.Z1, reg.K1, xmem(reg.RDI, 0))
	})
	a.VZEROUPPER()
	a.RET()
}

// bmem is the address of byte AX of the row at base.
func bmem(base reg.Register) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: 1}
}

// dotRowsZ generates dotRowsZ, or dotRowsF16Z (f16: the k rows are
// halves, widened by VCVTPH2PS; AX counts their bytes, q is read at twice
// the offset).
func dotRowsZ(a *asm, f16 bool) {
	if f16 {
		a.text("dotRowsF16Z", attr.NOSPLIT, "func(out, q *float32, k *uint16, stride uintptr, n, hd int)",
			"out[r] = Σ_{i<hd} q[i]·f32(k[r·stride/2 + i]) for r < n (hd ≥ 1).")
	} else {
		a.text("dotRowsZ", attr.NOSPLIT, "func(out, q, k *float32, stride uintptr, n, hd int)",
			"out[r] = Σ_{i<hd} q[i]·k[r·stride/4 + i] for r < n (hd ≥ 1).")
	}
	a.load("out", reg.RDX)
	a.load("q", reg.RSI)
	a.load("k", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	// es: the bytes of an element of k; qmem: q at element AX/es.
	es, qmem := 4, bmem(reg.RSI)
	if f16 {
		es, qmem = 2, operand.Mem{Base: reg.RSI, Index: reg.RAX, Scale: 2}
		a.Comment("K1: the lanes of the last (possibly partial) 16-wide chunk; R12:",
			"the bytes of halves in the chunks before it (AX counts those bytes,",
			"q is read at twice the offset).")
	} else {
		a.Comment("K1: the lanes of the last (possibly partial) 16-wide chunk; R12:",
			"the bytes of the chunks before it.")
	}
	a.LEAQ(mem(reg.R10, -1), reg.R11)
	a.ANDQ(operand.U8(15), reg.R11)
	a.INCQ(reg.R11)
	a.MOVL(operand.I32(-1), reg.R12L)
	a.BZHIL(reg.R11L, reg.R12L, reg.R12L)
	a.KMOVW(reg.R12L, reg.K1)
	a.MOVQ(reg.R10, reg.R12)
	a.SUBQ(reg.R11, reg.R12)
	a.SHLQ(operand.U8(es/2), reg.R12)

	// dots adds q·row for the 16 elements at AX of each of rows into
	// Z0..: masked, the lanes of K1 alone.
	dots := func(rows []reg.Register, masked bool) {
		if masked {
			a.VMOVUPS_Z(qmem, reg.K1, reg.Z4)
		} else {
			a.VMOVUPS(qmem, reg.Z4)
		}
		switch {
		case !f16 && !masked:
			for i, r := range rows {
				a.VFMADD231PS(bmem(r), reg.Z4, zr[i])
			}
			return
		case !f16:
			for i, r := range rows {
				a.VMOVUPS_Z(bmem(r), reg.K1, zr[5+i])
			}
		case !masked:
			for i, r := range rows {
				a.VCVTPH2PS(bmem(r), zr[5+i])
			}
		default:
			for i, r := range rows {
				a.VMOVDQU16_Z(bmem(r), reg.K1, yr[5+i])
			}
			for i := range rows {
				a.VCVTPH2PS(yr[5+i], zr[5+i])
			}
		}
		for i := range rows {
			a.VFMADD231PS(zr[5+i], reg.Z4, zr[i])
		}
	}

	rows := []reg.Register{reg.R8, reg.R9, reg.RDI, reg.R14}
	a.Label("rows4")
	a.CMPQ(reg.RCX, operand.U8(4))
	a.JB(label("rows1"))
	for i := 1; i < 4; i++ {
		a.LEAQ(operand.Mem{Base: rows[i-1], Index: reg.RBX, Scale: 1}, rows[i])
	}
	for z := 0; z < 4; z++ {
		a.VPXORD(zr[z], zr[z], zr[z])
	}
	a.XORQ(reg.RAX, reg.RAX)

	a.Label("chunk4")
	a.CMPQ(reg.RAX, reg.R12)
	a.JAE(label("last4"))
	dots(rows, false)
	a.ADDQ(operand.U8(16*es), reg.RAX)
	a.JMP(label("chunk4"))

	a.Label("last4")
	dots(rows, true)
	a.fold8([4]int{0, 1, 2, 3}, 31)
	a.reduce4x([4]int{0, 1, 2, 3})
	a.VMOVUPS(reg.X0, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(16), reg.RDX)
	a.LEAQ(operand.Mem{Base: reg.R14, Index: reg.RBX, Scale: 1}, reg.R8)
	a.SUBQ(operand.U8(4), reg.RCX)
	a.JMP(label("rows4"))

	a.Label("rows1")
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	a.VPXORD(reg.Z0, reg.Z0, reg.Z0)
	a.XORQ(reg.RAX, reg.RAX)

	a.Label("chunk1")
	a.CMPQ(reg.RAX, reg.R12)
	a.JAE(label("last1"))
	dots(rows[:1], false)
	a.ADDQ(operand.U8(16*es), reg.RAX)
	a.JMP(label("chunk1"))

	a.Label("last1")
	dots(rows[:1], true)
	a.hsum(0, 1)
	a.VMOVSS(reg.X0, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.RBX, reg.R8)
	a.DECQ(reg.RCX)
	a.JMP(label("rows1"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// axpyRowsZ generates axpyRowsZ, or axpyRowsF16Z (f16: the v rows are
// halves, widened by VCVTPH2PS, and whole groups of 64 columns go first).
func axpyRowsZ(a *asm, f16 bool) {
	es := 4
	if f16 {
		es = 2
		a.text("axpyRowsF16Z", attr.NOSPLIT, "func(o, p *float32, v *uint16, stride uintptr, n, hd int)",
			"o[i] += Σ_{r<n} p[r]·f32(v[r·stride/2 + i]) for i < hd (n ≥ 1).",
			"Whole groups of 64 columns go in one pass over the rows (one broadcast",
			"of p[r] for four vectors); the rest, 16 columns at a time.")
	} else {
		a.text("axpyRowsZ", attr.NOSPLIT, "func(o, p, v *float32, stride uintptr, n, hd int)",
			"o[i] += Σ_{r<n} p[r]·v[r·stride/4 + i] for i < hd.")
	}
	a.load("o", reg.RDI)
	a.load("p", reg.RSI)
	a.load("v", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	a.XORQ(reg.RAX, reg.RAX) // the chunk's first column
	vrow := operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: uint8(es)}
	pmem := func(disp int) operand.Mem {
		return operand.Mem{Base: reg.RSI, Index: reg.R13, Scale: 4, Disp: disp}
	}

	if f16 {
		a.Label("wide")
		a.MOVQ(reg.R10, reg.RDX)
		a.SUBQ(reg.RAX, reg.RDX)
		a.CMPQ(reg.RDX, operand.U8(64))
		a.JB(label("chunk"))
		for z := 0; z < 4; z++ {
			a.VPXORD(zr[z], zr[z], zr[z])
		}
		a.LEAQ(vrow, reg.R9)     // the v row at this column
		a.XORQ(reg.R13, reg.R13) // the row

		a.Label("wrow")
		a.VBROADCASTSS(pmem(0), reg.Z4)
		for i := 0; i < 4; i++ {
			a.VCVTPH2PS(mem(reg.R9, 32*i), zr[5+i])
		}
		for i := 0; i < 4; i++ {
			a.VFMADD231PS(zr[5+i], reg.Z4, zr[i])
		}
		a.ADDQ(reg.RBX, reg.R9)
		a.INCQ(reg.R13)
		a.CMPQ(reg.R13, reg.RCX)
		a.JB(label("wrow"))
		for i := 0; i < 4; i++ {
			a.VADDPS(xmem(reg.RDI, 64*i), zr[i], zr[i])
		}
		for i := 0; i < 4; i++ {
			a.VMOVUPS(zr[i], xmem(reg.RDI, 64*i))
		}
		a.ADDQ(operand.U8(64), reg.RAX)
		a.JMP(label("wide"))
	}

	// load loads the 16 (masked) elements at m into Z<z>.
	load := func(m operand.Mem, z int) {
		if f16 {
			a.VMOVDQU16_Z(m, reg.K1, yr[z])
		} else {
			a.VMOVUPS_Z(m, reg.K1, zr[z])
		}
	}
	widen := func(zs ...int) {
		if f16 {
			for _, z := range zs {
				a.VCVTPH2PS(yr[z], zr[z])
			}
		}
	}

	a.Label("chunk")
	a.MOVQ(reg.R10, reg.RDX)
	a.SUBQ(reg.RAX, reg.RDX) // the columns left
	a.JLE(label("done"))
	a.MOVQ(operand.U32(16), reg.R11)
	a.CMPQ(reg.RDX, reg.R11)
	a.CMOVQLT(reg.RDX, reg.R11)
	a.MOVL(operand.I32(-1), reg.R12L)
	a.BZHIL(reg.R11L, reg.R12L, reg.R12L)
	a.KMOVW(reg.R12L, reg.K1)
	a.VPXORD(reg.Z0, reg.Z0, reg.Z0)
	a.VPXORD(reg.Z1, reg.Z1, reg.Z1)
	a.LEAQ(vrow, reg.R9)     // the v row at this chunk
	a.XORQ(reg.R13, reg.R13) // the row
	a.MOVQ(reg.RCX, reg.R14)
	a.ANDQ(operand.I8(-2), reg.R14)

	a.Label("rows2")
	a.CMPQ(reg.R13, reg.R14)
	a.JAE(label("row1"))
	a.VBROADCASTSS(pmem(0), reg.Z4)
	a.VBROADCASTSS(pmem(4), reg.Z5)
	load(mem(reg.R9, 0), 6)
	load(operand.Mem{Base: reg.R9, Index: reg.RBX, Scale: 1}, 7)
	widen(6, 7)
	a.VFMADD231PS(reg.Z6, reg.Z4, reg.Z0)
	a.VFMADD231PS(reg.Z7, reg.Z5, reg.Z1)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.RBX, Scale: 2}, reg.R9)
	a.ADDQ(operand.U8(2), reg.R13)
	a.JMP(label("rows2"))

	a.Label("row1")
	a.CMPQ(reg.R13, reg.RCX)
	a.JAE(label("store"))
	a.VBROADCASTSS(pmem(0), reg.Z4)
	load(mem(reg.R9, 0), 6)
	widen(6)
	a.VFMADD231PS(reg.Z6, reg.Z4, reg.Z0)

	a.Label("store")
	a.VADDPS(reg.Z1, reg.Z0, reg.Z0)
	a.VMOVUPS_Z(xmem(reg.RDI, 0), reg.K1, reg.Z2)
	a.VADDPS(reg.Z2, reg.Z0, reg.Z0)
	a.VMOVUPS(reg.Z0, reg.K1, xmem(reg.RDI, 0))
	a.ADDQ(operand.U8(16), reg.RAX)
	a.JMP(label("chunk"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
