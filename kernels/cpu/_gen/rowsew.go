package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// An ewKernel is an element-wise row kernel: dst (DI) from the rows at SI
// and R8 (and the scalar a in V19/Y9), one vector of floats at a time.
type ewKernel struct {
	name string   // without the Z/Y suffix
	sig  string   // Go signature
	doc  []string // for the AVX-512 kernel
	args []string // the pointer arguments, loaded into DI, SI, R8
	// vec computes the vector at element AX into v1 (v2 scratch), the
	// scalar in s; masked: the loads are masked by K1 (AVX-512 only).
	vec func(a *asm, v1, v2, s reg.VecPhysical, masked bool)
}

// ewKernels are the element-wise kernels, in the order of the files they
// came from.
var ewKernels = []ewKernel{
	{name: "scale", sig: "func(dst, x *float32, n int, a float32)", doc: []string{"dst[i] = x[i]·a."},
		args: []string{"dst", "x"},
		vec: func(a *asm, v1, v2, s reg.VecPhysical, masked bool) {
			if masked {
				a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, v1)
				a.VMULPS(s, v1, v1)
				return
			}
			a.VMULPS(xmem(reg.RSI, 0), s, v1)
		}},
	{name: "scaleMul", sig: "func(dst, x, w *float32, n int, a float32)", doc: []string{"dst[i] = (x[i]·a)·w[i]."},
		args: []string{"dst", "x", "w"},
		vec: func(a *asm, v1, v2, s reg.VecPhysical, masked bool) {
			if masked {
				a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, v1)
				a.VMOVUPS_Z(xmem(reg.R8, 0), reg.K1, v2)
				a.VMULPS(s, v1, v1)
				a.VMULPS(v2, v1, v1)
				return
			}
			a.VMULPS(xmem(reg.RSI, 0), s, v1)
			a.VMULPS(xmem(reg.R8, 0), v1, v1)
		}},
	{name: "add", sig: "func(dst, a, b *float32, n int)", args: []string{"dst", "a", "b"},
		vec: func(a *asm, v1, v2, s reg.VecPhysical, masked bool) {
			if masked {
				a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, v1)
				a.VMOVUPS_Z(xmem(reg.R8, 0), reg.K1, v2)
				a.VADDPS(v2, v1, v1)
				return
			}
			a.VMOVUPS(xmem(reg.RSI, 0), v1)
			a.VADDPS(xmem(reg.R8, 0), v1, v1)
		}},
	{name: "mul", sig: "func(dst, a, b *float32, n int)", args: []string{"dst", "a", "b"},
		vec: func(a *asm, v1, v2, s reg.VecPhysical, masked bool) {
			if masked {
				a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, v1)
				a.VMOVUPS_Z(xmem(reg.R8, 0), reg.K1, v2)
				a.VMULPS(v2, v1, v1)
				return
			}
			a.VMOVUPS(xmem(reg.RSI, 0), v1)
			a.VMULPS(xmem(reg.R8, 0), v1, v1)
		}},
	{name: "axpy", sig: "func(y, x *float32, n int, a float32)", doc: []string{"y[i] += a·x[i]."},
		args: []string{"y", "x"},
		vec: func(a *asm, v1, v2, s reg.VecPhysical, masked bool) {
			if masked {
				a.VMOVUPS_Z(xmem(reg.RDI, 0), reg.K1, v1)
				a.VMOVUPS_Z(xmem(reg.RSI, 0), reg.K1, v2)
				a.VFMADD231PS(v2, s, v1)
				return
			}
			a.VMOVUPS(xmem(reg.RDI, 0), v1)
			a.VFMADD231PS(xmem(reg.RSI, 0), s, v1)
		}},
}

// hasScalar reports whether k takes the scalar a (the last argument).
func (k ewKernel) hasScalar() bool { return k.sig[len(k.sig)-len("a float32)"):] == "a float32)" }

// rowsew generates rowsew_amd64.s: the element-wise row kernels, AVX-512
// (any n: the last partial vector under the mask K1) and AVX2 (n rounded
// down to a multiple of 8; the Go wrappers finish the rest).
func rowsew(a *asm) {
	for _, k := range ewKernels {
		a.ewZ(k)
	}
	for _, k := range ewKernels {
		a.ewY(k)
	}
}

var ewRegs = [3]reg.Register{reg.RDI, reg.RSI, reg.R8}

// ewArgs loads the pointers, n into CX (rounded down to a multiple of
// round, if not 0) and the scalar into s.
func (a *asm) ewArgs(k ewKernel, round int, s reg.VecPhysical) {
	for i, p := range k.args {
		a.load(p, ewRegs[i])
	}
	a.load("n", reg.RCX)
	if round != 0 {
		a.ANDQ(operand.I8(-int8(round)), reg.RCX)
	}
	if k.hasScalar() {
		a.VBROADCASTSS(a.arg("a"), s)
	}
	a.XORQ(reg.RAX, reg.RAX)
}

// ewZ generates the AVX-512 kernel <k>Z.
func (a *asm) ewZ(k ewKernel) {
	a.text(k.name+"Z", attr.NOSPLIT, k.sig, k.doc...)
	a.ewArgs(k, 0, reg.Z19)

	a.loop16Z("loop", func() {
		k.vec(a, reg.Z1, reg.Z2, reg.Z19, false)
		a.VMOVUPS(reg.Z1, xmem(reg.RDI, 0))
	}, func() {
		k.vec(a, reg.Z1, reg.Z2, reg.Z19, true)
		a.VMOVUPS(reg.Z1, reg.K1, xmem(reg.RDI, 0))
	})
	a.VZEROUPPER()
	a.RET()
}

// ewY generates the AVX2 kernel <k>Y.
func (a *asm) ewY(k ewKernel) {
	a.text(k.name+"Y", attr.NOSPLIT, k.sig)
	a.ewArgs(k, 8, reg.Y9)
	a.loopY(func() {
		k.vec(a, reg.Y1, reg.Y2, reg.Y9, false)
		a.VMOVUPS(reg.Y1, xmem(reg.RDI, 0))
	})
	a.VZEROUPPER()
	a.RET()
}
