package server

import "github.com/weftrun/weft/sampling"

// openaiPenalties applies presence_penalty and frequency_penalty as OpenAI
// defines them before its sampler chooses: the logit of a token generated
// c > 0 times so far in this completion loses c·frequency + presence.
// Unlike llama.cpp's penalties (sampling.Config's, which repeat_penalty
// still uses), the prompt does not count and there is no window.
//
// It is a scheduler.Picker that keeps a history (AcceptPrompt, Accept) and
// can Choose without accepting, as the grammar's constrained picker asks.
type openaiPenalties struct {
	next       *sampling.Sampler
	freq, pres float32
	count      map[int]int32
	seen       []int     // the tokens of count, in order
	saved      []float32 // their logits during a Choose
}

func newOpenAIPenalties(next *sampling.Sampler, freq, pres float64) *openaiPenalties {
	return &openaiPenalties{next: next, freq: float32(freq), pres: float32(pres), count: map[int]int32{}}
}

// Choose penalizes logits in place, lets the sampler choose, and puts the
// logits back (the engine computes logprobs from them afterwards).
func (p *openaiPenalties) Choose(logits []float32) int {
	p.saved = p.saved[:0]
	for _, t := range p.seen {
		p.saved = append(p.saved, logits[t])
		logits[t] -= float32(p.count[t])*p.freq + p.pres
	}
	tok := p.next.Choose(logits)
	for i, t := range p.seen {
		logits[t] = p.saved[i]
	}
	return tok
}

// Sample chooses and accepts the token.
func (p *openaiPenalties) Sample(logits []float32) int {
	tok := p.Choose(logits)
	p.Accept(tok)
	return tok
}

// AcceptPrompt passes the prompt on to the sampler (for repeat_penalty): it
// does not count here.
func (p *openaiPenalties) AcceptPrompt(tokens []int) { p.next.AcceptPrompt(tokens) }

// Accept counts a generated token (one from Choose, or a forced one).
func (p *openaiPenalties) Accept(tok int) {
	if tok >= 0 {
		if p.count[tok] == 0 {
			p.seen = append(p.seen, tok)
		}
		p.count[tok]++
	}
	p.next.Accept(tok)
}
