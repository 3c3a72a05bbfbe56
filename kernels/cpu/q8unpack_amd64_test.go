//go:build amd64 && !noasm

package cpu

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestUnpack16MatchesGather checks the gather-free unpack of whole strips
// against the gather unpack, byte for byte, for both weight types, strides
// with and without padding, and rows starting at odd addresses.
func TestUnpack16MatchesGather(t *testing.T) {
	if !Detect().hasQ8Unpacked() {
		t.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		kind wkind
		bb   int
	}{{wkQ4_0, 18}, {wkQ8_0, 34}} {
		for _, nb := range []int{1, 2, 3, 7, 64} {
			for _, pad := range []int{0, 5, 64} {
				t.Run(fmt.Sprintf("%d/nb=%d/pad=%d", tc.bb, nb, pad), func(t *testing.T) {
					ldw := nb*tc.bb + pad
					buf := make([]byte, 1+16*ldw)
					for i := range buf {
						buf[i] = byte(r.Uint32())
					}
					w := buf[1:] // odd address
					ub := q8uBlockOf(tc.kind)
					got := make([]byte, nb*ub)
					want := make([]byte, nb*ub)
					wp := unsafe.Pointer(&w[0])
					if tc.kind == wkQ8_0 {
						unpack16Q8_0Z(&got[0], wp, uintptr(ldw), nb)
						unpackS16Q8_0Z(&want[0], wp, uintptr(ldw), 16, nb)
					} else {
						unpack16Q4_0Z(&got[0], wp, uintptr(ldw), nb)
						unpackS16Q4_0Z(&want[0], wp, uintptr(ldw), 16, nb)
					}
					if !bytes.Equal(got, want) {
						for i := range got {
							if got[i] != want[i] {
								t.Fatalf("first difference at byte %d (block %d, offset %d): %#x, want %#x", i, i/ub, i%ub, got[i], want[i])
							}
						}
					}
				})
			}
		}
	}
}
