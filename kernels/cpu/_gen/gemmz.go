package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// gemmz generates gemmz_amd64.s: the AVX-512 prefill GEMM for float
// weights, 12 weight rows × 32 tokens per tile, the kernels that fuse the
// weights' widening into it, and the panel packers and unpackers.
//
// The activations come as a panel of 32 tokens transposed (k-major: 32
// floats per k), the weights in tile layout (widenz_amd64.s): blocks of 8
// elements of k, each the 12 rows' 8 values in turn (384 bytes). Each k
// takes 2 vector loads, 12 broadcasts and 24 FMAs; the broadcasts read 6
// cache lines at one-byte displacements from one register (R8, kept 192
// bytes into the current block) instead of 12 strided rows. (FMAs with the
// broadcast as their memory operand, 26 micro-ops per k instead of 38,
// measured no faster: they load each weight twice, and the loads then
// compete with the core's other hyperthread.) Each accumulator holds 16
// tokens of one row (row r in Z2r, Z2r+1). The broadcasts rotate through
// Z24-Z27 (renaming makes more needless), which leaves Z28 and Z29 to the
// fused kernels' widening.
func gemmz(a *asm) {
	// 0, 1, ..., 31 as int32.
	iota := make([]uint64, 16)
	for i := range iota {
		iota[i] = uint64(2*i+1)<<32 | uint64(2*i)
	}
	iota32 := a.global("iota32", iota...)
	gemm12x32Z(a)
	unpanelZ(a, iota32)
	packPanelZ(a, iota32)
	for _, t := range []string{"F16", "BF16", "F32"} {
		gemm12x32ZW(a, t)
	}
	packPanel16Z(a)
	unpanel16Z(a)
}

// kstep multiplies the 32 tokens at j·128(SI) with element j of the block
// at R8-192.
func (a *asm) kstep(j int) {
	a.VMOVUPS(mem(reg.RSI, j*128), reg.Z30)
	a.VMOVUPS(mem(reg.RSI, j*128+64), reg.Z31)
	bc := func(r int) {
		a.VBROADCASTSS(mem(reg.R8, j*4+32*r-192), zr[24+r%4])
	}
	fma := func(r int) {
		a.VFMADD231PS(reg.Z30, zr[24+r%4], zr[2*r])
		a.VFMADD231PS(reg.Z31, zr[24+r%4], zr[2*r+1])
	}
	// Broadcasts run two rows ahead of the multiply-adds.
	bc(0)
	bc(1)
	for r := 0; r < 12; r++ {
		fma(r)
		if r+2 < 12 {
			bc(r + 2)
		}
	}
}

// zeroAcc clears the 24 accumulators Z0-Z23.
func (a *asm) zeroAcc() {
	for i := 0; i < 24; i++ {
		a.VPXORD(zr[i], zr[i], zr[i])
	}
}

// accAdd adds the tile buffer at DI (row r at 128r bytes) to the
// accumulators.
func (a *asm) accAdd() {
	for r := 0; r < 12; r++ {
		a.VADDPS(mem(reg.RDI, r*128), zr[2*r], zr[2*r])
		a.VADDPS(mem(reg.RDI, r*128+64), zr[2*r+1], zr[2*r+1])
	}
}

// accStore stores the accumulators to the tile buffer at DI.
func (a *asm) accStore() {
	for r := 0; r < 12; r++ {
		a.VMOVUPS(zr[2*r], mem(reg.RDI, r*128))
		a.VMOVUPS(zr[2*r+1], mem(reg.RDI, r*128+64))
	}
}

// accEpilogue adds the tile buffer at DI to the accumulators if the
// register add is not zero, then stores them there.
func (a *asm) accEpilogue(add reg.Register) {
	a.TESTQ(add, add)
	a.JEQ(label("store"))
	a.accAdd()

	a.Label("store")
	a.accStore()
	a.VZEROUPPER()
	a.RET()
}

func gemm12x32Z(a *asm) {
	a.text("gemm12x32Z", attr.NOSPLIT,
		"func(w, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)",
		"Computes the 12-row × 32-token tile s[r][t] = Σ_{i<k} W[r][i]·xp[32i + t],",
		"with W in tile layout at w, over one reduction chunk and stores it to",
		"buf (row r at buf[32r]), adding what buf held when add ≠ 0. While it",
		"computes, it prefetches npf cache lines into L2 (one per 4 elements of",
		"k): the lines of segments pfseg bytes long that start pfstride bytes",
		"apart at pf, from byte pfoff of the first one on. That is where the next",
		"chunk of weights is read from.")
	a.load("w", reg.R8)
	a.load("xp", reg.RSI)
	a.load("k", reg.RCX)
	a.load("pf", reg.R12)
	a.load("pfoff", reg.R14)
	a.load("npf", reg.R13)
	a.ADDQ(imm(192), reg.R8)
	a.zeroAcc()
	a.MOVQ(reg.RCX, reg.RDX)
	a.SHRQ(imm(3), reg.RDX)
	a.JZ(label("tail"))

	// The prefetch of one line per 4 elements of k is amxPrefetch's
	// (same registers, same arguments).
	a.Label("loop8")
	for j := 0; j < 8; j++ {
		if j%4 == 0 {
			a.amxPrefetch()
		}
		a.kstep(j)
	}
	a.ADDQ(imm(1024), reg.RSI)
	a.ADDQ(imm(384), reg.R8)
	a.DECQ(reg.RDX)
	a.JNZ(label("loop8"))

	a.Label("tail")
	a.ANDQ(imm(7), reg.RCX)
	a.JZ(label("epilogue"))

	a.Label("loop1")
	a.kstep(0)
	a.ADDQ(imm(128), reg.RSI)
	a.ADDQ(imm(4), reg.R8)
	a.DECQ(reg.RCX)
	a.JNZ(label("loop1"))

	a.Label("epilogue")
	a.load("buf", reg.RDI)
	a.load("add", reg.RAX)
	a.accEpilogue(reg.RAX)
}

// wpair writes rows 2p and 2p+1 (p < 6) of a block at disp(R8), 8
// elements of each as 16 float32s, from the source rows of gemm12x32ZW,
// through Z28 (p even) or Z29.
func (a *asm) wpair(t string, p, disp int) {
	z, y, x := zr[28+p%2], yr[28+p%2], xr[28+p%2]
	// Rows 0-11 of the source are at R9, R10, R11, AX (rows 0, 3, 6, 9)
	// plus 0, 1 or 2 times BX.
	row := func(r int) operand.Mem {
		base := []reg.Register{reg.R9, reg.R10, reg.R11, reg.RAX}[r/3]
		if r%3 == 0 {
			return operand.Mem{Base: base}
		}
		return operand.Mem{Base: base, Index: reg.RBX, Scale: uint8(r % 3)}
	}
	lo, hi := row(2*p), row(2*p+1)
	switch t {
	case "F16":
		a.VMOVDQU32(lo, x)
		a.VINSERTI32X4(imm(1), hi, z, z)
		a.VCVTPH2PS(y, z)
	case "BF16":
		a.VMOVDQU32(lo, x)
		a.VINSERTI32X4(imm(1), hi, z, z)
		a.VPMOVZXWD(y, z)
		a.VPSLLD(imm(16), z, z)
	default:
		a.VMOVUPS(lo, y)
		a.VINSERTF32X8(imm(1), hi, z, z)
	}
	a.VMOVUPS(z, mem(reg.R8, disp))
}

// gemm12x32ZW generates gemm12x32ZW<t>: the first panel of a tile converts
// the 12 rows' weights to the tile layout itself, a block of 8 elements
// ahead of the one it multiplies, instead of widenTile<t>Z doing it in a
// pass of its own whose loads wait for the weights: here the loads'
// latency hides under the multiply-adds of the block before.
func gemm12x32ZW(a *asm, t string) {
	what := map[string]string{"F16": "float16", "BF16": "bfloat16", "F32": "float32"}[t]
	es := map[string]int{"F16": 2, "BF16": 2, "F32": 4}[t]
	a.text("gemm12x32ZW"+t, attr.NOSPLIT,
		"func(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)",
		"Is gemm12x32Z for k a positive multiple of 8 with the tile at w written",
		fmt.Sprintf("first, from 12 rows of %s weights rb bytes apart at src, as", what),
		fmt.Sprintf("widenTile%sZ writes it.", t))
	a.load("w", reg.R8)
	a.load("src", reg.R9)
	a.load("rb", reg.RBX)
	a.load("xp", reg.RSI)
	a.load("k", reg.RDX)
	a.load("pf", reg.R12)
	a.load("pfoff", reg.R14)
	a.load("npf", reg.R13)
	// R10, R11, AX: rows 3, 6, 9.
	var prev reg.Register = reg.R9
	for _, r := range []reg.Register{reg.R10, reg.R11, reg.RAX} {
		a.LEAQ(operand.Mem{Base: prev, Index: reg.RBX, Scale: 2}, r)
		a.ADDQ(reg.RBX, r)
		prev = r
	}
	a.ADDQ(imm(192), reg.R8)
	a.SHRQ(imm(3), reg.RDX)
	for p := 0; p < 6; p++ {
		a.wpair(t, p, 64*p-192)
	}
	a.zeroAcc()
	a.DECQ(reg.RDX)
	a.JZ(label("last"))

	a.Label("loop8")
	for _, r := range []reg.Register{reg.R9, reg.R10, reg.R11, reg.RAX} {
		a.ADDQ(imm(8*es), r)
	}
	// The next block's pairs go between the k steps, the prefetches
	// where gemm12x32Z has them.
	a.amxPrefetch()
	for j := 0; j < 8; j++ {
		if j == 4 {
			a.amxPrefetch()
		}
		if j >= 4 && j < 7 {
			a.wpair(t, j-1, 64*(j-1)+192)
		}
		a.kstep(j)
		if j < 3 {
			a.wpair(t, j, 64*j+192)
		}
	}
	a.ADDQ(imm(1024), reg.RSI)
	a.ADDQ(imm(384), reg.R8)
	a.DECQ(reg.RDX)
	a.JNZ(label("loop8"))

	a.Label("last")
	for j := 0; j < 8; j++ {
		if j%4 == 0 {
			a.amxPrefetch()
		}
		a.kstep(j)
	}
	a.load("buf", reg.RDI)
	a.load("add", reg.RCX)
	a.accEpilogue(reg.RCX)
}

func unpanelZ(a *asm, iota32 operand.Mem) {
	a.text("unpanelZ", attr.NOSPLIT,
		"func(dst *float32, ldd uintptr, src *float32, rows, ntok, acc int)",
		"dst[t·ldd/4 + r] (+)= src[32r + t] for r < rows and t < ntok: the sums of",
		"a block's tiles (rows of 32 tokens, consecutive) into the token-major",
		"output, 16 rows per gather; with acc ≠ 0 added to dst.")
	a.load("dst", reg.RDI)
	a.load("ldd", reg.RBX)
	a.load("src", reg.RSI)
	a.load("rows", reg.RCX)
	a.load("ntok", reg.R8)
	a.load("acc", reg.RAX)
	a.Comment("Z30: byte offsets 128·l of rows l = 0..15 in src.")
	a.VMOVDQU32(iota32, reg.Z30)
	a.VPSLLD(imm(7), reg.Z30, reg.Z30)
	a.Comment("K2: the rows of the last group of 16.")
	a.MOVQ(reg.RCX, reg.R9)
	a.ANDQ(imm(15), reg.R9)
	a.MOVL(operand.I32(-1), reg.R10L)
	a.BZHIQ(reg.R9, reg.R10, reg.R10)
	a.KMOVW(reg.R10L, reg.K2)
	a.SHRQ(imm(4), reg.RCX) // full groups
	a.TESTQ(reg.R8, reg.R8)
	a.JEQ(label("udone"))

	a.Label("utok")
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.RDX)
	a.MOVQ(reg.RCX, reg.R9)
	a.TESTQ(reg.R9, reg.R9)
	a.JEQ(label("utail"))

	gather := operand.Mem{Base: reg.R11, Index: reg.Z30, Scale: 1}
	a.Label("ugroup")
	a.KXNORW(reg.K0, reg.K0, reg.K1)
	a.VGATHERDPS(gather, reg.K1, reg.Z0)
	a.TESTQ(reg.RAX, reg.RAX)
	a.JEQ(label("uset"))
	a.VADDPS(mem(reg.RDX, 0), reg.Z0, reg.Z0)
	a.VMOVUPS(reg.Z0, mem(reg.RDX, 0))
	a.JMP(label("unextg"))

	a.Label("uset")
	a.VMOVUPS(reg.Z0, mem(reg.RDX, 0))

	a.Label("unextg")
	a.ADDQ(imm(2048), reg.R11)
	a.ADDQ(imm(64), reg.RDX)
	a.DECQ(reg.R9)
	a.JNZ(label("ugroup"))

	a.Label("utail")
	a.KORTESTW(reg.K2, reg.K2)
	a.JEQ(label("unext"))
	a.KMOVW(reg.K2, reg.K1)
	a.VGATHERDPS(gather, reg.K1, reg.Z0)
	a.TESTQ(reg.RAX, reg.RAX)
	a.JEQ(label("ustore"))
	a.VMOVUPS_Z(mem(reg.RDX, 0), reg.K2, reg.Z1)
	a.VADDPS(reg.Z1, reg.Z0, reg.Z0)

	a.Label("ustore")
	a.VMOVUPS(reg.Z0, reg.K2, mem(reg.RDX, 0))

	a.Label("unext")
	a.ADDQ(imm(4), reg.RSI)
	a.ADDQ(reg.RBX, reg.RDI)
	a.DECQ(reg.R8)
	a.JNZ(label("utok"))

	a.Label("udone")
	a.VZEROUPPER()
	a.RET()
}

func packPanelZ(a *asm, iota32 operand.Mem) {
	a.text("packPanelZ", attr.NOSPLIT,
		"func(dst, x *float32, ld, cols, ntok int)",
		"dst[32c + t] = x[t·ld + c] for c < cols and t < 32 (0 for t ≥ ntok).")
	a.load("dst", reg.RDI)
	a.load("x", reg.RSI)
	a.load("ld", reg.RBX)
	a.load("cols", reg.RCX)
	a.load("ntok", reg.RDX)
	a.SHLQ(imm(2), reg.RBX)
	a.VPBROADCASTD(reg.EBX, reg.Z26)
	a.VMOVDQU32(iota32, reg.Z24)
	a.VMOVDQU32(iota32.Offset(64), reg.Z25)
	a.VPMULLD(reg.Z26, reg.Z24, reg.Z24) // byte offsets of tokens 0-15
	a.VPMULLD(reg.Z26, reg.Z25, reg.Z25) // and 16-31
	a.MOVL(operand.I32(-1), reg.R12L)
	a.BZHIQ(reg.RDX, reg.R12, reg.R12)
	a.KMOVW(reg.R12L, reg.K1)
	a.SHRQ(imm(16), reg.R12)
	a.KMOVW(reg.R12L, reg.K2)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))

	a.Label("loop")
	a.KMOVW(reg.K1, reg.K3)
	a.KMOVW(reg.K2, reg.K4)
	a.VPXORD(reg.Z0, reg.Z0, reg.Z0)
	a.VPXORD(reg.Z1, reg.Z1, reg.Z1)
	a.VGATHERDPS(operand.Mem{Base: reg.RSI, Index: reg.Z24, Scale: 1}, reg.K3, reg.Z0)
	a.VGATHERDPS(operand.Mem{Base: reg.RSI, Index: reg.Z25, Scale: 1}, reg.K4, reg.Z1)
	a.VMOVUPS(reg.Z0, mem(reg.RDI, 0))
	a.VMOVUPS(reg.Z1, mem(reg.RDI, 64))
	a.ADDQ(imm(4), reg.RSI)
	a.ADDQ(imm(128), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("loop"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// transpose16Z transposes the 16×16 floats in Z0-Z15 (row i in Zi) into
// Z0-Z15 (column j in Zj), through Z16-Z31: pairs of rows interleaved by
// floats, then by pairs of floats, then 128-bit lanes twice.
func (a *asm) transpose16Z() {
	for i := 0; i < 8; i++ {
		a.VUNPCKLPS(zr[2*i+1], zr[2*i], zr[16+2*i])
		a.VUNPCKHPS(zr[2*i+1], zr[2*i], zr[17+2*i])
	}
	for g := 0; g < 4; g++ {
		for h := 0; h < 2; h++ {
			a.VUNPCKLPD(zr[18+4*g+h], zr[16+4*g+h], zr[4*g+2*h])
			a.VUNPCKHPD(zr[18+4*g+h], zr[16+4*g+h], zr[4*g+2*h+1])
		}
	}
	for j := 0; j < 4; j++ {
		for h := 0; h < 2; h++ {
			for s, imm := range []uint8{0x44, 0xee} {
				a.VSHUFF32X4(operand.U8(imm), zr[8*h+4+j], zr[8*h+j], zr[16+4*j+2*h+s])
			}
		}
	}
	for j := 0; j < 4; j++ {
		for h := 0; h < 2; h++ {
			for s, imm := range []uint8{0x88, 0xdd} {
				a.VSHUFF32X4(operand.U8(imm), zr[18+4*j+h], zr[16+4*j+h], zr[j+4*(2*h+s)])
			}
		}
	}
}

func packPanel16Z(a *asm) {
	a.text("packPanel16Z", attr.NOSPLIT,
		"func(dst, x *float32, ld uintptr, groups int)",
		"Is packPanelZ for 32 tokens (ld bytes apart) and 16·groups elements,",
		"by 16×16 transposes instead of gathers: dst[32c + t] = x[t·ld/4 + c].")
	a.load("dst", reg.RDI)
	a.load("x", reg.R8)
	a.load("ld", reg.RBX)
	a.load("groups", reg.RCX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JEQ(label("pdone"))

	a.Label("pgroup")
	a.MOVQ(reg.R8, reg.RSI)
	a.XORQ(reg.RDX, reg.RDX)

	a.Label("phalf")
	for i := 0; i < 16; i++ {
		a.VMOVUPS(mem(reg.RSI, 0), zr[i])
		a.ADDQ(reg.RBX, reg.RSI)
	}
	a.transpose16Z()
	for i := 0; i < 16; i++ {
		a.VMOVUPS(zr[i], operand.Mem{Base: reg.RDI, Index: reg.RDX, Scale: 1, Disp: 128 * i})
	}
	a.ADDQ(imm(64), reg.RDX)
	a.CMPQ(reg.RDX, imm(128))
	a.JB(label("phalf"))
	a.ADDQ(imm(64), reg.R8)
	a.ADDQ(imm(2048), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("pgroup"))

	a.Label("pdone")
	a.VZEROUPPER()
	a.RET()
}

func unpanel16Z(a *asm) {
	a.text("unpanel16Z", attr.NOSPLIT,
		"func(dst *float32, ldd uintptr, src *float32, groups, acc int)",
		"Is unpanelZ for 32 tokens and 16·groups rows, by 16×16 transposes",
		"instead of gathers: dst[t·ldd/4 + r] (+)= src[32r + t].")
	a.load("dst", reg.RDI)
	a.load("ldd", reg.RBX)
	a.load("src", reg.RSI)
	a.load("groups", reg.RCX)
	a.load("acc", reg.RAX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JEQ(label("udone16"))

	a.Label("ugroup16")
	a.MOVQ(reg.RDI, reg.RDX)
	a.XORQ(reg.R9, reg.R9)

	a.Label("uhalf16")
	for i := 0; i < 16; i++ {
		a.VMOVUPS(operand.Mem{Base: reg.RSI, Index: reg.R9, Scale: 1, Disp: 128 * i}, zr[i])
	}
	a.transpose16Z()
	a.TESTQ(reg.RAX, reg.RAX)
	a.JEQ(label("ustore16"))
	for i := 0; i < 16; i++ {
		a.VADDPS(mem(reg.RDX, 0), zr[i], zr[i])
		a.VMOVUPS(zr[i], mem(reg.RDX, 0))
		a.ADDQ(reg.RBX, reg.RDX)
	}
	a.JMP(label("unext16"))

	a.Label("ustore16")
	for i := 0; i < 16; i++ {
		a.VMOVUPS(zr[i], mem(reg.RDX, 0))
		a.ADDQ(reg.RBX, reg.RDX)
	}

	a.Label("unext16")
	a.ADDQ(imm(64), reg.R9)
	a.CMPQ(reg.R9, imm(128))
	a.JB(label("uhalf16"))
	a.ADDQ(imm(64), reg.RDI)
	a.ADDQ(imm(2048), reg.RSI)
	a.DECQ(reg.RCX)
	a.JNZ(label("ugroup16"))

	a.Label("udone16")
	a.VZEROUPPER()
	a.RET()
}
