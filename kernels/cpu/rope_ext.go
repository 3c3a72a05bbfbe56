package cpu

import "math"

// RoPEScaling stretches RoPE to contexts longer than a model was trained
// on. The zero value (with FreqScale and AttnFactor 0 read as 1) is plain
// RoPE.
type RoPEScaling struct {
	// FreqScale multiplies every angle: 1/factor for linear scaling
	// (position interpolation, Chen et al. 2023) and YaRN.
	FreqScale float32
	// ExtFactor mixes the scaled angle back towards the unscaled one for
	// the high-frequency pairs (YaRN, Peng et al. 2023): 0 turns the
	// ramp off, 1 is YaRN.
	ExtFactor float32
	// AttnFactor scales cos and sin (YaRN's attention temperature, with
	// 1 + 0.1·ln(1/FreqScale) folded in when ExtFactor ≠ 0).
	AttnFactor float32
	// BetaFast and BetaSlow bound YaRN's ramp, in rotations over the
	// original context OrigCtx (32 and 1 in the paper).
	BetaFast, BetaSlow float32
	OrigCtx            int
	// Factors, when set, divides pair j's angle by Factors[j] (Llama 3.1's
	// rope_freqs, Phi-3's long/short factors); ropeDim/2 values.
	Factors []float32
}

// RoPEExt is RoPE with the scaling s: pair j of the first ropeDim
// features of each head turns by the angle θ_j = pos·base^(-2j/ropeDim) /
// Factors[j], taken as FreqScale·θ_j, or with YaRN as a ramp between
// FreqScale·θ_j (low frequencies) and θ_j (high frequencies), and cos and
// sin are multiplied by the attention factor. The angle is accumulated in
// float32, as RoPE does.
func RoPEExt(x []float32, pos, heads, headDim, ropeDim int, base float32, pairing int, s *RoPEScaling) {
	half := ropeDim / 2
	fs, af := s.FreqScale, s.AttnFactor
	if fs == 0 {
		fs = 1
	}
	if af == 0 {
		af = 1
	}
	var lo, hi float64
	if s.ExtFactor != 0 {
		lo, hi = yarnCorrDims(ropeDim, s.OrigCtx, s.BetaFast, s.BetaSlow, base)
		af *= float32(1 + 0.1*math.Log(1/float64(fs)))
	}
	step := float32(math.Pow(float64(base), float64(float32(-2)/float32(ropeDim))))
	theta := float32(pos)
	for j := 0; j < half; j++ {
		ext := theta
		if s.Factors != nil {
			ext = theta / s.Factors[j]
		}
		th := fs * ext
		if s.ExtFactor != 0 {
			mix := float32(yarnRamp(lo, hi, j)) * s.ExtFactor
			th = th*(1-mix) + ext*mix
		}
		sn64, cs64 := math.Sincos(float64(th))
		cs, sn := float32(cs64)*af, float32(sn64)*af
		theta *= step
		var a, b int
		if pairing == RoPEAdjacent {
			a, b = 2*j, 2*j+1
		} else {
			a, b = j, j+half
		}
		for h := 0; h < heads; h++ {
			v := x[h*headDim : (h+1)*headDim]
			x0, x1 := v[a], v[b]
			v[a] = fmaf(x0, cs, -(x1 * sn))
			v[b] = fmaf(x0, sn, x1*cs)
		}
	}
}

// yarnCorrDims returns the pair indices where YaRN's ramp starts and
// ends: the pairs that turn betaFast and betaSlow times over the original
// context, d·ln(ctx/(2πβ)) / (2 ln base), floored and ceiled into
// [0, ropeDim-1].
func yarnCorrDims(ropeDim, origCtx int, betaFast, betaSlow, base float32) (lo, hi float64) {
	dim := func(beta float32) float64 {
		return float64(ropeDim) * math.Log(float64(origCtx)/(float64(beta)*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	lo = math.Max(0, math.Floor(dim(betaFast)))
	hi = math.Min(float64(ropeDim-1), math.Ceil(dim(betaSlow)))
	return lo, hi
}

// yarnRamp is 1 for pairs below lo (extrapolated), 0 above hi
// (interpolated), linear between.
func yarnRamp(lo, hi float64, j int) float64 {
	y := (float64(j) - lo) / math.Max(0.001, hi-lo)
	return 1 - math.Min(1, math.Max(0, y))
}

// Llama3Factors writes Llama 3.1's per-pair RoPE divisors into dst
// (ropeDim/2 values): pair j of frequency ω_j = base^(-2j/ropeDim) has the
// wavelength λ = 2π/ω_j; pairs with λ < origCtx/high keep their speed
// (1), those with λ > origCtx/low turn factor times slower (factor), and
// between them the divisor is 1/((1-s)/factor + s) with the smoothing
// s = (origCtx/λ - low)/(high - low) (Meta's reference implementation,
// which llama.cpp's converter writes as rope_freqs.weight).
func Llama3Factors(dst []float32, base float32, ropeDim int, factor, low, high float64, origCtx int) {
	lowWave, highWave := float64(origCtx)/low, float64(origCtx)/high
	for j := range dst {
		freq := 1 / math.Pow(float64(base), float64(2*j)/float64(ropeDim))
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			dst[j] = 1
		case wave > lowWave:
			dst[j] = float32(factor)
		default:
			s := (float64(origCtx)/wave - low) / (high - low)
			dst[j] = float32(1 / ((1-s)/factor + s))
		}
	}
}
