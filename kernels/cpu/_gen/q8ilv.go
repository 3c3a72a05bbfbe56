package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8ilv generates q8ilv_amd64.s: prefill for Q4_0 and Q8_0 weights, AVX-512
// VNNI, 16 rows × up to 16 tokens per tile, each output one chain over the
// blocks of the row in ggml's order,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc),
//
// with the rows in the lanes: nothing is summed across lanes, so the chain
// is a plain vertical FMA per block.
//
// Weights are unpacked per strip of 16 rows. Q8_0, 576 bytes per block: 8
// vectors where lane r of vector s holds the quants 4s..4s+3 of row r, as
// q+128 (unsigned), then the 16 rows' scales as float32. Q4_0, 320 bytes
// per block: 4 vectors where lane r of vector s holds the bytes 4s..4s+3 of
// row r, whose low nibbles are the quants 4s..4s+3 and high nibbles the
// quants 16+4s..19+4s, then the scales; the tiles split the nibbles once
// per block for all their tokens (on pipes the multiply-adds leave free),
// which halves the strip's stores and its reads. A token's activations (layout C, q8pack.go) give per block 8
// dwords of quants that VPDPBUSD broadcasts against the 8 vectors: after 8
// of them, starting from the correction (-8·Σq or -128·Σq), lane r holds row
// r's exact integer sum of the block.
func q8ilv(a *asm) {
	iota := a.global("iota16",
		0x0000000100000000, 0x0000000300000002, 0x0000000500000004, 0x0000000700000006,
		0x0000000900000008, 0x0000000b0000000a, 0x0000000d0000000c, 0x0000000f0000000e)
	for _, k := range []qkind{q4, q8} {
		a.unpackS16(k, iota)
	}
	for _, k := range []qkind{q4, q8} {
		for _, nt := range []int{16, 8, 4} {
			a.tile(k, nt)
		}
	}
}

// unpackS16 generates unpackS16<k>Z, the strip unpack with gathers.
func (a *asm) unpackS16(k qkind, iota operand.Mem) {
	var doc []string
	if k == q4 {
		doc = []string{
			fmt.Sprintf("Unpacks nb %s blocks of nrows ≤ 16 rows (ldw bytes apart) into a strip;", k.long),
			"missing rows are zero.",
		}
	} else {
		doc = []string{
			fmt.Sprintf("Unpacks nb %s blocks of nrows ≤ 16 rows (ldw bytes apart) into a strip", k.long),
			"(quants + 128); missing rows are zero.",
		}
	}
	a.text("unpackS16"+k.long+"Z", attr.NOSPLIT, "func(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)", doc...)
	// DI dst, SI the first row, Z31 the row offsets, K1 the rows, CX the
	// blocks.
	a.load("dst", reg.RDI)
	a.load("w", reg.RSI)
	a.load("ldw", reg.RAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.VPMULLD(iota, reg.Z31, reg.Z31)
	a.load("nrows", reg.RCX)
	a.MOVL(operand.I32(-1), reg.EAX)
	a.BZHIL(reg.ECX, reg.EAX, reg.EAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.load("nb", reg.RCX)
	nv, bsize := 4, 18
	if k == q4 {
		a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	} else {
		nv, bsize = 8, 34
		a.MOVL(operand.U32(0x80808080), reg.EAX)
	}
	a.VPBROADCASTD(reg.EAX, reg.Z30)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))

	a.Label("blk")
	for v := 0; v < nv; v++ {
		a.gather(2+4*v, zr[v])
	}
	if k == q8 {
		for v := 0; v < 8; v++ {
			a.VPXORD(reg.Z30, zr[v], zr[v])
		}
	}
	for v := 0; v < k.uvecs(); v++ {
		a.VMOVDQU64(zr[v], mem(reg.RDI, 64*v))
	}
	// The 16 rows' scales as float32 after the quants.
	a.gather(0, reg.Z8)
	a.VPMOVDW(reg.Z8, reg.Y8)
	a.VCVTPH2PS(reg.Y8, reg.Z8)
	a.VMOVUPS(reg.Z8, mem(reg.RDI, 64*k.uvecs()))
	a.ADDQ(operand.U8(bsize), reg.RSI)
	a.ADDQ(operand.U32(uint32(k.ublock())), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// gather loads into z the dword at off(SI) of each of the rows set in K1
// (Z31 their offsets), zero for the others.
func (a *asm) gather(off int, z reg.VecPhysical) {
	a.KMOVW(reg.K1, reg.K2)
	a.VPXORD(z, z, z)
	a.VPGATHERDD(operand.Mem{Base: reg.RSI, Index: reg.Z31, Scale: 1, Disp: off}, reg.K2, z)
}

// tile generates tile<nt><k>Z. R8 walks the strip, DI the group's records
// (768 bytes per block), CX counts the blocks; Z0..Z15 are the tokens'
// chains, Z16..Z23 the block's 8 weight vectors and Z24 its 16 scales,
// Z25..Z29 scratch and Z30 the Q4_0 nibble mask.
func (a *asm) tile(k qkind, nt int) {
	a.text(fmt.Sprintf("tile%d%sZ", nt, k.name), attr.NOSPLIT,
		"func(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)",
		"dst[t·ldd/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of",
		fmt.Sprintf("nb unpacked %s blocks and the first nt ≤ %d tokens of a group in", k.long, nt),
		"layout C; acc adds the chain to dst after it.")
	a.load("wu", reg.R8)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.zero(zr[:nt]...)
	if k == q4 {
		a.quantMask(k)
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("fin"))

	a.Label("blk")
	a.wload(k, reg.R8)
	for t := 0; t < nt; t++ {
		ti, tm := tokScratch(t, 2)
		a.tok(48*t, k.corr, zr[t], ti, tm, reg.Z29)
	}
	a.ADDQ(operand.U32(uint32(k.ublock())), reg.R8)
	a.ADDQ(operand.U32(768), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.Label("fin")
	a.load("dst", reg.RDX)
	a.load("ldd", reg.RBX)
	a.load("rmask", reg.RAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.load("nt", reg.RCX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JNE(label("add"))
	for t := 0; t < nt; t++ {
		a.st(zr[t], false)
	}
	a.JMP(label("done"))

	a.Label("add")
	for t := 0; t < nt; t++ {
		a.st(zr[t], true)
	}

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// wload loads the block of the strip at (p): its 8 weight vectors into
// Z16..Z23 (Q4_0: split from 4, Z30 the nibble mask) and its scales into
// Z24.
func (a *asm) wload(k qkind, p reg.Register) {
	for v := 0; v < k.uvecs(); v++ {
		a.VMOVDQU64(mem(p, 64*v), zr[16+v])
	}
	if k == q4 {
		for v := 0; v < 4; v++ {
			a.VPSRLD(operand.U8(4), zr[16+v], zr[20+v])
		}
		for v := 16; v < 24; v++ {
			a.VPANDD(reg.Z30, zr[v], zr[v])
		}
	}
	a.VMOVUPS(mem(p, 64*k.uvecs()), reg.Z24)
}

// st stores the chain z of the next token (rows K1) at (DX), adding it to
// what is there if add; it returns after nt (CX) tokens.
func (a *asm) st(z reg.VecPhysical, add bool) {
	if add {
		a.VMOVUPS_Z(mem(reg.RDX, 0), reg.K1, reg.Z25)
		a.VADDPS(reg.Z25, z, z)
	}
	a.VMOVUPS(z, reg.K1, mem(reg.RDX, 0))
	a.ADDQ(reg.RBX, reg.RDX)
	a.DECQ(reg.RCX)
	a.JZ(label("done"))
}
