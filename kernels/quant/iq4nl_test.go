package quant

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// iq4nlTestInput returns the 16 blocks of the IQ4_NL golden test: a
// xorshift32 stream u in [0, 1) (multiples of 2⁻²⁴) shaped per block.
func iq4nlTestInput() []float32 {
	s := uint32(2463534242)
	u := func() float32 {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		return float32(s>>8) * 0x1p-24
	}
	x := make([]float32, 16*32)
	for b := range 16 {
		for i := range 32 {
			v := u()
			var r float32
			switch b {
			case 1:
				r = v + 1 // one-sided
			case 2:
				r = -(v * v) // negative, skewed
			case 3:
				r = (v - 0.5) * 0.01 // small values and one outlier
				if i == 5 {
					r = 3
				}
			case 4:
				r = 0
			case 5:
				r = float32(1e-17) * (v - 0.5) // below ggml's 1e-15 threshold
			case 6:
				r = 0.7 // constant
			case 7:
				r = float32(math.Ldexp(float64(v-0.5), i%8-4)) // mixed scales
			default:
				r = (v - 0.5) * 2
			}
			x[32*b+i] = r
		}
	}
	return x
}

// iq4nlGolden holds the blocks ggml's quantize_iq4_nl (the quantize tool's
// path, no importance matrix) writes for iq4nlTestInput: ggml-org/ggml
// d99724f2, src/ggml-quants.c compiled with gcc -O2 -std=c11 and called
// from a test harness, one block of 18 bytes per line.
const iq4nlGolden = `
05a0bea62829023fccfe4ec56c63f491b906
9ba322122112033011200212212131223211
dd1f11087873871605436238466288728627
cc2688888888888f88888888888888888888
000088888888888888888888888888888888
000088888888888888888888888888888888
a59d00000000000000000000000000000000
5ba788888887777adcb3888888888796972f
fc1f59721bef03e01d1ed3f0d43d8fbf2846
ee1f9fecd3960a84e34aca02de0212fbbac1
4a1f4735030fa0c9dd5967ba494bc4ae156a
481f9ea2f0eebf397fa600c04112ee824fa1
a11f9bd4de546d509c2eed2f1be17448fa9e
1720cc182eee253e3258494081e28e1cbbc4
b21f7ae3e5c254ec752411ef22110ddf4360
dc1f533baaee5b6fae19dcfceec81a50b232
`

func TestIQ4_NLMatchesGGML(t *testing.T) {
	x := iq4nlTestInput()
	got := make([]byte, 16*blockIQ4_NL)
	QuantizeRowIQ4_NL(got, x)
	var want []byte
	for _, line := range strings.Fields(iq4nlGolden) {
		b, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	for b := range 16 {
		g, w := got[18*b:18*b+18], want[18*b:18*b+18]
		if string(g) != string(w) {
			t.Errorf("block %d:\n got % x\nwant % x", b, g, w)
		}
	}
}

// TestIQ4_NLHandBuilt decodes a block built from the layout: d = 0.5
// (f16 0x3800), byte j = index j | index (15-j)<<4, so value j is
// 0.5·levels[j] and value 16+j is 0.5·levels[15-j] (exact).
func TestIQ4_NLHandBuilt(t *testing.T) {
	levels := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	b := make([]byte, 18)
	le16(b, 0x3800)
	want := make([]float32, 32)
	for j := range 16 {
		b[2+j] = byte(j) | byte(15-j)<<4
		want[j] = 0.5 * levels[j]
		want[16+j] = 0.5 * levels[15-j]
	}
	got := make([]float32, 32)
	DequantizeRowIQ4_NL(got, b)
	if !slices.Equal(got, want) {
		t.Errorf("decoded %v\nwant %v", got, want)
	}
	// Against the hand-built Q8_0 block every product and partial sum is
	// exact.
	a := handQ8_0()
	var exact float64
	for i := range want {
		exact += float64(want[i]) * float64(a.want[i])
	}
	if d := DotIQ4_NLQ8_0(b, a.block, 32); float64(d) != exact {
		t.Errorf("iq4_nl·q8_0 = %v, want %v", d, exact)
	}
	if d := DotIQ4_NLF32(b, tensor.F32ToBytes(a.want), 32); float64(d) != exact {
		t.Errorf("iq4_nl·f32 = %v, want %v", d, exact)
	}
	// Nearest level, ties up, clamped at both ends.
	values := iq4nlLevels()
	for _, tt := range []struct {
		x    float32
		want int
	}{{-200, 0}, {-127, 0}, {-115.5, 1}, {-115.6, 0}, {-4.5, 8}, {-4.6, 7}, {0, 8}, {101, 15}, {100.9, 14}, {113, 15}, {500, 15}} {
		if got := bestIndexInt8(&values, tt.x); got != tt.want {
			t.Errorf("bestIndexInt8(%v) = %d, want %d", tt.x, got, tt.want)
		}
	}
}

func TestIQ4_NLRoundTripAndDot(t *testing.T) {
	const n = 4096
	r := rand.New(rand.NewPCG(11, 13))
	var worst float32
	defer func() { t.Logf("worst error %.2f·|d|", worst) }()
	for name, x := range testData(n) {
		q := make([]byte, n/32*blockIQ4_NL)
		QuantizeRowIQ4_NL(q, x)
		y := make([]float32, n)
		DequantizeRowIQ4_NL(y, q)
		// Neighbouring levels are at most 24 apart, so a value within the
		// levels' span -127..113 (in steps of d) errs by at most 12·|d|.
		// Beyond it, the candidate scales put the largest magnitude at
		// most 134 steps out, 21 past the last level. The f16 rounding of
		// d adds up to 127·|d|/2048 < |d|/16. Allow 21.1·|d| + amax/2048,
		// and check |d| ≤ 2·amax/113.
		for b := 0; b < n; b += 32 {
			st := stats(x[b : b+32])
			d := abs32(f16(q[b/32*blockIQ4_NL:]))
			lim := 21.1*d + st.amax/2048
			if d > 2*st.amax/113+1e-30 {
				t.Errorf("%s block %d: |d| = %g for amax %g", name, b/32, d, st.amax)
			}
			for i := b; i < b+32; i++ {
				e := abs32(x[i] - y[i])
				if !(e <= lim) && !(st.amax < 1e-15 && y[i] == 0) {
					t.Fatalf("%s: value %d = %v decodes to %v: error %g > %g", name, i, x[i], y[i], e, lim)
				}
				if d > 0 {
					worst = max(worst, e/d)
				}
			}
		}
		// Dot products against the dequantized rows.
		a := make([]float32, n)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		ab := make([]byte, n/32*blockQ8_0)
		QuantizeActivationQ8_0(ab, a)
		ad := make([]float32, n)
		DequantizeRowQ8_0(ad, ab)
		var ref, refF, mag, magF float64
		for i := range y {
			ref += float64(y[i]) * float64(ad[i])
			mag += math.Abs(float64(y[i]) * float64(ad[i]))
			refF += float64(y[i]) * float64(a[i])
			magF += math.Abs(float64(y[i]) * float64(a[i]))
		}
		if got := DotIQ4_NLQ8_0(q, ab, n); math.Abs(float64(got)-ref) > 2e-6*mag {
			t.Errorf("%s: DotIQ4_NLQ8_0 = %v, dequantized dot %v", name, got, ref)
		}
		if got := DotIQ4_NLF32(q, tensor.F32ToBytes(a), n); math.Abs(float64(got)-refF) > 0x1p-23*magF {
			t.Errorf("%s: DotIQ4_NLF32 = %v, dequantized dot %v", name, got, refF)
		}
	}
}
