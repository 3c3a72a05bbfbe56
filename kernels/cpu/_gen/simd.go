package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Reductions shared by the AVX-512 and AVX2 kernels; registers are given by
// number (z, its ymm and xmm names alike).

// hsum reduces the 16 lanes of Z<z> into the low lane of X<z>, using
// register t as scratch.
func (a *asm) hsum(z, t int) {
	a.VEXTRACTF64X4(operand.U8(1), zr[z], yr[t])
	a.VADDPS(yr[t], yr[z], yr[z])
	a.VEXTRACTF128(operand.U8(1), yr[z], xr[t])
	a.VADDPS(xr[t], xr[z], xr[z])
	a.VPERMILPS(operand.U8(0x4e), xr[z], xr[t])
	a.VADDPS(xr[t], xr[z], xr[z])
	a.VPERMILPS(operand.U8(0xb1), xr[z], xr[t])
	a.VADDSS(xr[t], xr[z], xr[z])
}

// fold8 adds the high ymm halves of Z<z0>..Z<z3> to their low halves, Y<t>
// the scratch.
func (a *asm) fold8(z [4]int, t int) {
	for _, r := range z {
		a.VEXTRACTF64X4(operand.U8(1), zr[r], yr[t])
		a.VADDPS(yr[t], yr[r], yr[r])
	}
}

// reduce4x sums the 8 lanes of Y<y0>..Y<y3> into the 4 lanes of X<y0>
// (X<y1> the scratch). It overwrites Y<y0>..Y<y3>.
func (a *asm) reduce4x(y [4]int) {
	a.VHADDPS(yr[y[1]], yr[y[0]], yr[y[0]])
	a.VHADDPS(yr[y[3]], yr[y[2]], yr[y[2]])
	a.VHADDPS(yr[y[2]], yr[y[0]], yr[y[0]])
	a.VEXTRACTF128(operand.U8(1), yr[y[0]], xr[y[1]])
	a.VADDPS(xr[y[1]], xr[y[0]], xr[y[0]])
}

// storex stores the 4 floats of X<x> at (DX), adding what is there when AX
// is not zero, and advances DX by BX.
func (a *asm) storex(x int) {
	a.nlabel++
	skip := fmt.Sprintf("sx%d", a.nlabel)
	a.TESTQ(reg.RAX, reg.RAX)
	a.JEQ(label(skip))
	a.VADDPS(mem(reg.RDX, 0), xr[x], xr[x])
	a.Label(skip)
	a.VMOVUPS(xr[x], mem(reg.RDX, 0))
	a.ADDQ(reg.RBX, reg.RDX)
}
