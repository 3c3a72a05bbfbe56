package grammar

import (
	"errors"
	"fmt"
	"math"
)

// Chooser picks a token from a row of logits: a sampler (for example a
// *sampling.Sampler) or anything with the engine's Picker method.
type Chooser interface {
	Sample(logits []float32) int
}

// historian is a Chooser that keeps the sequence's tokens (penalties,
// DRY, FSD): Constrained passes the prompt and forced tokens on to it.
type historian interface {
	AcceptPrompt(tokens []int)
	Accept(token int)
}

// Finish reasons a Constrained picker ends its sequence with.
const (
	// FinishDeadEnd: no token can continue the output under the grammar,
	// and the output is not a complete sentence either (ErrDeadEnd).
	FinishDeadEnd = "dead_end"
	// FinishComplete: the output is a complete sentence after which the
	// grammar allows nothing, not even an end-of-generation token (a
	// vocabulary without one).
	FinishComplete = "stop"
	// FinishError: the matcher failed (a grammar too ambiguous to decide
	// the mask, or a token it could not follow); Err says why.
	FinishError = "grammar_error"
)

// Constrained is a picker that keeps generated text inside a grammar: at
// each step it masks the logits with the Matcher (every token that cannot
// continue the output gets -Inf), lets the wrapped Chooser pick from what
// is left, and advances the Matcher past the choice. When no token can
// follow it picks nothing: Finish returns the reason, and the engine
// (scheduler.Finisher) ends the sequence with it.
//
// A Chooser that can pick a masked token anyway (FSD scores candidates on
// more than their probability) is overruled: the allowed token with the
// largest logit is taken instead.
//
// The mask comes from the Matcher's per-state cache (see docs/grammar.md):
// a step costs one copy of the row, the writes of -Inf and, in a state not
// seen before, one walk of the vocabulary's prefix tree. Constrained is not
// safe for concurrent use; it serves one sequence.
type Constrained struct {
	inner   Chooser
	m       *Matcher
	scratch []float32
	bits    []uint64
	reason  string
	err     error
}

// NewConstrained returns a picker that constrains inner's choices to m's
// grammar. m should be at the start of its grammar (NewMatcher, Pool.Get).
func NewConstrained(inner Chooser, m *Matcher) *Constrained {
	return &Constrained{inner: inner, m: m}
}

// Reset puts the picker and its matcher back at the start of the grammar
// for a new sequence (the matcher's caches stay warm).
func (c *Constrained) Reset() {
	c.m.Reset()
	c.reason, c.err = "", nil
}

// Matcher returns the matcher the picker advances.
func (c *Constrained) Matcher() *Matcher { return c.m }

// Sample picks the next token from logits (not modified), or returns -1
// and sets Finish when the grammar allows no token.
func (c *Constrained) Sample(logits []float32) int {
	if c.reason != "" {
		return -1
	}
	if cap(c.scratch) < len(logits) {
		c.scratch = make([]float32, len(logits))
	}
	row := c.scratch[:len(logits)]
	n, err := c.maskInto(row, logits)
	switch {
	case errors.Is(err, ErrDeadEnd):
		return c.end(FinishDeadEnd, err)
	case err != nil && !errors.Is(err, ErrTooComplex):
		return c.end(FinishError, err)
	case n == 0 && err == nil:
		return c.end(FinishComplete, nil)
	case n == 0:
		return c.end(FinishError, err)
	}
	var tok int
	if ch, ok := c.inner.(chooseAccepter); ok {
		// Choose, then tell the picker what was taken: the history gets
		// the final token even when it is overruled.
		tok = ch.Choose(row)
		if !allowedTok(row, tok) {
			tok = argmaxAllowed(row)
		}
		ch.Accept(tok)
	} else if tok = c.inner.Sample(row); !allowedTok(row, tok) {
		tok = argmaxAllowed(row)
	}
	if err := c.m.Accept(tok); err != nil {
		return c.end(FinishError, err)
	}
	return tok
}

// maskInto writes src masked by the matcher's current mask into dst, in
// one pass: whole words of 64 allowed tokens are copied, words of none are
// filled with -Inf.
func (c *Constrained) maskInto(dst, src []float32) (int, error) {
	size := c.m.v.size
	if len(src) < size {
		return 0, fmt.Errorf("grammar: %d logits, vocabulary has %d", len(src), size)
	}
	if need := (size + 63) / 64; len(c.bits) < need {
		c.bits = make([]uint64, need)
	}
	n, err := c.m.FillMask(c.bits)
	if err != nil && !errors.Is(err, ErrDeadEnd) && !errors.Is(err, ErrTooComplex) {
		return n, err
	}
	inf := float32(math.Inf(-1))
	for w, x := range c.bits[:(size+63)/64] {
		lo := w << 6
		hi := min(lo+64, size)
		d, s := dst[lo:hi], src[lo:hi]
		switch x {
		case 0:
			for j := range d {
				d[j] = inf
			}
		case ^uint64(0):
			copy(d, s)
		default:
			for j := range d {
				if x&(1<<j) != 0 {
					d[j] = s[j]
				} else {
					d[j] = inf
				}
			}
		}
	}
	for j := size; j < len(dst); j++ {
		dst[j] = inf // ids past the grammar's vocabulary are never allowed
	}
	return n, err
}

// chooseAccepter picks without recording (a *sampling.Sampler's Choose),
// and records separately.
type chooseAccepter interface {
	Choose(logits []float32) int
	Accept(token int)
}

func allowedTok(row []float32, tok int) bool {
	return tok >= 0 && tok < len(row) && !math.IsInf(float64(row[tok]), -1)
}

func argmaxAllowed(row []float32) int {
	best, bv := 0, float32(math.Inf(-1))
	for i, v := range row {
		if v > bv {
			best, bv = i, v
		}
	}
	return best
}

func (c *Constrained) end(reason string, err error) int {
	c.reason, c.err = reason, err
	return -1
}

// Finish returns why the picker stopped ("" while it goes on):
// FinishDeadEnd, FinishComplete or FinishError.
func (c *Constrained) Finish() string { return c.reason }

// Err returns the matcher's error behind Finish, if any.
func (c *Constrained) Err() error { return c.err }

// AcceptPrompt passes the prompt on to the wrapped picker (the grammar
// constrains generated text only).
func (c *Constrained) AcceptPrompt(tokens []int) {
	if h, ok := c.inner.(historian); ok {
		h.AcceptPrompt(tokens)
	}
}

// Accept advances past a token chosen elsewhere (a forced token) and
// passes it on to the wrapped picker. A token the grammar does not allow
// ends the picker with FinishError.
func (c *Constrained) Accept(token int) {
	if h, ok := c.inner.(historian); ok {
		h.Accept(token)
	}
	if c.reason != "" {
		return
	}
	if err := c.m.Accept(token); err != nil {
		c.end(FinishError, err)
	}
}
