package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// legacyy generates legacyy_amd64.s: Q5_0 weights times Q8_0 activations,
// Q4_1 and Q5_1 weights times Q8_1 activations (f16 d, f16 s = d·Σq, 32
// int8 quants), AVX2 + FMA + F16C, and the same with AVX-512 VNNI at 256
// bits; 1 to 4 rows times 1 to 4 tokens at a time (lyShapes), and one
// token at AVX-512 VNNI at 512 bits, two rows per register (gemvZ).
//
// They sum in the order of kernels/quant's DotQ5_0Q8_0, DotQ4_1Q8_1 and
// DotQ5_1Q8_1 (ggml's AVX2 ggml_vec_dot_q5_0_q8_0, _q4_1_q8_1 and
// _q5_1_q8_1, and tinyBLAS's Q5_0 for several tokens, which sums alike):
// per block the values are unpacked to 32 bytes (element e at byte e: the
// low nibbles, then the high ones, each or'ed with its fifth bit from qh),
// VPMADDUBSW and VPMADDWD (by int16 ones), or VPDPBUSD, sum their products
// with the quants exactly into int32 lane e/4, and the eight float32
// accumulators of a row and token gain dx·dy·lane in one VFMADD231PS; the
// accumulators are reduced as hsum_float_8. Q5_0's values q-16 are
// signed, so they go through VPABSB and VPSIGNB, as in ggml (exact for
// activation quants in [-127, 127], all Q8_0 quantizing writes); Q4_1's
// and Q5_1's are unsigned and multiply the quants directly. No int16 pair
// can saturate (at most 2·31·127).
//
// Q4_1 and Q5_1 add the minimums' term summs = m·s + summs beside the
// lanes, ggml's scalar fused multiply-add: m·s, a product of two f16s, is
// exact in float32, so the kernels add it with VADDPS. One VCVTPH2PS
// turns a weight block's [d, m] into floats and another an activation
// block's [d, s]; their product [dx·dy, m·s] is both the broadcast scale
// (lane 0) and the term added to lane 1 of the row and token's summs
// register.
//
// Registers: SI stream 0's row, DI token 0's activations, R8 ldw, BX ldx,
// R10 ldy, CX nb, DX y, R14 the rows left in a stream, R11 and R12 the
// current weight and activation blocks, R13 the blocks left (see gemv for
// R9, AX and the streams' strides); Y0..Y3 the accumulators of rows ×
// tokens, X4..X7 their summs, Y8 a scale, X9 the weight block's [d, m],
// Y10 int16 ones, Y11 scratch, Y12 |values| (Q5_0) or the activation
// block's [d, s] (one token, Q4_1 and Q5_1; X4 for Q5_0), Y13 the values,
// Y14 scratch, Y15 0x0f bytes, Y16 the fifth bits' bytes (VNNI), Y30
// the GF2P8AFFINEQB nibble matrices (VNNI).
func legacyy(a *asm) {
	g := lyGlobals{
		shr:   a.global("lyshr", 0, 0, 0x0000000400000004, 0x0000000400000004),
		shuf:  a.global("lyshuf", 0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303),
		sel:   a.global("lysel", 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201),
		f0:    a.global("lyf0", 0xf0f0f0f0f0f0f0f0, 0xf0f0f0f0f0f0f0f0, 0xf0f0f0f0f0f0f0f0, 0xf0f0f0f0f0f0f0f0),
		b10:   a.global("ly10", 0x1010101010101010, 0x1010101010101010, 0x1010101010101010, 0x1010101010101010),
		gf:    a.global("lygf", 0x0102040800000000, 0x0102040800000000, 0x1020408000000000, 0x1020408000000000),
		perm:  a.global("lyperm", lyPerm()...),
		tperm: a.global("lytperm", lyTPerm()...),
	}
	// Q5_0's prefill strips for the IQ4_NL tiles (iq4tile.go), which sum
	// in the same order.
	stripUnpack(a, operand.Mem{}, a.global("lyilv",
		0x0000001000000000, 0x0000001100000001, 0x0000001200000002, 0x0000001300000003,
		0x0000001400000004, 0x0000001500000005, 0x0000001600000006, 0x0000001700000007), iq4Pairs, true)
	// Q5_0's AVX2 prefill tiles, iq4TileY's for Q5_0 (iq4tiley.go).
	yg := yGlobals{
		ones: a.global("lyones", 0x0001000100010001, 0x0001000100010001, 0x0001000100010001, 0x0001000100010001),
		nib:  a.global("lynib", 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f, 0x0f0f0f0f0f0f0f0f),
	}
	for t := 1; t <= iq4MaxTokens; t++ {
		a.stripTileY(t, operand.Mem{}, g.shr, yg, &q5TileY{shuf: g.shuf, sel: g.sel, f0: g.f0})
	}
	for _, k := range []lyKind{
		{"Q5_0", 22, 2, 6, false, true},
		{"Q4_1", 20, -1, 4, true, false},
		{"Q5_1", 24, 4, 8, true, false},
	} {
		for _, vnni := range []bool{false, true} {
			for _, sh := range lyShapes[vnni] {
				g.gemv(a, k, sh[0], sh[1], vnni)
			}
		}
		// Eight rows (four register pairs, eight streams) ran at 80% of
		// four's speed on the decode matmuls, out of cache.
		g.gemvZ(a, k, 4)
		if k.min {
			for nr := 1; nr <= 2; nr++ {
				for nt := 1; nt <= lyTileTokens; nt++ {
					g.tile(a, k, nr, nt)
				}
			}
		}
	}
}

// lyGlobals are the kernels' read-only tables: the dword shifts 0 (low
// half) and 4 (high half) that take the nibbles of elements 0-15 and 16-31
// from one broadcast 16-byte load; the VPSHUFB mask that spreads byte i/8
// of qh to byte i; the bit of each byte; 0xf0 and 0x10 bytes; the
// GF2P8AFFINEQB matrices of x & 0x0f (low half) and x >> 4 (high half);
// the VPERMPS indices that spread floats 4p and 4p+2 over dwords 0-7 and
// 8-15, for p = 0..3 (lyPerm), and those of floats 2k and 2k+1 (lyTPerm).
type lyGlobals struct {
	shr, shuf, sel, f0, b10, gf, perm, tperm operand.Mem
}

// lyKind is a weight type: block bytes, the offsets of qh (-1: none) and
// of the nibbles, whether it has a minimum (and Q8_1 activations), and
// whether its values are signed (q-16).
type lyKind struct {
	name        string
	bs, qh, qs  int
	min, signed bool
}

// lyShapes are the kernels' rows × tokens: four rows at a time for one
// token (AVX2; gemvZ's at AVX-512 VNNI) and two for more, so that at least four accumulator chains run
// side by side and a block's unpacked values and an activation block's
// scales serve several products, and one row for the rest of the rows.
// AVX2's 16 registers hold at most 4 accumulators (and 4 summs): its
// kernels of 3 and 4 tokens take one row. The rows of a kernel of nr rows
// are nr streams of nrows/nr consecutive rows (rows i, q+i, 2q+i, 3q+i
// side by side), so that the weights are read in long sequential runs:
// rows taken four at a time in order read short runs that the hardware
// prefetchers do not follow, and ran at half the speed.
var lyShapes = map[bool][][2]int{
	false: {{4, 1}, {1, 1}, {2, 2}, {1, 2}, {1, 3}, {1, 4}},
	true:  {{1, 1}, {2, 2}, {1, 2}, {2, 3}, {1, 3}, {2, 4}, {1, 4}},
}

// gemv emits gemv<name>r<nr>t<nt>AVX2 (nr rows times nt tokens at a time)
// or, with vnni, gemv<name>r<nr>t<nt>VNNI: the same sums with AVX-512 (VL,
// BW, VNNI) at 256 bits, the fifth bits added under a mask loaded from qh
// (Q5_0's 0xf0 where a bit is clear, Q5_1's 0x10 where it is set; Y16
// holds those bytes), VPDPBUSD in place of VPMADDUBSW and VPMADDWD, and
// the registers above Y15.
//
// Stream r's current row is at R11 + r·S, its outputs at DX + r·4q (four
// streams: S in R9, 3S in BX, 4q in R10, 12q in AX; two streams: S in R9,
// stream 1's outputs at CX); token t's activation block at R12 + t·ldx
// (3·ldx in AX, with fewer than four streams) and its outputs t·ldy
// after its stream's (R13 scratch for t = 3).
func (g lyGlobals) gemv(a *asm, k lyKind, nr, nt int, vnni bool) {
	act := "Q8_0"
	ab, aq := 34, 2 // activation block bytes, offset of its quants
	if k.min {
		act, ab, aq = "Q8_1", 36, 4
	}
	suffix := "AVX2"
	if vnni {
		suffix = "VNNI"
	}
	n := nr * nt
	// Registers: the accumulators Y<i> of row r, token t (i = r·nt+t),
	// their summs, and the activation blocks' [d, s] when they are
	// converted once for all rows (shared).
	summs := func(i int) reg.VecPhysical { return xr[4+i] }
	if vnni {
		summs = func(i int) reg.VecPhysical { return xr[22+i] }
	}
	shared := nt == 1 || vnni && nr > 1
	xd := func(t int) reg.VecPhysical {
		switch {
		case vnni && k.min:
			return xr[17+t]
		case vnni:
			return xr[22+t]
		case k.min:
			return reg.X12
		}
		return reg.X4
	}
	// With VNNI and several rows, Q5_0's products are summed from the
	// unsigned values q (0..31) on top of -16·Σ4 x, computed once per
	// activation block for all the rows (Y17+t by token; Y21 zero):
	// exactly Σ4 (q-16)·x, without VPABSB and VPSIGNB.
	bias := vnni && k.signed && nr > 1

	a.text(fmt.Sprintf("gemv%sr%dt%d%s", k.name, nr, nt, suffix), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)",
		fmt.Sprintf("For each of nrows rows r of nb %s blocks (ldw bytes apart; nrows a", k.name),
		fmt.Sprintf("multiple of %d) and each of %d tokens t (rows of nb %s blocks at x,", nr, nt, act),
		"ldx bytes apart), y[t·ldy/4 + r] = w_r·x_t (or += when acc is not 0, one",
		"addition after the sum); nb > 0.")
	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("x", reg.RDI)
	a.load("ldx", reg.RBX)
	a.load("y", reg.RDX)
	a.load("ldy", reg.R10)
	a.load("nrows", reg.R14)
	a.bconst(0x0f, 15) // AX scratch
	if vnni && k.qh >= 0 {
		b := uint32(0x10101010)
		if k.signed && !bias {
			b = 0xf0f0f0f0
		}
		a.MOVL(operand.U32(b), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Y16)
	}
	if !vnni {
		a.VPCMPEQW(reg.Y10, reg.Y10, reg.Y10)
		a.VPSRLW(operand.U8(15), reg.Y10, reg.Y10)
	} else {
		a.VMOVDQU64(g.gf, reg.Y30)
	}
	if bias {
		a.VPXOR(reg.Y11, reg.Y11, reg.Y11)
		a.VMOVDQA32(reg.Y11, reg.Y21)
	}
	switch nr {
	case 4:
		a.SHRQ(operand.U8(2), reg.R14)
		a.MOVQ(reg.R14, reg.R9)
		a.IMULQ(reg.R8, reg.R9)
		a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.R9, Scale: 2}, reg.RBX)
		a.MOVQ(reg.R14, reg.R10)
		a.SHLQ(operand.U8(2), reg.R10)
		a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.R10, Scale: 2}, reg.RAX)
	case 2:
		a.SHRQ(operand.U8(1), reg.R14)
		a.MOVQ(reg.R14, reg.R9)
		a.IMULQ(reg.R8, reg.R9)
		a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.R14, Scale: 4}, reg.RCX)
		a.LEAQ(operand.Mem{Base: reg.RBX, Index: reg.RBX, Scale: 2}, reg.RAX)
	default:
		a.LEAQ(operand.Mem{Base: reg.RBX, Index: reg.RBX, Scale: 2}, reg.RAX)
	}
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	// row is disp bytes into stream r's current weight block.
	row := func(r, disp int) operand.Mem {
		switch r {
		case 1:
			return operand.Mem{Base: reg.R11, Index: reg.R9, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.R11, Index: reg.R9, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: reg.R11, Index: reg.RBX, Scale: 1, Disp: disp}
		}
		return mem(reg.R11, disp)
	}
	// tok is disp bytes into token t's current activation block.
	tok := func(t, disp int) operand.Mem {
		switch t {
		case 1:
			return operand.Mem{Base: reg.R12, Index: reg.RBX, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.R12, Index: reg.RBX, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: reg.R12, Index: reg.RAX, Scale: 1, Disp: disp}
		}
		return mem(reg.R12, disp)
	}
	// out is token t's output of stream r's current row; it may set R13.
	out := func(r, t int) operand.Mem {
		if nr == 4 {
			switch r {
			case 1:
				return operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 1}
			case 2:
				return operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 2}
			case 3:
				return operand.Mem{Base: reg.RDX, Index: reg.RAX, Scale: 1}
			}
			return mem(reg.RDX, 0)
		}
		base := reg.RDX
		if r == 1 {
			base = reg.RCX
		}
		switch t {
		case 1:
			return operand.Mem{Base: base, Index: reg.R10, Scale: 1}
		case 2:
			return operand.Mem{Base: base, Index: reg.R10, Scale: 2}
		case 3:
			a.LEAQ(operand.Mem{Base: base, Index: reg.R10, Scale: 2}, reg.R13)
			return operand.Mem{Base: reg.R13, Index: reg.R10, Scale: 1}
		}
		return mem(base, 0)
	}

	a.Label("row")
	for i := range n {
		a.VXORPS(yr[i], yr[i], yr[i])
		if k.min {
			a.VXORPS(summs(i), summs(i), summs(i))
		}
	}
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(a.arg("nb"), reg.R13)

	a.Label("blk")
	for t := range nt {
		if shared {
			a.VCVTPH2PS(tok(t, 0), xd(t))
		}
		if bias {
			a.VMOVDQA32(reg.Y21, yr[17+t])
			a.VPDPBUSD(tok(t, aq), reg.Y16, yr[17+t])
			a.VPSUBD(yr[17+t], reg.Y21, yr[17+t])
		}
	}
	for r := range nr {
		g.values(a, k, vnni, bias, func(disp int) operand.Mem { return row(r, disp) })
		for t := range nt {
			i := r*nt + t
			src := reg.X8
			if shared {
				src = xd(t)
			} else {
				a.VCVTPH2PS(tok(t, 0), src)
			}
			if k.min {
				a.VMULPS(reg.X9, src, reg.X8)
				a.VADDPS(reg.X8, summs(i), summs(i))
			} else {
				a.VMULSS(reg.X9, src, reg.X8)
			}
			a.VBROADCASTSS(reg.X8, reg.Y8)
			switch {
			case bias:
				a.VMOVDQA32(yr[17+t], reg.Y14)
				a.VPDPBUSD(tok(t, aq), reg.Y13, reg.Y14)
				a.VCVTDQ2PS(reg.Y14, reg.Y14)
			case vnni && k.signed:
				a.VMOVDQU(tok(t, aq), reg.Y14)
				a.VPSIGNB(reg.Y13, reg.Y14, reg.Y14)
				a.VPXOR(reg.Y11, reg.Y11, reg.Y11)
				a.VPDPBUSD(reg.Y14, reg.Y12, reg.Y11)
				a.VCVTDQ2PS(reg.Y11, reg.Y14)
			case vnni:
				a.VPXOR(reg.Y14, reg.Y14, reg.Y14)
				a.VPDPBUSD(tok(t, aq), reg.Y13, reg.Y14)
				a.VCVTDQ2PS(reg.Y14, reg.Y14)
			case k.signed:
				a.VMOVDQU(tok(t, aq), reg.Y14)
				a.VPSIGNB(reg.Y13, reg.Y14, reg.Y14)
				a.VPMADDUBSW(reg.Y14, reg.Y12, reg.Y14)
				a.VPMADDWD(reg.Y10, reg.Y14, reg.Y14)
				a.VCVTDQ2PS(reg.Y14, reg.Y14)
			default:
				a.VPMADDUBSW(tok(t, aq), reg.Y13, reg.Y14)
				a.VPMADDWD(reg.Y10, reg.Y14, reg.Y14)
				a.VCVTDQ2PS(reg.Y14, reg.Y14)
			}
			a.VFMADD231PS(reg.Y14, reg.Y8, yr[i])
		}
	}
	a.ADDQ(operand.U8(k.bs), reg.R11)
	a.ADDQ(operand.U8(ab), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	for i := range n {
		a.hsum8y(i, 14, false)
		if k.min {
			a.VMOVSHDUP(summs(i), reg.X14)
			a.VADDSS(reg.X14, xr[i], xr[i])
		}
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	for r := range nr {
		for t := range nt {
			a.VADDSS(out(r, t), xr[r*nt+t], xr[r*nt+t])
		}
	}
	a.Label("store")
	for r := range nr {
		for t := range nt {
			a.VMOVSS(xr[r*nt+t], out(r, t))
		}
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	if nr == 2 {
		a.ADDQ(operand.U8(4), reg.RCX)
	}
	a.ADDQ(reg.R8, reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// values leaves a weight block's values (at m(0)) in Y13, for Q5_0 their
// magnitudes in Y12 (with bias, Q5_0's unsigned q instead), and its f16
// [d, m] as floats in X9 (Y11 scratch).
func (g lyGlobals) values(a *asm, k lyKind, vnni, bias bool, m func(disp int) operand.Mem) {
	a.VBROADCASTI128(m(k.qs), reg.Y13)
	if vnni {
		// Both nibble planes in one GFNI affine step (Y30).
		a.VGF2P8AFFINEQB(operand.U8(0), reg.Y30, reg.Y13, reg.Y13)
	} else {
		a.VPSRLVD(g.shr, reg.Y13, reg.Y13)
		a.VPAND(reg.Y15, reg.Y13, reg.Y13)
	}
	switch {
	case k.qh >= 0 && vnni:
		a.KMOVD(m(k.qh), reg.K1)
		if k.signed && !bias {
			a.KNOTD(reg.K1, reg.K1)
		}
		a.VPADDB(reg.Y16, reg.Y13, reg.K1, reg.Y13)
	case k.qh >= 0:
		// Byte e 0xff where bit e of qh is set (ggml's bytes_from_bits_32),
		// then Q5_0's 0xf0 where it is not (q-16 < 0), Q5_1's 0x10 where
		// it is.
		a.VPBROADCASTD(m(k.qh), reg.Y11)
		a.VPSHUFB(g.shuf, reg.Y11, reg.Y11)
		a.VPAND(g.sel, reg.Y11, reg.Y11)
		a.VPCMPEQB(g.sel, reg.Y11, reg.Y11)
		if k.signed {
			a.VPANDN(g.f0, reg.Y11, reg.Y11)
		} else {
			a.VPAND(g.b10, reg.Y11, reg.Y11)
		}
		a.VPOR(reg.Y11, reg.Y13, reg.Y13)
	}
	if k.signed && !bias {
		a.VPABSB(reg.Y13, reg.Y12)
	}
	a.VCVTPH2PS(m(0), reg.X9)
}

// lyPerm returns the lyperm table: four 64-byte VPERMPS index vectors,
// vector p taking dwords 0-7 from float 4p and 8-15 from float 4p+2.
func lyPerm() []uint64 {
	var v []uint64
	for p := range uint64(4) {
		for i := range 8 {
			f := 4 * p
			if i >= 4 {
				f += 2
			}
			v = append(v, f|f<<32)
		}
	}
	return v
}

// lyTPerm returns the lytperm table of 64-byte VPERMPS index vectors:
// first floats 0 and 2 (the rows' d), then 1 and 3 (their m), over dwords
// 0-7 and 8-15; then for row r and pair k floats 8r+2k and 8r+2k+1.
func lyTPerm() []uint64 {
	var v []uint64
	add := func(a, b uint64) {
		for i := range 8 {
			f := a
			if i >= 4 {
				f = b
			}
			v = append(v, f|f<<32)
		}
	}
	add(0, 2)
	add(1, 3)
	for r := range uint64(2) {
		for k := range uint64(4) {
			add(8*r+2*k, 8*r+2*k+1)
		}
	}
	return v
}

// gemvZ emits gemv<name>r<nr>t1Z (nr 4 or 8), the one-token kernels with
// AVX-512 VNNI at 512 bits: rows in pairs, each pair's two blocks in one
// register (stream 2p's in dwords 0-7, stream 2p+1's in 8-15), so that
// one unpack, VPDPBUSD, VCVTDQ2PS and VFMADD231PS serve two rows. Each
// row's eight lanes see exactly gemv's operations: the same exact int32
// lanes, converted, fused with the same float32 product dx·dy in the same
// order; hsum_float_8 per row at the end. The rows' f16 [d, m] are
// gathered into one register and multiplied by the activation block's
// [dx, s] in one VMULPS (each product the same float32 multiply); Q4_1's
// and Q5_1's summs of row r take lane 2r+1 of Z22.
//
// Registers as gemv's with four streams, and with eight: streams 4-7 at
// CX + 0, S, 2S, 3S, their outputs 16q after those of streams 0-3. Z0-Z3
// the pairs' accumulators, Z9 the rows' scale products (X10 scratch), Z12
// a pair's broadcast scales, Z13 its values, Z14 its lanes, Z17 the
// activation block's [dx, s] repeated, Z18 its quants twice, Z19 Q5_0's
// -16·Σ4 x, Z21 zero, Z24-Z27 the VPERMPS indices, K2 dwords 8-15.
func (g lyGlobals) gemvZ(a *asm, k lyKind, nr int) {
	act := "Q8_0"
	ab, aq := 34, 2
	if k.min {
		act, ab, aq = "Q8_1", 36, 4
	}
	np := nr / 2
	a.text(fmt.Sprintf("gemv%sr%dt1Z", k.name, nr), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)",
		fmt.Sprintf("For each of nrows rows r of nb %s blocks (ldw bytes apart; nrows a", k.name),
		fmt.Sprintf("multiple of %d) and one token (nb %s blocks at x), y[r] = w_r·x (or +=", nr, act),
		"when acc is not 0, one addition after the sum); nb > 0. ldx and ldy",
		"as gemv's.")
	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("x", reg.RDI)
	a.load("y", reg.RDX)
	a.load("nrows", reg.R14)
	if k.qh >= 0 {
		a.MOVL(operand.U32(0x10101010), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z16)
	}
	a.MOVL(operand.U32(0xff00), reg.EAX)
	a.KMOVW(reg.EAX, reg.K2)
	a.VBROADCASTI64X4(g.gf, reg.Z30)
	for p := range np {
		a.VMOVDQU32(g.perm.Offset(64*p), zr[24+p])
	}
	if k.signed {
		a.VPXORD(reg.Z21, reg.Z21, reg.Z21)
	}
	sh := 2
	if nr == 8 {
		sh = 3
	}
	a.SHRQ(operand.U8(sh), reg.R14)
	a.MOVQ(reg.R14, reg.R9)
	a.IMULQ(reg.R8, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.R9, Scale: 2}, reg.RBX)
	a.MOVQ(reg.R14, reg.R10)
	a.SHLQ(operand.U8(2), reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.R10, Scale: 2}, reg.RAX)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	// row is disp bytes into stream r's current weight block, out stream
	// r's output (R13 for streams 4-7, set by the caller).
	idx := func(base reg.Register, r, disp int) operand.Mem {
		switch r % 4 {
		case 1:
			return operand.Mem{Base: base, Index: reg.R9, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: base, Index: reg.R9, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: base, Index: reg.RBX, Scale: 1, Disp: disp}
		}
		return mem(base, disp)
	}
	row := func(r, disp int) operand.Mem {
		if r >= 4 {
			return idx(reg.RCX, r, disp)
		}
		return idx(reg.R11, r, disp)
	}
	out := func(r int) operand.Mem {
		base := reg.RDX
		if r >= 4 {
			base = reg.R13
		}
		switch r % 4 {
		case 1:
			return operand.Mem{Base: base, Index: reg.R10, Scale: 1}
		case 2:
			return operand.Mem{Base: base, Index: reg.R10, Scale: 2}
		case 3:
			return operand.Mem{Base: base, Index: reg.RAX, Scale: 1}
		}
		return mem(base, 0)
	}

	a.Label("row")
	for p := range np {
		a.VPXORD(zr[p], zr[p], zr[p])
	}
	if k.min {
		a.VPXORD(reg.Z22, reg.Z22, reg.Z22)
	}
	a.MOVQ(reg.RSI, reg.R11)
	if nr == 8 {
		a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R9, Scale: 4}, reg.RCX)
	}
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(a.arg("nb"), reg.R13)

	a.Label("blk")
	a.VPBROADCASTD(mem(reg.R12, 0), reg.Y17)
	a.VBROADCASTI64X4(mem(reg.R12, aq), reg.Z18)
	if k.signed {
		a.VPXORD(reg.Z19, reg.Z19, reg.Z19)
		a.VPDPBUSD(reg.Z18, reg.Z16, reg.Z19)
		a.VPSUBD(reg.Z19, reg.Z21, reg.Z19)
	}
	for h := range nr / 4 {
		x := []reg.VecPhysical{reg.X9, reg.X10}[h]
		a.VMOVD(row(4*h, 0), x)
		for r := 1; r < 4; r++ {
			a.VPINSRD(operand.U8(r), row(4*h+r, 0), x, x)
		}
	}
	if nr == 8 {
		a.VINSERTI128(operand.U8(1), reg.X10, reg.Y9, reg.Y9)
		a.VCVTPH2PS(reg.Y17, reg.Z17)
		a.VCVTPH2PS(reg.Y9, reg.Z9)
		a.VMULPS(reg.Z17, reg.Z9, reg.Z9)
		if k.min {
			a.VADDPS(reg.Z9, reg.Z22, reg.Z22)
		}
	} else {
		a.VCVTPH2PS(reg.X17, reg.Y17)
		a.VCVTPH2PS(reg.X9, reg.Y9)
		a.VMULPS(reg.Y17, reg.Y9, reg.Y9)
		if k.min {
			a.VADDPS(reg.Y9, reg.Y22, reg.Y22)
		}
	}
	for p := range np {
		a.VBROADCASTI32X4(row(2*p, k.qs), reg.Z13)
		a.VBROADCASTI32X4(row(2*p+1, k.qs), reg.K2, reg.Z13)
		a.VGF2P8AFFINEQB(operand.U8(0), reg.Z30, reg.Z13, reg.Z13)
		if k.qh >= 0 {
			a.KMOVD(row(2*p, k.qh), reg.K1)
			a.KMOVD(row(2*p+1, k.qh), reg.K3)
			a.KUNPCKDQ(reg.K1, reg.K3, reg.K1)
			a.VPADDB(reg.Z16, reg.Z13, reg.K1, reg.Z13)
		}
		a.VPERMPS(reg.Z9, zr[24+p], reg.Z12)
		if k.signed {
			a.VMOVDQA32(reg.Z19, reg.Z14)
		} else {
			a.VPXORD(reg.Z14, reg.Z14, reg.Z14)
		}
		a.VPDPBUSD(reg.Z18, reg.Z13, reg.Z14)
		a.VCVTDQ2PS(reg.Z14, reg.Z14)
		a.VFMADD231PS(reg.Z14, reg.Z12, zr[p])
	}
	a.ADDQ(operand.U8(k.bs), reg.R11)
	if nr == 8 {
		a.ADDQ(operand.U8(k.bs), reg.RCX)
	}
	a.ADDQ(operand.U8(ab), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	// Row r into Y<r> (pair p's Z<p> holds rows 2p and 2p+1), each reduced
	// as hsum_float_8, plus its summs (X22 and X10-X12: lanes 1 and 3).
	for p := np - 1; p >= 0; p-- {
		a.VEXTRACTF64X4(operand.U8(1), zr[p], yr[2*p+1])
		if p > 0 {
			a.VMOVAPS(yr[p], yr[2*p])
		}
	}
	sm := []reg.VecPhysical{reg.X22, reg.X10, reg.X11, reg.X12}
	if k.min {
		for c := 1; c < np; c++ {
			a.VEXTRACTF32X4(operand.U8(c), reg.Z22, sm[c])
		}
	}
	for r := range nr {
		a.hsum8y(r, 14, false)
		if k.min {
			if r%2 == 0 {
				a.VMOVSHDUP(sm[r/2], reg.X14)
			} else {
				a.VPERMILPS(operand.U8(3), sm[r/2], reg.X14)
			}
			a.VADDSS(reg.X14, xr[r], xr[r])
		}
	}
	if nr == 8 {
		a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 4}, reg.R13)
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	for r := range nr {
		a.VADDSS(out(r), xr[r], xr[r])
	}
	a.Label("store")
	for r := range nr {
		a.VMOVSS(xr[r], out(r))
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.R8, reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// lyTileTokens is the most tokens of a tile (tile), the tokens of a group
// of layout T.
const lyTileTokens = 8

// tile emits tile<name>r<nr>t<nt>, Q4_1's or Q5_1's prefill with AVX-512
// VNNI: nr (1 or 2) rows times nt tokens of activations in layout T
// (legacyy_amd64.go: per block and group of 8 tokens, their dx and s as
// float32s, then their 32 quants each), a row's tokens 2k and 2k+1 in one
// 512-bit accumulator (dwords 0-7 and 8-15). Each row and token's sum is
// gemv's, operation for operation: per block its values meet the token's
// quants in VPDPBUSD (both tokens' 64 bytes in one), VCVTDQ2PS makes the
// exact lanes floats, and VFMADD231PS adds them times the float32 product
// d·dx, computed for both rows and the block's eight tokens in one VMULPS
// and spread by VPERMPS; summs = m·s + summs for both rows and the eight
// tokens in one VFMADD231PS (ggml's scalar fma per row and token); at the
// end hsum_float_8, then + summs. Odd nt: the last pair's second token
// (zero activations or another token's) is computed and dropped.
//
// Registers: SI the current rows, R8 ldw, DI the group's activations,
// DX y, R10 ldy (3·ldy in AX), R14 the row groups left, R11 and R12 the
// current blocks, R13 the blocks left; Z0..Z7 the accumulators (row r,
// pair k: r·np+k), Z16 the summs (row r, token t: float 8r+t), Z18 dx or
// s twice, Z19 scratch and a pair's scales, Z20 a row's values (twice),
// Z21 lanes, Z22 the products d·dx (float 8r+t), Z23 0x10 bytes (Q5_1),
// Z24 and Z25 the VPERMPS indices of the rows' d and m, Z8..Z15 those of
// row r, pair k (Z8+4r+k; reloaded per row group: after the loop Y8..Y15
// hold the odd tokens' halves, Y17 row 1's summs), Z30 the
// GF2P8AFFINEQB matrices.
func (g lyGlobals) tile(a *asm, k lyKind, nr, nt int) {
	a.text(fmt.Sprintf("tile%sr%dt%d", k.name, nr, nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)",
		fmt.Sprintf("For each of nrows rows r of nb %s blocks (ldw bytes apart; nrows a", k.name),
		fmt.Sprintf("multiple of %d) and each of %d tokens t (a group of layout T at x),", nr, nt),
		"y[t·ldy/4 + r] = w_r·x_t (or += when acc is not 0, one addition after the",
		"sum); nb > 0.")
	np := (nt + 1) / 2
	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("x", reg.RDI)
	a.load("y", reg.RDX)
	a.load("ldy", reg.R10)
	a.load("nrows", reg.R14)
	if k.qh >= 0 {
		a.MOVL(operand.U32(0x10101010), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z23)
	}
	a.VBROADCASTI64X4(g.gf, reg.Z30)
	a.VMOVDQU32(g.tperm, reg.Z24)
	a.VMOVDQU32(g.tperm.Offset(64), reg.Z25)
	if nr == 2 {
		a.SHRQ(operand.U8(1), reg.R14)
	}
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.R10, Scale: 2}, reg.RAX)
	acc := func(r, p int) int { return r*np + p }
	summs := func(r int) reg.VecPhysical { return yr[16+r] }
	row := func(r, disp int) operand.Mem {
		if r == 1 {
			return operand.Mem{Base: reg.R11, Index: reg.R8, Scale: 1, Disp: disp}
		}
		return mem(reg.R11, disp)
	}
	// out is token t's output of row r; R13 holds y + 4·ldy for t ≥ 4.
	out := func(r, t int) operand.Mem {
		base := reg.RDX
		if t >= 4 {
			base = reg.R13
		}
		m := mem(base, 4*r)
		switch t % 4 {
		case 1:
			m = operand.Mem{Base: base, Index: reg.R10, Scale: 1, Disp: 4 * r}
		case 2:
			m = operand.Mem{Base: base, Index: reg.R10, Scale: 2, Disp: 4 * r}
		case 3:
			m = operand.Mem{Base: base, Index: reg.RAX, Scale: 1, Disp: 4 * r}
		}
		return m
	}
	// res is the register number of row r and token t's sum after the
	// loop.
	res := func(r, t int) int {
		if t%2 == 1 {
			return 8 + acc(r, t/2)
		}
		return acc(r, t/2)
	}
	const rec = 40 * lyTileTokens // bytes of a block of a group
	a.Label("row")
	for r := range nr {
		for p := range np {
			a.VPXORD(zr[acc(r, p)], zr[acc(r, p)], zr[acc(r, p)])
			a.VMOVDQU32(g.tperm.Offset(128+64*(4*r+p)), zr[8+4*r+p])
		}
	}
	a.VPXORD(reg.Z16, reg.Z16, reg.Z16)
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(a.arg("nb"), reg.R13)

	a.Label("blk")
	// The rows' [d, m] as floats; [d0 ×8, d1 ×8] times dx (twice) are the
	// products d·dx of row r and token t at float 8r+t of Z22; summs of
	// row r, token t at float 8r+t of Z16 gain m·s.
	a.VMOVD(row(0, 0), reg.X22)
	if nr == 2 {
		a.VPINSRD(operand.U8(1), row(1, 0), reg.X22, reg.X22)
	}
	a.VCVTPH2PS(reg.X22, reg.X22)
	a.VBROADCASTF64X4(mem(reg.R12, 4*lyTileTokens), reg.Z18)
	a.VPERMPS(reg.Z22, reg.Z25, reg.Z19)
	a.VFMADD231PS(reg.Z18, reg.Z19, reg.Z16)
	a.VBROADCASTF64X4(mem(reg.R12, 0), reg.Z18)
	a.VPERMPS(reg.Z22, reg.Z24, reg.Z22)
	a.VMULPS(reg.Z18, reg.Z22, reg.Z22)
	for r := range nr {
		a.VBROADCASTI32X4(row(r, k.qs), reg.Z20)
		a.VGF2P8AFFINEQB(operand.U8(0), reg.Z30, reg.Z20, reg.Z20)
		if k.qh >= 0 {
			a.KMOVD(row(r, k.qh), reg.K1)
			a.KUNPCKDQ(reg.K1, reg.K1, reg.K1)
			a.VPADDB(reg.Z23, reg.Z20, reg.K1, reg.Z20)
		}
		for p := range np {
			a.VPERMPS(reg.Z22, zr[8+4*r+p], reg.Z19)
			a.VPXORD(reg.Z21, reg.Z21, reg.Z21)
			a.VPDPBUSD(mem(reg.R12, 8*lyTileTokens+64*p), reg.Z20, reg.Z21)
			a.VCVTDQ2PS(reg.Z21, reg.Z21)
			a.VFMADD231PS(reg.Z21, reg.Z19, zr[acc(r, p)])
		}
	}
	a.ADDQ(operand.U8(k.bs), reg.R11)
	a.ADDQ(operand.U32(rec), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	// Each sum as hsum_float_8 (hsum8y's steps), then + summs (token t's
	// in lane t of the row's Y16+r).
	for r := range nr {
		for p := range np {
			if 2*p+1 < nt {
				a.VEXTRACTF64X4(operand.U8(1), zr[acc(r, p)], yr[8+acc(r, p)])
			}
		}
	}
	if nr == 2 {
		a.VEXTRACTF64X4(operand.U8(1), reg.Z16, reg.Y17)
	}
	for r := range nr {
		hi := reg.X21
		if nt > 4 {
			a.VEXTRACTF32X4(operand.U8(1), summs(r), hi)
		}
		for t := range nt {
			x := xr[res(r, t)]
			a.VEXTRACTF32X4(operand.U8(1), yr[res(r, t)], reg.X22)
			a.VADDPS(reg.X22, x, x)
			a.VPERMILPS(operand.U8(0x4e), x, reg.X22)
			a.VADDPS(reg.X22, x, x)
			a.VPERMILPS(operand.U8(0xb1), x, reg.X22)
			a.VADDSS(reg.X22, x, x)
			src := xr[16+r]
			if t >= 4 {
				src = hi
			}
			if t%4 == 0 {
				a.VADDSS(src, x, x)
			} else {
				a.VPERMILPS(operand.U8(t%4), src, reg.X22)
				a.VADDSS(reg.X22, x, x)
			}
		}
	}
	if nt > 4 {
		a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 4}, reg.R13)
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	for r := range nr {
		for t := range nt {
			a.VADDSS(out(r, t), xr[res(r, t)], xr[res(r, t)])
		}
	}
	a.Label("store")
	for r := range nr {
		for t := range nt {
			a.VMOVSS(xr[res(r, t)], out(r, t))
		}
	}
	a.ADDQ(operand.U8(4*nr), reg.RDX)
	if nr == 2 {
		a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R8, Scale: 2}, reg.RSI)
	} else {
		a.ADDQ(reg.R8, reg.RSI)
	}
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.VZEROUPPER()
	a.RET()
}
