// Package server serves a model over HTTP with the OpenAI API
// (/v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models),
// llama-server's /tokenize, /detokenize and /health, and Prometheus
// metrics named as vLLM names them.
//
// One goroutine owns the engine: handlers hand it jobs through a bounded
// queue (a full queue answers 429 with Retry-After) and read the tokens it
// produces. A client that disconnects has its query cancelled, and its KV
// blocks freed, before the engine's next step.
package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

// Engine is what the server needs of a continuous-batching engine
// (scheduler.Engine). Only the server's engine goroutine calls it.
type Engine interface {
	AddQuery(r scheduler.Request) (int, error)
	Infer(ctx context.Context) ([]scheduler.TokenEvent, error)
	Cancel(id int)
	Stats() scheduler.Stats
}

// stepReporter is an engine that says what its last step held
// (scheduler.Engine does), for the step metrics.
type stepReporter interface {
	LastStep() scheduler.StepInfo
}

// Constrainer makes a picker that only chooses tokens that keep a reply
// valid for a response_format (grammar-constrained decoding). base is the
// request's sampler, which the constrained picker should use among the
// tokens it allows.
type Constrainer interface {
	Constrain(format ResponseFormat, base scheduler.Picker) (scheduler.Picker, error)
}

// Embedder computes one embedding per input, from its tokens.
type Embedder interface {
	Embed(ctx context.Context, tokens []int) ([]float32, error)
}

// Options configures a server.
type Options struct {
	// ModelName is the id /v1/models lists and responses carry.
	ModelName string
	// Parallel is how many requests the engine runs at once (-np).
	Parallel int
	// Queue is how many more requests may wait for a slot; beyond it the
	// server answers 429.
	Queue int
	// MaxBodyBytes bounds a request body (0: 4 MiB).
	MaxBodyBytes int64
	// MaxPromptTokens bounds a prompt (0: the context).
	MaxPromptTokens int
	// MaxTokens bounds max_tokens (0: the context).
	MaxTokens int
	// MaxN bounds n (0: 16).
	MaxN int
	// RetryAfter is the Retry-After of a 429, in seconds (0: 1).
	RetryAfter int
	// BatchWindow is how long an idle engine waits for the rest of a burst
	// of requests before its first step: it starts once arrivals pause for
	// a millisecond, or after BatchWindow at most (0: start at once). The
	// prompts of a burst then share one prefill step instead of the first
	// one running alone and the others prefilling beside its decodes,
	// which stalls its tokens (the dynamic batching delay of Triton's
	// max_queue_delay_microseconds).
	BatchWindow time.Duration
	// Registry receives the metrics (nil: a new registry with the Go and
	// process collectors).
	Registry *prometheus.Registry
}

// Model is what Start serves.
type Model struct {
	Engine    Engine
	Tokenizer tokenizer.Tokenizer
	// Template renders chat messages (nil: chat completions answer 400).
	Template *chat.Template
	// Context is the positions one sequence can hold.
	Context int
	// BOS and EOS are the token texts templates see as bos_token and
	// eos_token.
	BOS, EOS string
	// NumBlocks is the number of KV blocks the budget holds (for
	// vllm:cache_config_info); KVBudget the budget in bytes.
	NumBlocks int
	// Constrainer serves response_format (nil: such requests answer 400).
	Constrainer Constrainer
	// Embedder serves /v1/embeddings (nil: such requests answer 400).
	Embedder Embedder
}

// Server is an OpenAI-compatible HTTP server for one model.
type Server struct {
	opt     Options
	reg     *prometheus.Registry
	met     *metrics
	mux     *http.ServeMux
	created int64
	ids     atomic.Uint64

	model atomic.Pointer[Model] // nil while loading

	mu       sync.Mutex
	waiting  []*job
	inflight int // waiting or running
	draining bool
	rng      *rand.Rand // seeds for requests without one

	wake     chan struct{} // a job arrived or was cancelled
	burstGap time.Duration // the pause in arrivals that ends a burst (gather)
	abort    chan struct{} // closed to cancel every job
	quit     chan struct{} // closed to stop the loop
	loopDone chan struct{}
	stopOnce sync.Once
	abortOne sync.Once
}

// New makes a server that answers 503 until Start gives it a model.
func New(opt Options) *Server {
	if opt.Parallel < 1 {
		opt.Parallel = 1
	}
	if opt.Queue < 0 {
		opt.Queue = 0
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 4 << 20
	}
	if opt.MaxN <= 0 {
		opt.MaxN = 16
	}
	if opt.RetryAfter <= 0 {
		opt.RetryAfter = 1
	}
	reg := opt.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s := &Server{opt: opt, reg: reg, created: time.Now().Unix(), wake: make(chan struct{}, 1), burstGap: burstGap,
		abort: make(chan struct{}), quit: make(chan struct{}), loopDone: make(chan struct{}),
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15))}
	s.met = newMetrics(reg, opt.ModelName)
	s.routes()
	return s
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Start serves m: the engine goroutine starts and /health turns 200.
// It must be called once.
func (s *Server) Start(m *Model) error {
	if m.Engine == nil || m.Tokenizer == nil {
		return errors.New("server: the model needs an engine and a tokenizer")
	}
	if m.Context < 1 {
		return fmt.Errorf("server: context %d", m.Context)
	}
	s.met.cacheConfig(scheduler.BlockRows, m.NumBlocks)
	s.model.Store(m)
	go s.loop(m.Engine)
	return nil
}

// Ready reports whether the server has a model.
func (s *Server) Ready() bool { return s.model.Load() != nil }

// Shutdown stops taking requests (they answer 503) and waits for those in
// flight to finish; when ctx ends first, it cancels them (their clients
// get an error) and returns ctx's error. Then the engine goroutine stops.
// The caller closes the engine afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	var err error
	if s.Ready() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			s.mu.Lock()
			n := s.inflight
			s.mu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-ctx.Done():
				err = ctx.Err()
				s.abortOne.Do(func() { close(s.abort) })
				s.kick()
				break wait
			case <-tick.C:
			}
		}
	}
	s.stopOnce.Do(func() { close(s.quit) })
	if s.Ready() {
		<-s.loopDone
	}
	return err
}

// burstGap is the pause in arrivals that ends gather's wait: a burst's
// requests are prepared (parsed, templated, tokenized) in 0.1-1 ms each.
const burstGap = time.Millisecond

// gather waits, up to Options.BatchWindow, while requests keep arriving
// less than s.burstGap apart.
func (s *Server) gather() {
	if s.opt.BatchWindow <= 0 {
		return
	}
	end := time.Now().Add(s.opt.BatchWindow)
	t := time.NewTimer(s.burstGap)
	defer t.Stop()
	for {
		select {
		case <-s.wake:
			left := time.Until(end)
			if left <= 0 {
				return
			}
			t.Reset(min(s.burstGap, left))
		case <-t.C:
			return
		case <-s.quit:
			return
		}
	}
}

// kick wakes the engine goroutine.
func (s *Server) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// seed returns a random seed for a request without one.
func (s *Server) seed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Uint64()
}

// errBusy, errDraining and errAborted are why a job was not served.
var (
	errBusy     = errors.New("the server is busy: too many requests are waiting; retry later")
	errDraining = errors.New("the server is shutting down")
	errAborted  = errors.New("the server shut down before the request finished")
)

// job is one request on its way through the engine.
type job struct {
	req     scheduler.Request
	n       int // sequences
	arrived time.Time

	mu     sync.Mutex
	evs    []scheduler.TokenEvent
	closed bool
	err    error
	notify chan struct{}
	pushed time.Time // when the engine goroutine last pushed events

	cancel atomic.Bool // the handler gave up on it (disconnect, stop string)

	// owned by the engine goroutine
	id       int
	seqDone  int
	gotFirst bool
	last     []time.Time
}

// newJob makes the job of request r that arrived at the server at
// arrived.
func newJob(r scheduler.Request, arrived time.Time) *job {
	n := max(r.N, 1)
	return &job{req: r, n: n, arrived: arrived, notify: make(chan struct{}, 1), last: make([]time.Time, n)}
}

func (j *job) signal() {
	select {
	case j.notify <- struct{}{}:
	default:
	}
}

func (j *job) push(ev scheduler.TokenEvent, at time.Time) {
	j.mu.Lock()
	j.evs = append(j.evs, ev)
	j.pushed = at
	j.mu.Unlock()
	j.signal()
}

// end closes the job's event stream with err (nil: it finished).
func (j *job) end(err error) {
	j.mu.Lock()
	j.closed, j.err = true, err
	j.mu.Unlock()
	j.signal()
}

// take moves the job's pending events into buf, and says when the last
// of them was pushed.
func (j *job) take(buf []scheduler.TokenEvent) ([]scheduler.TokenEvent, time.Time, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	buf = append(buf[:0], j.evs...)
	j.evs = j.evs[:0]
	return buf, j.pushed, j.closed, j.err
}

// submit queues j, or says why not.
func (s *Server) submit(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.draining:
		return errDraining
	case s.inflight >= s.opt.Parallel+s.opt.Queue:
		return errBusy
	}
	s.inflight++
	s.waiting = append(s.waiting, j)
	s.kick()
	return nil
}

// giveUp asks the engine goroutine to cancel j.
func (s *Server) giveUp(j *job) {
	j.cancel.Store(true)
	s.kick()
}

// loop is the engine goroutine: it admits waiting jobs into free slots,
// cancels abandoned ones and steps the engine while any run.
func (s *Server) loop(eng Engine) {
	defer close(s.loopDone)
	running := map[int]*job{}
	finish := func(id int, j *job, err error) {
		delete(running, id)
		j.end(err)
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
		s.met.e2e.Observe(time.Since(j.arrived).Seconds())
	}
	for {
		aborted := false
		select {
		case <-s.abort:
			aborted = true
		default:
		}
		s.mu.Lock()
		if aborted {
			for _, j := range s.waiting {
				j.end(errAborted)
				s.inflight--
			}
			s.waiting = s.waiting[:0]
		}
		for len(running) < s.opt.Parallel && len(s.waiting) > 0 {
			j := s.waiting[0]
			s.waiting[0] = nil
			s.waiting = s.waiting[1:]
			if j.cancel.Load() {
				j.end(context.Canceled)
				s.inflight--
				continue
			}
			id, err := eng.AddQuery(j.req)
			if err != nil {
				j.end(&requestError{status: http.StatusBadRequest, msg: err.Error()})
				s.inflight--
				continue
			}
			j.id = id
			running[id] = j
			s.met.queue.Observe(time.Since(j.arrived).Seconds())
			s.met.promptTokens.Add(float64(len(j.req.Prompt)))
		}
		waiting := len(s.waiting)
		s.mu.Unlock()
		for id, j := range running {
			if aborted {
				eng.Cancel(id)
				finish(id, j, errAborted)
			} else if j.cancel.Load() {
				eng.Cancel(id)
				finish(id, j, context.Canceled)
			}
		}
		s.met.update(eng.Stats(), waiting, len(running))
		if len(running) == 0 {
			select {
			case <-s.wake:
				// The engine was idle: let the handlers of a burst that
				// are already runnable submit before the first step
				// takes the cores, so that their prompts share it
				// instead of waiting for it and then prefilling beside
				// the first request's decodes.
				runtime.Gosched()
				s.gather()
				continue
			case <-s.quit:
				return
			}
		}
		t0 := time.Now()
		evs, err := eng.Infer(context.Background())
		now := time.Now()
		if sr, ok := eng.(stepReporter); ok && err == nil {
			if ls := sr.LastStep(); ls.Decode+ls.Prompt > 0 {
				s.met.step(ls.Decode, ls.Prompt, now.Sub(t0))
			}
		}
		for _, ev := range evs {
			j := running[ev.Query]
			if j == nil {
				continue
			}
			if ev.Reason != "error" {
				s.met.genTokens.Inc()
				if !j.gotFirst {
					j.gotFirst = true
					s.met.ttft.Observe(now.Sub(j.arrived).Seconds())
				} else if t := j.last[ev.Seq]; !t.IsZero() {
					s.met.itl.Observe(now.Sub(t).Seconds())
				}
				j.last[ev.Seq] = now
			}
			ev.Logits = nil
			j.push(ev, now)
			if ev.Done {
				j.seqDone++
				if ev.Reason != "" {
					s.met.requests.WithLabelValues(ev.Reason).Inc()
				}
				if j.seqDone >= j.n {
					finish(ev.Query, j, nil)
				}
			}
		}
		if len(evs) > 0 {
			// The handlers just woken write their tokens in microseconds;
			// let them run before the next step's workers take every core
			// (else a token waits for the scheduler's 10 ms preemption or
			// the step's end: weft:token_delivery_seconds).
			runtime.Gosched()
		}
		if err != nil {
			// The step failed as a whole: the engine dropped the queries
			// that were in it. End every running job with the error.
			for id, j := range running {
				eng.Cancel(id)
				finish(id, j, fmt.Errorf("engine step: %w", err))
			}
		}
	}
}

// requestError is an error to answer with an HTTP status and an
// OpenAI-shaped body.
type requestError struct {
	status int
	typ    string // error.type; "" derives it from status
	code   string
	param  string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(param, format string, args ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, param: param, msg: fmt.Sprintf(format, args...)}
}
