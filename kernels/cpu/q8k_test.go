package cpu

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
)

// TestQuantizeQ8_KMatchesReference checks every level's Q8_K activation
// quantizer byte for byte against kernels/quant's: random rows of several
// scales, zero blocks, the largest magnitude held by values of both signs
// (the first one's sign sets the scale), at the last position, and NaN
// and infinite values.
func TestQuantizeQ8_KMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	cases := map[string][]float32{}
	for _, n := range []int{256, 512, 2048} {
		for name, x := range quantInputs(r, n) {
			cases[fmt.Sprintf("%s/n=%d", name, n)] = x
		}
	}
	edge := func(f func(x []float32)) []float32 {
		x := randRow(r, 768, 1)
		f(x)
		return x
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases["both signs"] = edge(func(x []float32) { x[10], x[200] = -5, 5; x[256+3], x[256+9] = 7, -7; x[512+255] = -9 })
	cases["last"] = edge(func(x []float32) { x[255], x[511], x[767] = 8, -8, 8 })
	cases["zero block"] = edge(func(x []float32) { clear(x[256:512]) })
	cases["nan"] = edge(func(x []float32) { x[5], x[300] = nan, nan; clear(x[512:]); x[600] = nan })
	cases["inf"] = edge(func(x []float32) { x[7] = inf; x[260], x[261] = -inf, inf })
	for name, x := range cases {
		want := make([]byte, len(x)/256*292)
		quant.QuantizeRowQ8_K(want, x)
		for _, l := range Levels() {
			k := Detect().Limit(l)
			got := bytes.Repeat([]byte{0x5a}, len(want)+1)
			k.quantizeQ8_K(got[:len(want)], x)
			if got[len(want)] != 0x5a {
				t.Errorf("%s/%s: wrote past the row", l, name)
			}
			if i := firstDiff(got[:len(want)], want); i >= 0 {
				t.Errorf("%s/%s: byte %d (block %d, offset %d) = %#x, want %#x", l, name, i, i/292, i%292, got[i], want[i])
			}
		}
	}
}
