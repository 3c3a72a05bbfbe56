// Package sampling picks the next token from a row of logits: greedy,
// temperature, top-k, top-p (nucleus) and min-p, seeded for
// reproducibility.
package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
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

// Sample picks a token from logits (not modified).
func (s *Sampler) Sample(logits []float32) int {
	if s.cfg.Temperature == 0 {
		return Greedy(logits)
	}
	c := s.cand[:0]
	for i, v := range logits {
		c = append(c, cand{i, float64(v) / s.cfg.Temperature})
	}
	sort.Slice(c, func(i, j int) bool { return c[i].p > c[j].p || c[i].p == c[j].p && c[i].id < c[j].id })
	if k := s.cfg.TopK; k > 0 && k < len(c) {
		c = c[:k]
	}
	// softmax over the survivors
	m := c[0].p
	var sum float64
	for i := range c {
		c[i].p = math.Exp(c[i].p - m)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
	if mp := s.cfg.MinP; mp > 0 {
		lim := c[0].p * mp
		n := 1
		for n < len(c) && c[n].p >= lim {
			n++
		}
		c = c[:n]
	}
	if tp := s.cfg.TopP; tp > 0 && tp < 1 {
		var cum float64
		n := 0
		for n < len(c) {
			cum += c[n].p
			n++
			if cum >= tp {
				break
			}
		}
		c = c[:n]
	}
	var total float64
	for _, x := range c {
		total += x.p
	}
	r := s.rng.Float64() * total
	for _, x := range c {
		r -= x.p
		if r <= 0 {
			s.cand = c
			return x.id
		}
	}
	s.cand = c
	return c[len(c)-1].id
}
