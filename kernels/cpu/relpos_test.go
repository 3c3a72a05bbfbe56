package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
)

// TestRelPosBucket checks T5's buckets against the formula of Raffel et
// al. written out: with n buckets per direction (all of them when causal,
// half when bidirectional) and exact = n/2, a distance d < exact is bucket
// d; a farther one is exact + ⌊ln(d/exact) / ln(max_distance/exact) ·
// (n − exact)⌋, at most n − 1; bidirectional keys after the query add n.
func TestRelPosBucket(t *testing.T) {
	for _, tc := range []struct {
		rel, buckets, maxDist int
		bidi                  bool
		want                  int
	}{
		{0, 32, 128, true, 0},
		{-3, 32, 128, true, 3},
		{3, 32, 128, true, 19},
		{-7, 32, 128, true, 7},
		{-8, 32, 128, true, 8},   // ln(1) = 0
		{-20, 32, 128, true, 10}, // 8 + ⌊ln(2.5)/ln(16)·8⌋ = 8 + ⌊2.64⌋
		{20, 32, 128, true, 26},
		{-127, 32, 128, true, 15}, // 8 + ⌊7.977⌋
		{-128, 32, 128, true, 15}, // 8 + 8, capped at 15
		{-1000, 32, 128, true, 15},
		{1000, 32, 128, true, 31},
		{5, 32, 128, false, 0}, // a later key: causal attention never sees it
		{-5, 32, 128, false, 5},
		{-16, 32, 128, false, 16},
		{-40, 32, 128, false, 23},  // 16 + ⌊ln(2.5)/ln(8)·16⌋ = 16 + ⌊7.05⌋
		{-127, 32, 128, false, 31}, // 16 + ⌊15.94⌋
		{-200, 32, 128, false, 31},
		{-40, 32, 64, false, 26}, // 16 + ⌊ln(2.5)/ln(4)·16⌋ = 16 + ⌊10.57⌋
		{-3, 8, 128, true, 2},    // n = 4, exact = 2: 2 + ⌊ln(1.5)/ln(64)·2⌋
	} {
		if got := RelPosBucket(tc.rel, tc.buckets, tc.maxDist, tc.bidi); got != tc.want {
			t.Errorf("RelPosBucket(%d, %d, %d, %v) = %d, want %d", tc.rel, tc.buckets, tc.maxDist, tc.bidi, got, tc.want)
		}
		if got := NewRelBias(nil, tc.buckets, tc.maxDist, tc.bidi).bucket(tc.rel); got != tc.want {
			t.Errorf("the table of distances gives bucket %d for %d (%d buckets, max %d, bidirectional %v), want %d", got, tc.rel, tc.buckets, tc.maxDist, tc.bidi, tc.want)
		}
	}
}

// TestAttendBiased compares AttendBiased with attention written out in
// float64, over a KV of two segments, f32 and f16, with GQA, with and
// without a relative-position bias.
func TestAttendBiased(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const heads, kvh, hd, n, buckets = 4, 2, 8, 21, 16
	stride := kvh * hd
	kf := make([]float32, n*stride)
	vf := make([]float32, n*stride)
	for i := range kf {
		kf[i], vf[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	q := make([]float32, heads*hd)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	table := make([]float32, buckets*heads)
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}
	split := 13
	f16 := func(x []float32) []uint16 {
		out := make([]uint16, len(x))
		for i, v := range x {
			out[i] = quant.ToF16(v)
		}
		return out
	}
	for _, half := range []bool{false, true} {
		for _, bidi := range []bool{false, true} {
			for _, withBias := range []bool{false, true} {
				kv := &KV{Len: []int{split, n - split}}
				if half {
					k16, v16 := f16(kf), f16(vf)
					kv.K16 = [][]uint16{k16, k16[split*stride:]}
					kv.V16 = [][]uint16{v16, v16[split*stride:]}
				} else {
					kv.K = [][]float32{kf, kf[split*stride:]}
					kv.V = [][]float32{vf, vf[split*stride:]}
				}
				var rb *RelBias
				if withBias {
					rb = NewRelBias(table, buckets, 32, bidi)
				}
				p := AttendParams{Heads: heads, KVHeads: kvh, HeadDim: hd, Scale: 0.7, N: n}
				qpos := 9
				out := make([]float32, heads*hd)
				AttendBiased(out, q, kv, p, rb, qpos, make([]float32, AttendBiasScratch(p)), 0, heads)
				for h := 0; h < heads; h++ {
					g := h / (heads / kvh)
					s := make([]float64, n)
					mx := math.Inf(-1)
					for j := 0; j < n; j++ {
						for d := 0; d < hd; d++ {
							kx := kf[j*stride+g*hd+d]
							if half {
								kx = quant.FromF16(quant.ToF16(kx))
							}
							s[j] += float64(q[h*hd+d]) * float64(kx)
						}
						s[j] *= 0.7
						if withBias {
							s[j] += float64(table[RelPosBucket(j-qpos, buckets, 32, bidi)*heads+h])
						}
						mx = math.Max(mx, s[j])
					}
					var sum float64
					for j := range s {
						s[j] = math.Exp(s[j] - mx)
						sum += s[j]
					}
					for d := 0; d < hd; d++ {
						var o float64
						for j := 0; j < n; j++ {
							vx := vf[j*stride+g*hd+d]
							if half {
								vx = quant.FromF16(quant.ToF16(vx))
							}
							o += s[j] / sum * float64(vx)
						}
						if got := out[h*hd+d]; math.Abs(float64(got)-o) > 1e-5*(1+math.Abs(o)) {
							t.Fatalf("f16=%v bidirectional=%v bias=%v: head %d [%d] = %v, want %v", half, bidi, withBias, h, d, got, o)
						}
					}
				}
			}
		}
	}
}
