package sampling

import (
	"fmt"
	"math"
	"slices"
)

// Randomized FSD's fixed parameters (Inferflow's RandomizedFSD config):
// for the first 10 generated tokens, a coin (probability 0.5) chooses
// top-p 0.93 / at most 8 tokens sampling instead of FSD.
const (
	randomFSDWarmup = 10
	randomFSDChance = 0.5
	randomFSDTopP   = 0.93
	randomFSDMaxK   = 8
)

// fsdParams are FSD's parameters in Inferflow's float32.
type fsdParams struct {
	temp        float32 // clamped at 0.001 as Inferflow's SoftMax does
	k, n        int
	alpha, beta float32
}

func (c *Config) fsdParams() fsdParams {
	t := float32(c.Temperature)
	if t < 0.001 {
		t = 0.001
	}
	return fsdParams{temp: t, k: c.FSDK, n: c.FSDN, alpha: float32(c.FSDAlpha), beta: float32(c.FSDBeta)}
}

// fsdScratch holds FSD's buffers.
type fsdScratch struct {
	pool []cand  // the 50 largest logits; p and key hold float32 values
	cnt  []int32 // [level][candidate] occurrences after the level's context
	tot  []int32 // [level] occurrences of the level's context
	heap []cand
}

// FSDChoice returns the token Inferflow's FSD picks from one row of
// logits, given the sequence so far (prompt then generated tokens, oldest
// first) and cfg (Temperature, LogitBias, IgnoreEOS/EOS and the FSD
// fields; Mode is ignored). It is a pure function: the Sampler in ModeFSD
// returns exactly FSDChoice(logits, History(), cfg), so a run can be
// replayed from teacher-forced logits.
func FSDChoice(logits []float32, history []int, cfg Config) (int, error) {
	cfg.Mode = ModeFSD
	if err := cfg.Validate(); err != nil {
		return 0, fmt.Errorf("fsd choice: %w", err)
	}
	if len(logits) == 0 {
		return 0, fmt.Errorf("fsd choice: no logits")
	}
	s := &Sampler{cfg: cfg}
	for _, b := range cfg.LogitBias {
		s.bias = append(s.bias, biasAdd{b.Token, float32(b.Bias)})
	}
	if cfg.IgnoreEOS {
		for _, t := range cfg.EOS {
			s.bias = append(s.bias, biasAdd{t, float32(math.Inf(-1))})
		}
	}
	s.w.reset(logits)
	s.applyBias(&s.w)
	return s.fsd.choose(s.w.dense, history, cfg.fsdParams()), nil
}

func (s *Sampler) chooseFSD(logits []float32, random bool) int {
	w := &s.w
	w.reset(logits)
	s.applyBias(w)
	p := s.cfg.fsdParams()
	if random && len(s.hist)-s.nPrompt < randomFSDWarmup && s.ifRNG.nextFloat() < randomFSDChance {
		return s.fsd.sampleTopP(w.dense, p.temp, &s.ifRNG)
	}
	return s.fsd.choose(w.dense, s.hist, p)
}

// softmaxPool fills f.pool with the min(50, V) largest logits, sorted by
// probability (descending, lower id first), with p the softmax over the
// pool at temperature t computed as Inferflow's SoftMax does: float32,
// summed from the most likely down, the sum floored at 1e-5.
func (f *fsdScratch) softmaxPool(dense []float32, t float32) []cand {
	n := min(fsdPool, len(dense))
	if cap(f.heap) < n {
		f.heap = make([]cand, 0, n)
	}
	pool := heapTopK(f.heap[:0], dense, n)
	slices.SortFunc(pool, cmpLogit)
	maxL := pool[0].logit
	var sum float32
	for i := range pool {
		e := float32(math.Exp(float64((pool[i].logit - maxL) / t)))
		pool[i].p = float64(e)
		sum += e
	}
	if sum < 0.00001 {
		sum = 0.00001
	}
	for i := range pool {
		pool[i].p = float64(float32(pool[i].p) / sum)
	}
	slices.SortFunc(pool, cmpP) // Inferflow's TopKQueue order
	f.pool = pool
	return pool
}

func cmpP(a, b cand) int {
	switch {
	case a.p > b.p:
		return -1
	case a.p < b.p:
		return 1
	}
	return int(a.id) - int(b.id)
}

func cmpScore(a, b cand) int {
	switch {
	case a.key > b.key:
		return -1
	case a.key < b.key:
		return 1
	}
	return int(a.id) - int(b.id)
}

// choose is Inferflow's FsdSamplingStrategy::ChooseTokens: the k most
// likely tokens of the pool compete on (1−α)·p − α·penalty, with the
// penalty from the n-gram anti-LM over history; the best wins (lower id
// on ties).
func (f *fsdScratch) choose(dense []float32, history []int, p fsdParams) int {
	pool := f.softmaxPool(dense, p.temp)
	top := pool[:min(p.k, len(pool))]
	for i := range top {
		top[i].key = top[i].p
	}
	if f.ngram(history, p.n, p.beta, top) {
		a1 := 1 - p.alpha
		for i := range top {
			top[i].key = float64(float32(a1*float32(top[i].p)) - float32(p.alpha*float32(top[i].key)))
		}
	}
	return int(slices.MinFunc(top, cmpScore).id)
}

// ngram sets top[i].key to Inferflow's NGram::penalize score of top[i].id
// and reports true, or reports false when the history is shorter than n−1
// (Inferflow then leaves the scores at p).
//
// Level i (0 ≤ i < n) counts the tokens that followed, anywhere in the
// history, the last i tokens of the history: c_i of them are the candidate,
// t_i in all. From level n−1 down to 0, skipping levels where c_i = 0:
//
//	score += r·β·c_i/(t_i+1)  (i > 0)     score += r·c_i/t_i  (i = 0)
//	r -= r·β
//
// with r starting at 1, in float32. The counts come from one scan of the
// history, so the model is a function of the history alone.
func (f *fsdScratch) ngram(history []int, n int, beta float32, top []cand) bool {
	L := len(history)
	if L < n-1 {
		return false
	}
	k := len(top)
	if cap(f.cnt) < n*k {
		f.cnt = make([]int32, n*k)
	}
	if cap(f.tot) < n {
		f.tot = make([]int32, n)
	}
	cnt, tot := f.cnt[:n*k], f.tot[:n]
	clear(cnt)
	clear(tot)
	for j := 0; j < L; j++ {
		m := 0 // levels 1..m have their context before position j
		for m < n-1 && m < j && history[j-1-m] == history[L-1-m] {
			m++
		}
		ci := -1
		for x := range top {
			if int(top[x].id) == history[j] {
				ci = x
				break
			}
		}
		for i := 0; i <= m; i++ {
			tot[i]++
			if ci >= 0 {
				cnt[i*k+ci]++
			}
		}
	}
	for x := range top {
		r, score := float32(1), float32(0)
		for i := n - 1; i >= 0; i-- {
			c := cnt[i*k+x]
			if c == 0 {
				continue
			}
			if i == 0 {
				score += float32(r * (float32(c) / float32(tot[i])))
			} else {
				score += float32(float32(r*beta) * (float32(c) / float32(tot[i]+1)))
			}
			r -= float32(r * beta)
		}
		top[x].key = float64(score)
	}
	return true
}

// sampleTopP is randomized FSD's sampling branch: over the pool's softmax
// (probability order), keep tokens until their mass reaches 0.93 or 8 are
// kept, and draw one by Inferflow's Random::RandomSampling.
func (f *fsdScratch) sampleTopP(dense []float32, t float32, rng *javaRand) int {
	pool := f.softmaxPool(dense, t)
	kmax := min(len(pool), randomFSDMaxK)
	var cum float32
	n := 0
	for n < len(pool) {
		cum += float32(pool[n].p)
		n++
		if cum >= randomFSDTopP || n >= kmax {
			break
		}
	}
	return int(pool[rng.sample(pool[:n])].id)
}

// javaRand is Inferflow's sslib::Random, java.util.Random's 48-bit
// linear congruential generator, so randomized FSD draws what Inferflow
// draws from the same seed.
type javaRand struct{ seed uint64 }

const (
	javaMul  = 0x5DEECE66D
	javaAdd  = 0xB
	javaMask = 1<<48 - 1
)

func (r *javaRand) setSeed(s uint64) { r.seed = (s ^ javaMul) & javaMask }

func (r *javaRand) next(bits uint) int32 {
	r.seed = (r.seed*javaMul + javaAdd) & javaMask
	return int32(r.seed >> (48 - bits))
}

func (r *javaRand) nextFloat() float32 { return float32(r.next(24)) / (1 << 24) }

func (r *javaRand) nextDouble() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) / (1 << 53)
}

// sample is RandomSampling drawing one item: weights laid end to end
// (negative ones as 0), a uniform point in their total, and the same
// binary search for the range it falls in.
func (r *javaRand) sample(c []cand) int {
	var bases [randomFSDMaxK]float64
	var upper float64
	for i := range c {
		bases[i] = upper
		upper += max(0, float64(float32(c[i].p)))
	}
	x := 0.0
	if upper > 0 {
		x = r.nextDouble() * upper
	}
	lo, hi, mid := 0, len(c)-1, 0
	for lo < hi {
		mid = (lo + hi) / 2
		switch {
		case x < bases[mid]:
			hi = mid
		case x > bases[mid+1]:
			lo = mid + 1
			mid = lo
		default:
			return mid
		}
	}
	return mid
}
