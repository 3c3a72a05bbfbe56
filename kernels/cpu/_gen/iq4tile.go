package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// iq4tile generates iq4tile_amd64.s: prefill for IQ4_NL weights, AVX-512
// VNNI, 16 rows × up to 2 tokens per tile, in ggml's batched order
// (llamafile's tinyBLAS): per output 8 float lanes, lane m the chain
//
//	acc_m = fmaf(dw_b*dx_b, float32(isum_b,m), acc_m)
//
// over the blocks b, isum_b,m the exact sum of the block's values
// 4m..4m+3, then ggml's hsum of the 8 lanes.
//
// A zmm holds two outputs of the same token, rows 2p and 2p+1 of the
// strip, interleaved: lane 2m is row 2p's lane m, lane 2m+1 row 2p+1's.
// Each float step then takes its scale pair [d_2p, d_2p+1] as one 8-byte
// broadcast from a table (dw of the 16 rows times the token's dx, per
// block) that the tile fills for all the blocks before the chains run, so
// a block costs per two outputs one VPDPBUSD, one conversion and one FMA,
// and no multiply.
//
// The weights are unpacked first (unpackIQ4S16) into a strip of 16 rows:
// per block, for each row pair the 32 levels of both rows as level+128
// (unsigned) with their dwords interleaved, 8×64 bytes, then the 16 rows'
// scales as float32, 64 bytes: iq4Strip bytes a block. The tiles read
// each token's quants as plain Q8_0 blocks, VPERMD doubling each dword (so
// both rows of a pair meet the same 4 values); prepIQ4 writes, once for
// all the strips, each block's correction −128·Σ4 x (which makes each
// lane's sum exactly Σ level·x) and scale as float32.
func iq4tile(a *asm) {
	lut := a.global("iq4tlut", 0x766a5d4f3f2d1801, 0xf1d9c5b5a6998d81)
	ilv := a.global("iq4ilv",
		0x0000001000000000, 0x0000001100000001, 0x0000001200000002, 0x0000001300000003,
		0x0000001400000004, 0x0000001500000005, 0x0000001600000006, 0x0000001700000007)
	dup := a.global("iq4dup",
		0x0000000000000000, 0x0000000100000001, 0x0000000200000002, 0x0000000300000003,
		0x0000000400000004, 0x0000000500000005, 0x0000000600000006, 0x0000000700000007)
	iq4Unpack(a, lut, ilv, iq4Pairs)
	iq4PrepEmit(a, dup)
	for nt := iq4Tokens; nt >= 1; nt-- {
		iq4Tile(a, iq4Pairs, nt, dup)
	}
}

// The tiles' shape: iq4Pairs row pairs (a strip) by up to iq4Tokens
// tokens; iq4Strip is the size of one block of an unpacked strip.
const (
	iq4Pairs  = 8
	iq4Tokens = 2
	iq4Strip  = iq4Pairs*64 + iq4Pairs*8
)

// iq4Unpack emits unpackIQ4S<2·np>, the strip of np row pairs.
//
// Registers: SI the weights, BX ldw, R12 the last row, CX nb, DI the
// strip; per row pair R8, R9 its rows, R10 the strip, R11 the blocks
// left. Z31 0x0f bytes, Z29 the levels + 128 in each 128-bit lane, Z28
// the dword interleave indices. The rows come from memory (each matmul
// reads its weights once), so both are prefetched 1 KiB ahead.
func iq4Unpack(a *asm, lut, ilv operand.Mem, np int) { stripUnpack(a, lut, ilv, np, false) }

// stripUnpack emits iq4Unpack's unpackIQ4S<2·np> or, with q5, unpackQ5_0S<2·np>:
// the same strips of Q5_0 blocks (22 bytes: f16 d, qh, 16 bytes of low
// nibbles), each value q-16 stored as q+112, its fifth bit added under a
// mask loaded from qh (Z27 0x10 bytes, Z26 0x70 bytes; lut unused).
func stripUnpack(a *asm, lut, ilv operand.Mem, np int, q5 bool) {
	name, typ, bs, qs := "unpackIQ4S", "IQ4_NL", 18, 2
	if q5 {
		name, typ, bs, qs = "unpackQ5_0S", "Q5_0", 22, 6
	}
	a.text(fmt.Sprintf("%s%d", name, 2*np), attr.NOSPLIT, "func(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)",
		fmt.Sprintf("Unpacks nb %s blocks of nrows rows (1 ≤ nrows ≤ %d, ldw bytes apart) into", typ, 2*np),
		fmt.Sprintf("a strip of %d bytes a block; rows past nrows repeat the last row.", iq4Strip))
	a.load("dst", reg.RDI)
	a.load("w", reg.RSI)
	a.load("ldw", reg.RBX)
	a.load("nrows", reg.R12)
	a.DECQ(reg.R12)
	a.load("nb", reg.RCX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	if q5 {
		a.MOVL(operand.U32(0x10101010), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z27)
		a.MOVL(operand.U32(0x70707070), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z26)
	} else {
		a.VBROADCASTI32X4(lut, reg.Z29)
	}
	a.VMOVDQU64(ilv, reg.Z28)
	for p := range np {
		for i, r := range []reg.Register{reg.R8, reg.R9} {
			a.MOVQ(operand.U32(uint32(2*p+i)), reg.RAX)
			a.CMPQ(reg.RAX, reg.R12)
			a.CMOVQGT(reg.R12, reg.RAX)
			a.IMULQ(reg.RBX, reg.RAX)
			a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.RAX, Scale: 1}, r)
		}
		a.LEAQ(mem(reg.RDI, 64*p), reg.R10)
		a.MOVQ(reg.RCX, reg.R11)
		l := fmt.Sprintf("pair%d", p)
		a.Label(l)
		a.PREFETCHT0(mem(reg.R8, 1024))
		a.PREFETCHT0(mem(reg.R9, 1024))
		for i, r := range []reg.Register{reg.R8, reg.R9} {
			v := 2 * i
			a.VMOVDQU(mem(r, qs), xr[v])
			a.VPSRLW(operand.U8(4), xr[v], xr[v+1])
			a.VINSERTI128(operand.U8(1), xr[v+1], yr[v], yr[v])
			a.VPANDD(reg.Y31, yr[v], yr[v])
			if q5 {
				a.KMOVD(mem(r, 2), reg.K1)
				a.VPADDB(reg.Y26, yr[v], yr[v])
				a.VPADDB(reg.Y27, yr[v], reg.K1, yr[v])
				continue
			}
			a.VPSHUFB(yr[v], reg.Y29, yr[v])
		}
		a.VPERMT2D(reg.Z2, reg.Z28, reg.Z0)
		a.VMOVDQU64(reg.Z0, mem(reg.R10, 0))
		a.MOVWLZX(mem(reg.R8, 0), reg.R13L)
		a.MOVWLZX(mem(reg.R9, 0), reg.R14L)
		a.SHLL(operand.U8(16), reg.R14L)
		a.ORL(reg.R14L, reg.R13L)
		a.VMOVD(reg.R13L, reg.X3)
		a.VCVTPH2PS(reg.X3, reg.X3)
		a.VMOVQ(reg.X3, mem(reg.R10, 64*np-56*p))
		a.ADDQ(operand.U8(bs), reg.R8)
		a.ADDQ(operand.U8(bs), reg.R9)
		a.ADDQ(operand.U32(iq4Strip), reg.R10)
		a.DECQ(reg.R11)
		a.JNZ(label(l))
	}
	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// iq4PrepEmit emits prepIQ4.
//
// Registers: DI the output's current block, SI the token's blocks, CX
// the blocks left, DX the token, R8 the tokens, R9 the token's scales;
// Z31 0x80 bytes, Z30 the doubling indices.
func iq4PrepEmit(a *asm, dup operand.Mem) {
	a.text("prepIQ4", attr.NOSPLIT, "func(dst *byte, x unsafe.Pointer, ldx uintptr, nb int, nt int)",
		fmt.Sprintf("Writes for nt ≤ %d tokens of nb Q8_0 blocks at x (ldx bytes apart) what the", iq4Tokens),
		fmt.Sprintf("IQ4_NL tiles take from them: per block %d bytes, token t's correction", 64*iq4Tokens),
		"−128·Σ4 x of each doubled dword at 64t, then per block the tokens' scales as",
		fmt.Sprintf("float32, %d bytes.", 4*iq4Tokens))
	a.load("nt", reg.R8)
	a.TESTQ(reg.R8, reg.R8)
	a.JZ(label("done"))
	a.CMPQ(a.arg("nb"), operand.U8(0))
	a.JEQ(label("done"))
	a.MOVL(operand.U32(0x80808080), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.VMOVDQU64(dup, reg.Z30)
	a.XORQ(reg.RDX, reg.RDX)
	a.Label("tok")
	a.load("dst", reg.RDI)
	a.load("nb", reg.RCX)
	a.MOVQ(reg.RCX, reg.R9)
	a.SHLQ(operand.U8(7), reg.R9)
	a.ADDQ(reg.RDI, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.RDX, Scale: 4}, reg.R9)
	a.MOVQ(reg.RDX, reg.RAX)
	a.SHLQ(operand.U8(6), reg.RAX)
	a.ADDQ(reg.RAX, reg.RDI)
	a.load("ldx", reg.RSI)
	a.IMULQ(reg.RDX, reg.RSI)
	a.ADDQ(a.arg("x"), reg.RSI)
	a.Label("blk")
	a.VMOVDQU64(mem(reg.RSI, 2), reg.Y0)
	a.VPERMD(reg.Z0, reg.Z30, reg.Z0)
	a.VPXORD(reg.Z1, reg.Z1, reg.Z1)
	a.VPDPBUSD(reg.Z0, reg.Z31, reg.Z1)
	a.VPXORD(reg.Z2, reg.Z2, reg.Z2)
	a.VPSUBD(reg.Z1, reg.Z2, reg.Z1)
	a.VMOVDQU64(reg.Z1, mem(reg.RDI, 0))
	a.VPBROADCASTW(mem(reg.RSI, 0), reg.X3)
	a.VCVTPH2PS(reg.X3, reg.X3)
	a.VMOVSS(reg.X3, mem(reg.R9, 0))
	a.ADDQ(operand.U8(34), reg.RSI)
	a.SUBQ(operand.I8(-128), reg.RDI)
	a.ADDQ(operand.U8(4*iq4Tokens), reg.R9)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))
	a.INCQ(reg.RDX)
	a.CMPQ(reg.RDX, reg.R8)
	a.JB(label("tok"))
	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// iq4Tile emits tile<2·np>x<nt>IQ4_NL.
//
// Registers: SI the strip, DI token 0's block, R13 ldx, R12 3·ldx, CX the
// blocks left, R10 the prepared block (p), R8 the scale table (tab, 8·np
// bytes a token and block, filled for all the blocks first from the
// prepared scales at R9). Z<nt·p+t> the chains of row pair p and token t;
// per block token t's doubled quants in Z(16+t), its correction in
// Z(20+t); Z24 the row pair's weights, Z25..Z27 the integer sums, Z28/Z29
// the scale pairs, Z30 the doubling indices.
func iq4Tile(a *asm, np, nt int, dup operand.Mem) {
	a.text(fmt.Sprintf("tile%dx%dIQ4_NL", 2*np, nt), attr.NOSPLIT,
		"func(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int, tab *float32, p *byte)",
		"y[t·ldy/4 + r] (+)= w_r·x_t for the rows r set in rmask of a strip of nb",
		fmt.Sprintf("unpacked IQ4_NL blocks (unpackIQ4S%d) and %d tokens of Q8_0 blocks at x, ldx", 2*np, nt),
		"bytes apart (prepared by prepIQ4 at p), in ggml's batched order; acc adds",
		"to y. tab is scratch of",
		fmt.Sprintf("%d·nb floats.", 2*np*nt))
	a.load("s", reg.RSI)
	a.load("x", reg.RDI)
	a.load("ldx", reg.R13)
	a.LEAQ(operand.Mem{Base: reg.R13, Index: reg.R13, Scale: 2}, reg.R12)
	a.load("nb", reg.RCX)
	a.load("tab", reg.R8)
	for i := range np * nt {
		a.VPXORD(zr[i], zr[i], zr[i])
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("fin"))
	tok := func(t, disp int) operand.Mem {
		switch t {
		case 0:
			return mem(reg.RDI, disp)
		case 1:
			return operand.Mem{Base: reg.RDI, Index: reg.R13, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.RDI, Index: reg.R13, Scale: 2, Disp: disp}
		}
		return operand.Mem{Base: reg.RDI, Index: reg.R12, Scale: 1, Disp: disp}
	}

	// The scale table of all the blocks first, 32·nt bytes a block: its
	// stores are long done when the chains read it.
	a.load("p", reg.R10)
	a.MOVQ(reg.RCX, reg.R9)
	a.SHLQ(operand.U8(7), reg.R9)
	a.ADDQ(reg.R10, reg.R9)
	a.Label("tab")
	dw, dv := [2]reg.VecPhysical{reg.Y26, reg.Z26}[np/8], [2]reg.VecPhysical{reg.Y27, reg.Z27}[np/8]
	a.VMOVUPS(mem(reg.RSI, 64*np), dw)
	for t := range nt {
		a.VMULPS_BCST(mem(reg.R9, 4*t), dw, dv)
		a.VMOVUPS(dv, mem(reg.R8, 8*np*t))
	}
	a.ADDQ(operand.U32(iq4Strip), reg.RSI)
	a.ADDQ(operand.U8(8), reg.R9)
	a.ADDQ(operand.U32(uint32(8*np*nt)), reg.R8)
	a.DECQ(reg.RCX)
	a.JNZ(label("tab"))
	a.load("s", reg.RSI)
	a.load("nb", reg.RCX)
	a.load("tab", reg.R8)
	a.VMOVDQU64(dup, reg.Z30)
	tabAt := func(off int) operand.Mem { return mem(reg.R8, off) }

	a.Label("blk")
	for t := range nt {
		x := zr[16+t]
		a.VMOVDQU64(tok(t, 2), yr[16+t])
		a.VPERMD(x, reg.Z30, x)
		a.VMOVDQU64(mem(reg.R10, 64*t), zr[20+t])
	}
	i := 0
	for p := range np {
		a.VMOVDQU64(mem(reg.RSI, 64*p), reg.Z24)
		for t := range nt {
			s, d := zr[25+i%3], zr[28+i%2]
			i++
			a.VMOVDQA32(zr[20+t], s)
			a.VPDPBUSD(zr[16+t], reg.Z24, s)
			a.VCVTDQ2PS(s, s)
			a.VBROADCASTSD(tabAt(8*np*t+8*p), d)
			a.VFMADD231PS(d, s, zr[nt*p+t])
		}
	}
	a.ADDQ(operand.U32(iq4Strip), reg.RSI)
	a.ADDQ(operand.U8(34), reg.RDI)
	a.ADDQ(operand.U32(uint32(8*np*nt)), reg.R8)
	a.SUBQ(operand.I8(-128), reg.R10)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.Label("fin")
	// Each chain as ggml's hsum8 of its row's 8 lanes: the high 256
	// bits onto the low, the high 128 onto the low, the high 64 onto
	// the low, leaving rows 2p and 2p+1 in lanes 0 and 1.
	for i := range np * nt {
		z := i
		a.VEXTRACTF64X4(operand.U8(1), zr[z], reg.Y24)
		a.VADDPS(reg.Y24, yr[z], yr[z])
		a.VEXTRACTF32X4(operand.U8(1), yr[z], reg.X24)
		a.VADDPS(reg.X24, xr[z], xr[z])
		a.VMOVHLPS(xr[z], xr[z], reg.X24)
		a.VADDPS(reg.X24, xr[z], xr[z])
	}
	a.load("y", reg.RDX)
	a.load("ldy", reg.RBX)
	a.load("rmask", reg.RAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.KXORW(reg.K2, reg.K2, reg.K2)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("st"))
	a.KMOVW(reg.K1, reg.K2)
	a.Label("st")
	for t := range nt {
		// The token's rows into Y<t>: pairs 0, 1 then 2, 3 (then 4..7
		// into the high half of Z<t>).
		for q := 0; q < np; q += 4 {
			p0, p1, p2, p3 := nt*q+t, nt*(q+1)+t, nt*(q+2)+t, nt*(q+3)+t
			a.VMOVLHPS(xr[p1], xr[p0], xr[p0])
			a.VMOVLHPS(xr[p3], xr[p2], xr[p2])
			a.VINSERTF128(operand.U8(1), xr[p2], yr[p0], yr[p0])
		}
		v := yr[t]
		if np == 8 {
			v = zr[t]
			a.VINSERTF64X4(operand.U8(1), yr[4*nt+t], zr[t], zr[t])
		}
		sc := [2]reg.VecPhysical{reg.Y24, reg.Z24}[np/8]
		a.VMOVUPS_Z(mem(reg.RDX, 0), reg.K1, sc)
		a.VADDPS(sc, v, reg.K2, v)
		a.VMOVUPS(v, reg.K1, mem(reg.RDX, 0))
		if t < nt-1 {
			a.ADDQ(reg.RBX, reg.RDX)
		}
	}
	a.VZEROUPPER()
	a.RET()
}
