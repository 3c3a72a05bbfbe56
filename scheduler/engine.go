package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// Picker chooses the next token from a logits row.
type Picker interface {
	Sample(logits []float32) int
}

// Request is one generation query.
type Request struct {
	Prompt    []int // token ids, BOS included when wanted
	MaxTokens int   // tokens to generate
	Sampler   Picker
	// Force feeds exactly these tokens as the generated ones (teacher
	// forcing), still reporting each step's logits.
	Force []int
	// Stop ends generation after a token for which it returns true (EOS).
	Stop func(token int) bool
	// KeepLogits copies each step's logits row into its TokenEvent.
	KeepLogits bool
}

// TokenEvent reports one generated token of one query.
type TokenEvent struct {
	Query  int
	Token  int
	Index  int       // 0-based index among the query's generated tokens
	Logits []float32 // the row the token was chosen from (KeepLogits)
	Done   bool
	Reason string // "length", "stop" when Done
}

type query struct {
	id     int
	req    Request
	seq    int
	fed    int   // prompt tokens already processed
	tokens []int // generated
	next   int   // token to feed in the next decode step (-1 during prefill)
	done   bool
}

// Engine runs many queries over one plan with continuous batching: each
// Infer call advances every active query by one step, packing prompt
// chunks and decode tokens of different sequences into one batch. The
// engine owns its plan's backends: Close releases them.
type Engine struct {
	plan    *Plan
	kv      *KV
	vocab   int
	queries []*query
	nextID  int
	step    backend.Step
	rowQ    []*query
	stepQ   []*query // queries with tokens in the current step
	events  []TokenEvent
	Profile *Profile
}

// Options configures NewEngine.
type Options struct {
	// Context bounds the cached positions of one sequence (0: no limit).
	Context int
	// KVType is the KV cache's element type.
	KVType backend.KVType
}

// NewEngine makes an engine running plan, which it owns from then on,
// with KV stores on the plan's devices as opt says.
func NewEngine(plan *Plan, opt Options) (*Engine, error) {
	if len(plan.outTs) == 0 {
		return nil, errors.New("engine: the graph has no output")
	}
	kv, err := plan.NewKV(opt.Context, opt.KVType)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	out := plan.outTs[0]
	return &Engine{plan: plan, kv: kv, vocab: out.Shape[len(out.Shape)-1]}, nil
}

// Close releases the plan's backends (their worker threads). The engine
// must not be used afterwards.
func (e *Engine) Close() error {
	e.plan.Close()
	var first error
	for _, b := range e.plan.backends {
		if err := b.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Plan returns the engine's plan.
func (e *Engine) Plan() *Plan { return e.plan }

// Vocab returns the width of the first output (logits).
func (e *Engine) Vocab() int { return e.vocab }

// KV returns the engine's cache.
func (e *Engine) KV() *KV { return e.kv }

// AddQuery queues a request and returns its id.
func (e *Engine) AddQuery(r Request) (int, error) {
	if len(r.Prompt) == 0 {
		return 0, errors.New("add query: empty prompt")
	}
	if r.MaxTokens < 1 {
		return 0, fmt.Errorf("add query: max tokens %d (at least 1)", r.MaxTokens)
	}
	if r.Sampler == nil && len(r.Force) < r.MaxTokens {
		return 0, errors.New("add query: no sampler")
	}
	if lim := e.kv.Limit(); lim > 0 && len(r.Prompt)+r.MaxTokens > lim {
		return 0, fmt.Errorf("add query: %d prompt + %d new tokens exceed the context of %d", len(r.Prompt), r.MaxTokens, lim)
	}
	for _, t := range r.Prompt {
		if t < 0 || t >= e.vocab {
			return 0, fmt.Errorf("add query: prompt token %d outside the vocabulary of %d", t, e.vocab)
		}
	}
	for _, t := range r.Force {
		if t < 0 || t >= e.vocab {
			return 0, fmt.Errorf("add query: forced token %d outside the vocabulary of %d", t, e.vocab)
		}
	}
	q := &query{id: e.nextID, req: r, seq: e.nextID, next: -1, tokens: make([]int, 0, r.MaxTokens)}
	e.nextID++
	e.kv.Reserve(q.seq, len(r.Prompt))
	e.queries = append(e.queries, q)
	return q.id, nil
}

// Active returns the number of unfinished queries.
func (e *Engine) Active() int { return len(e.queries) }

// Cancel removes a query.
func (e *Engine) Cancel(id int) {
	for i, q := range e.queries {
		if q.id == id {
			e.kv.Drop(q.seq)
			e.queries = append(e.queries[:i], e.queries[i+1:]...)
			return
		}
	}
}

// Infer advances every active query one step: a prompt chunk for queries
// still in prefill, one token for the others. It returns the tokens
// produced in this step; the slice is reused by the next call.
func (e *Engine) Infer(ctx context.Context) ([]TokenEvent, error) {
	if len(e.queries) == 0 {
		return nil, nil
	}
	st := &e.step
	st.Tokens, st.Pos, st.Seq, st.Keep = st.Tokens[:0], st.Pos[:0], st.Seq[:0], st.Keep[:0]
	e.rowQ = e.rowQ[:0]
	e.stepQ = e.stepQ[:0]
	budget := e.plan.MaxTokens
	// Decoding queries first: one token each keeps their latency low
	// while long prompts are chunked into what the step has left.
	for _, q := range e.queries {
		if q.next < 0 || budget == 0 {
			continue
		}
		st.Tokens = append(st.Tokens, int32(q.next))
		st.Pos = append(st.Pos, int32(len(q.req.Prompt)+len(q.tokens)-1))
		st.Seq = append(st.Seq, int32(q.seq))
		st.Keep = append(st.Keep, int32(len(st.Tokens)-1))
		e.rowQ = append(e.rowQ, q)
		e.stepQ = append(e.stepQ, q)
		budget--
	}
	for _, q := range e.queries {
		if q.next >= 0 || budget == 0 {
			continue
		}
		n := min(len(q.req.Prompt)-q.fed, budget)
		for i := 0; i < n; i++ {
			st.Tokens = append(st.Tokens, int32(q.req.Prompt[q.fed+i]))
			st.Pos = append(st.Pos, int32(q.fed+i))
			st.Seq = append(st.Seq, int32(q.seq))
		}
		q.fed += n
		budget -= n
		e.stepQ = append(e.stepQ, q)
		if q.fed == len(q.req.Prompt) {
			st.Keep = append(st.Keep, int32(len(st.Tokens)-1))
			e.rowQ = append(e.rowQ, q)
		}
	}
	outs, err := e.plan.Run(ctx, st, e.kv, e.Profile)
	if err != nil {
		// The step failed as a whole: end every query that had tokens in
		// it (their cache is incomplete), keep the engine and the others.
		for _, q := range e.stepQ {
			e.Cancel(q.id)
		}
		return nil, err
	}
	logits := outs[0]
	rows := tensor.BytesToF32(logits.Data)
	gathered := ops.Rows(logits) == len(st.Keep)
	events := e.events[:0]
	for i, q := range e.rowQ {
		r := i
		if !gathered {
			r = int(st.Keep[i])
		}
		row := rows[r*e.vocab : (r+1)*e.vocab]
		var tok int
		if k := len(q.tokens); k < len(q.req.Force) {
			tok = q.req.Force[k]
		} else {
			tok = q.req.Sampler.Sample(row)
			if tok < 0 || tok >= e.vocab {
				e.Cancel(q.id)
				return events, fmt.Errorf("query %d: the sampler chose token %d outside the vocabulary of %d", q.id, tok, e.vocab)
			}
		}
		ev := TokenEvent{Query: q.id, Token: tok, Index: len(q.tokens)}
		if q.req.KeepLogits {
			ev.Logits = append([]float32(nil), row...)
		}
		q.tokens = append(q.tokens, tok)
		q.next = tok
		switch {
		case q.req.Stop != nil && q.req.Stop(tok):
			ev.Done, ev.Reason = true, "stop"
		case len(q.tokens) >= q.req.MaxTokens:
			ev.Done, ev.Reason = true, "length"
		}
		if ev.Done {
			q.done = true
		}
		events = append(events, ev)
	}
	live := e.queries[:0]
	for _, q := range e.queries {
		if q.done {
			e.kv.Drop(q.seq)
			continue
		}
		live = append(live, q)
	}
	e.queries = live
	e.events = events
	return events, nil
}

// Generate runs one request to completion, calling onToken for each
// generated token (it may be nil), and returns the generated ids.
func (e *Engine) Generate(ctx context.Context, r Request, onToken func(TokenEvent)) ([]int, error) {
	if r.MaxTokens == 0 {
		return nil, nil
	}
	id, err := e.AddQuery(r)
	if err != nil {
		return nil, err
	}
	var out []int
	for {
		if err := ctx.Err(); err != nil {
			e.Cancel(id)
			return out, err
		}
		evs, err := e.Infer(ctx)
		if err != nil {
			e.Cancel(id)
			return out, err
		}
		for _, ev := range evs {
			if ev.Query != id {
				continue
			}
			out = append(out, ev.Token)
			if onToken != nil {
				onToken(ev)
			}
			if ev.Done {
				return out, nil
			}
		}
	}
}
