package sampling

import (
	"fmt"
	"math"
	"strings"
)

// penState counts the tokens of the penalty window during one step.
type penState struct {
	cnt  []int32 // by token id; all zero between steps
	seen []int   // the distinct tokens counted
}

func (s *Sampler) penaltiesOn() bool {
	c := &s.cfg
	return c.RepeatLastN != 0 &&
		(c.RepeatPenalty != 0 && c.RepeatPenalty != 1 || c.FrequencyPenalty != 0 || c.PresencePenalty != 0)
}

// window returns the last n tokens of the history (all of it for n < 0).
func (s *Sampler) window(n int) []int {
	if n < 0 || n >= len(s.hist) {
		return s.hist
	}
	return s.hist[len(s.hist)-n:]
}

// penalties is llama.cpp's penalties sampler. For each token seen c > 0
// times in the last RepeatLastN tokens: a logit ≤ 0 is multiplied by the
// repeat penalty, a positive one divided by it, then c·frequency +
// presence is subtracted (all in float32).
func (s *Sampler) penalties(w *work) {
	if !s.penaltiesOn() {
		return
	}
	p := &s.pen
	vocab := w.vocab
	if len(p.cnt) < vocab {
		p.cnt = make([]int32, vocab)
	}
	for _, t := range s.window(s.cfg.RepeatLastN) {
		if t < 0 || t >= vocab {
			continue
		}
		if p.cnt[t] == 0 {
			p.seen = append(p.seen, t)
		}
		p.cnt[t]++
	}
	rp := float32(s.cfg.RepeatPenalty)
	if rp == 0 {
		rp = 1
	}
	freq, pres := float32(s.cfg.FrequencyPenalty), float32(s.cfg.PresencePenalty)
	pen := func(l float32, n int32) float32 {
		if l <= 0 {
			l *= rp
		} else {
			l /= rp
		}
		return l - (float32(float32(n)*freq) + pres)
	}
	if w.isDense {
		d := w.writable()
		for _, t := range p.seen {
			d[t] = pen(d[t], p.cnt[t])
		}
	} else {
		for i := range w.c {
			if n := p.cnt[w.c[i].id]; n > 0 {
				w.c[i].logit = pen(w.c[i].logit, n)
			}
		}
		w.changed()
	}
	for _, t := range p.seen {
		p.cnt[t] = 0
	}
	p.seen = p.seen[:0]
}

// dryState is DRY's scratch.
type dryState struct {
	z       []int32 // Z-array of the reversed window
	rep     []int32 // by token id: longest repetition it would extend, -1: none
	touched []int
}

func (s *Sampler) dryOn() bool {
	c := &s.cfg
	return c.DryMultiplier > 0 && c.DryBase >= 1 && c.DryPenaltyLastN != 0
}

// applyDRY is llama.cpp's DRY ("don't repeat yourself", from koboldcpp).
// Over the last DryPenaltyLastN tokens w: a token that would extend a
// repetition — a suffix of w of length L ≥ DryAllowedLength that also
// occurs earlier in w, followed there by that token — loses
// multiplier·base^(L−allowed) from its logit, L being its longest such
// repetition. Repetitions cannot reach back past the most recent sequence
// breaker, and single-token breakers are never penalised.
func (s *Sampler) applyDRY(w *work) {
	if !s.dryOn() {
		return
	}
	win := s.window(s.cfg.DryPenaltyLastN)
	n := len(win)
	allowed := s.cfg.DryAllowedLength
	if n <= allowed {
		return
	}
	back := func(i int) int { return win[n-1-i] } // i tokens before the last
	limit := n
	if s.breakers != nil {
	scan:
		for i := 0; i < n; i++ {
			tails, ok := s.breakers[back(i)]
			if !ok {
				continue
			}
			longest := -1
			for _, tail := range tails {
				if len(tail) <= longest || len(tail) > i {
					continue
				}
				match := true
				for off, t := range tail {
					if t != back(i-off-1) {
						match = false
						break
					}
				}
				if match {
					longest = len(tail)
				}
			}
			if longest >= 0 {
				limit = i - longest
				break scan
			}
		}
	}
	if limit < allowed {
		return
	}

	// z[k]: how many tokens, going back from the last one, match those
	// going back from k before the last (the Z-algorithm on the reversed
	// window).
	d := &s.dry
	if cap(d.z) < n {
		d.z = make([]int32, n, max(n, 2*cap(d.z)))
	}
	z := d.z[:n]
	l, r := 0, 0
	for k := 1; k < n; k++ {
		m := 0
		if k < r {
			m = min(r-k, int(z[k-l]))
		}
		for k+m < n && back(m) == back(k+m) {
			m++
		}
		z[k] = int32(m)
		if k+m > r {
			l, r = k, k+m
		}
	}

	vocab := w.vocab
	if len(d.rep) < vocab {
		d.rep = make([]int32, vocab)
		for i := range d.rep {
			d.rep[i] = -1
		}
	}
	for k := 1; k < n; k++ {
		rl := min(int(z[k]), limit)
		if rl < allowed {
			continue
		}
		t := back(k - 1) // the token that followed the earlier occurrence
		if t < 0 || t >= vocab {
			continue
		}
		if d.rep[t] < 0 {
			d.touched = append(d.touched, t)
		}
		d.rep[t] = max(d.rep[t], int32(rl))
	}

	base := float32(s.cfg.DryBase)
	maxExp := 0
	if base > 1.000001 {
		maxExp = int(float32(88.7228391) / float32(math.Log(float64(base))))
	}
	mult := float32(s.cfg.DryMultiplier)
	penalty := func(t int) float32 {
		e := int(d.rep[t]) - allowed
		if maxExp > 0 && e > maxExp {
			e = maxExp
		}
		return float32(float64(mult) * math.Pow(float64(base), float64(e)))
	}
	if w.isDense {
		dl := w.writable()
		for _, t := range d.touched {
			if !s.singleBreaker(t) {
				dl[t] -= penalty(t)
			}
		}
	} else {
		for i := range w.c {
			t := int(w.c[i].id)
			if d.rep[t] >= 0 && !s.singleBreaker(t) {
				w.c[i].logit -= penalty(t)
			}
		}
		w.changed()
	}
	for _, t := range d.touched {
		d.rep[t] = -1
	}
	d.touched = d.touched[:0]
}

func (s *Sampler) singleBreaker(t int) bool {
	for _, tail := range s.breakers[t] {
		if len(tail) == 0 {
			return true
		}
	}
	return false
}

// DryBreakers turns llama.cpp's --dry-sequence-breaker strings into the
// token sequences of Config.DrySequenceBreakers, as llama.cpp does: a
// token whose text contains a breaker is a breaker on its own; a token
// whose text ends with the start of a breaker is the head of a sequence
// whose tail is the rest of the breaker, tokenized (at most 20 tokens).
// Breakers are cut to 40 bytes; empty ones are skipped. piece returns the
// text of a token id (llama.cpp renders special tokens too); tokenize must
// not add BOS or other special tokens.
func DryBreakers(breakers []string, vocabSize int, piece func(id int) string, tokenize func(string) ([]int, error)) ([][]int, error) {
	const maxChars, maxTail = 40, 20
	var out [][]int
	have := func(seq []int) bool {
		for _, o := range out {
			if len(o) == len(seq) {
				same := true
				for j := range o {
					if o[j] != seq[j] {
						same = false
						break
					}
				}
				if same {
					return true
				}
			}
		}
		return false
	}
	tails := map[string][]int{} // tokenizations of breaker suffixes
	for _, br := range breakers {
		if br == "" {
			continue
		}
		if len(br) > maxChars {
			br = br[:maxChars]
		}
		for id := 0; id < vocabSize; id++ {
			word := piece(id)
			if strings.Contains(word, br) {
				if seq := []int{id}; !have(seq) {
					out = append(out, seq)
				}
				continue
			}
			for pos := 0; pos < len(word); pos++ {
				if word[pos] != br[0] {
					continue
				}
				i := 1
				for ; i < len(br) && pos+i < len(word); i++ {
					if word[pos+i] != br[i] {
						break
					}
				}
				if i < len(br) && pos+i < len(word) { // mismatch inside the word
					continue
				}
				rest := br[i:]
				tail, ok := tails[rest]
				if !ok {
					t, err := tokenize(rest)
					if err != nil {
						return nil, fmt.Errorf("dry sequence breaker %q: tokenize %q: %w", br, rest, err)
					}
					if len(t) > maxTail {
						t = t[:maxTail]
					}
					tails[rest], tail = t, t
				}
				seq := append([]int{id}, tail...)
				if !have(seq) {
					out = append(out, seq)
				}
			}
		}
	}
	return out, nil
}
