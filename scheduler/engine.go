package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// Picker chooses the next token from a logits row.
type Picker interface {
	Sample(logits []float32) int
}

// historyPicker is a Picker whose choices depend on the tokens so far
// (penalties, DRY, FSD's n-grams): the engine gives it the prompt when the
// query is added, and the tokens it did not choose itself (forced ones).
type historyPicker interface {
	AcceptPrompt(tokens []int)
	Accept(token int)
}

// Finisher is a Picker that may end its sequence instead of choosing a
// token (a grammar that allows no token, grammar.Constrained): after a
// Sample, a non-empty Finish ends the sequence with that reason (for
// example "dead_end") in a Done event that carries no token (Token -1).
type Finisher interface {
	Finish() string
}

// EarlyStopping is beam search's stopping rule, as HF transformers'
// early_stopping.
type EarlyStopping int

const (
	// EarlyHeuristic (HF's False) stops once the best running beam, with
	// its length penalty at the current length, cannot beat the worst of
	// the W finished hypotheses.
	EarlyHeuristic EarlyStopping = iota
	// EarlyTrue stops as soon as W hypotheses are finished.
	EarlyTrue
	// EarlyNever stops only when no beam can beat the finished ones even
	// at the maximum length (or at the maximum length).
	EarlyNever
)

// Request is one generation query. A query holds one sequence, or N
// sampled choices, or a beam search of width Beams; all of them share the
// prompt's KV blocks.
type Request struct {
	Prompt    []int // token ids, BOS included when wanted
	MaxTokens int   // tokens to generate per sequence
	Sampler   Picker
	// N asks for N independent samples (choices) of the prompt; Pickers,
	// when given, has one picker per choice (else Sampler serves all).
	N       int
	Pickers []Picker
	// Beams runs beam search of this width (HF's num_beams), with
	// LengthPenalty (HF's length_penalty; 0 means 1) and EarlyStopping.
	Beams         int
	LengthPenalty float64
	EarlyStopping EarlyStopping
	// Force feeds exactly these tokens as the generated ones (teacher
	// forcing), still reporting each step's logits.
	Force []int
	// Stop ends a sequence after a token for which it returns true (EOS).
	Stop func(token int) bool
	// KeepLogits copies each step's logits row into its TokenEvent.
	KeepLogits bool
	// Logprobs reports each token's natural-log probability under the
	// model's raw softmax, and TopLogprobs that many most likely tokens.
	Logprobs    bool
	TopLogprobs int
	// Shift enables StreamingLLM's context shift for a single sequence:
	// when it fills the context, the positions after the first Keep (the
	// attention sinks) lose half of the rest, the keys that remain after
	// them are re-rotated, and generation goes on with bounded memory.
	// Without it the context bounds the query.
	Shift bool
	Keep  int
	// Prefill, when set, is told before each step that feeds the prompt
	// how many prompt tokens earlier steps have fed (done) of total, for a
	// progress line. It runs on the engine's goroutine and must be quick.
	Prefill func(done, total int)
	// Draft turns on speculative decoding for a single sequence (not with
	// N, Beams, Force or Shift): each decode step feeds the last token and
	// up to DraftMax drafted ones in one batch, and keeps the drafts the
	// target's own choices agree with (the tokens are those of plain
	// decoding, bit for bit with an F32 KV cache; over an F16 one a step
	// of several tokens sums attention in batched order, docs/decoding.md).
	// Fewer than DraftMin drafted tokens: a plain step.
	Draft              Drafter
	DraftMax, DraftMin int
}

// TokenLogprob is a token with its log-probability.
type TokenLogprob struct {
	Token   int // -1 in the Done event of a Finisher that picked nothing
	Logprob float64
}

// Beam is one finished beam-search hypothesis.
type Beam struct {
	Tokens  []int
	Logprob float64 // sum of the tokens' log-probabilities
	Score   float64 // Logprob / len^length_penalty
}

// TokenEvent reports one generated token of one sequence of a query, or
// the end of a beam search.
type TokenEvent struct {
	Query   int
	Seq     int // the sequence's index among the query's choices
	Token   int // -1 in the Done event of a Finisher that picked nothing
	Index   int // 0-based index among the sequence's generated tokens
	Logprob float64
	Top     []TokenLogprob
	Logits  []float32 // the row the token was chosen from (KeepLogits)
	Done    bool      // the sequence (for a beam search: the query) ended
	Reason  string    // "length", "stop", "error" or a Finisher's reason when Done
	Err     error     // why, when Reason is "error"
	Beams   []Beam    // a beam search's hypotheses, best first, in its Done event
	// Drafted and Accepted count a speculative sequence's drafted tokens
	// and those the target kept, in its Done event.
	Drafted, Accepted int
}

// seqState is one sequence of a query.
type seqState struct {
	tokens  []int
	next    int // token to feed in the next decode step
	done    bool
	logprob float64
	picker  Picker
	hist    []backend.KVRun // W=1: the rows it attends over, in order
}

type query struct {
	id        int
	req       Request
	w         int // sequences
	beam      bool
	prompt    []int // tokens to prefill
	fed       int   // of them processed
	pblocks   []int32
	hashes    []uint64 // of the full prompt blocks
	rblocks   []int32  // response blocks, BlockRows positions of each sequence
	parent    [][]int32
	seqs      []seqState
	t         int // response rows written per sequence
	pos       int // the next position (RoPE) of the query's sequences
	hyps      []Beam
	started   bool // decoding (the prompt is processed)
	admitted  bool // its prefill has begun
	recompute bool // preempted while decoding: prefill again, then go on
	done      bool
	order     int // admission order, for preemption
	// speculative decoding: this step's drafts, the sequence so far (for
	// the drafter) and the totals
	draft, seqBuf     []int
	drafted, accepted int
	// the draft length of the next step, the plain steps left before the
	// next draft, and the steps in a row whose drafts all failed
	draftLen, skip, misses int
}

// Engine runs many queries over one plan with continuous batching: each
// Infer call advances every active query by one step, packing prompt
// chunks and decode tokens of different sequences into one batch. The
// engine owns its plan's backends: Close releases them.
type Engine struct {
	plan    *Plan
	kv      *KV
	ctx     int
	vocab   int
	queries []*query
	nextID  int
	step    backend.Step
	rows    []rowRef // the step's kept rows, in order
	stepQ   []*query // queries with tokens in the step
	events  []TokenEvent
	views   [][]backend.KVRun
	probs   []float64
	// pressure is set when a query was preempted for memory, and cleared
	// when a query ends: meanwhile no new prompt is started, so that the
	// running queries can finish.
	pressure bool
	Profile  *Profile
	// stepTokens bounds a step that carries decode tokens (Options.StepTokens).
	stepTokens int
	last       StepInfo
}

// StepInfo describes the tokens of one engine step.
type StepInfo struct {
	Decode int // generated tokens fed back (one per live sequence)
	Prompt int // prompt tokens prefilled
}

// rowRef names the sequence a kept row belongs to (seq -1: the last
// prompt token of a query, which all its sequences start from).
type rowRef struct {
	q   *query
	seq int
}

// Options configures NewEngine.
type Options struct {
	// Context bounds the positions of one sequence (0: no limit).
	Context int
	// KVType is the KV cache's element type.
	KVType backend.KVType
	// KVBudget bounds the KV cache's memory in bytes (0: no limit). When
	// blocks run out, new queries wait and the newest running query is
	// preempted and recomputed later.
	KVBudget int64
	// StepTokens bounds the tokens of a step that carries decode tokens
	// (vLLM's max_num_batched_tokens, for those steps): decodes go first,
	// and prompt chunks get what is left, at least BlockRows, so a long
	// prompt is prefilled over several steps and the running sequences'
	// inter-token latency stays bounded. A step with no decode may use
	// the whole plan (Plan.MaxTokens), so a burst of prompts into an idle
	// engine starts as fast as before. 0 or more than the plan's tokens:
	// the plan's.
	StepTokens int
}

// NewEngine makes an engine running plan, which it owns from then on,
// with KV stores on the plan's devices as opt says.
func NewEngine(plan *Plan, opt Options) (*Engine, error) {
	if opt.Context < 0 || opt.KVBudget < 0 || opt.StepTokens < 0 {
		return nil, fmt.Errorf("engine: context %d, KV budget %d and step tokens %d must be ≥ 0", opt.Context, opt.KVBudget, opt.StepTokens)
	}
	if plan == nil || len(plan.outTs) == 0 {
		return nil, errors.New("engine: the graph has no output")
	}
	kv, err := plan.NewKV(opt.KVBudget, opt.KVType)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	out := plan.outTs[0]
	return &Engine{plan: plan, kv: kv, ctx: opt.Context, vocab: out.Shape[len(out.Shape)-1], stepTokens: opt.StepTokens}, nil
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
	w := 1
	switch {
	case r.Beams > 0 && r.N > 1:
		return 0, errors.New("add query: beam search and several choices at once")
	case r.Beams > 0:
		w = r.Beams
	case r.N > 1:
		w = r.N
	case r.N < 0 || r.Beams < 0:
		return 0, fmt.Errorf("add query: %d choices, %d beams", r.N, r.Beams)
	}
	if w > 256 {
		return 0, fmt.Errorf("add query: %d sequences (at most 256)", w)
	}
	if r.Beams == 0 && r.Sampler == nil && len(r.Pickers) == 0 && len(r.Force) < r.MaxTokens {
		return 0, errors.New("add query: no sampler")
	}
	if len(r.Pickers) > 0 && len(r.Pickers) != w {
		return 0, fmt.Errorf("add query: %d pickers for %d choices", len(r.Pickers), w)
	}
	if r.LengthPenalty == 0 {
		r.LengthPenalty = 1
	}
	if r.Draft != nil {
		switch {
		case w > 1 || r.Beams > 0:
			return 0, errors.New("add query: speculative decoding serves a single sequence, not choices or beams")
		case r.Shift:
			return 0, errors.New("add query: speculative decoding and context shift cannot be combined")
		case len(r.Force) > 0:
			return 0, errors.New("add query: speculative decoding and forced tokens cannot be combined")
		case r.DraftMax < 1 || r.DraftMin < 0 || r.DraftMin > r.DraftMax:
			return 0, fmt.Errorf("add query: draft max %d, min %d (1 ≤ max, 0 ≤ min ≤ max)", r.DraftMax, r.DraftMin)
		}
	}
	if r.Shift && (w > 1 || e.ctx == 0) {
		r.Shift = false // context shift serves single sequences in a bounded context
	}
	if lim := e.ctx; lim > 0 {
		if len(r.Prompt) > lim {
			return 0, fmt.Errorf("add query: a prompt of %d tokens exceeds the context of %d", len(r.Prompt), lim)
		}
		if !r.Shift && len(r.Prompt)+r.MaxTokens > lim {
			return 0, fmt.Errorf("add query: %d prompt + %d new tokens exceed the context of %d", len(r.Prompt), r.MaxTokens, lim)
		}
		if r.Shift && (r.Keep < 0 || r.Keep >= lim-2) {
			return 0, fmt.Errorf("add query: keep %d leaves no room to shift in a context of %d", r.Keep, lim)
		}
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
	if b := e.kv.Budget(); b > 0 {
		resp := min(r.MaxTokens, max(e.ctx, 1)) // rows one sequence can hold at once
		if e.ctx == 0 {
			resp = r.MaxTokens
		}
		need := int64(len(r.Prompt)+w*((resp+BlockRows-1)/BlockRows)*BlockRows) * e.kv.PositionBytes()
		if need > b {
			return 0, fmt.Errorf("add query: it needs %d bytes of KV cache, the budget is %d", need, b)
		}
	}
	q := &query{id: e.nextID, req: r, w: w, beam: r.Beams > 0, prompt: r.Prompt, order: e.nextID}
	e.nextID++
	q.seqs = make([]seqState, w)
	for i := range q.seqs {
		q.seqs[i].picker = r.Sampler
		if len(r.Pickers) > 0 {
			q.seqs[i].picker = r.Pickers[i]
		}
		if h, ok := q.seqs[i].picker.(historyPicker); ok && (i == 0 || len(r.Pickers) > 0) {
			h.AcceptPrompt(r.Prompt)
		}
	}
	e.queries = append(e.queries, q)
	return q.id, nil
}

// usePrefix takes the longest run of q's full prompt blocks the prefix
// cache holds (leaving at least one prompt token to compute).
func (e *Engine) usePrefix(q *query) {
	var h uint64
	q.hashes = q.hashes[:0]
	for b := 0; (b+1)*BlockRows <= len(q.prompt); b++ {
		h = blockHash(h, q.prompt[b*BlockRows:(b+1)*BlockRows])
		q.hashes = append(q.hashes, h)
	}
	for b := 0; (b+1)*BlockRows < len(q.prompt); b++ {
		id, ok := e.kv.lookup(q.hashes[b], q.prompt[b*BlockRows:(b+1)*BlockRows])
		if !ok {
			break
		}
		q.pblocks = append(q.pblocks, id)
		q.fed += BlockRows
		e.kv.saved += BlockRows
	}
	q.pos = q.fed
}

// Active returns the number of unfinished queries.
func (e *Engine) Active() int { return len(e.queries) }

// Cancel ends a query and frees its KV blocks at once.
func (e *Engine) Cancel(id int) {
	for i, q := range e.queries {
		if q.id == id {
			e.releaseBlocks(q)
			e.queries = append(e.queries[:i], e.queries[i+1:]...)
			return
		}
	}
}

// releaseBlocks drops q's references to its blocks.
func (e *Engine) releaseBlocks(q *query) {
	seen := map[int32]int{}
	for _, id := range q.pblocks {
		seen[id]++
	}
	for _, id := range q.rblocks {
		seen[id]++
	}
	if q.w == 1 {
		// A shifted history may hold private copies of prompt blocks.
		for _, r := range q.seqs[0].hist {
			if _, ok := seen[r.Block]; !ok {
				seen[r.Block] = 1
			}
		}
	}
	for id, n := range seen {
		for ; n > 0 && id >= 0; n-- {
			e.kv.release(id)
		}
	}
	q.pblocks, q.rblocks = nil, nil
	if q.w == 1 {
		q.seqs[0].hist = nil
	}
}

// Stats reports the engine's prefix cache and memory.
type Stats struct {
	PrefixLookups, PrefixHits, PrefillTokensSaved int64
	KVBytes, KVHeldBytes, KVBudget                int64
	Queries                                       int
}

// LastStep describes the tokens of the last step Infer ran.
func (e *Engine) LastStep() StepInfo { return e.last }

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	l, h, s := e.kv.PrefixStats()
	return Stats{PrefixLookups: l, PrefixHits: h, PrefillTokensSaved: s, KVBytes: e.kv.Bytes(), KVHeldBytes: e.kv.HeldBytes(),
		KVBudget: e.kv.Budget(), Queries: len(e.queries)}
}

// errNoBlock means the KV budget has no room for a block now.
var errNoBlock = errors.New("no KV block free")

// promptLoc returns where prompt position p of q goes, allocating its
// block (BlockRows rows, or the rest of the prompt for the last one).
func (e *Engine) promptLoc(q *query, p int) (backend.KVLoc, error) {
	b := p / BlockRows
	for len(q.pblocks) <= b {
		rows := min(BlockRows, len(q.prompt)-len(q.pblocks)*BlockRows)
		id, ok := e.kv.alloc(rows)
		if !ok {
			return backend.KVLoc{}, errNoBlock
		}
		q.pblocks = append(q.pblocks, id)
	}
	return backend.KVLoc{Block: q.pblocks[b], Row: int32(p % BlockRows)}, nil
}

// respLoc returns where response row t of sequence s of q goes.
func (e *Engine) respLoc(q *query, t, s int) (backend.KVLoc, error) {
	b := t / BlockRows
	for len(q.rblocks) <= b {
		id, ok := e.kv.alloc(BlockRows * q.w)
		if !ok {
			return backend.KVLoc{}, errNoBlock
		}
		q.rblocks = append(q.rblocks, id)
	}
	return backend.KVLoc{Block: q.rblocks[b], Row: int32((t%BlockRows)*q.w + s)}, nil
}

// promptRuns appends the runs of q's first n prompt positions to dst.
func promptRuns(dst []backend.KVRun, q *query, n int) []backend.KVRun {
	for b := 0; n > 0; b++ {
		m := min(BlockRows, n)
		dst = append(dst, backend.KVRun{Block: q.pblocks[b], Row: 0, N: int32(m)})
		n -= m
	}
	return dst
}

// appendRun adds one row to a history, merging it into the last run when
// it follows it.
func appendRun(h []backend.KVRun, l backend.KVLoc) []backend.KVRun {
	if n := len(h); n > 0 && h[n-1].Block == l.Block && h[n-1].Row+h[n-1].N == l.Row {
		h[n-1].N++
		return h
	}
	return append(h, backend.KVRun{Block: l.Block, Row: l.Row, N: 1})
}

// view returns a reusable history slice for the step.
func (e *Engine) view() int32 {
	i := len(e.step.Views)
	if i < len(e.views) {
		e.step.Views = append(e.step.Views, e.views[i][:0])
	} else {
		e.step.Views = append(e.step.Views, nil)
		e.views = append(e.views, nil)
	}
	return int32(i)
}

// addToken appends a token to the step; decode marks a generated token
// (see backend.Step.Decode).
func (e *Engine) addToken(tok, pos int, loc backend.KVLoc, view int32, n int, decode bool) {
	st := &e.step
	st.Decode = append(st.Decode, decode)
	st.Tokens = append(st.Tokens, int32(tok))
	st.Pos = append(st.Pos, int32(pos))
	st.Seq = append(st.Seq, view)
	st.Loc = append(st.Loc, loc)
	st.View = append(st.View, view)
	st.Len = append(st.Len, int32(n))
}

// Infer advances every active query one step: a prompt chunk for queries
// still in prefill, one token per sequence for the others. It returns the
// tokens produced in this step; the slice is reused by the next call. A
// query that fails (a sampler's bad token, the KV budget) ends with an
// event whose Reason is "error"; the others go on.
func (e *Engine) Infer(ctx context.Context) ([]TokenEvent, error) {
	if len(e.queries) == 0 {
		return nil, nil
	}
	st := &e.step
	st.Tokens, st.Pos, st.Seq, st.Keep, st.Decode = st.Tokens[:0], st.Pos[:0], st.Seq[:0], st.Keep[:0], st.Decode[:0]
	st.Loc, st.View, st.Len, st.Views, st.Shift = st.Loc[:0], st.View[:0], st.Len[:0], st.Views[:0], st.Shift[:0]
	e.rows, e.stepQ = e.rows[:0], e.stepQ[:0]
	events := e.events[:0]
	e.last = StepInfo{}
	budget := e.plan.MaxTokens
	// Decoding queries first, one token per live sequence: their latency
	// stays low while long prompts are chunked into what the step has
	// left.
	for _, q := range e.queries {
		if !q.started || q.done || budget < q.live() {
			continue
		}
		for {
			err := e.decodeTokens(q)
			if err == nil {
				budget = e.plan.MaxTokens - len(st.Tokens)
				e.stepQ = append(e.stepQ, q)
				break
			}
			if errors.Is(err, errNoBlock) {
				if v := e.preempt(q); v == q {
					break // q itself waits to be recomputed
				} else if v != nil {
					continue // room was made: try again
				}
			}
			events = e.fail(events, q, err)
			break
		}
	}
	e.last.Decode = len(st.Tokens)
	if n := len(st.Tokens); n > 0 && e.stepTokens > 0 {
		// Decodes are running: prompts get what the step budget leaves.
		budget = min(budget, max(e.stepTokens-n, BlockRows))
	}
	for _, q := range e.queries {
		if q.started || q.done || budget == 0 {
			continue
		}
		if !q.admitted {
			if e.pressure {
				continue // memory is short: no new prompt starts until a query ends
			}
			e.usePrefix(q)
			q.admitted = true
		}
		n := min(len(q.prompt)-q.fed, budget)
		view := e.view()
		added := 0
		for i := 0; i < n; i++ {
			loc, err := e.promptLoc(q, q.fed+i)
			if err != nil {
				break // the KV budget is full: the rest waits
			}
			e.addToken(q.prompt[q.fed+i], q.fed+i, loc, view, q.fed+i+1, false)
			added++
		}
		if added == 0 {
			st.Views = st.Views[:len(st.Views)-1]
			continue
		}
		st.Views[view] = promptRuns(st.Views[view], q, q.fed+added)
		if q.req.Prefill != nil {
			q.req.Prefill(q.fed, len(q.prompt))
		}
		q.fed += added
		budget -= added
		e.stepQ = append(e.stepQ, q)
		if q.fed == len(q.prompt) {
			st.Keep = append(st.Keep, int32(len(st.Tokens)-1))
			e.rows = append(e.rows, rowRef{q, -1})
		}
	}
	e.last.Prompt = len(st.Tokens) - e.last.Decode
	if len(st.Tokens) == 0 {
		e.reap()
		e.events = events
		if len(events) == 0 && len(e.queries) > 0 {
			return events, errors.New("engine: no query can make progress within the KV budget")
		}
		return events, nil
	}
	for i, v := range st.Views {
		e.views[i] = v // keep the grown histories' memory for the next step
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
	data := tensor.BytesToF32(logits.Data)
	gathered := ops.Rows(logits) == len(st.Keep)
	for i := 0; i < len(e.rows); {
		// The rows of one query are consecutive.
		q := e.rows[i].q
		j := i
		for j < len(e.rows) && e.rows[j].q == q {
			j++
		}
		rowOf := func(k int) []float32 {
			r := k
			if !gathered {
				r = int(st.Keep[k])
			}
			return data[r*e.vocab : (r+1)*e.vocab]
		}
		events = e.advance(events, q, i, j, rowOf)
		i = j
	}
	e.reap()
	e.events = events
	return events, nil
}

// live returns the sequences of q still generating.
func (q *query) live() int {
	n := 0
	for i := range q.seqs {
		if !q.seqs[i].done {
			n++
		}
	}
	return n
}

// decodeTokens adds one token per live sequence of q to the step.
func (e *Engine) decodeTokens(q *query) error {
	st := &e.step
	if q.req.Shift && q.pos >= e.ctx {
		if err := e.shift(q); err != nil {
			return err
		}
	}
	if q.req.Draft != nil {
		return e.speculate(q)
	}
	mark := len(st.Tokens)
	for s := range q.seqs {
		sq := &q.seqs[s]
		if sq.done {
			continue
		}
		loc, err := e.respLoc(q, q.t, s)
		if err != nil {
			st.Tokens, st.Pos, st.Seq, st.Loc, st.View, st.Len = st.Tokens[:mark], st.Pos[:mark], st.Seq[:mark], st.Loc[:mark], st.View[:mark], st.Len[:mark]
			return err
		}
		view := e.view()
		v := st.Views[view]
		if q.w == 1 && !q.beam {
			sq.hist = appendRun(sq.hist, loc)
			v = append(v, sq.hist...)
		} else {
			v = promptRuns(v, q, len(q.prompt))
			v = e.beamRuns(v, q, s, loc)
		}
		st.Views[view] = v
		rows := 0
		for _, r := range v {
			rows += int(r.N)
		}
		e.addToken(sq.next, q.pos, loc, view, rows, true)
		st.Keep = append(st.Keep, int32(len(st.Tokens)-1))
		e.rows = append(e.rows, rowRef{q, s})
	}
	return nil
}

// beamRuns appends sequence s's response history to dst: the rows its
// ancestors wrote, found through the beam table (no K/V is copied when
// beams reorder), then loc, the row it writes now.
func (e *Engine) beamRuns(dst []backend.KVRun, q *query, s int, loc backend.KVLoc) []backend.KVRun {
	start := len(dst)
	slot := s
	for t := q.t - 1; t >= 0; t-- {
		if q.beam {
			slot = int(q.parent[t+1][slot])
		}
		dst = append(dst, backend.KVRun{Block: q.rblocks[t/BlockRows], Row: int32((t%BlockRows)*q.w + slot), N: 1})
	}
	// Reverse the ancestors into position order.
	for i, j := start, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return append(dst, backend.KVRun{Block: loc.Block, Row: loc.Row, N: 1})
}

// shift drops half of the positions after the first Keep of q's single
// sequence (StreamingLLM, llama.cpp's context shift) and asks the
// attention kernels to re-rotate the keys that remain after them.
func (e *Engine) shift(q *query) error {
	sq := &q.seqs[0]
	keep := q.req.Keep
	discard := (q.pos - keep) / 2
	if discard < 1 {
		return fmt.Errorf("context shift: nothing to discard after keeping %d of %d positions", keep, q.pos)
	}
	// Cut rows [keep, keep+discard) out of the history.
	var kept, moved []backend.KVRun
	row := 0
	for _, r := range sq.hist {
		for k := int32(0); k < r.N; k++ {
			one := backend.KVLoc{Block: r.Block, Row: r.Row + k}
			switch {
			case row < keep:
				kept = appendRun(kept, one)
			case row >= keep+discard:
				kept = appendRun(kept, one)
				moved = appendRun(moved, one)
			}
			row++
		}
	}
	// Blocks no longer read are released; shared blocks whose keys move
	// are copied first (the prefix cache and other readers keep theirs).
	reads := map[int32]bool{}
	for _, r := range kept {
		reads[r.Block] = true
	}
	for _, r := range sq.hist {
		if !reads[r.Block] && !e.released(q, r.Block) {
			e.dropBlock(q, r.Block)
		}
	}
	remap := map[int32]int32{}
	for _, r := range moved {
		if _, done := remap[r.Block]; done || !e.kv.shared(r.Block) {
			continue
		}
		nb, ok := e.kv.cow(r.Block, int(e.kv.rows[r.Block]))
		if !ok {
			return errNoBlock
		}
		remap[r.Block] = nb
		e.replaceBlock(q, r.Block, nb)
	}
	for _, rs := range [][]backend.KVRun{kept, moved} {
		for i := range rs {
			if nb, ok := remap[rs[i].Block]; ok {
				rs[i].Block = nb
			}
		}
	}
	sq.hist = kept
	e.step.Shift = append(e.step.Shift, backend.KVShift{Runs: moved, Delta: int32(-discard)})
	q.pos -= discard
	return nil
}

// released reports whether q holds no reference to block id any more.
func (e *Engine) released(q *query, id int32) bool {
	for _, b := range q.pblocks {
		if b == id {
			return false
		}
	}
	for _, b := range q.rblocks {
		if b == id {
			return false
		}
	}
	return true
}

// dropBlock releases q's reference to a block its history no longer
// reads.
func (e *Engine) dropBlock(q *query, id int32) {
	for i, b := range q.pblocks {
		if b == id {
			q.pblocks[i] = -1
			e.kv.release(id)
			return
		}
	}
	for i, b := range q.rblocks {
		if b == id {
			q.rblocks[i] = -1
			e.kv.release(id)
			return
		}
	}
}

// replaceBlock makes q refer to nb where it referred to old.
func (e *Engine) replaceBlock(q *query, old, nb int32) {
	for i, b := range q.pblocks {
		if b == old {
			q.pblocks[i] = nb
		}
	}
	for i, b := range q.rblocks {
		if b == old {
			q.rblocks[i] = nb
		}
	}
}

// preempt makes room for needy: the newest single-sequence query that
// holds blocks and has no tokens in the step being built (needy itself,
// if it is the newest) gives its blocks back and will be recomputed: its
// prompt and generated tokens are prefilled again, and it goes on from
// the token it had chosen. It returns the query preempted, or nil.
func (e *Engine) preempt(needy *query) *query {
	var victim *query
	for _, q := range e.queries {
		if q.done || q.w > 1 || q.beam || len(q.pblocks)+len(q.rblocks) == 0 || slices.Contains(e.stepQ, q) {
			continue
		}
		if victim == nil || q.order > victim.order {
			victim = q
		}
	}
	if victim == nil || (victim == needy && len(e.queries) == 1) {
		return nil
	}
	e.pressure = true
	e.releaseBlocks(victim)
	sq := &victim.seqs[0]
	if victim.started {
		// Recompute: the prompt and every generated token but the last
		// (which the next decode step feeds) become the prompt.
		victim.prompt = append(append([]int(nil), victim.req.Prompt...), sq.tokens[:len(sq.tokens)-1]...)
		victim.started, victim.recompute = false, true
	}
	victim.fed, victim.t, victim.admitted = 0, 0, false
	victim.pblocks, victim.rblocks, victim.parent = nil, nil, nil
	return victim
}

// fail ends q with an error event.
func (e *Engine) fail(events []TokenEvent, q *query, err error) []TokenEvent {
	q.done = true
	return append(events, TokenEvent{Query: q.id, Done: true, Reason: "error", Err: fmt.Errorf("query %d: %w", q.id, err)})
}

// reap drops finished queries, releasing their blocks (their full prompt
// blocks stay in the prefix cache).
func (e *Engine) reap() {
	live := e.queries[:0]
	for _, q := range e.queries {
		if q.done {
			e.releaseBlocks(q)
			e.pressure = false
			continue
		}
		live = append(live, q)
	}
	e.queries = live
}

// logprobs fills e.probs with the log-softmax of row (float64).
func (e *Engine) logprobs(row []float32) []float64 {
	if cap(e.probs) < len(row) {
		e.probs = make([]float64, len(row))
	}
	lp := e.probs[:len(row)]
	m := math.Inf(-1)
	for _, v := range row {
		m = max(m, float64(v))
	}
	var sum float64
	for _, v := range row {
		sum += math.Exp(float64(v) - m)
	}
	ls := m + math.Log(sum)
	for i, v := range row {
		lp[i] = float64(v) - ls
	}
	return lp
}

// top returns the k most likely tokens of lp, most likely first (lower
// id first on ties).
func top(lp []float64, k int) []TokenLogprob {
	out := make([]TokenLogprob, 0, k+1)
	for i, v := range lp {
		if len(out) == k && (v < out[k-1].Logprob || (v == out[k-1].Logprob && i > out[k-1].Token)) {
			continue
		}
		j := len(out)
		if j == k {
			j--
		} else {
			out = append(out, TokenLogprob{})
		}
		for j > 0 && (out[j-1].Logprob < v) {
			out[j] = out[j-1]
			j--
		}
		out[j] = TokenLogprob{i, v}
	}
	return out
}

// advance consumes the kept rows [i, j) of the step, all q's: it picks
// each sequence's next token (or advances the beam search).
func (e *Engine) advance(events []TokenEvent, q *query, i, j int, rowOf func(int) []float32) []TokenEvent {
	if e.rows[i].seq < 0 {
		// The prompt is done: every sequence starts from its last row.
		q.started = true
		q.pos = len(q.prompt)
		if q.recompute {
			// A recomputed query: its next token is known already.
			q.recompute = false
			sq := &q.seqs[0]
			q.pos = len(q.prompt)
			sq.hist = promptRuns(nil, q, len(q.prompt))
			e.publishPrompt(q)
			return events
		}
		e.publishPrompt(q)
		row := rowOf(i)
		if q.beam {
			return e.beamStep(events, q, [][]float32{row})
		}
		for s := range q.seqs {
			if q.w == 1 {
				q.seqs[s].hist = promptRuns(nil, q, len(q.prompt))
			}
			events = e.pick(events, q, s, row)
		}
		return events
	}
	if q.req.Draft != nil {
		return e.verify(events, q, i, j, rowOf)
	}
	q.t++
	q.pos++
	if q.beam {
		rows := make([][]float32, 0, j-i)
		for k := i; k < j; k++ {
			rows = append(rows, rowOf(k))
		}
		return e.beamStep(events, q, rows)
	}
	for k := i; k < j; k++ {
		events = e.pick(events, q, e.rows[k].seq, rowOf(k))
	}
	return events
}

// publishPrompt puts q's full prompt blocks in the prefix cache.
func (e *Engine) publishPrompt(q *query) {
	for b, h := range q.hashes {
		if b < len(q.pblocks) && (b+1)*BlockRows <= len(q.req.Prompt) {
			e.kv.publish(q.pblocks[b], h, q.prompt[b*BlockRows:(b+1)*BlockRows])
		}
	}
}

// nonFinite returns the index of the first NaN or +Inf in row. -Inf is a
// logit that rules a token out, and is allowed.
func nonFinite(row []float32) (int, bool) {
	for i, v := range row {
		if v != v || v > math.MaxFloat32 {
			return i, true
		}
	}
	return 0, false
}

// pick chooses sequence s's next token from row.
func (e *Engine) pick(events []TokenEvent, q *query, s int, row []float32) []TokenEvent {
	sq := &q.seqs[s]
	if i, bad := nonFinite(row); bad {
		sq.done = true
		if q.live() == 0 {
			q.done = true
		}
		return append(events, TokenEvent{Query: q.id, Seq: s, Index: len(sq.tokens), Done: true, Reason: "error",
			Err: fmt.Errorf("query %d: step %d (position %d): logit %d is %v: the model computed a non-finite number (NaN or infinite weights, or an overflow)", q.id, len(sq.tokens), q.pos, i, row[i])})
	}
	var tok int
	if k := len(sq.tokens); k < len(q.req.Force) {
		tok = q.req.Force[k]
		if h, ok := sq.picker.(historyPicker); ok {
			h.Accept(tok)
		}
	} else {
		tok = sq.picker.Sample(row)
		if f, ok := sq.picker.(Finisher); ok {
			if r := f.Finish(); r != "" {
				sq.done = true
				if q.live() == 0 {
					q.done = true
				}
				return append(events, TokenEvent{Query: q.id, Seq: s, Token: -1, Index: len(sq.tokens), Done: true, Reason: r})
			}
		}
		if tok < 0 || tok >= e.vocab {
			sq.done = true
			if q.live() == 0 {
				q.done = true
			}
			return append(events, TokenEvent{Query: q.id, Seq: s, Index: len(sq.tokens), Done: true, Reason: "error",
				Err: fmt.Errorf("query %d: the sampler chose token %d outside the vocabulary of %d", q.id, tok, e.vocab)})
		}
	}
	ev := TokenEvent{Query: q.id, Seq: s, Token: tok, Index: len(sq.tokens)}
	if q.req.Logprobs || q.req.TopLogprobs > 0 {
		lp := e.logprobs(row)
		ev.Logprob = lp[tok]
		sq.logprob += lp[tok]
		if q.req.TopLogprobs > 0 {
			ev.Top = top(lp, q.req.TopLogprobs)
		}
	}
	if q.req.KeepLogits {
		ev.Logits = append([]float32(nil), row...)
	}
	sq.tokens = append(sq.tokens, tok)
	sq.next = tok
	switch {
	case q.req.Stop != nil && q.req.Stop(tok) && len(q.req.Force) == 0:
		ev.Done, ev.Reason = true, "stop"
	case len(sq.tokens) >= q.req.MaxTokens:
		ev.Done, ev.Reason = true, "length"
	}
	if ev.Done {
		sq.done = true
		if q.live() == 0 {
			q.done = true
		}
		ev.Drafted, ev.Accepted = q.drafted, q.accepted
	}
	return append(events, ev)
}

// beamCand is a candidate continuation of a beam.
type beamCand struct {
	score float64 // the beam's log-probability with the token
	beam  int
	tok   int
}

// beamStep advances a beam search by one token (HF transformers'
// semantics): the 2W best continuations of all beams; those ending in a
// stop token among the first W become hypotheses, the first W others the
// next beams. rows holds one logits row per beam (one row for the first
// step, from the prompt).
func (e *Engine) beamStep(events []TokenEvent, q *query, rows [][]float32) []TokenEvent {
	w := q.w
	var cands []beamCand
	for b, row := range rows {
		lp := e.logprobs(row)
		base := q.seqs[b].logprob
		for _, t := range top(lp, 2*w) {
			cands = append(cands, beamCand{base + t.Logprob, b, t.Token})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		if cands[a].beam != cands[b].beam {
			return cands[a].beam < cands[b].beam
		}
		return cands[a].tok < cands[b].tok
	})
	cands = cands[:min(len(cands), 2*w)]
	curLen := len(q.seqs[0].tokens) + 1 // generated tokens with the new one
	next := make([]seqState, 0, w)
	parent := make([]int32, 0, w)
	for rank, c := range cands {
		old := &q.seqs[c.beam]
		if q.req.Stop != nil && q.req.Stop(c.tok) {
			if rank < w {
				toks := append(append([]int(nil), old.tokens...), c.tok)
				q.addHyp(toks, c.score)
			}
			continue
		}
		next = append(next, seqState{tokens: append(append([]int(nil), old.tokens...), c.tok), next: c.tok, logprob: c.score})
		parent = append(parent, int32(c.beam))
		if len(next) == w {
			break
		}
	}
	finished := len(next) < w || curLen >= q.req.MaxTokens || q.beamDone(next, curLen)
	if finished {
		if curLen >= q.req.MaxTokens || len(q.hyps) < w {
			for _, s := range next {
				q.addHyp(s.tokens, s.logprob)
			}
		}
		sort.SliceStable(q.hyps, func(a, b int) bool { return q.hyps[a].Score > q.hyps[b].Score })
		q.done = true
		reason := "stop"
		if curLen >= q.req.MaxTokens {
			reason = "length"
		}
		return append(events, TokenEvent{Query: q.id, Done: true, Reason: reason, Beams: q.hyps})
	}
	q.seqs = append(q.seqs[:0], next...)
	for len(q.parent) <= q.t+1 {
		q.parent = append(q.parent, nil)
	}
	q.parent[q.t] = parent // row t of beam b continues row t-1 of parent[t][b]
	return events
}

// addHyp records a finished hypothesis, keeping the W best.
func (q *query) addHyp(toks []int, logprob float64) {
	score := logprob / math.Pow(float64(len(toks)), q.req.LengthPenalty)
	q.hyps = append(q.hyps, Beam{Tokens: toks, Logprob: logprob, Score: score})
	if len(q.hyps) > q.w {
		worst := 0
		for i, h := range q.hyps {
			if h.Score < q.hyps[worst].Score {
				worst = i
			}
		}
		q.hyps = append(q.hyps[:worst], q.hyps[worst+1:]...)
	}
}

// beamDone applies the early-stopping rule once W hypotheses are in.
func (q *query) beamDone(next []seqState, curLen int) bool {
	if len(q.hyps) < q.w {
		return false
	}
	worst := math.Inf(1)
	for _, h := range q.hyps {
		worst = min(worst, h.Score)
	}
	best := math.Inf(-1)
	for _, s := range next {
		best = max(best, s.logprob)
	}
	switch q.req.EarlyStopping {
	case EarlyTrue:
		return true
	case EarlyNever:
		l := float64(curLen)
		if q.req.LengthPenalty > 0 {
			l = float64(q.req.MaxTokens)
		}
		return worst >= best/math.Pow(l, q.req.LengthPenalty)
	}
	return worst >= best/math.Pow(float64(curLen), q.req.LengthPenalty)
}

// Generate runs one request to completion, calling onToken for each
// generated token (it may be nil), and returns the generated ids of its
// first sequence (for a beam search: the best hypothesis).
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
		done := false
		for _, ev := range evs {
			if ev.Query != id {
				continue
			}
			if ev.Err != nil {
				e.Cancel(id)
				return out, ev.Err
			}
			if ev.Beams != nil && len(ev.Beams) > 0 {
				out = append(out[:0], ev.Beams[0].Tokens...)
			} else if ev.Seq == 0 && ev.Reason != "error" && ev.Token >= 0 && !(ev.Done && ev.Beams != nil) {
				out = append(out, ev.Token)
			}
			if onToken != nil {
				onToken(ev)
			}
			if ev.Done && (r.Beams > 0 || e.finished(id)) {
				done = true
			}
		}
		if done {
			return out, nil
		}
	}
}

// finished reports whether query id has ended.
func (e *Engine) finished(id int) bool {
	for _, q := range e.queries {
		if q.id == id {
			return false
		}
	}
	return true
}
