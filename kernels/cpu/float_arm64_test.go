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

// TestF32AttentionRowsMatchGo checks the f32 attention kernels against
// dotRowsGo and axpyRowsGo bit for bit: on arm64 Go compiles their
// s += a*b into fused multiply-adds, which the NEON kernels run lane by
// lane in the same order (zero probabilities skipped, as there).
func TestF32AttentionRowsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, hd := range []int{4, 12, 64, 128, 130} {
			for _, n := range []int{1, 3, 17} {
				stride := hd + 4
				q := randRow(r, hd, 1)
				rows := randRow(r, n*stride, 1)
				p := randRow(r, n, 1)
				p[0] = 0
				rows[0] = float32(math.Inf(1)) // behind a zero probability
				want := make([]float32, n)
				dotRowsGo(want, q, rows, stride)
				got := make([]float32, n)
				k.dotRows(got, q, rows, stride)
				for i := range want {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("%s hd=%d n=%d: dotRows[%d] = %v, Go gives %v", l, hd, n, i, got[i], want[i])
					}
				}
				o := randRow(r, hd, 1)
				wantO := append([]float32(nil), o...)
				axpyRowsGo(wantO, p, rows, stride)
				k.axpyRows(o, p, rows, stride)
				for i := range o {
					if !sameBits(o[i], wantO[i]) {
						t.Fatalf("%s hd=%d n=%d: axpyRows[%d] = %v, Go gives %v", l, hd, n, i, o[i], wantO[i])
					}
				}
			}
		}
	}
}
