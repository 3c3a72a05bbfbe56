package grammar

import "sync"

// A Pool keeps finished Matchers of one grammar and vocabulary for reuse.
// A Matcher's caches (states, transitions, masks) survive Reset, so a
// generation that gets a pooled Matcher starts warm where earlier ones
// went: a server that sees the same schema again pays the cold cost once
// (see docs/grammar.md). A Pool is safe for concurrent use; the Matchers it
// hands out are not shared.
type Pool struct {
	g *Grammar
	v *Vocab
	p sync.Pool
}

// NewPool returns a Pool of Matchers of g over v.
func NewPool(g *Grammar, v *Vocab) *Pool {
	return &Pool{g: g, v: v}
}

// Get returns a Matcher at the start of the grammar: a pooled one, reset,
// or a new one.
func (p *Pool) Get() *Matcher {
	if m, ok := p.p.Get().(*Matcher); ok {
		m.Reset()
		return m
	}
	return p.g.NewMatcher(p.v)
}

// Put returns m to the pool; m must have come from p and must not be used
// afterwards.
func (p *Pool) Put(m *Matcher) {
	if m != nil && m.g == p.g && m.v == p.v {
		p.p.Put(m)
	}
}
