package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ldy loads 8 weights at m as float32 into Y<y>.
func (a *asm) ldy(t floatType, m operand.Mem, y int) {
	switch t.name {
	case "F32":
		a.VMOVUPS(m, yr[y])
	case "F16":
		a.VCVTPH2PS(m, yr[y])
	default:
		a.VPMOVZXWD(m, yr[y])
		a.VPSLLD(operand.U8(16), yr[y], yr[y])
	}
}

// floaty generates floaty_amd64.s: float-like weights (F32, F16, BF16)
// times float32 activations, AVX2 + FMA + F16C. The kernels handle k
// rounded down to a multiple of 8; the Go wrappers add the remaining
// products.
func floaty(a *asm) {
	for _, t := range floatTypes {
		a.dotY(t)
		a.gemvY(t)
		a.gemmY(t)
	}
}

// zeroY clears the ymm registers Y<r> for r in rs.
func (a *asm) zeroY(rs ...int) {
	for _, r := range rs {
		a.VXORPS(yr[r], yr[r], yr[r])
	}
}

// dotY generates dot<t>Y.
func (a *asm) dotY(t floatType) {
	o8 := 8 * t.es
	a.text("dot"+t.name+"Y", attr.NOSPLIT, dotSig)
	a.load("w", reg.R8)
	a.load("x", reg.RDI)
	a.load("k", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	a.zeroY(0, 1, 2, 3)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RCX, reg.RDX)
	a.ANDQ(operand.I8(-32), reg.RDX)
	a.JZ(label("dtail"))

	a.Label("dloop")
	for i := 0; i < 4; i++ {
		a.ldy(t, t.wmem(reg.R8, i*o8), 4+i)
	}
	for i := 0; i < 4; i++ {
		a.VFMADD231PS(xmem(reg.RDI, 32*i), yr[4+i], yr[i])
	}
	a.ADDQ(operand.U8(32), reg.RAX)
	a.CMPQ(reg.RAX, reg.RDX)
	a.JB(label("dloop"))

	a.Label("dtail")
	a.CMPQ(reg.RAX, reg.RCX)
	a.JAE(label("ddone"))
	a.ldy(t, t.wmem(reg.R8, 0), 4)
	a.VFMADD231PS(xmem(reg.RDI, 0), reg.Y4, reg.Y0)
	a.ADDQ(operand.U8(8), reg.RAX)
	a.JMP(label("dtail"))

	a.Label("ddone")
	a.VADDPS(reg.Y1, reg.Y0, reg.Y0)
	a.VADDPS(reg.Y3, reg.Y2, reg.Y2)
	a.VADDPS(reg.Y2, reg.Y0, reg.Y0)
	a.VEXTRACTF128(operand.U8(1), reg.Y0, reg.X1)
	a.VADDPS(reg.X1, reg.X0, reg.X0)
	a.VPERMILPS(operand.U8(0x4e), reg.X0, reg.X1)
	a.VADDPS(reg.X1, reg.X0, reg.X0)
	a.VPERMILPS(operand.U8(0xb1), reg.X0, reg.X1)
	a.VADDSS(reg.X1, reg.X0, reg.X0)
	a.VZEROUPPER()
	ret, err := a.ReturnIndex(0).Resolve()
	if err != nil {
		panic(err)
	}
	a.MOVSS(reg.X0, ret.Addr)
	a.RET()
}

// gemvY generates gemv<t>Y: y[r] = Σ_i w[r][i]·x[i] for the 4 rows at w,
// w+ldw, w+2·ldw, w+3·ldw.
func (a *asm) gemvY(t floatType) {
	o8 := 8 * t.es
	rows := [4]reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	a.text("gemv"+t.name+"Y", attr.NOSPLIT, gemvSig)
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("k", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	for r := 1; r < 4; r++ {
		a.LEAQ(operand.Mem{Base: rows[r-1], Index: reg.RBX, Scale: 1}, rows[r])
	}
	a.zeroY(0, 1, 2, 3, 4, 5, 6, 7)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RCX, reg.RDX)
	a.ANDQ(operand.I8(-16), reg.RDX)
	a.JZ(label("vtail"))

	a.Label("vloop")
	a.prefetchRows(t, rows[:], 2*o8)
	a.VMOVUPS(xmem(reg.RDI, 0), reg.Y8)
	a.VMOVUPS(xmem(reg.RDI, 32), reg.Y9)
	for h := 0; h < 2; h++ {
		r0, r1 := 2*h, 2*h+1
		a.ldy(t, t.wmem(rows[r0], 0), 10)
		a.ldy(t, t.wmem(rows[r0], o8), 11)
		a.ldy(t, t.wmem(rows[r1], 0), 12)
		a.ldy(t, t.wmem(rows[r1], o8), 13)
		a.VFMADD231PS(reg.Y8, reg.Y10, yr[r0])
		a.VFMADD231PS(reg.Y9, reg.Y11, yr[4+r0])
		a.VFMADD231PS(reg.Y8, reg.Y12, yr[r1])
		a.VFMADD231PS(reg.Y9, reg.Y13, yr[4+r1])
	}
	a.ADDQ(operand.U8(16), reg.RAX)
	a.CMPQ(reg.RAX, reg.RDX)
	a.JB(label("vloop"))

	// At most 8 elements are left.
	a.Label("vtail")
	a.CMPQ(reg.RAX, reg.RCX)
	a.JAE(label("vdone"))
	a.VMOVUPS(xmem(reg.RDI, 0), reg.Y8)
	for r := 0; r < 4; r++ {
		a.ldy(t, t.wmem(rows[r], 0), 10+r)
	}
	for r := 0; r < 4; r++ {
		a.VFMADD231PS(reg.Y8, yr[10+r], yr[r])
	}
	a.ADDQ(operand.U8(8), reg.RAX)

	a.Label("vdone")
	for r := 0; r < 4; r++ {
		a.VADDPS(yr[4+r], yr[r], yr[r])
	}
	a.load("y", reg.RDX)
	a.reduce4x([4]int{0, 1, 2, 3})
	a.VMOVUPS(reg.X0, mem(reg.RDX, 0))
	a.VZEROUPPER()
	a.RET()
}

// gemmY generates gemm<t>Y: dst[t·ldd/4 + r] (+)= w_r·x_t for 4 rows and 2
// tokens. The chain of row r and token j is Y<4j+r>.
func (a *asm) gemmY(t floatType) {
	rows := [4]reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	a.text("gemm"+t.name+"Y", attr.NOSPLIT, gemmSig,
		"dst[t·ldd/4 + r] (+)= w_r·x_t for 4 rows and 2 tokens.")
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("ldx", reg.RSI)
	a.load("k", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	for r := 1; r < 4; r++ {
		a.LEAQ(operand.Mem{Base: rows[r-1], Index: reg.RBX, Scale: 1}, rows[r])
	}
	a.LEAQ(operand.Mem{Base: reg.RDI, Index: reg.RSI, Scale: 1}, reg.R12)
	a.zeroY(0, 1, 2, 3, 4, 5, 6, 7)
	a.XORQ(reg.RAX, reg.RAX)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JAE(label("gdone"))

	a.Label("gloop")
	a.VMOVUPS(xmem(reg.RDI, 0), reg.Y8)
	a.VMOVUPS(xmem(reg.R12, 0), reg.Y9)
	for h := 0; h < 2; h++ {
		r0, r1 := 2*h, 2*h+1
		a.ldy(t, t.wmem(rows[r0], 0), 10+2*h)
		a.ldy(t, t.wmem(rows[r1], 0), 11+2*h)
		a.VFMADD231PS(reg.Y8, yr[10+2*h], yr[r0])
		a.VFMADD231PS(reg.Y9, yr[10+2*h], yr[4+r0])
		a.VFMADD231PS(reg.Y8, yr[11+2*h], yr[r1])
		a.VFMADD231PS(reg.Y9, yr[11+2*h], yr[4+r1])
	}
	a.ADDQ(operand.U8(8), reg.RAX)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("gloop"))

	a.Label("gdone")
	a.load("dst", reg.RDX)
	a.load("ldd", reg.RBX)
	a.load("acc", reg.RAX)
	a.reduce4x([4]int{0, 1, 2, 3})
	a.storex(0)
	a.reduce4x([4]int{4, 5, 6, 7})
	a.storex(4)
	a.VZEROUPPER()
	a.RET()
}
