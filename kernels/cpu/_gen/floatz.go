package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// A floatType is a float-like weight type of the float kernels.
type floatType struct {
	name string // F32, F16, BF16
	es   int    // element size in bytes
}

var floatTypes = []floatType{{"F32", 4}, {"F16", 2}, {"BF16", 2}}

// The float kernels' signatures.
const (
	dotSig  = "func(w unsafe.Pointer, x *float32, k int) float32"
	gemvSig = "func(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)"
	gemmSig = "func(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)"
)

// wmem is the address of weight element AX of the row at base, plus disp
// bytes.
func (t floatType) wmem(base reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: uint8(t.es), Disp: disp}
}

// xmem is the address of float32 AX of the vector at base, plus disp bytes.
func xmem(base reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: 4, Disp: disp}
}

// ldz loads 16 weights at m as float32 into Z<z>: VCVTPH2PS widens 16
// halves to 16 floats; a bfloat16 is the high half of a float32.
func (a *asm) ldz(t floatType, m operand.Mem, z int) {
	switch t.name {
	case "F32":
		a.VMOVUPS(m, zr[z])
	case "F16":
		a.VCVTPH2PS(m, zr[z])
	default:
		a.VPMOVZXWD(m, zr[z])
		a.VPSLLD(operand.U8(16), zr[z], zr[z])
	}
}

// ldmz is ldz under the mask K1 (masked-off lanes read as zero; Y<z> is
// scratch).
func (a *asm) ldmz(t floatType, m operand.Mem, z int) {
	switch t.name {
	case "F32":
		a.VMOVUPS_Z(m, reg.K1, zr[z])
	case "F16":
		a.VMOVDQU16_Z(m, reg.K1, yr[z])
		a.VCVTPH2PS(yr[z], zr[z])
	default:
		a.VMOVDQU16_Z(m, reg.K1, yr[z])
		a.VPMOVZXWD(yr[z], zr[z])
		a.VPSLLD(operand.U8(16), zr[z], zr[z])
	}
}

// tailMask sets K1 to the low DX lanes, r (32-bit) the scratch.
func (a *asm) tailMask(r reg.Register) {
	a.MOVL(operand.I32(-1), r)
	a.BZHIL(reg.EDX, r, r)
	a.KMOVW(r, reg.K1)
}

// floatz generates floatz_amd64.s: float-like weights (F32, F16, BF16)
// times float32 activations, AVX-512.
func floatz(a *asm) {
	for _, t := range floatTypes {
		a.dotZ(t)
		a.gemvZ(t)
		a.gemmZ(t)
	}
}

// gemvPrefetch is how far ahead, in bytes, the matrix-vector products
// prefetch each of their 4 row streams into L1. Decode reads the weights
// once from DRAM, and the hardware prefetchers alone left one thread at
// 0.50-0.68 of its read bandwidth on the TinyLlama-shaped F16 file (issue
// 18). 1 KiB per stream is 4 KiB ahead in all, above the bandwidth ×
// latency product (25 GB/s × ~100 ns); 256 B to 2 KiB all beat no
// prefetch (docs/performance.md, "Decode: software prefetch").
const gemvPrefetch = 1024

// prefetchRows prefetches the lines of the next span bytes of each row
// stream gemvPrefetch bytes ahead of the weight element AX.
func (a *asm) prefetchRows(t floatType, rows []reg.Register, span int) {
	for _, r := range rows {
		for l := 0; l < span; l += 64 {
			a.PREFETCHT0(t.wmem(r, gemvPrefetch+l))
		}
	}
}

// dotZ generates dot<t>Z: Σ_i w[i]·x[i] over k elements, in four chains.
func (a *asm) dotZ(t floatType) {
	o16 := 16 * t.es
	a.text("dot"+t.name+"Z", attr.NOSPLIT, dotSig)
	a.load("w", reg.R8)
	a.load("x", reg.RDI)
	a.load("k", reg.RCX)
	a.zero(zr[0:4]...)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RCX, reg.RDX)
	a.ANDQ(operand.I8(-64), reg.RDX)
	a.JZ(label("dtail"))

	a.Label("dloop")
	for i := 0; i < 4; i++ {
		a.ldz(t, t.wmem(reg.R8, i*o16), 4+i)
	}
	for i := 0; i < 4; i++ {
		a.VFMADD231PS(xmem(reg.RDI, 64*i), zr[4+i], zr[i])
	}
	a.ADDQ(operand.U8(64), reg.RAX)
	a.CMPQ(reg.RAX, reg.RDX)
	a.JB(label("dloop"))

	a.Label("dtail")
	a.MOVQ(reg.RCX, reg.RDX)
	a.SUBQ(reg.RAX, reg.RDX)
	a.JZ(label("ddone"))
	a.CMPQ(reg.RDX, operand.U8(16))
	a.JB(label("dlast"))
	a.ldz(t, t.wmem(reg.R8, 0), 4)
	a.VFMADD231PS(xmem(reg.RDI, 0), reg.Z4, reg.Z0)
	a.ADDQ(operand.U8(16), reg.RAX)
	a.JMP(label("dtail"))

	a.Label("dlast")
	a.tailMask(reg.R12L)
	a.ldmz(t, t.wmem(reg.R8, 0), 4)
	a.VMOVUPS_Z(xmem(reg.RDI, 0), reg.K1, reg.Z5)
	a.VFMADD231PS(reg.Z5, reg.Z4, reg.Z1)

	a.Label("ddone")
	a.VADDPS(reg.Z1, reg.Z0, reg.Z0)
	a.VADDPS(reg.Z3, reg.Z2, reg.Z2)
	a.VADDPS(reg.Z2, reg.Z0, reg.Z0)
	a.hsum(0, 1)
	a.VZEROUPPER()
	ret, err := a.ReturnIndex(0).Resolve()
	if err != nil {
		panic(err)
	}
	a.MOVSS(reg.X0, ret.Addr)
	a.RET()
}

// gemvZ generates gemv<t>Z: y[r] = Σ_i w[r][i]·x[i] for the 4 rows at w,
// w+ldw, w+2·ldw, w+3·ldw.
func (a *asm) gemvZ(t floatType) {
	o16 := 16 * t.es
	rows := [4]reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	a.text("gemv"+t.name+"Z", attr.NOSPLIT, gemvSig,
		"y[r] = Σ_i w[r][i]·x[i] for the 4 rows at w, w+ldw, w+2·ldw, w+3·ldw.")
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("k", reg.RCX)
	for r := 1; r < 4; r++ {
		a.LEAQ(operand.Mem{Base: rows[r-1], Index: reg.RBX, Scale: 1}, rows[r])
	}
	a.zero(zr[0:8]...)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RCX, reg.RDX)
	a.ANDQ(operand.I8(-32), reg.RDX)
	a.JZ(label("vtail"))

	// Rows r's chains: Z<r> (even slices) and Z<4+r> (odd ones).
	a.Label("vloop")
	a.prefetchRows(t, rows[:], 2*o16)
	a.VMOVUPS(xmem(reg.RDI, 0), reg.Z8)
	a.VMOVUPS(xmem(reg.RDI, 64), reg.Z9)
	for h := 0; h < 2; h++ {
		r0, r1 := 2*h, 2*h+1
		a.ldz(t, t.wmem(rows[r0], 0), 10)
		a.ldz(t, t.wmem(rows[r0], o16), 11)
		a.ldz(t, t.wmem(rows[r1], 0), 12)
		a.ldz(t, t.wmem(rows[r1], o16), 13)
		a.VFMADD231PS(reg.Z8, reg.Z10, zr[r0])
		a.VFMADD231PS(reg.Z9, reg.Z11, zr[4+r0])
		a.VFMADD231PS(reg.Z8, reg.Z12, zr[r1])
		a.VFMADD231PS(reg.Z9, reg.Z13, zr[4+r1])
	}
	a.ADDQ(operand.U8(32), reg.RAX)
	a.CMPQ(reg.RAX, reg.RDX)
	a.JB(label("vloop"))

	a.Label("vtail")
	a.MOVQ(reg.RCX, reg.RDX)
	a.SUBQ(reg.RAX, reg.RDX)
	a.JZ(label("vdone"))
	a.CMPQ(reg.RDX, operand.U8(16))
	a.JB(label("vlast"))
	a.VMOVUPS(xmem(reg.RDI, 0), reg.Z8)
	for r := 0; r < 4; r++ {
		a.ldz(t, t.wmem(rows[r], 0), 10+r)
	}
	for r := 0; r < 4; r++ {
		a.VFMADD231PS(reg.Z8, zr[10+r], zr[r])
	}
	a.ADDQ(operand.U8(16), reg.RAX)
	a.JMP(label("vtail"))

	a.Label("vlast")
	a.tailMask(reg.R12L)
	a.VMOVUPS_Z(xmem(reg.RDI, 0), reg.K1, reg.Z8)
	for r := 0; r < 4; r++ {
		a.ldmz(t, t.wmem(rows[r], 0), 10+r)
	}
	for r := 0; r < 4; r++ {
		a.VFMADD231PS(reg.Z8, zr[10+r], zr[4+r])
	}

	a.Label("vdone")
	for r := 0; r < 4; r++ {
		a.VADDPS(zr[4+r], zr[r], zr[r])
	}
	a.load("y", reg.RDX)
	a.fold8([4]int{0, 1, 2, 3}, 31)
	a.reduce4x([4]int{0, 1, 2, 3})
	a.VMOVUPS(reg.X0, mem(reg.RDX, 0))
	a.VZEROUPPER()
	a.RET()
}

// gemmZ generates gemm<t>Z: dst[t·ldd/4 + r] (+)= Σ_i w[r][i]·x[t][i] for
// 4 rows (stride ldw bytes) and 4 tokens (stride ldx bytes). The chain of
// row r and token j is Z<4j+r>.
func (a *asm) gemmZ(t floatType) {
	rows := [4]reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	toks := [4]reg.Register{reg.RDI, reg.R12, reg.R13, reg.R14}
	a.text("gemm"+t.name+"Z", attr.NOSPLIT, gemmSig,
		"dst[t·ldd/4 + r] (+)= Σ_i w[r][i]·x[t][i] for 4 rows (stride ldw bytes)",
		"and 4 tokens (stride ldx bytes); with acc ≠ 0 the sums are added.")
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("ldx", reg.RSI)
	a.load("k", reg.RCX)
	for r := 1; r < 4; r++ {
		a.LEAQ(operand.Mem{Base: rows[r-1], Index: reg.RBX, Scale: 1}, rows[r])
	}
	for j := 1; j < 4; j++ {
		a.LEAQ(operand.Mem{Base: toks[j-1], Index: reg.RSI, Scale: 1}, toks[j])
	}
	a.zero(zr[0:16]...)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RCX, reg.RDX)
	a.ANDQ(operand.I8(-16), reg.RDX)
	a.JZ(label("gtail"))

	a.Label("gloop")
	for j := 0; j < 4; j++ {
		a.VMOVUPS(xmem(toks[j], 0), zr[16+j])
	}
	// One 16-wide slice of the 4 rows, interleaving loads and FMAs.
	a.ldz(t, t.wmem(reg.R8, 0), 20)
	a.ldz(t, t.wmem(reg.R9, 0), 21)
	a.gemmFMAs(0)
	a.ldz(t, t.wmem(reg.R10, 0), 22)
	a.gemmFMAs(1)
	a.ldz(t, t.wmem(reg.R11, 0), 23)
	a.gemmFMAs(2)
	a.gemmFMAs(3)
	a.ADDQ(operand.U8(16), reg.RAX)
	a.CMPQ(reg.RAX, reg.RDX)
	a.JB(label("gloop"))

	a.Label("gtail")
	a.MOVQ(reg.RCX, reg.RDX)
	a.SUBQ(reg.RAX, reg.RDX)
	a.JZ(label("gdone"))
	a.tailMask(reg.EBX)
	for j := 0; j < 4; j++ {
		a.VMOVUPS_Z(xmem(toks[j], 0), reg.K1, zr[16+j])
	}
	for r := 0; r < 4; r++ {
		a.ldmz(t, t.wmem(rows[r], 0), 20+r)
	}
	for r := 0; r < 4; r++ {
		a.gemmFMAs(r)
	}

	a.Label("gdone")
	a.load("dst", reg.RDX)
	a.load("ldd", reg.RBX)
	a.load("acc", reg.RAX)
	for j := 0; j < 4; j++ {
		z := [4]int{4 * j, 4*j + 1, 4*j + 2, 4*j + 3}
		a.fold8(z, 31)
		a.reduce4x(z)
		a.storex(4 * j)
	}
	a.VZEROUPPER()
	a.RET()
}

// gemmFMAs multiplies row r's weights in Z<20+r> with the 4 tokens in
// Z16..Z19.
func (a *asm) gemmFMAs(r int) {
	for j := 0; j < 4; j++ {
		a.VFMADD231PS(zr[16+j], zr[20+r], zr[4*j+r])
	}
}
