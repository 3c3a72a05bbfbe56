//go:build arm64 && !noasm

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// TestFloatTileMatchesGemv checks that the several-token float tiles give
// each output floatGemv4's bits (the one-token path), so prefill and
// decode agree: the F32 tiles share weight loads between tokens, the
// others call floatGemv4 per token.
func TestFloatTileMatchesGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, l := range Levels() {
		if l < NEON {
			continue
		}
		k := Detect().Limit(l)
		for _, dt := range []floatType{ftF32, ftF16, ftBF16} {
			for _, n := range []int{8, 13, 64, 100, 1024} {
				for _, acc := range []bool{false, true} {
					name := fmt.Sprintf("%s/%d/n%d/acc=%v", l, dt, n, acc)
					es := dt.size()
					ldw := n*es + 4*r.IntN(3)
					ldx := n + r.IntN(5)
					wf := randRow(r, 4*ldw/es, 1)
					w := make([]byte, 4*ldw)
					for i, v := range wf {
						switch dt {
						case ftF16:
							w[2*i], w[2*i+1] = byte(toF16(v)), byte(toF16(v)>>8)
						case ftBF16:
							w[2*i], w[2*i+1] = byte(toBF16(v)), byte(toBF16(v)>>8)
						default:
							b := tensor.F32ToBytes([]float32{v})
							copy(w[4*i:], b)
						}
					}
					x := randRow(r, 3*ldx+n, 1)
					const ldd = 7
					init := randRow(r, 4*ldd, 1)
					got := append([]float32(nil), init...)
					k.floatTile(dt, w, ldw, x, ldx, n, got, ldd, acc)
					for tk := range 4 {
						var y [4]float32
						k.floatGemv4(dt, w, ldw, x[tk*ldx:tk*ldx+n], &y)
						for rr, v := range y {
							want := v
							if acc {
								want = init[tk*ldd+rr] + v
							}
							if g := got[tk*ldd+rr]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("%s: token %d row %d = %v, floatGemv4 gives %v", name, tk, rr, g, want)
							}
						}
					}
				}
			}
		}
	}
}
