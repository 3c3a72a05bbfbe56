package server

import "github.com/weftrun/weft/scheduler"

// historyPicker is the engine's view of a picker that looks back at the
// sequence (scheduler's unexported interface of the same methods).
type historyPicker interface {
	AcceptPrompt(tokens []int)
	Accept(token int)
}

// openaiPenalties applies presence_penalty and frequency_penalty as OpenAI
// defines them before its picker chooses: the logit of a token generated
// c > 0 times so far in this completion loses c·frequency + presence.
// Unlike llama.cpp's penalties (sampling.Config's, which repeat_penalty
// still uses), the prompt does not count and there is no window.
type openaiPenalties struct {
	next       scheduler.Picker
	freq, pres float32
	count      map[int]int32
	seen       []int     // the tokens of count, in order
	saved      []float32 // their logits during a Sample
}

func newOpenAIPenalties(next scheduler.Picker, freq, pres float64) *openaiPenalties {
	return &openaiPenalties{next: next, freq: float32(freq), pres: float32(pres), count: map[int]int32{}}
}

// Sample penalizes logits in place, lets the next picker choose, and puts
// the logits back (the engine computes logprobs from them afterwards).
func (p *openaiPenalties) Sample(logits []float32) int {
	p.saved = p.saved[:0]
	for _, t := range p.seen {
		p.saved = append(p.saved, logits[t])
		logits[t] -= float32(p.count[t])*p.freq + p.pres
	}
	tok := p.next.Sample(logits)
	for i, t := range p.seen {
		logits[t] = p.saved[i]
	}
	p.add(tok)
	return tok
}

func (p *openaiPenalties) add(tok int) {
	if tok < 0 {
		return
	}
	if p.count[tok] == 0 {
		p.seen = append(p.seen, tok)
	}
	p.count[tok]++
}

// AcceptPrompt passes the prompt on: it does not count here.
func (p *openaiPenalties) AcceptPrompt(tokens []int) {
	if h, ok := p.next.(historyPicker); ok {
		h.AcceptPrompt(tokens)
	}
}

// Accept counts a token the engine chose without Sample (a forced one).
func (p *openaiPenalties) Accept(token int) {
	p.add(token)
	if h, ok := p.next.(historyPicker); ok {
		h.Accept(token)
	}
}
