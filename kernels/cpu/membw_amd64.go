//go:build amd64 && !noasm

package cpu

import "unsafe"

//go:noescape
func xorReadZ(p *byte, n int) uint64

//go:noescape
func xorReadY(p *byte, n int) uint64

// xorRead folds the 8-byte words of b (len a multiple of 256) with XOR.
func (k Kernels) xorRead(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	switch {
	case k.level >= AVX512 && len(b)%1024 == 0:
		// Four streams side by side keep more reads in flight than one.
		return xorRead4Z(unsafe.SliceData(b), len(b))
	case k.level >= AVX512:
		return xorReadZ(unsafe.SliceData(b), len(b))
	case k.level >= AVX2:
		return xorReadY(unsafe.SliceData(b), len(b))
	}
	return xorReadGo(b)
}

//go:noescape
func xorRead4Z(p *byte, n int) uint64
