// Package sampling picks the next token from a row of logits: greedy,
// temperature, top-k, top-p (nucleus) and min-p, seeded for
// reproducibility.
package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Config selects a decoding strategy. Temperature 0 means greedy.
type Config struct {
	Temperature float64
	TopK        int     // 0: off
	TopP        float64 // 0 or 1: off
	MinP        float64 // 0: off
	Seed        uint64
}

// Validate reports a config a user should fix.
func (c Config) Validate() error {
	switch {
	case c.Temperature < 0 || math.IsNaN(c.Temperature):
		return fmt.Errorf("temperature %v must be ≥ 0", c.Temperature)
	case c.TopK < 0:
		return fmt.Errorf("top-k %d must be ≥ 0", c.TopK)
	case c.TopP < 0 || c.TopP > 1 || math.IsNaN(c.TopP):
		return fmt.Errorf("top-p %v must be in [0, 1]", c.TopP)
	case c.MinP < 0 || c.MinP > 1 || math.IsNaN(c.MinP):
		return fmt.Errorf("min-p %v must be in [0, 1]", c.MinP)
	}
	return nil
}

// Sampler draws tokens under one Config. It reuses its buffers, so a
// Sampler serves one sequence at a time.
type Sampler struct {
	cfg  Config
	rng  *rand.Rand
	cand []cand
}

type cand struct {
	id int
	p  float64
}

// New returns a sampler.
func New(cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}, nil
}

// Greedy returns the index of the largest logit (the lowest index on ties).
func Greedy(logits []float32) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return best
}

// Sample picks a token from logits (not modified). The filters run in
// llama.cpp's default order on the untempered distribution: top-k, then
// top-p (over the probabilities of what top-k left), then min-p; the
// temperature then scales the survivors before the draw. Only the
// survivors are sorted, so a step costs O(vocab) plus a small sort.
func (s *Sampler) Sample(logits []float32) int {
	if s.cfg.Temperature == 0 {
		return Greedy(logits)
	}
	c := s.cand[:0]
	if k := s.cfg.TopK; k > 0 && k < len(logits) {
		c = topK(c, logits, k)
	} else {
		for i, v := range logits {
			c = append(c, cand{i, float64(v)})
		}
	}
	maxL := math.Inf(-1)
	for _, x := range c {
		maxL = max(maxL, x.p)
	}
	// Z normalises the untempered distribution over the candidates.
	var z float64
	for _, x := range c {
		z += math.Exp(x.p - maxL)
	}
	// min-p cuts at p ≥ minp·pmax, i.e. logit ≥ max + ln(minp): filter
	// before sorting, since no token below it can survive.
	if mp := s.cfg.MinP; mp > 0 {
		lim := maxL + math.Log(mp)
		kept := c[:0]
		for _, x := range c {
			if x.p >= lim {
				kept = append(kept, x)
			}
		}
		c = kept
	}
	if tp := s.cfg.TopP; tp > 0 && tp < 1 {
		slices.SortFunc(c, func(a, b cand) int {
			switch {
			case a.p > b.p:
				return -1
			case a.p < b.p:
				return 1
			}
			return a.id - b.id
		})
		var cum float64
		n := 0
		for n < len(c) {
			cum += math.Exp(c[n].p-maxL) / z
			n++
			if cum >= tp {
				break
			}
		}
		c = c[:n]
	}
	// temperature, then draw
	var total float64
	for i := range c {
		c[i].p = math.Exp((c[i].p - maxL) / s.cfg.Temperature)
		total += c[i].p
	}
	s.cand = c
	r := s.rng.Float64() * total
	for _, x := range c {
		r -= x.p
		if r <= 0 {
			return x.id
		}
	}
	return c[len(c)-1].id
}

// topK appends the k largest logits to c (unordered) using a min-heap.
func topK(c []cand, logits []float32, k int) []cand {
	for i, v := range logits {
		x := cand{i, float64(v)}
		if len(c) < k {
			c = append(c, x)
			for j := len(c) - 1; j > 0; { // sift up
				p := (j - 1) / 2
				if c[p].p <= c[j].p {
					break
				}
				c[p], c[j] = c[j], c[p]
				j = p
			}
			continue
		}
		if x.p <= c[0].p {
			continue
		}
		c[0] = x
		for j := 0; ; { // sift down
			l, r, m := 2*j+1, 2*j+2, j
			if l < k && c[l].p < c[m].p {
				m = l
			}
			if r < k && c[r].p < c[m].p {
				m = r
			}
			if m == j {
				break
			}
			c[j], c[m] = c[m], c[j]
			j = m
		}
	}
	return c
}
