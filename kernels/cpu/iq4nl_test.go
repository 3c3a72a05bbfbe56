package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestIQ4_NLGemv checks the SIMD IQ4_NL matrix-vector kernels row by row
// against kernels/quant's dot products (ggml's x86 order for one token,
// its batched order for more), to the last bit:
// rows left over by the 4 streams, an odd number of blocks (the Go
// reference's last-block path), every index in every nibble and
// activations at ±127.
func TestIQ4_NLGemv(t *testing.T) {
	kind, _, _ := Detect().classify(tensor.IQ4_NL)
	if !Detect().hasKQuant(kind) {
		t.Skip("no SIMD IQ4_NL kernel on this machine/build")
	}
	for _, batch := range []bool{false, true} {
		kind, dot := wkIQ4NL, quant.DotIQ4_NLQ8_0
		if batch {
			kind, dot = wkIQ4NB, quant.DotIQ4_NLQ8_0Batch
		}
		t.Run(map[bool]string{false: "dot", true: "batch"}[batch], func(t *testing.T) { testIQ4_NLGemv(t, kind, dot) })
	}
}

func testIQ4_NLGemv(t *testing.T, kind wkind, dot quant.DotFunc) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, sh := range []struct{ rows, cols int }{{1, 64}, {4, 64}, {7, 288}, {13, 2048}, {9, 5632}, {8, 4096}} {
		w := randomMatrix(t, r, tensor.IQ4_NL, sh.rows, sh.cols)
		x := randRow(r, sh.cols, 1)
		if sh.rows == 8 {
			// Random index bytes after each scale; blocks at ±127.
			for i := 0; i < len(w.Data); i += 18 {
				for j := 2; j < 18; j++ {
					w.Data[i+j] = byte(r.Uint32())
				}
			}
			for i := range x {
				x[i] = float32(r.IntN(3)-1) * 1e4
			}
		}
		act := make([]byte, sh.cols/32*34)
		quant.QuantizeActivationQ8_0(act, x)
		for _, acc := range []bool{false, true} {
			dst, check := guarded(sh.rows, 0.5)
			Detect().kGemv(kind, w.Data, w.RowBytes(), act, sh.cols/32, dst, acc)
			check(t)
			for i := range dst {
				want := dot(w.Row(i), act, sh.cols)
				if acc {
					want += 0.5
				}
				if math.Float32bits(dst[i]) != math.Float32bits(want) {
					t.Fatalf("%dx%d acc=%v: row %d = %v, want %v", sh.rows, sh.cols, acc, i, dst[i], want)
				}
			}
		}
	}
}
