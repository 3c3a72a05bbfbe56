package main

import (
	"fmt"
	"go/types"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// asm is an avo context with the helpers the generators share.
type asm struct {
	*build.Context
	pkg    *types.Package
	nlabel int // labels made up in the current function
}

// text starts the function name with the Go signature sig ("func(...)") and
// the doc lines, printed as comments at its top.
func (a *asm) text(name string, attrs attr.Attribute, sig string, doc ...string) {
	a.Function(name)
	a.nlabel = 0
	a.Attributes(attrs)
	s, err := gotypes.ParseSignatureInPackage(a.pkg, sig)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	a.Signature(s)
	if len(doc) > 0 {
		a.Comment(doc...)
	}
}

// arg is the frame address of the argument name.
func (a *asm) arg(name string) operand.Mem {
	b, err := a.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// load moves the 8-byte argument name into r.
func (a *asm) load(name string, r reg.Register) {
	a.MOVQ(a.arg(name), r)
}

// gemv4Args loads the arguments of a four-row matrix-vector kernel
// (w, ldw, the activations named x, nb, y, q) into R8, BX, DI, CX, DX and
// R14, then sets the row streams with rows4.
func (a *asm) gemv4Args(x string) {
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load(x, reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.R14)
	a.rows4()
}

// rows4 sets R9..R11 to the rows q·BX, 2q·BX and 3q·BX bytes after R8
// (q in R14), and SI to 4q: the four row streams of the four-row kernels.
func (a *asm) rows4() {
	a.MOVQ(reg.R14, reg.RAX)
	a.IMULQ(reg.RBX, reg.RAX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: 1}, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.RAX, Scale: 1}, reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.RAX, Scale: 1}, reg.R11)
	a.MOVQ(reg.R14, reg.RSI)
	a.SHLQ(operand.U8(2), reg.RSI)
}

// global starts the static read-only global name<> holding the uint64s v.
func (a *asm) global(name string, v ...uint64) operand.Mem {
	m := a.StaticGlobal(name)
	a.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, x := range v {
		a.AddDatum(8*i, operand.U64(x))
	}
	return m
}

// raw emits an instruction that avo v0.5.0's x86 database lacks (the
// AVX512_VNNI, AVX512_BF16 and AMX ones, newer than it). avo passes it
// through unchecked; the Go assembler checks it when package cpu builds. The
// last operand is the destination and, as for every instruction raw is used
// for, also a source.
func (a *asm) raw(opcode string, suffixes []string, ops ...operand.Op) {
	a.Instruction(&ir.Instruction{
		Opcode:   opcode,
		Suffixes: suffixes,
		Operands: ops,
		Inputs:   ops,
		Outputs:  ops[len(ops)-1:],
	})
}

// VPDPBUSD_BCST emits VPDPBUSD.BCST m, z, acc (AVX512_VNNI): acc += the
// dword dot products of the unsigned bytes of z with the signed bytes of the
// dword at m.
func (a *asm) VPDPBUSD_BCST(m, z, acc operand.Op) {
	a.raw("VPDPBUSD", []string{"BCST"}, m, z, acc)
}

// VPDPBUSD emits VPDPBUSD src, z, acc (AVX512_VNNI).
func (a *asm) VPDPBUSD(src, z, acc operand.Op) {
	a.raw("VPDPBUSD", nil, src, z, acc)
}

// mem is disp(base).
func mem(base reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: base, Disp: disp}
}

// Vector registers by number.
var (
	zr = [32]reg.VecPhysical{
		reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
	}
	yr = [32]reg.VecPhysical{
		reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15,
		reg.Y16, reg.Y17, reg.Y18, reg.Y19, reg.Y20, reg.Y21, reg.Y22, reg.Y23,
		reg.Y24, reg.Y25, reg.Y26, reg.Y27, reg.Y28, reg.Y29, reg.Y30, reg.Y31,
	}
	xr = [32]reg.VecPhysical{
		reg.X0, reg.X1, reg.X2, reg.X3, reg.X4, reg.X5, reg.X6, reg.X7,
		reg.X8, reg.X9, reg.X10, reg.X11, reg.X12, reg.X13, reg.X14, reg.X15,
		reg.X16, reg.X17, reg.X18, reg.X19, reg.X20, reg.X21, reg.X22, reg.X23,
		reg.X24, reg.X25, reg.X26, reg.X27, reg.X28, reg.X29, reg.X30, reg.X31,
	}
)

// VDPBF16PS emits VDPBF16PS src2, src1, dst on zmm registers (AVX512_BF16;
// Go operand order): dst[i] += src1.bf16[2i+1]·src2.bf16[2i+1] +
// src1.bf16[2i]·src2.bf16[2i], i < 16. Neither avo's x86 database nor the
// Go assembler knows the instruction, so it is spelled out as its EVEX
// encoding (EVEX.512.F3.0F38.W0 52 /r), with the mnemonic as a comment;
// TestVDPBF16PS (peak_amd64_test.go) checks the encoding against the
// instruction's definition.
func (a *asm) VDPBF16PS(src2, src1, dst reg.VecPhysical) {
	d, s1, s2 := int(dst.PhysicalIndex()), int(src1.PhysicalIndex()), int(src2.PhysicalIndex())
	inv := func(v, bit int) byte { return byte(^(v >> bit) & 1) }
	p0 := inv(d, 3)<<7 | inv(s2, 4)<<6 | inv(s2, 3)<<5 | inv(d, 4)<<4 | 0x2 // R X B R' 00 mm=10 (0F38)
	p1 := byte(0)<<7 | byte((^s1)&15)<<3 | 1<<2 | 0x2                       // W=0 vvvv 1 pp=10 (F3)
	p2 := byte(0)<<7 | 2<<5 | 0<<4 | inv(s1, 4)<<3                          // z=0 L'L=10 b=0 V' aaa=000
	modrm := byte(0xc0) | byte(d&7)<<3 | byte(s2&7)
	a.bytes(fmt.Sprintf("VDPBF16PS %s, %s, %s", src2.Asm(), src1.Asm(), dst.Asm()),
		[]byte{0x62, p0, p1, p2, 0x52, modrm})
}

// bytes emits the encoding e of an instruction that neither avo nor the Go
// assembler knows, as BYTE directives under a comment line with its
// mnemonic (Go operand order).
func (a *asm) bytes(mnemonic string, e []byte) {
	a.Comment(mnemonic)
	for _, b := range e {
		a.Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []operand.Op{operand.U8(b)}})
	}
}
