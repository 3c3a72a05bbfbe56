package scheduler

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/weftrun/weft/backend"
)

// Drafter proposes tokens for speculative decoding: the engine feeds
// them, after the sequence's last token, in one batched step of the target
// model and keeps the longest prefix the target's own choices agree with.
//
// Draft appends to dst up to max tokens that may follow seq (the prompt,
// then the generated tokens, oldest first) and returns dst. Drafts are
// deterministic choices (a one-hot draft distribution q), so verification
// by sampling the target and comparing is exactly the rejection rule
// accept with min(1, p/q), else resample from the normalised residual
// (see AcceptDraft): the output is the one plain decoding gives.
type Drafter interface {
	Draft(dst, seq []int, max int) []int
}

// NGramDrafter is prompt lookup decoding: it finds the latest earlier
// occurrence of the last N tokens of the sequence (then of fewer, down
// to 1) and proposes the tokens that followed it. It needs no model and
// pays off on text that repeats its context (code, lists, quotes).
type NGramDrafter struct {
	N int // longest n-gram matched (llama.cpp's lookup: 3 or 4)
}

// Draft implements Drafter.
func (d NGramDrafter) Draft(dst, seq []int, max int) []int {
	L := len(seq)
	for n := min(d.N, L-1); n >= 1; n-- {
		pat := seq[L-n:]
		for i := L - n - 1; i >= 0; i-- {
			if seq[i] != pat[0] || !slices.Equal(seq[i:i+n], pat) {
				continue
			}
			end := min(i+n+max, L)
			return append(dst, seq[i+n:end]...)
		}
	}
	return dst
}

// greedy is the draft model's picker.
type greedy struct{}

func (greedy) Sample(logits []float32) int {
	best, bv := 0, float32(math.Inf(-1))
	for i, v := range logits {
		if v > bv {
			best, bv = i, v
		}
	}
	return best
}

// ModelDrafter drafts with a smaller model of the same vocabulary: each
// round it decodes greedily from the whole sequence on its own engine,
// whose prefix cache keeps the full blocks of the sequence from round to
// round (only the last partial block and the drafts are computed again).
type ModelDrafter struct {
	Engine *Engine
	// Context bounds the draft engine's sequence (0: its engine's
	// context); longer sequences are cut to their most recent tokens.
	Context int
}

// Draft implements Drafter. A failure of the draft engine drafts nothing
// (decoding goes on without speculation).
func (d *ModelDrafter) Draft(dst, seq []int, max int) []int {
	lim := d.Context
	if lim == 0 {
		lim = d.Engine.ctx
	}
	if lim > 0 {
		if max >= lim {
			return dst
		}
		if over := len(seq) + max - lim; over > 0 {
			seq = seq[over:]
		}
	}
	for _, t := range seq {
		if t < 0 || t >= d.Engine.vocab {
			return dst
		}
	}
	toks, err := d.Engine.Generate(context.Background(), Request{Prompt: seq, MaxTokens: max, Sampler: greedy{}}, nil)
	if err != nil {
		return dst
	}
	return append(dst, toks...)
}

// AcceptDraft is speculative sampling's verification of one draft token
// (Leviathan et al. 2023, Chen et al. 2023): with p the target's and q the
// draft's distribution at this position and x the drafted token (drawn
// from q), x is accepted with probability min(1, p(x)/q(x)); otherwise
// the token is drawn from the residual max(0, p − q), normalised. The
// result is distributed as p whatever q is. It returns the token and
// whether it is x.
func AcceptDraft(p, q []float64, x int, rng *rand.Rand) (int, bool) {
	if q[x] > 0 && rng.Float64()*q[x] < p[x] {
		return x, true
	}
	var sum float64
	for i := range p {
		sum += max(0, p[i]-q[i])
	}
	if sum <= 0 {
		return x, true // p = q: nothing to correct
	}
	u := rng.Float64() * sum
	last := 0
	for i := range p {
		r := max(0, p[i]-q[i])
		if r <= 0 {
			continue
		}
		last = i
		if u < r {
			return i, false
		}
		u -= r
	}
	return last, false
}

// adapt sets the next step's draft length from this one's outcome, kept
// of drafted: a step whose drafts were all kept drafts twice as many next
// time (up to DraftMax), one that kept some drafts one more than it kept,
// and one that kept none makes the next 1, 3, 7, … 31 steps (after 1, 2,
// 3, … such steps in a row) plain ones. The tokens do not depend on it,
// only the work wasted on drafts the target rejects: a verify step of k
// tokens costs up to k times a plain one on a CPU (docs/performance.md).
func (q *query) adapt(kept, drafted int) {
	switch {
	case drafted == 0:
		return
	case kept == drafted:
		q.draftLen = min(2*q.draftLen, q.req.DraftMax)
		q.misses = 0
	case kept > 0:
		q.draftLen = kept + 1
		q.misses = 0
	default:
		q.draftLen = max(1, q.draftLen/2)
		q.misses++
		q.skip = 1<<min(q.misses, 5) - 1
	}
	q.draftLen = max(q.draftLen, q.req.DraftMin, 1) // shorter drafts would never run
}

// truncRuns drops the last n rows of a history.
func truncRuns(h []backend.KVRun, n int) []backend.KVRun {
	for n > 0 && len(h) > 0 {
		last := &h[len(h)-1]
		if int(last.N) <= n {
			n -= int(last.N)
			h = h[:len(h)-1]
			continue
		}
		last.N -= int32(n)
		n = 0
	}
	return h
}

// speculate adds q's single sequence to the step: its last token, then
// the drafter's tokens, each attending over the history and the tokens
// before it (one view, growing lengths, as a prompt chunk).
func (e *Engine) speculate(q *query) error {
	st := &e.step
	sq := &q.seqs[0]
	if sq.done {
		return nil
	}
	if q.draftLen == 0 {
		q.draftLen = q.req.DraftMax
	}
	k := min(q.draftLen, q.req.MaxTokens-len(sq.tokens)-1, e.plan.MaxTokens-len(st.Tokens)-1)
	if q.skip > 0 {
		q.skip--
		k = 0
	}
	if e.ctx > 0 {
		k = min(k, e.ctx-q.pos-1)
	}
	q.draft = q.draft[:0]
	if k > 0 {
		q.seqBuf = append(append(q.seqBuf[:0], q.req.Prompt...), sq.tokens...)
		q.draft = q.req.Draft.Draft(q.draft, q.seqBuf, k)
		if len(q.draft) > k {
			q.draft = q.draft[:k]
		}
		for i, t := range q.draft {
			if t < 0 || t >= e.vocab {
				q.draft = q.draft[:i]
				break
			}
		}
		if len(q.draft) < q.req.DraftMin {
			q.draft = q.draft[:0]
		}
	}
	mark, hist := len(st.Tokens), len(sq.hist)
	var last backend.KVRun
	if hist > 0 {
		last = sq.hist[hist-1]
	}
	base := 0
	for _, r := range sq.hist {
		base += int(r.N)
	}
	view := e.view()
	for i := 0; i <= len(q.draft); i++ {
		loc, err := e.respLoc(q, q.t+i, 0)
		if err != nil {
			if i == 0 {
				st.Tokens, st.Pos, st.Seq, st.Loc, st.View, st.Len = st.Tokens[:mark], st.Pos[:mark], st.Seq[:mark], st.Loc[:mark], st.View[:mark], st.Len[:mark]
				st.Views = st.Views[:view]
				sq.hist = sq.hist[:hist]
				if hist > 0 {
					sq.hist[hist-1] = last
				}
				return err
			}
			q.draft = q.draft[:i-1] // the KV budget holds fewer drafts
			break
		}
		sq.hist = appendRun(sq.hist, loc)
		tok := sq.next
		if i > 0 {
			tok = q.draft[i-1]
		}
		e.addToken(tok, q.pos+i, loc, view, base+i+1, true)
		st.Keep = append(st.Keep, int32(len(st.Tokens)-1))
		e.rows = append(e.rows, rowRef{q, 0})
	}
	st.Views[view] = append(st.Views[view], sq.hist...)
	q.drafted += len(q.draft)
	return nil
}

// verify consumes the rows [i, j) of q's speculative step: the target
// picks from each row in turn, as plain decoding would, while its choice
// equals the draft fed after it. The rows of the drafts it did not keep
// leave the history (their KV rows are written over later).
func (e *Engine) verify(events []TokenEvent, q *query, i, j int, rowOf func(int) []float32) []TokenEvent {
	sq := &q.seqs[0]
	n := 0 // fed tokens whose rows stay: the last token and the kept drafts
	for r := i; r < j; r++ {
		n++
		events = e.pick(events, q, 0, rowOf(r))
		d := r - i
		if sq.done || d >= len(q.draft) || sq.next != q.draft[d] {
			break
		}
		q.accepted++
	}
	q.t += n
	q.pos += n
	sq.hist = truncRuns(sq.hist, j-i-n)
	q.adapt(n-1, len(q.draft))
	if sq.done && len(events) > 0 {
		events[len(events)-1].Drafted, events[len(events)-1].Accepted = q.drafted, q.accepted
	}
	return events
}
