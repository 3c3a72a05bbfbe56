package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8avx2 generates q8avx2_amd64.s: Q4_0 and Q8_0 weights times activations
// in layouts A and P (q8pack.go), AVX2: VPMADDUBSW (unsigned × signed bytes
// to int16 pairs) and VPMADDWD give int32 partial sums, VPHADDD adds them
// into one exact sum per block, and each output is ggml's chain over the
// row's blocks in order,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc),
//
// one scalar FMA per block. Y15 holds 0x0f bytes, Y14 int16 ones; the
// frame holds the float sums of 4 blocks. R11 walks the row's blocks, R12
// the activations, R13 counts the groups of 4 blocks, R10 the blocks
// after them, R14 the rows.
func q8avx2(a *asm) {
	a.gemvAVX2(q4)
	a.gemvAVX2(q8)
}

const gemvAVX2Sig = "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)"

// sp is off(SP), in the kernels' 32-byte frame.
func sp(off int) operand.Mem { return operand.NewStackAddr(off) }

// q4Pair sets Y<out> to the int32 partial sums (4 per block, corrections
// included) of Q4_0 blocks at weight byte offsets w0 and w1 of R11 with the
// group at R12 (lo quants at xl, hi at xh, corrections at c).
func (a *asm) q4Pair(w0, w1, xl, xh, c, out int) {
	a.VMOVDQU(mem(reg.R11, w0+2), reg.X8)
	a.VINSERTI128(operand.U8(1), mem(reg.R11, w1+2), reg.Y8, reg.Y8)
	a.VPSRLW(operand.U8(4), reg.Y8, reg.Y9)
	a.VPAND(reg.Y15, reg.Y8, reg.Y8)
	a.VPAND(reg.Y15, reg.Y9, reg.Y9)
	a.VPMADDUBSW(mem(reg.R12, xl), reg.Y8, reg.Y8)
	a.VPMADDUBSW(mem(reg.R12, xh), reg.Y9, reg.Y9)
	a.VPADDW(reg.Y9, reg.Y8, reg.Y8)
	a.VPMADDWD(reg.Y14, reg.Y8, reg.Y8)
	a.VPADDD(mem(reg.R12, c), reg.Y8, yr[out])
}

// q4Sums adds the partial sums of blocks 0, 1 (Y2) and 2, 3 (Y3) of a group
// and stores them as float32 at 0(SP): block 0 at 0, 1 at 16, 2 at 4, 3 at
// 20.
func (a *asm) q4Sums() {
	a.VPHADDD(reg.Y3, reg.Y2, reg.Y8)
	a.VPHADDD(reg.Y8, reg.Y8, reg.Y8)
	a.VCVTDQ2PS(reg.Y8, reg.Y8)
	a.VMOVUPS(reg.Y8, sp(0))
}

// q8Blk sets Y<out> to the 8 int32 partial sums of the Q8_0 block at w(R11)
// with the activations at x(R12).
func (a *asm) q8Blk(w, x, out int) {
	a.VMOVDQU(mem(reg.R11, w+2), reg.Y8)
	a.VMOVDQU(mem(reg.R12, x), reg.Y9)
	a.VPSIGNB(reg.Y8, reg.Y9, reg.Y9)
	a.VPABSB(reg.Y8, reg.Y8)
	a.VPMADDUBSW(reg.Y9, reg.Y8, reg.Y8)
	a.VPMADDWD(reg.Y14, reg.Y8, yr[out])
}

// q8Sums adds the partial sums of blocks 0-3 (Y2..Y5) and stores them as
// float32 at 0(SP), 4(SP), 8(SP), 12(SP).
func (a *asm) q8Sums() {
	a.VPHADDD(reg.Y3, reg.Y2, reg.Y8)
	a.VPHADDD(reg.Y5, reg.Y4, reg.Y9)
	a.VPHADDD(reg.Y9, reg.Y8, reg.Y8)
	a.VEXTRACTI128(operand.U8(1), reg.Y8, reg.X9)
	a.VPADDD(reg.X9, reg.X8, reg.X8)
	a.VCVTDQ2PS(reg.X8, reg.X8)
	a.VMOVUPS(reg.X8, sp(0))
}

// chainBlk runs one block of the chain in X0: the weight scale at w(R11)
// times the activation scale at s(R12), fused with the block's sum at
// f(SP).
func (a *asm) chainBlk(w, f, s int) {
	a.VPBROADCASTW(mem(reg.R11, w), reg.X10)
	a.VCVTPH2PS(reg.X10, reg.X10)
	a.VMULSS(mem(reg.R12, s), reg.X10, reg.X10)
	a.VFMADD231SS(sp(f), reg.X10, reg.X0)
}

// cmpJB compares R10 with n and jumps to l if below.
func (a *asm) cmpJB(n int, l string) {
	a.CMPQ(reg.R10, operand.U8(n))
	a.JB(label(l))
}

// gemvAVX2 generates gemv<k>AVX2.
func (a *asm) gemvAVX2(k qkind) {
	doc := []string{
		"For each of nrows rows of nb Q4_0 blocks (ldw bytes apart), y[r] = w_r·x",
		"(or += when acc is not 0, one addition after the chain). x is in",
		"layout A.",
	}
	if k == q8 {
		doc = []string{"As gemvQ4_0AVX2 for Q8_0 weights and activations in layout P."}
	}
	a.text("gemv"+k.long+"AVX2", attr.NOSPLIT, gemvAVX2Sig, doc...)
	a.AllocLocal(32)
	a.load("w", reg.RSI)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("nrows", reg.R14)
	a.load("acc", reg.R9)
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.MOVD(reg.EAX, reg.X15)
	a.VPBROADCASTD(reg.X15, reg.Y15)
	a.MOVL(operand.U32(0x00010001), reg.EAX)
	a.MOVD(reg.EAX, reg.X14)
	a.VPBROADCASTD(reg.X14, reg.Y14)
	a.MOVQ(reg.RCX, reg.R10)
	a.ANDQ(operand.U8(3), reg.R10) // blocks after the whole groups of 4
	a.SHRQ(operand.U8(2), reg.RCX)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	a.VXORPS(reg.X0, reg.X0, reg.X0)
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.TESTQ(reg.R13, reg.R13)
	a.JZ(label("part"))

	a.Label("grp")
	if k == q4 {
		a.q4Pair(0, 18, 0, 64, 128, 2)
		a.q4Pair(36, 54, 32, 96, 160, 3)
		a.q4Sums()
		a.chainBlk(0, 0, 192)
		a.chainBlk(18, 16, 208)
		a.chainBlk(36, 4, 224)
		a.chainBlk(54, 20, 240)
		a.ADDQ(operand.U8(72), reg.R11)
		a.ADDQ(operand.U32(256), reg.R12)
	} else {
		a.q8Blk(0, 0, 2)
		a.q8Blk(34, 32, 3)
		a.q8Blk(68, 192, 4)
		a.q8Blk(102, 224, 5)
		a.q8Sums()
		a.chainBlk(0, 0, 128)
		a.chainBlk(34, 4, 160)
		a.chainBlk(68, 8, 320)
		a.chainBlk(102, 12, 352)
		a.ADDQ(operand.U32(136), reg.R11)
		a.ADDQ(operand.U32(384), reg.R12)
	}
	a.DECQ(reg.R13)
	a.JNZ(label("grp"))

	a.Label("part")
	if k == q4 {
		a.Comment("A partial group of 1-3 blocks: a missing pair partner reuses a",
			"block of the row (its activations are zero padding), and only the",
			"present blocks enter the chain.")
		a.cmpJB(1, "fin")
		a.VPXOR(reg.Y3, reg.Y3, reg.Y3)
		a.JA(label("two"))
		a.q4Pair(0, 0, 0, 64, 128, 2)
		a.q4Sums()
		a.chainBlk(0, 0, 192)
		a.JMP(label("fin"))

		a.Label("two")
		a.q4Pair(0, 18, 0, 64, 128, 2)
		a.cmpJB(3, "two1")
		a.q4Pair(36, 36, 32, 96, 160, 3)

		a.Label("two1")
		a.q4Sums()
		a.chainBlk(0, 0, 192)
		a.chainBlk(18, 16, 208)
		a.cmpJB(3, "fin")
		a.chainBlk(36, 4, 224)
	} else {
		a.Comment("1-3 blocks left: missing ones are zero sums, left out of the chain.")
		a.cmpJB(1, "fin")
		a.VPXOR(reg.Y3, reg.Y3, reg.Y3)
		a.VPXOR(reg.Y4, reg.Y4, reg.Y4)
		a.VPXOR(reg.Y5, reg.Y5, reg.Y5)
		a.q8Blk(0, 0, 2)
		a.cmpJB(2, "sums")
		a.q8Blk(34, 32, 3)
		a.cmpJB(3, "sums")
		a.q8Blk(68, 192, 4)

		a.Label("sums")
		a.q8Sums()
		a.chainBlk(0, 0, 128)
		a.cmpJB(2, "fin")
		a.chainBlk(34, 4, 160)
		a.cmpJB(3, "fin")
		a.chainBlk(68, 8, 320)
	}

	// Add the old output to the chain in X0 when acc (R9) is set, store it
	// and advance to the next row.
	a.Label("fin")
	a.TESTQ(reg.R9, reg.R9)
	a.JZ(label("store"))
	a.VADDSS(mem(reg.RDX, 0), reg.X0, reg.X0)
	a.Label("store")
	a.VMOVSS(reg.X0, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.RBX, reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
