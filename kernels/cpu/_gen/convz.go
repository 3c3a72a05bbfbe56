package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// loop16 emits the loop (labelled loop) of a row kernel over the CX
// elements of a row from AX, 16 at a time: full computes the 16 at AX, last
// (at the label last) the DX < 16 left. The function goes on at the label
// done.
func (a *asm) loop16(loop string, full, last func()) {
	a.Label(loop)
	a.MOVQ(reg.RCX, reg.RDX)
	a.SUBQ(reg.RAX, reg.RDX)
	a.JZ(label("done"))
	a.CMPQ(reg.RDX, operand.U8(16))
	a.JB(label("last"))
	full()
	a.ADDQ(operand.U8(16), reg.RAX)
	a.JMP(label(loop))

	a.Label("last")
	last()

	a.Label("done")
}

// loop16Z is loop16 for AVX-512 kernels: last runs under the mask K1 of
// the DX elements left (R11 the scratch).
func (a *asm) loop16Z(loop string, full, last func()) {
	a.loop16(loop, full, func() {
		a.tailMask(reg.R11L)
		last()
	})
}

// loopY emits the loop of an AVX2 row kernel over the elements from AX (0
// on entry) to CX, 8 at a time, body computing the 8 at AX. The function
// goes on after it.
func (a *asm) loopY(body func()) {
	a.JMP(label("test"))

	a.Label("loop")
	body()
	a.ADDQ(operand.U8(8), reg.RAX)

	a.Label("test")
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("loop"))
}

// hmem is the address of float16 AX of the row at base.
func hmem(base reg.Register) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: 2}
}

// A convKernel converts a row between float32 and a 16-bit float type.
type convKernel struct {
	name string // without the Z/Y suffix
	sig  string
	doc  []string // of the AVX-512 kernel
	docY []string // of the AVX2 one
	// vec converts the vector at element AX of the row at SI to the row
	// at DI: 16 elements through Z0 (and Y1) or, with ymm, 8 through Y0
	// (and X1); masked (zmm only): the DX left, under the mask K1.
	vec func(a *asm, ymm, masked bool)
}

var convKernels = []convKernel{
	{name: "f16ToF32", sig: "func(dst *float32, src *uint16, n int)",
		vec: func(a *asm, ymm, masked bool) {
			switch {
			case ymm:
				a.VCVTPH2PS(hmem(reg.RSI), reg.Y0)
				a.VMOVUPS(reg.Y0, xmem(reg.RDI, 0))
			case masked:
				a.VMOVDQU16_Z(hmem(reg.RSI), reg.K1, reg.Y0)
				a.VCVTPH2PS(reg.Y0, reg.Z0)
				a.VMOVUPS(reg.Z0, reg.K1, xmem(reg.RDI, 0))
			default:
				a.VCVTPH2PS(hmem(reg.RSI), reg.Z0)
				a.VMOVUPS(reg.Z0, xmem(reg.RDI, 0))
			}
		}},
	{name: "bf16ToF32", sig: "func(dst *float32, src *uint16, n int)",
		vec: func(a *asm, ymm, masked bool) {
			switch {
			case ymm:
				a.VPMOVZXWD(hmem(reg.RSI), reg.Y0)
				a.VPSLLD(operand.U8(16), reg.Y0, reg.Y0)
				a.VMOVUPS(reg.Y0, xmem(reg.RDI, 0))
			case masked:
				a.VMOVDQU16_Z(hmem(reg.RSI), reg.K1, reg.Y0)
				a.VPMOVZXWD(reg.Y0, reg.Z0)
				a.VPSLLD(operand.U8(16), reg.Z0, reg.Z0)
				a.VMOVUPS(reg.Z0, reg.K1, xmem(reg.RDI, 0))
			default:
				a.VPMOVZXWD(hmem(reg.RSI), reg.Z0)
				a.VPSLLD(operand.U8(16), reg.Z0, reg.Z0)
				a.VMOVUPS(reg.Z0, xmem(reg.RDI, 0))
			}
		}},
	{name: "f32ToF16", sig: "func(dst *uint16, src *float32, n int)", doc: []string{"Rounds to nearest even."},
		vec: func(a *asm, ymm, masked bool) {
			switch {
			case ymm:
				a.VMOVUPS(xmem(reg.RSI, 0), reg.Y0)
				a.VCVTPS2PH(operand.U8(0), reg.Y0, reg.X1)
				a.VMOVDQU(reg.X1, hmem(reg.RDI))
			case masked:
				a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, reg.Z0)
				a.VCVTPS2PH(operand.U8(0), reg.Z0, reg.Y1)
				a.VMOVDQU16(reg.Y1, reg.K1, hmem(reg.RDI))
			default:
				a.VMOVUPS(xmem(reg.RSI, 0), reg.Z0)
				a.VCVTPS2PH(operand.U8(0), reg.Z0, reg.Y1)
				a.VMOVDQU(reg.Y1, hmem(reg.RDI))
			}
		}},
}

// roundF16 rounds float32s to the nearest half (ties to even), kept as
// float32s: the f16 KV cache's rounding of the rows it stores.
var roundF16 = convKernel{name: "roundF16", sig: "func(dst, src *float32, n int)",
	doc:  []string{"dst[i] = src[i] rounded to the nearest half (ties to even)."},
	docY: []string{"dst[i] = src[i] rounded to the nearest half, for i < n rounded down to 8."},
	vec: func(a *asm, ymm, masked bool) {
		switch {
		case ymm:
			a.VMOVUPS(xmem(reg.RSI, 0), reg.Y0)
			a.VCVTPS2PH(operand.U8(0), reg.Y0, reg.X1)
			a.VCVTPH2PS(reg.X1, reg.Y0)
			a.VMOVUPS(reg.Y0, xmem(reg.RDI, 0))
		case masked:
			a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, reg.Z0)
			a.VCVTPS2PH(operand.U8(0), reg.Z0, reg.Y1)
			a.VCVTPH2PS(reg.Y1, reg.Z0)
			a.VMOVUPS(reg.Z0, reg.K1, xmem(reg.RDI, 0))
		default:
			a.VMOVUPS(xmem(reg.RSI, 0), reg.Z0)
			a.VCVTPS2PH(operand.U8(0), reg.Z0, reg.Y1)
			a.VCVTPH2PS(reg.Y1, reg.Z0)
			a.VMOVUPS(reg.Z0, xmem(reg.RDI, 0))
		}
	}}

// convz generates convz_amd64.s: the element-type conversions, AVX-512
// (F16C instructions on zmm), any n.
func convz(a *asm) {
	for _, k := range convKernels {
		a.convKernelZ(k)
	}
}

// convY generates the AVX2 conversions (in rowsy_amd64.s).
func convY(a *asm) {
	for _, k := range convKernels {
		a.convKernelY(k)
	}
}

// convKernelZ generates the AVX-512 kernel <k>Z: any n.
func (a *asm) convKernelZ(k convKernel) {
	a.text(k.name+"Z", attr.NOSPLIT, k.sig, k.doc...)
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("n", reg.RCX)
	a.XORQ(reg.RAX, reg.RAX)
	a.loop16Z("loop", func() { k.vec(a, false, false) }, func() { k.vec(a, false, true) })
	a.VZEROUPPER()
	a.RET()
}

// convKernelY generates the AVX2 kernel <k>Y: n rounded down to a
// multiple of 8, the Go wrappers finish the rest.
func (a *asm) convKernelY(k convKernel) {
	a.text(k.name+"Y", attr.NOSPLIT, k.sig, k.docY...)
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("n", reg.RCX)
	a.ANDQ(operand.I8(-8), reg.RCX)
	a.XORQ(reg.RAX, reg.RAX)
	a.loopY(func() { k.vec(a, true, false) })
	a.VZEROUPPER()
	a.RET()
}
