package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8unpack generates q8unpack_amd64.s: unpacking of whole 16-row strips of
// Q4_0 and Q8_0 weights into the layout of the prefill tiles (q8ilv),
// without gathers: each row's quants are read with plain 16-byte loads, four
// rows to a register (lane j of register k holds row 4j+k), and a 4×4 dword
// transpose inside the 128-bit lanes turns them into vectors whose lane r
// is row r. The scales, 2 bytes a row, still come from one gather per
// block. The result is the same bytes as unpackS16Q4_0Z/unpackS16Q8_0Z (the
// tests compare them); these are several times faster, which moves the
// point where the tiles beat per-token matrix-vector products down to a few
// tokens.
//
// For up to 8 tokens the fused kernels skip the strip in memory: each block
// is unpacked into registers and multiplied at once with every token, by
// the tiles' own per-token step (tok), so the results are the tiles' bits,
// which are ggml's.
//
// In the kernels SI, R11, R12 and R13 point at the current block of rows 0,
// 4, 8 and 12; BX is the row stride and R10 three times it; DI walks the
// strip (or the tokens' records); CX counts the blocks; Z31 holds the rows'
// offsets for the scale gather.
func q8unpack(a *asm) {
	iota := a.global("iota16u",
		0x0000000100000000, 0x0000000300000002, 0x0000000500000004, 0x0000000700000006,
		0x0000000900000008, 0x0000000b0000000a, 0x0000000d0000000c, 0x0000000f0000000e)
	a.unpack16(q4, iota)
	a.unpack16(q8, iota)
	a.fuse(q4, 4, iota, "As fuse4Q4Z for nt ≤ 8 tokens.")
	a.fuse(q4, 8, iota, "As fuse4Q4Z for nt ≤ 8 tokens.")
	a.fuse(q8, 4, iota, "As fuse4Q4Z for Q8_0 weights.")
	a.fuse(q8, 8, iota, "As fuse4Q8Z for nt ≤ 8 tokens.")
}

// blockBytes is the size of a block of k: 2 bytes of scale, then the quants.
func (k qkind) blockBytes() int {
	if k == q4 {
		return 18
	}
	return 34
}

// rowBases are the registers pointing at rows 0, 4, 8 and 12.
var rowBases = [4]reg.Register{reg.RSI, reg.R11, reg.R12, reg.R13}

// rowMem is the address o bytes into the current block of row 4j+k.
func rowMem(o, j, k int) operand.Mem {
	m := operand.Mem{Base: rowBases[j], Disp: o}
	switch k {
	case 1:
		m.Index, m.Scale = reg.RBX, 1
	case 2:
		m.Index, m.Scale = reg.RBX, 2
	case 3:
		m.Index, m.Scale = reg.R10, 1
	}
	return m
}

// loads loads the 16 bytes at offset o of the current block of rows k, 4+k,
// 8+k and 12+k into lanes 0..3 of z[k].
func (a *asm) loads(o int, z [4]int) {
	for k := 0; k < 4; k++ {
		a.VMOVDQU(rowMem(o, 0, k), xr[z[k]])
		for j := 1; j < 4; j++ {
			a.VINSERTI32X4(operand.U8(j), rowMem(o, j, k), zr[z[k]], zr[z[k]])
		}
	}
}

// pfSetup points R14 at the strip after this one (row 16): rows are
// contiguous, so the 16 rows of a strip are one run of memory.
func (a *asm) pfSetup() {
	a.LEAQ(operand.Mem{Base: reg.R13, Index: reg.RBX, Scale: 4}, reg.R14)
}

// pfNext prefetches, per block, the next 16·bb bytes of the next strip, in
// order, and advances R14: memory sees one sequential stream instead of
// 16 row streams 18 (or 34) bytes at a time, which from DRAM ran at half
// the speed (software prefetch of each row ahead did not help).
func (a *asm) pfNext(bb int) {
	n := 16 * bb
	for o := 0; o < n; o += 64 {
		a.PREFETCHT0(mem(reg.R14, o))
	}
	a.ADDQ(operand.U32(n), reg.R14)
}

// transpose turns b0..b3 (lane j of bk: 4 dwords of row 4j+k) into c0..c3
// (lane j of cd: dword d of rows 4j..4j+3), using t0..t3.
func (a *asm) transpose(b, t, c [4]int) {
	a.VPUNPCKLDQ(zr[b[1]], zr[b[0]], zr[t[0]])
	a.VPUNPCKHDQ(zr[b[1]], zr[b[0]], zr[t[1]])
	a.VPUNPCKLDQ(zr[b[3]], zr[b[2]], zr[t[2]])
	a.VPUNPCKHDQ(zr[b[3]], zr[b[2]], zr[t[3]])
	a.VPUNPCKLQDQ(zr[t[2]], zr[t[0]], zr[c[0]])
	a.VPUNPCKHQDQ(zr[t[2]], zr[t[0]], zr[c[1]])
	a.VPUNPCKLQDQ(zr[t[3]], zr[t[1]], zr[c[2]])
	a.VPUNPCKHQDQ(zr[t[3]], zr[t[1]], zr[c[3]])
}

// rowSetup points SI, R11, R12, R13 at rows 0, 4, 8, 12 (SI already at
// row 0, BX the stride), R10 at three strides and Z31 at the rows' offsets.
func (a *asm) rowSetup(iota operand.Mem) {
	a.LEAQ(operand.Mem{Base: reg.RBX, Index: reg.RBX, Scale: 2}, reg.R10)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.RBX, Scale: 4}, reg.R11)
	a.LEAQ(operand.Mem{Base: reg.R11, Index: reg.RBX, Scale: 4}, reg.R12)
	a.LEAQ(operand.Mem{Base: reg.R12, Index: reg.RBX, Scale: 4}, reg.R13)
	a.VPBROADCASTD(reg.EBX, reg.Z31)
	a.VPMULLD(iota, reg.Z31, reg.Z31)
}

// quantMask sets Z30 to k's byte mask: 0x0f (Q4_0 nibbles) or 0x80 (Q8_0
// quants + 128).
func (a *asm) quantMask(k qkind) {
	if k == q4 {
		a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	} else {
		a.MOVL(operand.U32(0x80808080), reg.EAX)
	}
	a.VPBROADCASTD(reg.EAX, reg.Z30)
}

// scales gathers the 16 rows' scales of the current block into z as
// float32.
func (a *asm) scales(z int) {
	a.KXNORW(reg.K2, reg.K2, reg.K2)
	a.VPXORD(zr[z], zr[z], zr[z])
	a.VPGATHERDD(operand.Mem{Base: reg.RSI, Index: reg.Z31, Scale: 1}, reg.K2, zr[z])
	a.VPMOVDW(zr[z], yr[z])
	a.VCVTPH2PS(yr[z], zr[z])
}

// fixQuants turns the transposed quants in Z16..Z19 (Q4_0) or Z16..Z23
// (Q8_0) into the tiles' unsigned bytes in Z16..Z23, Z30 the mask.
func (a *asm) fixQuants(k qkind) {
	if k == q4 {
		for v := 0; v < 4; v++ {
			a.VPSRLD(operand.U8(4), zr[16+v], zr[20+v])
		}
		for v := 16; v < 24; v++ {
			a.VPANDD(reg.Z30, zr[v], zr[v])
		}
		return
	}
	for v := 16; v < 24; v++ {
		a.VPXORD(reg.Z30, zr[v], zr[v])
	}
}

// advance moves the four row pointers on by bb bytes.
func (a *asm) advance(bb int) {
	for _, r := range rowBases {
		a.ADDQ(operand.U8(bb), r)
	}
}

// unpack16 generates unpack16<k>Z.
func (a *asm) unpack16(k qkind, iota operand.Mem) {
	doc := []string{fmt.Sprintf("Unpacks nb %s blocks of 16 rows (ldw bytes apart) into a strip.", k.long)}
	if k == q8 {
		doc = []string{
			fmt.Sprintf("Unpacks nb %s blocks of 16 rows (ldw bytes apart) into a strip", k.long),
			"(quants + 128).",
		}
	}
	a.text("unpack16"+k.long+"Z", attr.NOSPLIT, "func(dst *byte, w unsafe.Pointer, ldw uintptr, nb int)", doc...)
	a.load("dst", reg.RDI)
	a.load("w", reg.RSI)
	a.load("ldw", reg.RBX)
	a.load("nb", reg.RCX)
	a.rowSetup(iota)
	a.pfSetup()
	a.quantMask(k)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))

	a.Label("blk")
	a.pfNext(k.blockBytes())
	a.loads(2, [4]int{0, 1, 2, 3})
	if k == q8 {
		a.loads(18, [4]int{9, 10, 11, 12})
	}
	a.transpose([4]int{0, 1, 2, 3}, [4]int{4, 5, 6, 7}, [4]int{16, 17, 18, 19})
	if k == q8 {
		a.transpose([4]int{9, 10, 11, 12}, [4]int{4, 5, 6, 7}, [4]int{20, 21, 22, 23})
	}
	if k == q8 {
		a.fixQuants(k)
	}
	for v := 0; v < k.uvecs(); v++ {
		a.VMOVDQU64(zr[16+v], mem(reg.RDI, 64*v))
	}
	a.scales(8)
	a.VMOVUPS(reg.Z8, mem(reg.RDI, 64*k.uvecs()))
	a.advance(k.blockBytes())
	a.ADDQ(operand.U32(uint32(k.ublock())), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// fuse generates fuse<nt><k>Z; the chains are in Z8..Z15.
func (a *asm) fuse(k qkind, nt int, iota operand.Mem, doc string) {
	name := fmt.Sprintf("fuse%d%sZ", nt, k.name)
	docs := []string{doc}
	if name == "fuse4Q4Z" {
		docs = []string{
			"dst[t·ldd/4 + r] (+)= w_r·x_t for the 16 rows of nb Q4_0 blocks at w",
			"(ldw bytes apart) and the first nt ≤ 4 tokens of a group in layout C.",
		}
	}
	a.text(name, attr.NOSPLIT, "func(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)", docs...)
	a.load("w", reg.RSI)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.rowSetup(iota)
	a.pfSetup()
	a.quantMask(k)
	a.zero(zr[8:16]...)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("fin"))

	a.Label("blk")
	a.pfNext(k.blockBytes())
	a.loads(2, [4]int{0, 1, 2, 3})
	a.transpose([4]int{0, 1, 2, 3}, [4]int{4, 5, 6, 7}, [4]int{16, 17, 18, 19})
	if k == q8 {
		a.loads(18, [4]int{0, 1, 2, 3})
		a.transpose([4]int{0, 1, 2, 3}, [4]int{4, 5, 6, 7}, [4]int{20, 21, 22, 23})
	}
	a.fixQuants(k)
	a.scales(24)
	for t := 0; t < nt; t++ {
		ti, tm := tokScratch(t, 2)
		a.tok(48*t, k.corr, zr[8+t], ti, tm, reg.Z29)
	}
	a.advance(k.blockBytes())
	a.ADDQ(operand.U32(768), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	// The chains of the nt tokens to dst, added to what is there when acc
	// is set (R9); it returns after nt (CX) tokens.
	a.Label("fin")
	a.load("dst", reg.RDX)
	a.load("ldd", reg.RBX)
	a.load("nt", reg.RCX)
	a.load("acc", reg.R9)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	for t := 0; t < 8; t++ {
		z := zr[8+t]
		skip := fmt.Sprintf("st%d", t)
		a.TESTQ(reg.R9, reg.R9)
		a.JZ(label(skip))
		a.VADDPS(mem(reg.RDX, 0), z, z)
		a.Label(skip)
		a.VMOVUPS(z, mem(reg.RDX, 0))
		a.ADDQ(reg.RBX, reg.RDX)
		a.DECQ(reg.RCX)
		a.JZ(label("done"))
	}

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
