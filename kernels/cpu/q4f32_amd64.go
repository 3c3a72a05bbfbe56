//go:build amd64 && !noasm

package cpu

import "unsafe"

// dotQ4_0F32Z multiplies Q4_0 blocks with float32 activations, for the
// comparison benchmark only.
//
//go:noescape
func dotQ4_0F32Z(w unsafe.Pointer, x *float32, nb int) float32
