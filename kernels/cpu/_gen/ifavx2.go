package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ifavx2 generates ifavx2_amd64.s: Inferflow's asymmetric formats
// (Q6_B64T1, Q5_B64T1, Q4_B32T1, Q4_B64T1, Q3H_B64T1, Q3_B32T1, Q2_B32T1)
// times Q8_0 activations, AVX2 + F16C, eight rows at a time in their file
// layout.
//
// They sum as kernels/quant's ifDotQ8_0: per 32-value activation block
// with scale dy, the exact integer sums S = Σq·qy and Y = Σqy give
// sumf += (scale·dy)·S + base·(Y·dy), every operation rounded to float32,
// no FMA, one chain per row in block order; the eight rows' chains are the
// eight lanes of Y13. The weights' quants are assembled in an order of the
// format's own (the nibbles of 16 bytes low then high, the bit pairs of 8
// bytes by pair), and ifyPrep<k>AVX2 permutes the activations into the
// same order once per call (a VPSHUFB of each block and one of its
// lane-swapped copy) and computes dy and Y·dy, so S needs no per-row
// shuffle. VPMADDUBSW multiplies the unsigned quants (at most 63) by the
// signed activations into int16 pairs, which cannot saturate
// (2·63·128 = 16128), and VPMADDWD by ones widens them to int32. Bits
// above a quant's low ones are gathered by a VPSHUFB of their bytes, a
// VPAND and VPCMPEQB with the bit's mask, and a VPAND with its value,
// except Q6_B64T1's: its nibbles are shuffled into the order of its bit
// pairs so that both unpack by qword shifts. Q3H_B64T1's 32 7-bit pair
// codes p of a block sit in one vector, code 8i+d at byte i of dword d, so
// that each bit field unpacks by a dword shift; they split into p mod 11
// and p div 11, the latter (p·5984)>>16 on int16 lanes (exact for p < 128,
// checked here), which multiply two prepared vectors of the even and the
// odd values, and word 0 (1) of each dword then sums the products of the
// first (second) activation block.
//
// Registers: SI the rows, R8 ldw, R9 3·ldw, DI the activations, CX nb, DX
// y, BX the groups of eight rows left, R10 acc, R11 (R14) the current
// blocks of rows 0-3 (4-7), R12 the activations', R13 the blocks left;
// Y0-Y7 the eight rows' int32 lanes of the 32 values at hand, Y8 Y11 Y12
// scratch, Y14 and Y15 the rows' bases and scales, Y13 the sums.
func ifavx2(a *asm) {
	for p := range 128 {
		if p*5984>>16 != p/11 {
			panic(fmt.Sprintf("ifavx2: %d·5984>>16 is not %d/11", p, p))
		}
	}
	g := a.ifyGlobals("ify")
	for _, k := range ifyKinds() {
		a.ifyGemv(k, g)
	}
}

// ifyGlobals emits the kernels' shared tables, their names prefixed by p
// (each generated file has its own).
func (a *asm) ifyGlobals(p string) *ifyGlobals {
	g := &ifyGlobals{
		p:      p,
		c0f:    a.global(p+"0f", rep8(0x0f)...),
		c03:    a.global(p+"03", rep8(0x03)...),
		ones8:  a.global(p+"ones8", rep8(0x01)...),
		ones16: a.global(p+"ones16", rep16(1)...),
		w00ff:  a.global(p+"w00ff", rep16(0x00ff)...),
		m5984:  a.global(p+"m5984", rep16(5984)...),
		m11:    a.global(p+"m11", rep16(11)...),
		nibSh:  a.global(p+"nibsh", 0, 0, 0x0000000400000004, 0x0000000400000004),
		pairSh: a.global(p+"pairsh", 0, 2, 4, 6),
		q3hSh:  a.global(p+"q3hsh", 0, 4, 0, 4),
		hdr:    a.global(p+"hdr", 0x0d0c090805040100, 0x0f0e0b0a07060302),
		q6Idx:  a.global(p+"q6idx", 0x0e0c0a0806040200, 0x0e0c0a0806040200, 0x0f0d0b0907050301, 0x0f0d0b0907050301),
		val:    map[byte]operand.Mem{},
		w10:    a.global(p+"w10", rep16dw(1)...),
		w01:    a.global(p+"w01", rep16dw(1<<16)...),
	}
	var lo, mid [32]byte
	var loSh, midSh, hiSh [8]uint32
	for i := range 32 {
		c := q3hCode(i)
		lo[i], mid[i] = byte(c/2), byte(c/4)
		d := i / 4
		loSh[d], midSh[d], hiSh[d] = uint32(4*(c%2)), uint32(2*(c%4)), uint32(c%8)
	}
	g.q3hLo = a.global(p+"q3hlo", pack32(lo)...)
	g.q3hMid = a.global(p+"q3hmid", pack32(mid)...)
	g.q3hLoSh = a.global(p+"q3hlosh", pack8dw(loSh)...)
	g.q3hMidSh = a.global(p+"q3hmidsh", pack8dw(midSh)...)
	g.q3hHiSh = a.global(p+"q3hhish", pack8dw(hiSh)...)
	for _, v := range []byte{0x04, 0x10, 0x20, 0x40} {
		g.val[v] = a.global(fmt.Sprintf("%sv%02x", p, v), rep8(v)...)
	}
	return g
}

// rep8 is 32 bytes of b as uint64s.
func rep8(b byte) []uint64 {
	x := uint64(b) * 0x0101010101010101
	return []uint64{x, x, x, x}
}

// rep16 is 16 int16 words of w as uint64s.
func rep16(w uint16) []uint64 {
	x := uint64(w) * 0x0001000100010001
	return []uint64{x, x, x, x}
}

// rep16dw is 8 dwords of d as uint64s.
func rep16dw(d uint32) []uint64 {
	x := uint64(d) | uint64(d)<<32
	return []uint64{x, x, x, x}
}

// pack8dw is 8 dwords as uint64s.
func pack8dw(d [8]uint32) []uint64 {
	v := make([]uint64, 4)
	for i, x := range d {
		v[i/2] |= uint64(x) << (32 * (i % 2))
	}
	return v
}

// pack32 is 32 bytes as uint64s.
func pack32(b [32]byte) []uint64 {
	v := make([]uint64, 4)
	for i, x := range b {
		v[i/8] |= uint64(x) << (8 * (i % 8))
	}
	return v
}

// ifyGlobals are the kernels' shared read-only tables.
type ifyGlobals struct {
	p                                          string // the tables' name prefix
	c0f, c03, ones8, ones16, w00ff, m5984, m11 operand.Mem
	nibSh, pairSh, q3hSh, hdr, q6Idx           operand.Mem
	w10, w01                                   operand.Mem          // int16 1, 0 (0, 1) pairs
	q3hLo, q3hLoSh, q3hMid, q3hMidSh, q3hHiSh  operand.Mem          // Q3H_B64T1's code bits
	val                                        map[byte]operand.Mem // 32 bytes of each bit value
}

// An ifyBit is one bit of each quant above its low bits: its value and
// its position in the byte that ifyBits.byteOf names.
type ifyBit struct {
	val   byte
	bitOf func(e int) int
}

// ifyBits are bits of each quant held in a region of the block: len bytes
// (4, 8 or 16) at off, plus step per 32-value half; item e's bits are in
// byte byteOf(e) of the region.
type ifyBits struct {
	off, step, len int
	byteOf         func(e int) int
	bits           []ifyBit
}

// ifyKind is one format.
type ifyKind struct {
	name   string
	bb     int  // block bytes
	halves int  // 32-value activation blocks per weight block
	pairs  bool // low bits are bit pairs of 8 bytes (else nibbles of 16)
	qsOff  int  // the low bits, plus 16 per half for nibbles
	bits   []ifyBits
	q3h    bool
	q6     bool // Q6_B64T1: nibbles and bit pairs both in pairPerm's order
	// perm[p] is the value (within the 32 of an activation block) that
	// byte p of the weight vector holds (not Q3H_B64T1's: see src).
	perm [32]int
}

// src is the value (within the block's) whose activation byte p of
// prepared vector o holds: for Q3H_B64T1 vector 0 (1) pairs the even (odd)
// values with its codes, else vector o is activation block o permuted.
func (k ifyKind) src(o, p int) int {
	if k.q3h {
		return 2*q3hCode(p) + o
	}
	return 32*o + k.perm[p]
}

// nibPerm and pairPerm are the orders of the low bits: the low nibbles of
// 16 bytes then their high nibbles; the bit pairs k of 8 bytes j at 8k+j.
func nibPerm() (p [32]int) {
	for i := range 32 {
		p[i] = 2*(i%16) + i/16
	}
	return p
}

func pairPerm() (p [32]int) {
	for i := range 32 {
		k, j := i/8, i%8
		p[i] = 4*j + k
	}
	return p
}

// q3hCode is the code at byte p of Q3H_B64T1's code vector: byte i of
// dword d holds code 8i+d, so that each dword's codes share their bit
// positions.
func q3hCode(p int) int { return 8*(p%4) + p/4 }

func ifyKinds() []ifyKind {
	return []ifyKind{
		{name: "Q6_B64T1", bb: 52, halves: 2, q6: true, qsOff: 20, perm: pairPerm()},
		{name: "Q5_B64T1", bb: 44, halves: 2, qsOff: 12, perm: nibPerm(), bits: []ifyBits{{
			off: 4, step: 4, len: 4, byteOf: func(e int) int { return e / 8 },
			bits: []ifyBit{{0x10, func(e int) int { return e % 8 }}},
		}}},
		{name: "Q4_B32T1", bb: 20, halves: 1, qsOff: 4, perm: nibPerm()},
		{name: "Q4_B64T1", bb: 36, halves: 2, qsOff: 4, perm: nibPerm()},
		{name: "Q3H_B64T1", bb: 32, halves: 2, q3h: true},
		{name: "Q3_B32T1", bb: 16, halves: 1, pairs: true, qsOff: 8, perm: pairPerm(), bits: []ifyBits{{
			off: 4, len: 4, byteOf: func(e int) int { return e / 8 },
			bits: []ifyBit{{0x04, func(e int) int { return e % 8 }}},
		}}},
		{name: "Q2_B32T1", bb: 12, halves: 1, pairs: true, qsOff: 4, perm: pairPerm()},
	}
}

// ifyTables are one format's tables.
type ifyTables struct {
	// act[o][b] are the VPSHUFB masks that gather prepared vector o from
	// activation block b and its lane swap; nil where nothing is gathered.
	act  [2][2][]operand.Mem
	idx  []operand.Mem // per ifyBits, the VPSHUFB gathering its bytes
	mask [][]operand.Mem
}

// item is the value whose bits byte p of a weight vector gathers.
func (k ifyKind) item(p int) int { return k.perm[p] }

func (a *asm) ifyTables(k ifyKind, g *ifyGlobals) *ifyTables {
	t := &ifyTables{}
	for o := range k.halves {
		for b := range k.halves {
			var m [2][32]byte
			n := 0
			for p := range 32 {
				m[0][p], m[1][p] = 0x80, 0x80
				e := k.src(o, p)
				if e/32 != b {
					continue
				}
				n++
				if e%32/16 == p/16 {
					m[0][p] = byte(e % 16)
				} else {
					m[1][p] = byte(e % 16)
				}
			}
			if n > 0 {
				t.act[o][b] = []operand.Mem{
					a.global(fmt.Sprintf("%sact%d%d%s", g.p, o, b, k.name), pack32(m[0])...),
					a.global(fmt.Sprintf("%sacts%d%d%s", g.p, o, b, k.name), pack32(m[1])...),
				}
			}
		}
	}
	for i, bs := range k.bits {
		var idx [32]byte
		for p := range 32 {
			idx[p] = byte(bs.byteOf(k.item(p)))
			if int(idx[p]) >= bs.len {
				panic("ifavx2: bit byte outside its region")
			}
		}
		t.idx = append(t.idx, a.global(fmt.Sprintf("%sidx%d%s", g.p, i, k.name), pack32(idx)...))
		var ms []operand.Mem
		for j, b := range bs.bits {
			var m [32]byte
			for p := range 32 {
				m[p] = 1 << b.bitOf(k.item(p))
			}
			ms = append(ms, a.global(fmt.Sprintf("%smask%d%d%s", g.p, i, j, k.name), pack32(m)...))
		}
		t.mask = append(t.mask, ms)
	}
	return t
}

// ifyRow is disp bytes into row r (0..7) of the current blocks: R11 for
// rows 0-3, R14 (four rows on) for rows 4-7.
func ifyRow(r, disp int) operand.Mem {
	m := operand.Mem{Base: reg.R11, Disp: disp}
	if r >= 4 {
		m.Base = reg.R14
	}
	switch r % 4 {
	case 1:
		m.Index, m.Scale = reg.R8, 1
	case 2:
		m.Index, m.Scale = reg.R8, 2
	case 3:
		m.Index, m.Scale = reg.R9, 1
	}
	return m
}

// ifyBroadcast loads n bytes (2, 4, 8 or 16) at m into every n-byte part
// of v.
func (a *asm) ifyBroadcast(n int, m operand.Mem, v reg.VecPhysical) {
	switch n {
	case 2:
		a.VPBROADCASTW(m, v)
	case 4:
		a.VPBROADCASTD(m, v)
	case 8:
		a.VPBROADCASTQ(m, v)
	case 16:
		a.VBROADCASTI128(m, v)
	default:
		panic("ifavx2: bad region")
	}
}

// ifyHigh ORs the bits above the low ones of row r, half h into d (Y8 and
// Y12 scratch).
func (a *asm) ifyHigh(k ifyKind, t *ifyTables, g *ifyGlobals, r, h int, d reg.VecPhysical) {
	s0, s1 := reg.Y8, reg.Y12
	for i, bs := range k.bits {
		a.ifyBroadcast(bs.len, ifyRow(r, bs.off+h*bs.step), s0)
		a.VPSHUFB(t.idx[i], s0, s0)
		for j, b := range bs.bits {
			a.VPAND(t.mask[i][j], s0, s1)
			a.VPCMPEQB(t.mask[i][j], s1, s1)
			a.VPAND(g.val[b.val], s1, s1)
			a.VPOR(s1, d, d)
		}
	}
}

// ifyAct is the bytes per activation block that ifyPrep writes: a
// prepared vector of 32 quants, dy and Y·dy as float32s, padding.
const ifyAct = 64

const ifyPrepSig = "func(x unsafe.Pointer, nb int, xp unsafe.Pointer)"

// ifyPrep generates ifyPrep<k>AVX2.
func (a *asm) ifyPrep(k ifyKind, t *ifyTables, g *ifyGlobals) {
	a.text("ifyPrep"+k.name+"AVX2", attr.NOSPLIT, ifyPrepSig,
		"Prepares the Q8_0 blocks at x of nb > 0 "+k.name+" blocks for",
		"gemv8"+k.name+"AVX2: per activation block, 64 bytes at xp: a vector of 32",
		"quants in the weights' order, dy and float32(Y)·dy.")
	a.load("x", reg.RSI)
	a.load("nb", reg.RCX)
	a.load("xp", reg.RDI)
	a.Label("blk")
	a.ifyPrepBlock(k, t, g, func(o int) { a.VMOVDQU(reg.Y4, mem(reg.RDI, ifyAct*o)) },
		func(b int) int { return ifyAct*b + 32 })
	a.ADDQ(operand.U32(34*k.halves), reg.RSI)
	a.ADDQ(operand.U32(ifyAct*k.halves), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))
	a.VZEROUPPER()
	a.RET()
}

// ifyPrepBlock emits the steps of ifyPrep<k>AVX2 for one block of weights
// (k.halves activation blocks at SI): prepared vector o, in Y4, is stored by
// put(o) (Y5-Y7 free then); activation block b's dy and float32(Y)·dy go
// at dy(b) and dy(b)+4 bytes from DI.
func (a *asm) ifyPrepBlock(k ifyKind, t *ifyTables, g *ifyGlobals, put func(o int), dy func(b int) int) {
	for b := range k.halves {
		a.VMOVDQU(mem(reg.RSI, 34*b+2), yr[2*b])
		a.VPERMQ(operand.U8(0x4e), yr[2*b], yr[2*b+1])
	}
	for o := range k.halves {
		first := true
		for b := range k.halves {
			for s, m := range t.act[o][b] {
				if first {
					a.VPSHUFB(m, yr[2*b+s], reg.Y4)
					first = false
					continue
				}
				a.VPSHUFB(m, yr[2*b+s], reg.Y5)
				a.VPOR(reg.Y5, reg.Y4, reg.Y4)
			}
		}
		put(o)
	}
	for b := range k.halves {
		a.VMOVDQU(g.ones8, reg.Y6)
		a.VPMADDUBSW(yr[2*b], reg.Y6, reg.Y6)
		a.VPMADDWD(g.ones16, reg.Y6, reg.Y6)
		a.VEXTRACTI128(operand.U8(1), reg.Y6, reg.X7)
		a.VPADDD(reg.X7, reg.X6, reg.X6)
		a.VPSHUFD(operand.U8(0x4e), reg.X6, reg.X7)
		a.VPADDD(reg.X7, reg.X6, reg.X6)
		a.VPSHUFD(operand.U8(0xb1), reg.X6, reg.X7)
		a.VPADDD(reg.X7, reg.X6, reg.X6)
		a.VCVTDQ2PS(reg.X6, reg.X6)
		a.VPBROADCASTW(mem(reg.RSI, 34*b), reg.X7)
		a.VCVTPH2PS(reg.X7, reg.X7)
		a.VMOVSS(reg.X7, mem(reg.RDI, dy(b)))
		a.VMULSS(reg.X7, reg.X6, reg.X6)
		a.VMOVSS(reg.X6, mem(reg.RDI, dy(b)+4))
	}
}

const ifyGemvSig = "func(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, q int, acc int)"

// ifyGemv generates gemv8<k>AVX2 (and ifyPrep<k>AVX2).
func (a *asm) ifyGemv(k ifyKind, g *ifyGlobals) {
	t := a.ifyTables(k, g)
	a.ifyPrep(k, t, g)
	a.text("gemv8"+k.name+"AVX2", attr.NOSPLIT, ifyGemvSig,
		"For q groups of eight rows of nb "+k.name+" blocks (ldw bytes apart),",
		"y[r] = w_r·x (or += when acc is not 0, one addition after the row's",
		"sum); xp holds the activations as ifyPrep"+k.name+"AVX2 prepares them,",
		"nb > 0.")
	if k.q3h {
		a.AllocLocal(8 * 32) // the eight rows' int16 sums of both halves
	}
	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("xp", reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.RBX)
	a.load("acc", reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	// Constants kept in registers: Y9 int16 ones (Q3H_B64T1: 0, 1 pairs),
	// and where no bits lie above the low ones Y8 and Y12 the low bits'
	// shifts and mask.
	var sh, mask operand.Op = g.nibSh, g.c0f
	if k.pairs {
		sh, mask = g.pairSh, g.c03
	}
	ones := operand.Op(g.ones16)
	if k.q3h {
		a.VMOVDQU(g.w01, reg.Y9)
	} else {
		a.VMOVDQU(g.ones16, reg.Y9)
		ones = reg.Y9
	}
	if len(k.bits) == 0 && !k.q3h && !k.q6 {
		a.VMOVDQU(sh.(operand.Mem), reg.Y8)
		a.VMOVDQU(mask.(operand.Mem), reg.Y12)
		sh, mask = reg.Y8, reg.Y12
	}
	a.TESTQ(reg.RBX, reg.RBX)
	a.JZ(label("done"))

	a.Label("group")
	a.VXORPS(reg.Y13, reg.Y13, reg.Y13)
	a.MOVQ(reg.RSI, reg.R11)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R8, Scale: 4}, reg.R14)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label("blk")
	a.ifyHeaders(g)
	for h := range k.halves {
		var qy operand.Op = mem(reg.R12, ifyAct*h)
		if !k.q3h {
			a.VMOVDQU(qy.(operand.Mem), reg.Y10)
			qy = reg.Y10
		}
		for r := range 8 {
			a.Comment(fmt.Sprintf("Half %d, row %d.", h, r))
			d := reg.Y11
			switch {
			case k.q3h && h == 0:
				a.ifyQ3H(g, r, mem(reg.SP, 32*r))
				continue
			case k.q3h:
				a.VPMADDWD(mem(reg.SP, 32*r), reg.Y9, yr[r])
				continue
			default:
				a.ifyUnpack(k, t, g, r, h, sh, mask)
			}
			a.VPMADDUBSW(qy, d, d)
			a.VPMADDWD(ones, d, yr[r])
		}
		a.Comment(fmt.Sprintf("Half %d: S of the eight rows and the float steps.", h))
		a.ifySums()
		a.VBROADCASTSS(mem(reg.R12, ifyAct*h+32), reg.Y2)
		a.VMULPS(reg.Y2, reg.Y15, reg.Y2) // scale·dy
		a.VMULPS(reg.Y1, reg.Y2, reg.Y2)  // ·S
		a.VBROADCASTSS(mem(reg.R12, ifyAct*h+36), reg.Y3)
		a.VMULPS(reg.Y3, reg.Y14, reg.Y3) // base·(Y·dy)
		a.VADDPS(reg.Y3, reg.Y2, reg.Y2)
		a.VADDPS(reg.Y2, reg.Y13, reg.Y13)
	}
	a.ADDQ(operand.U32(k.bb), reg.R11)
	a.ADDQ(operand.U32(k.bb), reg.R14)
	a.ADDQ(operand.U32(ifyAct*k.halves), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	a.TESTQ(reg.R10, reg.R10)
	a.JZ(label("store"))
	a.VADDPS(mem(reg.RDX, 0), reg.Y13, reg.Y13)
	a.Label("store")
	a.VMOVUPS(reg.Y13, mem(reg.RDX, 0))
	a.ADDQ(operand.U32(32), reg.RDX)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R8, Scale: 8}, reg.RSI)
	a.DECQ(reg.RBX)
	a.JNZ(label("group"))
	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// ifyHeaders loads the bases of the eight rows' current blocks into Y14,
// their scales into Y15 (X11 scratch).
func (a *asm) ifyHeaders(g *ifyGlobals) {
	a.Comment("The eight rows' bases (Y14) and scales (Y15).")
	for i, x := range []reg.VecPhysical{reg.X14, reg.X15} {
		a.VMOVD(ifyRow(4*i, 0), x)
		for r := 1; r < 4; r++ {
			a.VPINSRD(operand.U8(r), ifyRow(4*i+r, 0), x, x)
		}
		a.VPSHUFB(g.hdr, x, x)
	}
	a.VPUNPCKHQDQ(reg.X15, reg.X14, reg.X11)
	a.VPUNPCKLQDQ(reg.X15, reg.X14, reg.X14)
	a.VCVTPH2PS(reg.X14, reg.Y14)
	a.VCVTPH2PS(reg.X11, reg.Y15)
}

// ifySums sums the int32 lanes of each row r in Y<r> (r < 8) and leaves
// the eight rows' sums, converted to float32, in Y1 (Y0 and Y2-Y7
// clobbered).
func (a *asm) ifySums() {
	a.VPHADDD(reg.Y1, reg.Y0, reg.Y0)
	a.VPHADDD(reg.Y3, reg.Y2, reg.Y2)
	a.VPHADDD(reg.Y5, reg.Y4, reg.Y4)
	a.VPHADDD(reg.Y7, reg.Y6, reg.Y6)
	a.VPHADDD(reg.Y2, reg.Y0, reg.Y0)
	a.VPHADDD(reg.Y6, reg.Y4, reg.Y4)
	a.VPERM2I128(operand.U8(0x20), reg.Y4, reg.Y0, reg.Y1)
	a.VPERM2I128(operand.U8(0x31), reg.Y4, reg.Y0, reg.Y2)
	a.VPADDD(reg.Y2, reg.Y1, reg.Y1)
	a.VCVTDQ2PS(reg.Y1, reg.Y1)
}

// ifyUnpack puts row r's quants of half h of a block (not Q3H_B64T1's) in
// Y11, in the order of k.perm (Y8 and Y12 scratch); sh and mask are the
// low bits' shifts and mask.
func (a *asm) ifyUnpack(k ifyKind, t *ifyTables, g *ifyGlobals, r, h int, sh, mask operand.Op) {
	d := reg.Y11
	switch {
	case k.q6:
		a.ifyQ6(g, r, h)
	case k.pairs:
		a.VPBROADCASTQ(ifyRow(r, k.qsOff), d)
		a.VPSRLVQ(sh, d, d)
		a.VPAND(mask, d, d)
		a.ifyHigh(k, t, g, r, h, d)
	default:
		a.VBROADCASTI128(ifyRow(r, k.qsOff+16*h), d)
		a.VPSRLVD(sh, d, d)
		a.VPAND(mask, d, d)
		a.ifyHigh(k, t, g, r, h, d)
	}
}

// ifyQ3H adds row r's products of a Q3H_B64T1 block: its 32 codes
// (q3hCode's order) in Y11, split into p mod 11 (Y11) and p div 11 (Y8),
// times the prepared activations (vector 0 the values 2k, vector 1 2k+1)
// into int16 pairs, whose sums (word 0 of each dword the first half's,
// word 1 the second's) are stored at m and the first half's widened into
// Y<r>.
func (a *asm) ifyQ3H(g *ifyGlobals, r int, m operand.Mem) {
	a.ifyQ3HCodes(g, r)
	a.VPMADDUBSW(mem(reg.R12, 0), reg.Y11, reg.Y11)
	a.VPMADDUBSW(mem(reg.R12, ifyAct), reg.Y8, reg.Y8)
	a.VPADDW(reg.Y8, reg.Y11, reg.Y11)
	a.VMOVDQU(reg.Y11, m)
	a.VPMADDWD(g.w10, reg.Y11, yr[r])
}

// ifyQ3HCodes puts row r's 32 Q3H_B64T1 codes p of a block (q3hCode's
// order) in two vectors: p mod 11 in Y11, p div 11 in Y8 (Y12 scratch).
func (a *asm) ifyQ3HCodes(g *ifyGlobals, r int) {
	a.VBROADCASTI128(ifyRow(r, 16), reg.Y11)
	a.VPSHUFB(g.q3hLo, reg.Y11, reg.Y11)
	a.VPSRLVD(g.q3hLoSh, reg.Y11, reg.Y11)
	a.VPAND(g.c0f, reg.Y11, reg.Y11)
	a.VPBROADCASTQ(ifyRow(r, 8), reg.Y8)
	a.VPSHUFB(g.q3hMid, reg.Y8, reg.Y8)
	a.VPSRLVD(g.q3hMidSh, reg.Y8, reg.Y8)
	a.VPAND(g.c03, reg.Y8, reg.Y8)
	a.VPSLLW(operand.U8(4), reg.Y8, reg.Y8)
	a.VPOR(reg.Y8, reg.Y11, reg.Y11)
	a.VPBROADCASTD(ifyRow(r, 4), reg.Y8)
	a.VPSRLVD(g.q3hHiSh, reg.Y8, reg.Y8)
	a.VPAND(g.ones8, reg.Y8, reg.Y8)
	a.VPSLLW(operand.U8(6), reg.Y8, reg.Y8)
	a.VPOR(reg.Y8, reg.Y11, reg.Y11)
	a.VPAND(g.w00ff, reg.Y11, reg.Y8)
	a.VPSRLW(operand.U8(8), reg.Y11, reg.Y12)
	a.VPMULHUW(g.m5984, reg.Y8, reg.Y8)
	a.VPMULHUW(g.m5984, reg.Y12, reg.Y12)
	a.VPSLLW(operand.U8(8), reg.Y12, reg.Y12)
	a.VPOR(reg.Y12, reg.Y8, reg.Y8)
	a.VPMULLW(g.m11, reg.Y8, reg.Y12)
	a.VPSUBB(reg.Y12, reg.Y11, reg.Y11)
}

// ifyQ6 puts row r's weights of half h of a Q6_B64T1 block in Y11, value
// 4c+k at byte 8k+c: byte 2c+k/2 of the 16 nibble bytes, nibble k%2, and
// bit pair k of byte c of the 8 high-bit bytes.
func (a *asm) ifyQ6(g *ifyGlobals, r, h int) {
	a.VBROADCASTI128(ifyRow(r, 20+16*h), reg.Y11)
	a.VPSHUFB(g.q6Idx, reg.Y11, reg.Y11)
	a.VPSRLVQ(g.q3hSh, reg.Y11, reg.Y11)
	a.VPAND(g.c0f, reg.Y11, reg.Y11)
	a.VPBROADCASTQ(ifyRow(r, 4+8*h), reg.Y8)
	a.VPSRLVQ(g.pairSh, reg.Y8, reg.Y8)
	a.VPAND(g.c03, reg.Y8, reg.Y8)
	a.VPSLLW(operand.U8(4), reg.Y8, reg.Y8)
	a.VPOR(reg.Y8, reg.Y11, reg.Y11)
}
