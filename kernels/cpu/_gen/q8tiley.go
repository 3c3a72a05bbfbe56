package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8tiley generates q8tiley_amd64.s: the AVX2 prefill of Q4_0 and Q8_0
// weights (q8tiley.go in package cpu). A strip of 8 weight rows is
// unpacked once into blocks of 288 bytes, the 8 rows side by side (dword
// d of the block at 32d, row r at 4r: quants 4d..4d+3 of row r, Q4_0 as
// unsigned nibbles, Q8_0 as they are), then the rows' scales as float32 at
// 256. The tiles multiply a strip with up to 6 tokens in layout Y (40 bytes
// a block: 32 quants, the scale dx as float32, the Q4_0 correction
// -8·Σq): each lane of a vector is one row, and each output is the chain
//
//	acc = fma(float32(isum_b), dw_b*dx_b, acc)
//
// over the blocks in order, the chain of gemvQ4_0AVX2 and gemvQ8_0AVX2,
// run 8 rows a vector. Integer sums are exact, so their order is free.
func q8tiley(a *asm) {
	g := yGlobals{
		mask: a.global("ymask", ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), 0, 0, 0, 0),
		ones: a.global("yones", 0x0001000100010001, 0x0001000100010001, 0x0001000100010001, 0x0001000100010001),
		nib:  a.global("ynib", 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f),
	}
	a.unpackY8(q4, g)
	a.unpackY8(q8, g)
	for t := 1; t <= yMaxTokens; t++ {
		a.tileY(q4, t, g)
	}
	for t := 1; t <= yMaxTokens; t++ {
		a.tileY(q8, t, g)
	}
	vals := a.global("yiq4", 0xf6eaddcfbfad9881, 0x7159453526190d01)
	shifts := a.global("yiq4sh", 0, 0, 0x0000000400000004, 0x0000000400000004)
	for t := 1; t <= iq4MaxTokens; t++ {
		a.iq4TileY(t, vals, shifts, g)
	}
	kg := yKGlobals{
		k4:  a.global("yk4shuf", kyShuf(8, 2)...),
		q3:  a.global("yk3shuf", kyShuf(4, 1)...),
		c30: a.global("yk30", 0x3030303030303030, 0x3030303030303030, 0x3030303030303030, 0x3030303030303030),
		c20: a.global("yk20", 0x2020202020202020, 0x2020202020202020, 0x2020202020202020, 0x2020202020202020),
		c10: a.global("yk10", 0x1010101010101010, 0x1010101010101010, 0x1010101010101010, 0x1010101010101010),
		c03: a.global("yk03", 0x0303030303030303, 0x0303030303030303, 0x0303030303030303, 0x0303030303030303),
		c04: a.global("yk04", 0x0404040404040404, 0x0404040404040404, 0x0404040404040404, 0x0404040404040404),
		w32: a.global("yk32w", 0x0020002000200020, 0x0020002000200020, 0x0020002000200020, 0x0020002000200020),
		sh3: a.global("yk3sh", 0x0000000200000000, 0x0000000600000004),
	}
	for t := 1; t <= q4kMaxTokens; t++ {
		a.q4kTileY(t, g, kg, false)
	}
	for t := 1; t <= q4kMaxTokens; t++ {
		a.q4kTileY(t, g, kg, true)
	}
	for t := 1; t <= q6kMaxTokens; t++ {
		a.q6kTileY(t, g, kg)
	}
	for _, q3 := range []bool{false, true} {
		for t := 1; t <= q23kMaxTokens; t++ {
			a.q23kTileY(t, g, kg, q3)
		}
	}
}

// yMaxTokens is the most tokens one tile takes: 2 vectors a token (the
// block's integer sums and the chain) and 3 or 4 shared ones.
const yMaxTokens = 6

// Layout Y and the unpacked strips (q8tiley.go in package cpu).
const (
	yStripBlock = 288 // bytes per unpacked block of 8 rows
	yTokBlock   = 40  // bytes per block of a token in layout Y
)

// yGlobals are the kernels' read-only tables: 8 int32 -1 then 8 zeros (the
// row masks), int16 ones and 0x0f bytes.
type yGlobals struct{ mask, ones, nib operand.Mem }

// unpackY8 generates unpackY8<k.long>: 8 rows, one vector each, transposed
// as 8×8 dwords.
func (a *asm) unpackY8(k qkind, g yGlobals) {
	bb := 18
	if k == q8 {
		bb = 34
	}
	a.text("unpackY8"+k.long, attr.NOSPLIT, "func(dst *byte, rows *[8]unsafe.Pointer, nb int)",
		fmt.Sprintf("Unpacks nb %s blocks of the 8 rows at rows[0..7] into a strip at dst", k.long),
		"(288 bytes a block: the quants of the 8 rows side by side, dword by",
		"dword, then their scales as float32).")
	a.load("dst", reg.RDI)
	a.load("rows", reg.RSI)
	a.load("nb", reg.RCX)
	rp := []reg.Register{reg.RAX, reg.RBX, reg.RDX, reg.R8, reg.R9, reg.R10, reg.R11, reg.R12}
	for i, r := range rp {
		a.MOVQ(mem(reg.RSI, 8*i), r)
	}
	a.XORQ(reg.R13, reg.R13) // byte offset of the block in each row
	if k == q4 {
		a.VMOVDQU(g.nib, reg.Y15)
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	at := func(r, disp int) operand.Mem {
		return operand.Mem{Base: rp[r], Index: reg.R13, Scale: 1, Disp: disp}
	}

	a.Label("blk")
	for r := range 8 {
		if k == q4 {
			// Low nibbles are quants 0..15, high ones 16..31.
			a.VMOVDQU(at(r, 2), xr[r])
			a.VPSRLW(operand.U8(4), xr[r], reg.X8)
			a.VINSERTI128(operand.U8(1), reg.X8, yr[r], yr[r])
			a.VPAND(reg.Y15, yr[r], yr[r])
		} else {
			a.VMOVDQU(at(r, 2), yr[r])
		}
	}
	// Transpose: rows r0..r7 in Y0..Y7 to dwords d0..d7.
	a.VPUNPCKLDQ(reg.Y1, reg.Y0, reg.Y8) // t0
	a.VPUNPCKHDQ(reg.Y1, reg.Y0, reg.Y9) // t1
	a.VPUNPCKLDQ(reg.Y3, reg.Y2, reg.Y10)
	a.VPUNPCKHDQ(reg.Y3, reg.Y2, reg.Y11)
	a.VPUNPCKLDQ(reg.Y5, reg.Y4, reg.Y12)
	a.VPUNPCKHDQ(reg.Y5, reg.Y4, reg.Y13)
	a.VPUNPCKLDQ(reg.Y7, reg.Y6, reg.Y14)
	a.VPUNPCKHDQ(reg.Y7, reg.Y6, reg.Y4)    // t7
	a.VPUNPCKLQDQ(reg.Y10, reg.Y8, reg.Y0)  // u0
	a.VPUNPCKHQDQ(reg.Y10, reg.Y8, reg.Y1)  // u1
	a.VPUNPCKLQDQ(reg.Y11, reg.Y9, reg.Y2)  // u2
	a.VPUNPCKHQDQ(reg.Y11, reg.Y9, reg.Y3)  // u3
	a.VPUNPCKLQDQ(reg.Y14, reg.Y12, reg.Y5) // u4
	a.VPUNPCKHQDQ(reg.Y14, reg.Y12, reg.Y6) // u5
	a.VPUNPCKLQDQ(reg.Y4, reg.Y13, reg.Y7)  // u6
	a.VPUNPCKHQDQ(reg.Y4, reg.Y13, reg.Y8)  // u7
	u := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y5, reg.Y6, reg.Y7, reg.Y8}
	for d := range 4 {
		a.VPERM2I128(operand.U8(0x20), u[d+4], u[d], reg.Y9)
		a.VMOVDQU(reg.Y9, mem(reg.RDI, 32*d))
		a.VPERM2I128(operand.U8(0x31), u[d+4], u[d], reg.Y10)
		a.VMOVDQU(reg.Y10, mem(reg.RDI, 32*(d+4)))
	}
	// The 8 scales.
	a.VPXOR(reg.X11, reg.X11, reg.X11)
	for r := range 8 {
		a.VPINSRW(operand.U8(r), at(r, 0), reg.X11, reg.X11)
	}
	a.VCVTPH2PS(reg.X11, reg.Y11)
	a.VMOVUPS(reg.Y11, mem(reg.RDI, 256))
	a.ADDQ(operand.U8(bb), reg.R13)
	a.ADDQ(operand.U32(yStripBlock), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// tileY generates tileY<nt><k.name>.
//
// Registers: Y0..Y5 the tokens' integer sums of a block, Y6..Y11 their
// chains, Y12 a dword of the strip (Q8_0: raw, Y15 its magnitudes), Y13
// scratch, Y14 int16 ones. SI walks the strip, DI the first token's blocks
// (the others R8, 2·R8, R9 = 3·R8, 4·R8 and R10 = 5·R8 bytes on), CX counts
// the blocks.
func (a *asm) tileY(k qkind, nt int, g yGlobals) {
	name := fmt.Sprintf("tileY%d%s", nt, k.name)
	a.text(name, attr.NOSPLIT, "func(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)",
		fmt.Sprintf("For the first nr rows of the unpacked %s strip at ws (nb blocks) and the", k.long),
		fmt.Sprintf("%d tokens at x (layout Y, ldx bytes apart), dst[t·ldd/4+r] (+)= w_r·x_t", nt),
		"(ldd in bytes; with acc not 0 the old value is added after the chain).")
	a.load("ws", reg.RSI)
	a.load("x", reg.RDI)
	a.load("ldx", reg.R8)
	a.load("nb", reg.RCX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 4}, reg.R10)
	tok := func(t, disp int) operand.Mem {
		switch t {
		case 0:
			return mem(reg.RDI, disp)
		case 1:
			return operand.Mem{Base: reg.RDI, Index: reg.R8, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.RDI, Index: reg.R8, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: reg.RDI, Index: reg.R9, Scale: 1, Disp: disp}
		case 4:
			return operand.Mem{Base: reg.RDI, Index: reg.R8, Scale: 4, Disp: disp}
		}
		return operand.Mem{Base: reg.RDI, Index: reg.R10, Scale: 1, Disp: disp}
	}
	a.VMOVDQU(g.ones, reg.Y14)
	for t := range nt {
		a.VXORPS(yr[6+t], yr[6+t], yr[6+t])
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("out"))

	a.Label("blk")
	for d := range 8 {
		a.VMOVDQU(mem(reg.RSI, 32*d), reg.Y12)
		if k == q8 {
			a.VPABSB(reg.Y12, reg.Y15)
		}
		for t := range nt {
			a.VPBROADCASTD(tok(t, 4*d), reg.Y13)
			if k == q4 {
				// Nibble·q pairs, at most 3810; 8 of them fit in int16.
				if d == 0 {
					a.VPMADDUBSW(reg.Y13, reg.Y12, yr[t])
				} else {
					a.VPMADDUBSW(reg.Y13, reg.Y12, reg.Y13)
					a.VPADDW(reg.Y13, yr[t], yr[t])
				}
				continue
			}
			// q·sign(w) times |w|: pairs up to 32512, widened at once.
			a.VPSIGNB(reg.Y12, reg.Y13, reg.Y13)
			a.VPMADDUBSW(reg.Y13, reg.Y15, reg.Y13)
			if d == 0 {
				a.VPMADDWD(reg.Y14, reg.Y13, yr[t])
			} else {
				a.VPMADDWD(reg.Y14, reg.Y13, reg.Y13)
				a.VPADDD(reg.Y13, yr[t], yr[t])
			}
		}
	}
	for t := range nt {
		if k == q4 {
			a.VPMADDWD(reg.Y14, yr[t], yr[t])
			a.VPBROADCASTD(tok(t, 36), reg.Y13)
			a.VPADDD(reg.Y13, yr[t], yr[t])
		}
		a.VCVTDQ2PS(yr[t], yr[t])
		a.VBROADCASTSS(tok(t, 32), reg.Y13)
		a.VMULPS(mem(reg.RSI, 256), reg.Y13, reg.Y13)
		a.VFMADD231PS(reg.Y13, yr[t], yr[6+t])
	}
	a.ADDQ(operand.U32(yStripBlock), reg.RSI)
	a.ADDQ(operand.U8(yTokBlock), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	// Store the first nr lanes of each chain, after adding the old
	// outputs when acc is set.
	a.Label("out")
	a.load("dst", reg.RDX)
	a.load("ldd", reg.RBX)
	a.load("nr", reg.RAX)
	a.load("acc", reg.R11)
	a.NEGQ(reg.RAX)
	a.LEAQ(g.mask, reg.RCX)
	a.VMOVDQU(operand.Mem{Base: reg.RCX, Index: reg.RAX, Scale: 4, Disp: 32}, reg.Y12)
	a.TESTQ(reg.R11, reg.R11)
	a.JZ(label("store"))
	for t := range nt {
		a.VMASKMOVPS(mem(reg.RDX, 0), reg.Y12, reg.Y13)
		a.VADDPS(reg.Y13, yr[6+t], yr[6+t])
		a.VMASKMOVPS(yr[6+t], reg.Y12, mem(reg.RDX, 0))
		a.ADDQ(reg.RBX, reg.RDX)
	}
	a.VZEROUPPER()
	a.RET()

	a.Label("store")
	for t := range nt {
		a.VMASKMOVPS(yr[6+t], reg.Y12, mem(reg.RDX, 0))
		a.ADDQ(reg.RBX, reg.RDX)
	}
	a.VZEROUPPER()
	a.RET()
}
