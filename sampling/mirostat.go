package sampling

import "math"

// mirostatM is how many of the most likely tokens mirostat 1 fits its Zipf
// exponent to (llama.cpp passes 100).
const mirostatM = 100

// mirostat1 is llama.cpp's mirostat (Basu et al. 2021, algorithm 1), in
// float32 as there. With p sorted descending, it fits the Zipf exponent
//
//	ŝ = Σ tᵢbᵢ / Σ tᵢ², tᵢ = ln((i+2)/(i+1)), bᵢ = ln(pᵢ/pᵢ₊₁), i < m−1,
//
// sets ε̂ = ŝ − 1 and k = (ε̂·2^μ / (1 − N^−ε̂))^(1/ŝ) with N the vocabulary
// size, keeps the top max(⌊k⌋, 1) tokens, draws one, and moves μ by
// −η·(−log₂ p − τ) with p its probability among the kept tokens. A k that
// does not fit an int32 (or is NaN) keeps one token, as the x86 conversion
// in llama.cpp does.
func (s *Sampler) mirostat1(w *work, nVocab int) int {
	w.list()
	w.softmax()
	w.sortTo(mirostatM)
	c := w.c
	var sumTB, sumTT float32
	for i := 0; i < mirostatM-1 && i < len(c)-1; i++ {
		t := float32(math.Log(float64(float32(i+2) / float32(i+1))))
		b := float32(math.Log(float64(float32(c[i].p) / float32(c[i+1].p))))
		sumTB += float32(t * b)
		sumTT += float32(t * t)
	}
	sHat := sumTB / sumTT
	eps := sHat - 1
	num := float32(eps * float32(math.Pow(2, float64(s.mu))))
	den := 1 - float32(math.Pow(float64(nVocab), float64(-eps)))
	k := float32(math.Pow(float64(num/den), float64(1/sHat)))
	w.topK(max(cvttss2si(k), 1))
	return s.mirostatDraw(w)
}

// cvttss2si converts like the x86 instruction: truncation, and INT_MIN
// for NaN and values outside int32.
func cvttss2si(f float32) int {
	if f != f || f >= 1<<31 || f < -(1<<31) {
		return math.MinInt32
	}
	return int(f)
}

// mirostat2 is llama.cpp's mirostat 2: it keeps the tokens whose surprise
// −log₂ p is at most μ (at least the most likely one), draws one from them
// renormalised and moves μ as mirostat 1 does.
func (s *Sampler) mirostat2(w *work) int {
	w.list()
	w.softmax()
	c := w.c
	kept := 0
	// −log₂ p ≤ μ ⇔ p ≥ 2^−μ; log₂ only near that line, where float32
	// rounding decides as in llama.cpp.
	lim := math.Exp2(-float64(s.mu))
	hi, lo := lim*(1+1e-5), lim*(1-1e-5)
	for i := range c {
		p := c[i].p
		if p >= hi || p > lo && -log2f(p) <= s.mu {
			c[kept] = c[i]
			kept++
		}
	}
	if kept == 0 {
		w.keepOnly(w.argmax())
	} else {
		w.c = c[:kept]
		w.nSorted, w.hasP = 0, false
	}
	return s.mirostatDraw(w)
}

func log2f(p float64) float32 { return float32(math.Log2(float64(float32(p)))) }

func (s *Sampler) mirostatDraw(w *work) int {
	w.softmax()
	i := pick(w.c, s.rng.Float64())
	e := -log2f(w.c[i].p) - float32(s.cfg.MirostatTau)
	s.mu -= float32(float32(s.cfg.MirostatEta) * e)
	return int(w.c[i].id)
}
