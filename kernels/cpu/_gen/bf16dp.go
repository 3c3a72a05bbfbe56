package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// bf16dp generates bf16dp_amd64.s: BF16 weights times bfloat16-rounded
// activations on VDPBF16PS (AVX512_BF16), in the order of ggml's x86 CPU
// backend so that the results are llama.cpp's to the bit. Every output
// keeps its own float32 accumulators of 16 lanes; lane i of an accumulator
// gets the products of elements 2i+1 and 2i of each 32-element step (the
// odd one first, as VDPBF16PS adds them), and the accumulator is reduced
// once at the end, in the order GCC expands _mm512_reduce_add_ps into (the
// high 256 bits onto the low, then the high 128, then lanes 2,3 onto 0,1,
// then lane 1 onto 0: hsum). The matrix-vector kernel keeps two
// accumulators per row, for the even and odd 32-element steps of each 64
// (ggml_vec_dot_bf16); the tiles keep one per output (llamafile's
// tinyBLAS). The Go references are in bf16dp.go.
func bf16dp(a *asm) {
	bf16Row(a)
	bf16dpGemv4(a)
	for nt := 1; nt <= bf16dpMaxTokens; nt++ {
		bf16dpTile(a, nt)
	}
}

// bf16dpMaxTokens is the widest tile: 4 rows × 6 tokens take 24
// accumulators, 4 weight and 2 activation registers.
const bf16dpMaxTokens = 6

// bf16Row generates bf16RowZ, the rounding of float32 activations to
// bfloat16 as ggml's scalar GGML_FP32_TO_BF16 does (ties to even by
// integer addition, subnormals kept, NaNs quieted) — not VCVTNE2PS2BF16,
// which flushes subnormals.
func bf16Row(a *asm) {
	a.text("bf16RowZ", attr.NOSPLIT, "func(dst *uint16, src *float32, n int)",
		"bf16RowZ rounds 16·n float32s at src to bfloat16 at dst: (u + 0x7fff +",
		"(u>>16)&1) >> 16 of the bits u, or (u>>16) | 0x40 for a NaN.")
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("n", reg.RCX)
	for _, c := range []struct {
		v uint32
		z reg.VecPhysical
	}{{0x7fffffff, reg.Z31}, {0x7f800000, reg.Z30}, {1, reg.Z29}, {0x7fff, reg.Z28}, {0x40, reg.Z27}} {
		a.MOVL(operand.U32(c.v), reg.EAX)
		a.VPBROADCASTD(reg.EAX, c.z)
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	a.Label("loop")
	a.VMOVDQU32(mem(reg.RSI, 0), reg.Z0)
	a.VPANDD(reg.Z31, reg.Z0, reg.Z1)
	a.VPCMPUD(operand.U8(6), reg.Z30, reg.Z1, reg.K1) // |u| > inf: NaN
	a.VPSRLD(operand.U8(16), reg.Z0, reg.Z2)
	a.VPANDD(reg.Z29, reg.Z2, reg.Z3)
	a.VPADDD(reg.Z28, reg.Z0, reg.Z4)
	a.VPADDD(reg.Z3, reg.Z4, reg.Z4)
	a.VPSRLD(operand.U8(16), reg.Z4, reg.Z4)
	a.VPORD(reg.Z27, reg.Z2, reg.K1, reg.Z4)
	a.VPMOVDW(reg.Z4, mem(reg.RDI, 0))
	a.ADDQ(operand.U8(64), reg.RSI)
	a.ADDQ(operand.U8(32), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("loop"))
	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// bf16dpGemv4 generates bf16dpGemv4Z, four rows' ggml_vec_dot_bf16 up to
// the last whole 64 elements: y[2r] and y[2r+1] are the reduced
// accumulators of the even and odd 32-element steps of row r; the caller
// adds them and the tail in float64 as ggml does.
func bf16dpGemv4(a *asm) {
	a.text("bf16dpGemv4Z", attr.NOSPLIT, "func(w unsafe.Pointer, ldw uintptr, x *uint16, nb int, y *[8]float32)",
		"bf16dpGemv4Z: for the 4 BF16 rows at w, ldw bytes apart, and the nb",
		"64-element steps of the bfloat16 activations x, y[2r] and y[2r+1] are",
		"the reduced sums of row r's even and odd 32-element steps.")
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RBX, Scale: 1}, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.RBX, Scale: 1}, reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.RBX, Scale: 1}, reg.R11)
	rows := []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	for i := range 8 {
		a.VPXORD(zr[i], zr[i], zr[i])
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("reduce"))
	a.Label("loop")
	a.VMOVDQU32(mem(reg.RDI, 0), reg.Z16)
	a.VMOVDQU32(mem(reg.RDI, 64), reg.Z17)
	for r, p := range rows {
		// The float kernels' prefetch distance (gemvPrefetch), two
		// lines a step.
		a.PREFETCHT0(mem(p, gemvPrefetch))
		a.PREFETCHT0(mem(p, gemvPrefetch+64))
		a.VMOVDQU32(mem(p, 0), zr[18+2*r])
		a.VMOVDQU32(mem(p, 64), zr[19+2*r])
		a.VDPBF16PS(reg.Z16, zr[18+2*r], zr[2*r])
		a.VDPBF16PS(reg.Z17, zr[19+2*r], zr[2*r+1])
	}
	a.ADDQ(operand.U32(128), reg.RDI)
	for _, p := range rows {
		a.ADDQ(operand.U32(128), p)
	}
	a.DECQ(reg.RCX)
	a.JNZ(label("loop"))
	a.Label("reduce")
	for i := range 8 {
		a.hsumE(i, 30)
		a.VMOVSS(xr[i], mem(reg.RDX, 4*i))
	}
	a.VZEROUPPER()
	a.RET()
}

// bf16dpTile generates bf16dpTile4x<nt>Z: 4 rows × nt tokens, one
// accumulator each over all of k — or over a part of k, the accumulators
// kept in buf between the parts (mode bit 0: start from buf, not zero; bit
// 1: leave them in buf, not reduced into dst).
func bf16dpTile(a *asm, nt int) {
	a.text(fmt.Sprintf("bf16dpTile4x%dZ", nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x *uint16, ldx uintptr, nb int, dst *float32, ldd uintptr, acc int, buf *float32, mode int)",
		fmt.Sprintf("bf16dpTile4x%dZ: dst[t·ldd + r] (+)= the dot product of BF16 row r (of 4 at w,", nt),
		fmt.Sprintf("ldw bytes apart) with bfloat16 token t (of %d at x, ldx bytes apart) over", nt),
		"nb 32-element steps, one accumulator each (llamafile's order); ldd in",
		"bytes, acc nonzero to add. mode&1: the accumulators start from buf",
		"(16 floats each, token-major); mode&2: they are stored there instead of",
		"reduced into dst.")
	a.load("w", reg.R8)
	a.load("ldw", reg.R9)
	a.load("x", reg.RDI)
	a.load("ldx", reg.RBX)
	a.load("nb", reg.RCX)
	a.load("buf", reg.RDX)
	a.load("mode", reg.RAX)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.R9, Scale: 2}, reg.R10)
	a.ADDQ(reg.R8, reg.R10) // row 3
	a.LEAQ(operand.Mem{Base: reg.RBX, Index: reg.RBX, Scale: 2}, reg.RSI)
	a.ADDQ(reg.RDI, reg.RSI) // token 3
	wmem := []operand.Mem{
		{Base: reg.R8}, {Base: reg.R8, Index: reg.R9, Scale: 1},
		{Base: reg.R8, Index: reg.R9, Scale: 2}, {Base: reg.R10},
	}
	xmem := []operand.Mem{
		{Base: reg.RDI}, {Base: reg.RDI, Index: reg.RBX, Scale: 1}, {Base: reg.RDI, Index: reg.RBX, Scale: 2},
		{Base: reg.RSI}, {Base: reg.RSI, Index: reg.RBX, Scale: 1}, {Base: reg.RSI, Index: reg.RBX, Scale: 2},
	}
	a.TESTQ(operand.U32(1), reg.RAX)
	a.JNZ(label("resume"))
	for i := range 4 * nt {
		a.VPXORD(zr[i], zr[i], zr[i])
	}
	a.JMP(label("start"))
	a.Label("resume")
	for i := range 4 * nt {
		a.VMOVUPS(mem(reg.RDX, 64*i), zr[i])
	}
	a.Label("start")
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("reduce"))
	a.Label("loop")
	for r := range 4 {
		a.VMOVDQU32(wmem[r], zr[24+r])
	}
	for t := range nt {
		xz := zr[28+t%2]
		a.VMOVDQU32(xmem[t], xz)
		for r := range 4 {
			a.VDPBF16PS(xz, zr[24+r], zr[4*t+r])
		}
	}
	for _, p := range []reg.Register{reg.R8, reg.R10, reg.RDI, reg.RSI} {
		a.ADDQ(operand.U8(64), p)
	}
	a.DECQ(reg.RCX)
	a.JNZ(label("loop"))
	a.Label("reduce")
	a.TESTQ(operand.U32(2), reg.RAX)
	a.JZ(label("final"))
	for i := range 4 * nt {
		a.VMOVUPS(zr[i], mem(reg.RDX, 64*i))
	}
	a.VZEROUPPER()
	a.RET()
	a.Label("final")
	a.load("dst", reg.RDX)
	a.load("ldd", reg.RBX)
	a.MOVL(operand.U32(0x1111), reg.EAX)
	a.KMOVW(reg.EAX, reg.K2)
	a.load("acc", reg.RAX)
	for t := range nt {
		a.hsum4(4*t, reg.K2)
		a.storex(4 * t)
	}
	a.VZEROUPPER()
	a.RET()
}

// hsum4 reduces the accumulators Z<z>..Z<z+3> in hsum's order, each add
// done for the four at once, and leaves the four sums in X<z>; k is the
// mask 0x1111. Z24..Z29 are scratch.
func (a *asm) hsum4(z int, k reg.OpmaskPhysical) {
	// The high 256 bits onto the low: [A+A', B+B'] and [C+C', D+D'].
	for i, d := range []int{24, 26} {
		a.VSHUFF64X2(operand.U8(0x44), zr[z+2*i+1], zr[z+2*i], zr[d])
		a.VSHUFF64X2(operand.U8(0xee), zr[z+2*i+1], zr[z+2*i], zr[d+1])
		a.VADDPS(zr[d+1], zr[d], zr[d])
	}
	// The high 128 bits of each onto the low: one 128-bit block each.
	a.VSHUFF64X2(operand.U8(0x88), reg.Z26, reg.Z24, reg.Z28)
	a.VSHUFF64X2(operand.U8(0xdd), reg.Z26, reg.Z24, reg.Z29)
	a.VADDPS(reg.Z29, reg.Z28, reg.Z28)
	// Lanes 2, 3 onto 0, 1, then lane 1 onto 0, in every block.
	a.VPERMILPS(operand.U8(0x4e), reg.Z28, reg.Z29)
	a.VADDPS(reg.Z29, reg.Z28, reg.Z28)
	a.VPERMILPS(operand.U8(0xb1), reg.Z28, reg.Z29)
	a.VADDPS(reg.Z29, reg.Z28, reg.Z28)
	a.VCOMPRESSPS_Z(reg.Z28, k, zr[z])
}

// hsumE is hsum (the same order) in EVEX forms, for registers 16 to 31.
func (a *asm) hsumE(z, t int) {
	a.VEXTRACTF64X4(operand.U8(1), zr[z], yr[t])
	a.VADDPS(yr[t], yr[z], yr[z])
	a.VEXTRACTF32X4(operand.U8(1), yr[z], xr[t])
	a.VADDPS(xr[t], xr[z], xr[z])
	a.VPERMILPS(operand.U8(0x4e), xr[z], xr[t])
	a.VADDPS(xr[t], xr[z], xr[z])
	a.VPERMILPS(operand.U8(0xb1), xr[z], xr[t])
	a.VADDSS(xr[t], xr[z], xr[z])
}
