package main

import (
	"encoding/binary"
	"fmt"

	"github.com/mmcloughlin/avo/reg"
)

// The AMX instructions amx_amd64.s uses (Intel SDM, AMX chapter): all are
// VEX.128.0F38.W0, with the tile register in ModRM.reg (and TDPBF16PS's
// second source in VEX.vvvv). Go's operand order is kept in the mnemonics:
// sources first, the destination last.

// tmm is a tile register, TMM0-TMM7.
type tmm int

func (t tmm) String() string { return fmt.Sprintf("TMM%d", int(t)) }

// A tileMem is the memory operand of a tile load or store:
// disp(base)(index*1), index the byte stride between the tile's rows.
type tileMem struct {
	disp        int
	base, index reg.Physical
}

// tmem is disp(base)(index*1).
func tmem(disp int, base, index reg.Register) tileMem {
	return tileMem{disp, base.(reg.Physical), index.(reg.Physical)}
}

func (m tileMem) String() string {
	return fmt.Sprintf("%d(%s)(%s*1)", m.disp, m.base.Asm(), m.index.Asm())
}

// VEX mandatory prefixes (VEX.pp).
const (
	ppNone = 0
	ppF3   = 2
	ppF2   = 3
)

// vex0F38 is the 3-byte VEX prefix of map 0F38, W0, L0 (VEX.128) with
// REX.X and REX.B as given (R is never needed: tile registers are 0-7) and
// vvvv, then the opcode op.
func vex0F38(pp, vvvv byte, x, b bool, op byte) []byte {
	p1 := byte(0xe0 | 0x02) // R̄ X̄ B̄ = 1 1 1, map 0F38
	if x {
		p1 &^= 0x40
	}
	if b {
		p1 &^= 0x20
	}
	return []byte{0xc4, p1, (^vvvv&15)<<3 | pp, op}
}

// tileModRM is the VEX prefix, opcode, ModRM, SIB and displacement of an
// instruction with the tile t in ModRM.reg and the memory operand m.
func tileModRM(pp, op byte, t tmm, m tileMem) []byte {
	b, x := m.base.PhysicalIndex(), m.index.PhysicalIndex()
	if b&7 == 4 || b&7 == 5 || x == 4 {
		// SP/R12 as base need a different SIB, BP/R13 a displacement,
		// SP cannot be an index: none is used.
		panic(fmt.Sprintf("tile operand %v not supported", m))
	}
	var mod byte
	var disp []byte
	switch {
	case m.disp == 0:
	case m.disp >= -128 && m.disp < 128:
		mod, disp = 1, []byte{byte(int8(m.disp))}
	default:
		mod, disp = 2, binary.LittleEndian.AppendUint32(nil, uint32(int32(m.disp)))
	}
	e := vex0F38(pp, 0, x >= 8, b >= 8, op)
	e = append(e, mod<<6|byte(t)<<3|4, byte(x&7)<<3|byte(b&7)) // SIB: scale 1
	return append(e, disp...)
}

// LDTILECFG loads the tile configuration at (r) (NP 49 /0).
func (a *asm) LDTILECFG(r reg.Register) {
	i := r.(reg.Physical).PhysicalIndex()
	if i >= 8 || i == 4 || i == 5 {
		panic("LDTILECFG: unsupported base " + r.Asm())
	}
	a.bytes(fmt.Sprintf("LDTILECFG (%s)", r.Asm()), append(vex0F38(ppNone, 0, false, false, 0x49), byte(i)))
}

// TILERELEASE returns the tiles to their initial state (NP 49 C0).
func (a *asm) TILERELEASE() {
	a.bytes("TILERELEASE", append(vex0F38(ppNone, 0, false, false, 0x49), 0xc0))
}

// TILEZERO zeroes tile t (F2 49 /r, register form).
func (a *asm) TILEZERO(t tmm) {
	a.bytes("TILEZERO "+t.String(), append(vex0F38(ppF2, 0, false, false, 0x49), 0xc0|byte(t)<<3))
}

// TILELOADD loads tile t from m, its rows m.index bytes apart (F2 4B /r).
func (a *asm) TILELOADD(m tileMem, t tmm) {
	a.bytes(fmt.Sprintf("TILELOADD %v, %v", m, t), tileModRM(ppF2, 0x4b, t, m))
}

// TILESTORED stores tile t to m, its rows m.index bytes apart (F3 4B /r).
func (a *asm) TILESTORED(t tmm, m tileMem) {
	a.bytes(fmt.Sprintf("TILESTORED %v, %v", t, m), tileModRM(ppF3, 0x4b, t, m))
}

// TDPBF16PS adds to the float32s of tile c the dot products of the
// bfloat16 pairs of tile ta's rows with those of tile b's columns (F3 5C
// /r: c in ModRM.reg, ta in ModRM.rm, b in VEX.vvvv).
func (a *asm) TDPBF16PS(b, ta, c tmm) {
	e := append(vex0F38(ppF3, byte(b), false, false, 0x5c), 0xc0|byte(c)<<3|byte(ta))
	a.bytes(fmt.Sprintf("TDPBF16PS %v, %v, %v", b, ta, c), e)
}
