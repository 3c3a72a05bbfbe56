package main

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8vnni generates q8vnni_amd64.s: matrix-vector products of Q4_0 and Q8_0
// weights with activations in layouts A and B (q8pack.go), AVX-512 with
// VNNI (VPDPBUSD) and VBMI (VPERMT2B). Each output is ggml's chain over the
// row's blocks,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc)
//
// bit for bit. Four rows (one per memory stream) are done side by side, 4
// blocks at a time: VPDPBUSD leaves 4 int32 partial sums per block and row,
// an in-register transpose adds them into one vector whose lane 4j+r is
// block j of row r, and the chain then takes the blocks in order, 4 rows
// per FMA.
//
// In the kernels, R8..R11 point at the current rows of the 4 streams (q
// rows apart), AX is the byte offset in the rows, BX the row stride, DI the
// activations and R12 the current activation group, CX the byte length of
// the rows' whole groups, DX the output of stream 0 and SI the byte
// distance 4q between the streams' outputs, R14 the rows left. Z16-Z19 hold
// the activation group (layout A or B), Y20 gets the weight scales (f16
// word 4j+r: block j of row r). K4 selects the words of rows 2 and 3, K5
// those of blocks 2 and 3.
func q8vnni(a *asm) {
	// Byte gather of one Q4_0 group (4 blocks of 18 bytes) from two
	// overlapping 64-byte loads (bytes [0,64) and [8,72)): the 4×16 quant
	// bytes.
	q4qidx := a.global("q4qidx",
		0x0908070605040302, 0x11100f0e0d0c0b0a, 0x1b1a191817161514, 0x232221201f1e1d1c,
		0x2d2c2b2a29282726, 0x3534333231302f2e, 0x3f3e3d3c3b3a3938, 0x7f7e7d7c7b7a7978)
	// Byte gather of the f16 scales of 4 Q4_0 groups, two at a time: from
	// the first 64 bytes of rows r (table 1) and r+1 (table 2), word 4j+r'
	// of the result (r' = 0, 2 from table 1; 1, 3 from table 2) is block
	// j's scale (word 9j).
	q4sidx := a.global("q4sidx",
		0x4140010041400100, 0x5352131253521312, 0x6564252465642524, 0x7776373677763736, 0, 0, 0, 0)
	// Byte gathers of a Q8_0 group (4 blocks of 34 bytes): the first 16
	// quants of each block from bytes [0,128), the last 16 from bytes
	// [8,136).
	q8aidx := a.global("q8aidx",
		0x0908070605040302, 0x11100f0e0d0c0b0a, 0x2b2a292827262524, 0x333231302f2e2d2c,
		0x4d4c4b4a49484746, 0x5554535251504f4e, 0x6f6e6d6c6b6a6968, 0x7776757473727170)
	q8bidx := a.global("q8bidx",
		0x11100f0e0d0c0b0a, 0x1918171615141312, 0x333231302f2e2d2c, 0x3b3a393837363534,
		0x5554535251504f4e, 0x5d5c5b5a59585756, 0x7776757473727170, 0x7f7e7d7c7b7a7978)
	// The same for Q8_0 groups: words 0 and 17 of bytes [0,64) of the rows
	// give blocks 0 and 1 (words 0-7), words 2 and 19 of bytes [64,128)
	// blocks 2 and 3 (words 8-15).
	q8sidx := a.global("q8sidx",
		0x4140010041400100, 0x6362232263622322, 0x4544050445440504, 0x6766272667662726, 0, 0, 0, 0)
	a.gemv4Q4(q4qidx, q4sidx)
	a.gemv4Q8(q8aidx, q8bidx, q8sidx)
}

// vnniPF is how far ahead the gemv4 kernels prefetch the rows.
const vnniPF = 2048

var streams = [4]reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}

// rowAt is o(p)(AX*1).
func rowAt(p reg.Register, o int) operand.Mem {
	return operand.Mem{Base: p, Index: reg.RAX, Scale: 1, Disp: o}
}

// VGF2P8AFFINEQB emits the GFNI instruction (not in avo v0.5.0's database).
func (a *asm) VGF2P8AFFINEQB(imm, m, src, dst operand.Op) {
	a.raw("VGF2P8AFFINEQB", nil, imm, m, src, dst)
}

// gemv4Setup loads the arguments into the registers above; gb is the bytes
// of a group of 4 blocks (0: CX keeps nb).
func (a *asm) gemv4Setup(gb int) {
	a.gemv4Args("x")
	if gb == 0 {
		return // CX stays the count of blocks
	}
	a.SHRQ(operand.U8(2), reg.RCX)
	a.IMUL3Q(operand.U8(gb), reg.RCX, reg.RCX)
}

// smasks sets K4 and K5.
func (a *asm) smasks() {
	a.MOVL(operand.U32(0xcccc), reg.EAX)
	a.KMOVD(reg.EAX, reg.K4)
	a.MOVL(operand.U32(0xff00), reg.EAX)
	a.KMOVD(reg.EAX, reg.K5)
}

// xload4 loads the activation group at R12 into Z16..Z19.
func (a *asm) xload4() {
	for i := 0; i < 4; i++ {
		a.VMOVDQU64(mem(reg.R12, 64*i), zr[16+i])
	}
}

// reduce4i adds the 4 int32 lanes of each block (128-bit lane j) of the
// rows' partial sums Z4..Z7 into Z11: lane 4j+r is row r's sum of block j.
func (a *asm) reduce4i() {
	a.VPUNPCKLDQ(reg.Z5, reg.Z4, reg.Z11)
	a.VPUNPCKHDQ(reg.Z5, reg.Z4, reg.Z12)
	a.VPADDD(reg.Z12, reg.Z11, reg.Z11)
	a.VPUNPCKLDQ(reg.Z7, reg.Z6, reg.Z12)
	a.VPUNPCKHDQ(reg.Z7, reg.Z6, reg.Z13)
	a.VPADDD(reg.Z13, reg.Z12, reg.Z12)
	a.VPUNPCKLQDQ(reg.Z12, reg.Z11, reg.Z13)
	a.VPUNPCKHQDQ(reg.Z12, reg.Z11, reg.Z14)
	a.VPADDD(reg.Z14, reg.Z13, reg.Z11)
}

// chain4 converts the sums in Z11, multiplies the weight scales (f16 words
// in Y20) by the activation scales (Z19) and runs the chain of the 4
// blocks, in order, for the 4 rows in X0.
func (a *asm) chain4() {
	a.VCVTDQ2PS(reg.Z11, reg.Z11)
	a.VCVTPH2PS(reg.Y20, reg.Z12)
	a.VMULPS(reg.Z19, reg.Z12, reg.Z12)
	a.VMOVUPS(reg.Z11, sp(0))
	a.VMOVUPS(reg.Z12, sp(64))
	a.VFMADD231PS(reg.X12, reg.X11, reg.X0)
	for j := 1; j < 4; j++ {
		a.VMOVUPS(sp(16*j), reg.X13)
		a.VFMADD231PS(sp(64+16*j), reg.X13, reg.X0)
	}
}

// gemv4Fin adds the old outputs to the 4 chains in X0 when acc is set,
// stores them at (DX), (DX)(SI*1), (DX)(SI*2) and 3·SI(DX), advances DX and
// the rows, and loops to row. It uses R13.
func (a *asm) gemv4Fin() {
	at := func(b reg.Register, idx bool) operand.Mem {
		m := operand.Mem{Base: b}
		if idx {
			m.Index, m.Scale = reg.RSI, 1
		}
		return m
	}
	a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 2}, reg.R13)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	a.VMOVSS(at(reg.RDX, false), reg.X4)
	a.VINSERTPS(operand.U8(0x10), at(reg.RDX, true), reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x20), at(reg.R13, false), reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x30), at(reg.R13, true), reg.X4, reg.X4)
	a.VADDPS(reg.X4, reg.X0, reg.X0)
	a.Label("store")
	a.VMOVSS(reg.X0, at(reg.RDX, false))
	a.VEXTRACTPS(operand.U8(1), reg.X0, at(reg.RDX, true))
	a.VEXTRACTPS(operand.U8(2), reg.X0, at(reg.R13, false))
	a.VEXTRACTPS(operand.U8(3), reg.X0, at(reg.R13, true))
	a.ADDQ(operand.U8(4), reg.RDX)
	for _, r := range streams {
		a.ADDQ(reg.RBX, r)
	}
	a.DECQ(reg.R14)
	a.JNZ(label("row"))
}

// gemv4Head is the start of a row and the loop over its whole groups up
// to the prefetches.
func (a *asm) gemv4Head() {
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	a.VXORPS(reg.X0, reg.X0, reg.X0)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("part"))
	a.Label("grp")
}

// q4Stream accumulates into Z<t> the partial sums of the Q4_0 group at
// o(p)(AX*1): 4 int32 per block, the corrections plus the VPDPBUSD of low
// and high nibbles with the activations.
func (a *asm) q4Stream(p reg.Register, o, t int) {
	a.VMOVDQU8(rowAt(p, o), reg.Z9)
	a.VPERMT2B(rowAt(p, o+8), reg.Z30, reg.Z9)
	a.VGF2P8AFFINEQB(operand.U8(0), reg.Z28, reg.Z9, reg.Z10)
	a.VPANDD(reg.Z31, reg.Z9, reg.Z9)
	a.VMOVDQA64(reg.Z18, zr[t])
	a.VPDPBUSD(reg.Z16, reg.Z9, zr[t])
	a.VPDPBUSD(reg.Z17, reg.Z10, zr[t])
}

// q4Scales gathers the scales of the Q4_0 groups of the 4 rows at
// o[i](p[i])(AX*1) into Y20.
func (a *asm) q4Scales(p [4]reg.Register, o [4]int) {
	a.VMOVDQU8(rowAt(p[0], o[0]), reg.Z20)
	a.VPERMT2B(rowAt(p[1], o[1]), reg.Z29, reg.Z20)
	a.VMOVDQU8(rowAt(p[2], o[2]), reg.Z21)
	a.VPERMT2B(rowAt(p[3], o[3]), reg.Z29, reg.Z21)
	a.VMOVDQU16(reg.Z21, reg.K4, reg.Z20)
}

// gemv4Q4 generates gemv4Q4_0VNNI.
func (a *asm) gemv4Q4(qidx, sidx operand.Mem) {
	a.text("gemv4Q4_0VNNI", 0, "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)",
		"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_0 blocks,",
		"ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or y[j·q+r] += w_{j·q+r}·x when",
		"acc is not 0 (one addition after the chain). The streams are read side",
		"by side, which keeps more memory reads in flight than one stream does.",
		"x is in layout A. The frame holds the chain's inputs (128 bytes) and a",
		"partial last group of a row, copied and zero-padded (128 bytes per",
		"stream).")
	a.AllocLocal(640)
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.VMOVDQU64(qidx, reg.Z30)
	a.VMOVDQU64(sidx, reg.Z29)
	a.MOVQ(operand.U64(0x1020408000000000), reg.RAX)
	a.VPBROADCASTQ(reg.RAX, reg.Z28)
	a.smasks()
	a.load("nb", reg.RAX)
	a.ANDQ(operand.U8(3), reg.RAX)
	a.IMUL3Q(operand.U8(18), reg.RAX, reg.RAX)
	a.MOVQ(operand.I32(-1), reg.R13)
	a.BZHIQ(reg.RAX, reg.R13, reg.R13)
	a.KMOVQ(reg.R13, reg.K2)
	a.gemv4Setup(72)
	a.gemv4Head()
	for _, p := range streams {
		a.PREFETCHT0(rowAt(p, vnniPF))
	}
	a.xload4()
	for i, p := range streams {
		a.q4Stream(p, 0, 4+i)
	}
	a.q4Scales(streams, [4]int{})
	a.reduce4i()
	a.chain4()
	a.ADDQ(operand.U8(72), reg.RAX)
	a.ADDQ(operand.U32(256), reg.R12)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("grp"))

	a.Label("part")
	a.load("nb", reg.R13)
	a.ANDQ(operand.U8(3), reg.R13)
	a.JZ(label("fin"))
	a.VPXORD(reg.Z15, reg.Z15, reg.Z15)
	for i, p := range streams {
		a.VMOVDQU8_Z(rowAt(p, 0), reg.K2, reg.Z9)
		a.VMOVDQU64(reg.Z9, sp(128+128*i))
		a.VMOVDQU64(reg.Z15, sp(192+128*i))
	}
	a.LEAQ(sp(128), reg.R13)
	a.XORQ(reg.RAX, reg.RAX)
	a.xload4()
	for i := 0; i < 4; i++ {
		a.q4Stream(reg.R13, 128*i, 4+i)
	}
	r13 := [4]reg.Register{reg.R13, reg.R13, reg.R13, reg.R13}
	a.q4Scales(r13, [4]int{0, 128, 256, 384})
	a.reduce4i()
	a.chain4()

	a.Label("fin")
	a.gemv4Fin()

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// q8Stream accumulates into Z<t> the partial sums of the Q8_0 group at
// o(p)(AX*1): the first and second halves of its 4 blocks are gathered into
// Z9 and Z10 and made unsigned (w+128), and VPDPBUSD adds them times the
// activations to the corrections.
func (a *asm) q8Stream(p reg.Register, o, t int) {
	a.VMOVDQU8(rowAt(p, o), reg.Z9)
	a.VPERMT2B(rowAt(p, o+64), reg.Z30, reg.Z9)
	a.VMOVDQU8(rowAt(p, o+8), reg.Z10)
	a.VPERMT2B(rowAt(p, o+72), reg.Z27, reg.Z10)
	a.VPXORD(reg.Z28, reg.Z9, reg.Z9)
	a.VPXORD(reg.Z28, reg.Z10, reg.Z10)
	a.VMOVDQA64(reg.Z18, zr[t])
	a.VPDPBUSD(reg.Z16, reg.Z9, zr[t])
	a.VPDPBUSD(reg.Z17, reg.Z10, zr[t])
}

// q8Scales gathers the scales of the Q8_0 groups of the 4 rows at
// o[i](p[i])(AX*1) into Y20.
func (a *asm) q8Scales(p [4]reg.Register, o [4]int) {
	for h := 0; h < 2; h++ {
		d := 64 * h
		a.VMOVDQU8(rowAt(p[0], o[0]+d), zr[20+2*h])
		a.VPERMT2B(rowAt(p[1], o[1]+d), reg.Z29, zr[20+2*h])
		a.VMOVDQU8(rowAt(p[2], o[2]+d), zr[21+2*h])
		a.VPERMT2B(rowAt(p[3], o[3]+d), reg.Z29, zr[21+2*h])
	}
	a.VMOVDQU16(reg.Z21, reg.K4, reg.Z20)
	a.VMOVDQU16(reg.Z23, reg.K4, reg.Z22)
	a.VMOVDQU16(reg.Z22, reg.K5, reg.Z20)
}

// gemv4Q8 generates gemv4Q8_0VNNI.
func (a *asm) gemv4Q8(aidx, bidx, sidx operand.Mem) {
	a.text("gemv4Q8_0VNNI", 0, "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)",
		"As gemv4Q4_0VNNI for Q8_0 weights and activations in layout B.")
	a.AllocLocal(896)
	a.MOVL(operand.U32(0x80808080), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z28)
	a.VMOVDQU64(aidx, reg.Z30)
	a.VMOVDQU64(bidx, reg.Z27)
	a.VMOVDQU64(sidx, reg.Z29)
	a.smasks()
	a.load("nb", reg.RAX)
	a.ANDQ(operand.U8(3), reg.RAX)
	a.IMUL3Q(operand.U8(34), reg.RAX, reg.RAX)
	a.MOVQ(operand.I32(-1), reg.R13)
	a.BZHIQ(reg.RAX, reg.R13, reg.R12)
	a.KMOVQ(reg.R12, reg.K2)
	a.XORQ(reg.R12, reg.R12)
	a.SUBQ(operand.U8(64), reg.RAX)
	a.CMOVQLT(reg.R12, reg.RAX)
	a.BZHIQ(reg.RAX, reg.R13, reg.R12)
	a.KMOVQ(reg.R12, reg.K3)
	a.gemv4Setup(136)
	a.gemv4Head()
	for _, p := range streams {
		a.PREFETCHT0(rowAt(p, vnniPF))
		a.PREFETCHT0(rowAt(p, vnniPF+64))
	}
	a.xload4()
	for i, p := range streams {
		a.q8Stream(p, 0, 4+i)
	}
	a.q8Scales(streams, [4]int{})
	a.reduce4i()
	a.chain4()
	a.ADDQ(operand.U32(136), reg.RAX)
	a.ADDQ(operand.U32(256), reg.R12)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("grp"))

	a.Label("part")
	a.load("nb", reg.R13)
	a.ANDQ(operand.U8(3), reg.R13)
	a.JZ(label("fin"))
	a.VPXORD(reg.Z15, reg.Z15, reg.Z15)
	// Each stream's partial group to the frame, zero-padded to 192 bytes
	// (K2 and K3: its bytes in the first and second 64).
	for i, p := range streams {
		o := 128 + 192*i
		a.VMOVDQU8_Z(rowAt(p, 0), reg.K2, reg.Z9)
		a.VMOVDQU8_Z(rowAt(p, 64), reg.K3, reg.Z10)
		a.VMOVDQU64(reg.Z9, sp(o))
		a.VMOVDQU64(reg.Z10, sp(o+64))
		a.VMOVDQU64(reg.Z15, sp(o+128))
	}
	a.LEAQ(sp(128), reg.R13)
	a.XORQ(reg.RAX, reg.RAX)
	a.xload4()
	for i := 0; i < 4; i++ {
		a.q8Stream(reg.R13, 192*i, 4+i)
	}
	r13 := [4]reg.Register{reg.R13, reg.R13, reg.R13, reg.R13}
	a.q8Scales(r13, [4]int{0, 192, 384, 576})
	a.reduce4i()
	a.chain4()

	a.Label("fin")
	a.gemv4Fin()

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
