package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/server"
)

// modelFlags are the flags that load a model and make its engine, shared
// by run-like commands (serve, chat).
type modelFlags struct {
	model, spec, tok, kvType, devices, kvBudget, pluginDir, chatTemplate *string
	threads, batch, microBatches, ctx                                    *int
	stepTokens                                                           int // serve's --batch-tokens
	trust                                                                *bool
	set                                                                  setFlags
	kernels                                                              func() (cpu.Kernels, error)
}

func addModelFlags(fs *flag.FlagSet) *modelFlags {
	f := &modelFlags{set: setFlags{}}
	f.model = fs.String("m", "", "model: GGUF, llama2.c .bin, safetensors/PyTorch file or HF folder")
	f.spec = fs.String("s", "", "spec file or built-in name (default: chosen by the checkpoint's architecture)")
	f.tok = fs.String("tokenizer", "", "tokenizer file (llama2.c tokenizer.bin, tokenizer.json, vocab GGUF)")
	f.threads = fs.Int("threads", 0, "CPU threads (0: all cores)")
	fs.IntVar(f.threads, "t", 0, "same as --threads")
	f.batch = fs.Int("batch", 1024, "most tokens in an engine step (prompt chunks and decode tokens of all requests); a burst of prompts shares one step up to this")
	f.kvType = fs.String("kv-type", "auto", kvTypeUsage)
	f.devices = fs.String("devices", "", devicesUsage)
	f.microBatches = fs.Int("micro-batches", 1, microBatchesUsage)
	f.ctx = fs.Int("c", 0, "context size in positions per sequence (0: the model's)")
	fs.IntVar(f.ctx, "ctx-size", 0, "same as -c")
	f.kvBudget = fs.String("kv-budget", "auto", kvBudgetUsage)
	f.pluginDir = fs.String("plugin-dir", "", pluginDirUsage)
	f.trust = fs.Bool("trust-spec-plugins", false, "start a plugin binary the spec names by path even outside the plugin directories (a spec is data: trust it like a program)")
	f.chatTemplate = fs.String("chat-template", "", "chat template: a built-in name ("+strings.Join(chat.BuiltinNames(), ", ")+") or a Jinja file (default: the model's tokenizer.chat_template, else "+chat.DefaultName+")")
	fs.Var(f.set, "set", "override a spec param: key=value (repeatable)")
	f.kernels = addKernelsFlag(fs)
	return f
}

// check validates the flags before anything loads.
func (f *modelFlags) check() (budget int64, err error) {
	switch {
	case *f.model == "":
		return 0, fmt.Errorf("%w: -m MODEL is required", errUsage)
	case *f.ctx < 0:
		return 0, fmt.Errorf("%w: -c %d: the context size must be ≥ 0", errUsage, *f.ctx)
	case *f.batch < 1 || *f.batch > 1<<16:
		return 0, fmt.Errorf("%w: --batch %d (1 to 65536)", errUsage, *f.batch)
	}
	if budget, err = parseBytes(*f.kvBudget); err != nil {
		return 0, fmt.Errorf("%w: --kv-budget: %v", errUsage, err)
	}
	if err := checkKVType(*f.kvType); err != nil {
		return 0, err
	}
	if err := checkDevices(*f.devices); err != nil {
		return 0, err
	}
	if _, err := f.kernels(); err != nil {
		return 0, err
	}
	if *f.chatTemplate != "" {
		if _, ok := chat.Builtin(*f.chatTemplate); !ok {
			if _, err := os.Stat(*f.chatTemplate); err != nil {
				return 0, fmt.Errorf("%w: --chat-template %q is neither a built-in (%s) nor a file: %v", errUsage, *f.chatTemplate, strings.Join(chat.BuiltinNames(), ", "), err)
			}
		}
	}
	return budget, nil
}

// loaded is a model with its engine and chat template.
type loaded struct {
	m        *model.Model
	eng      *scheduler.Engine
	tmpl     *chat.Template
	ctx      int
	bos, eos string
	close    func()
}

// load loads the model, its chat template and an engine.
func (f *modelFlags) load(budget int64, stderr io.Writer) (*loaded, error) {
	host, err := pluginHost(*f.pluginDir, *f.trust, stderr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	host.SetSpecDir(specDir(*f.spec))
	loadProg, loadDone := loadProgress(stderr, *f.model)
	m, err := model.Load(model.Options{Path: *f.model, Spec: *f.spec, Tokenizer: *f.tok, Set: overrides(f.set), Plugins: host, Progress: loadProg})
	loadDone()
	if err != nil {
		host.Close()
		return nil, err
	}
	fail := func(err error) (*loaded, error) {
		m.Close()
		host.Close()
		return nil, err
	}
	if m.Tokenizer == nil {
		return fail(fmt.Errorf("%s has no tokenizer; pass --tokenizer FILE", *f.model))
	}
	src, _ := m.Checkpoint.Meta()["tokenizer.chat_template"].(string)
	tmpl, err := chat.Select(src, *f.chatTemplate)
	if err != nil {
		return fail(err)
	}
	ctxLen := *f.ctx
	if ctxLen == 0 {
		ctxLen = m.Context()
	}
	kern, _ := f.kernels() // checked by check
	eng, err := m.NewEngine(model.EngineOptions{Threads: *f.threads, MaxTokens: min(*f.batch, ctxLen), Context: ctxLen, KVType: *f.kvType,
		Kernels: kern, Devices: *f.devices, MicroBatches: *f.microBatches, KVBudget: budget, StepTokens: f.stepTokens})
	if err != nil {
		return fail(err)
	}
	l := &loaded{m: m, eng: eng, tmpl: tmpl, ctx: ctxLen}
	tok := m.Tokenizer
	if b := tok.BOS(); b >= 0 {
		l.bos = tok.Piece(b)
	}
	if e := tok.EOS(); e >= 0 {
		l.eos = tok.Piece(e)
	}
	l.close = func() {
		eng.Close()
		m.Close()
		host.Close()
	}
	return l, nil
}

func cmdServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	mf := addModelFlags(fs)
	host := fs.String("host", "127.0.0.1", "address to listen on")
	port := fs.Int("port", 8080, "port to listen on (0: any free port, printed at start)")
	parallel := fs.Int("np", 4, "requests the engine runs at once (continuous batching slots)")
	fs.IntVar(parallel, "parallel", 4, "same as -np")
	queue := fs.Int("queue", 64, "requests that may wait for a slot; more answer 429 with Retry-After")
	alias := fs.String("alias", "", "model id in /v1/models and responses (default: the model file's name)")
	maxTokens := fs.Int("max-tokens", 0, "largest max_tokens a request may ask (0: the context)")
	maxPrompt := fs.Int("max-prompt-tokens", 0, "largest prompt in tokens (0: the context)")
	maxBody := fs.String("max-body", "4M", "largest request body (K, M, G suffixes)")
	drain := fs.Duration("drain-timeout", 30*time.Second, "on SIGTERM, how long in-flight requests may finish before they are cancelled")
	embeddings := fs.Bool("embeddings", false, "also serve /v1/embeddings from a decoder's pooled final hidden states (a second compiled graph; an encoder always serves them)")
	stepTokens := fs.Int("batch-tokens", 64, "most tokens in an engine step that carries decodes (vLLM's max_num_batched_tokens): running sequences decode first, new prompts' chunks get the rest, so a long prompt cannot stall their next tokens (0: --batch, no bound)")
	window := fs.Duration("batch-window", 10*time.Millisecond, "how long an idle server waits for the rest of a burst of requests before its first step (it starts once arrivals pause for 1 ms): a burst's prompts share one prefill step (0: start at once)")
	pooling := fs.String("pooling", "", "how /v1/embeddings pools: mean, cls or last (default: the model's pooling_type, else cls for an encoder and last for a decoder)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	budget, err := mf.check()
	if err != nil {
		return err
	}
	switch {
	case *parallel < 1 || *parallel > 1024:
		return fmt.Errorf("%w: -np %d (1 to 1024)", errUsage, *parallel)
	case *queue < 0:
		return fmt.Errorf("%w: --queue %d (≥ 0)", errUsage, *queue)
	case *port < 0 || *port > 65535:
		return fmt.Errorf("%w: --port %d", errUsage, *port)
	case *maxTokens < 0 || *maxPrompt < 0:
		return fmt.Errorf("%w: --max-tokens %d, --max-prompt-tokens %d (≥ 0)", errUsage, *maxTokens, *maxPrompt)
	case *drain < 0:
		return fmt.Errorf("%w: --drain-timeout %v", errUsage, *drain)
	case *stepTokens < 0:
		return fmt.Errorf("%w: --batch-tokens %d (≥ 0)", errUsage, *stepTokens)
	case *window < 0 || *window > time.Second:
		return fmt.Errorf("%w: --batch-window %v (0 to 1s)", errUsage, *window)
	}
	mf.stepTokens = *stepTokens
	var pool model.Pooling = -1 // the model's
	if *pooling != "" {
		p, err := model.ParsePooling(*pooling)
		if err != nil || p == model.PoolNone {
			return fmt.Errorf("%w: --pooling %q: want mean, cls or last (an OpenAI embedding is one vector per input)", errUsage, *pooling)
		}
		pool = p
	}
	bodyLimit, err := parseBytes(*maxBody)
	if err != nil || bodyLimit < 1 || *maxBody == "auto" {
		return fmt.Errorf("%w: --max-body %q is not a byte count", errUsage, *maxBody)
	}
	name := *alias
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(*mf.model), filepath.Ext(*mf.model))
	}
	srv := server.New(server.Options{ModelName: name, Parallel: *parallel, Queue: *queue, MaxBodyBytes: bodyLimit, BatchWindow: *window,
		MaxPromptTokens: *maxPrompt, MaxTokens: *maxTokens})
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	fmt.Fprintf(stderr, "weft serve: listening on http://%s (loading %s)\n", ln.Addr(), *mf.model)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	type result struct {
		l   *loaded
		err error
	}
	loadc := make(chan result, 1)
	go func() {
		l, err := mf.load(budget, stderr)
		loadc <- result{l, err}
	}()
	var l *loaded
	select {
	case r := <-loadc:
		if r.err != nil {
			hs.Close()
			return r.err
		}
		l = r.l
	case <-ctx.Done():
		hs.Close()
		return errors.New("interrupted while loading")
	case err := <-serveErr:
		return err
	}
	defer l.close()
	numBlocks := 0
	if b := l.eng.KV().Budget(); b > 0 {
		numBlocks = int(b / (scheduler.BlockRows * l.eng.KV().PositionBytes()))
	}
	sm := &server.Model{Engine: l.eng, Tokenizer: l.m.Tokenizer, Template: l.tmpl, Context: l.ctx,
		BOS: l.bos, EOS: l.eos, NumBlocks: numBlocks, Constrainer: newFormatConstrainer(l.m.Tokenizer)}
	encoder := l.m.CheckGenerates() != nil
	if slices.Contains(l.m.Spec.Outputs, "hidden") && (encoder || *embeddings) {
		// A spec that names its final hidden states serves /v1/embeddings:
		// an encoder always, a decoder when asked.
		emb, err := newServeEmbedder(l.m, *mf.threads, l.ctx, pool)
		if err != nil {
			hs.Close()
			return err
		}
		defer emb.close()
		sm.Embedder = emb
	} else if *embeddings {
		hs.Close()
		return fmt.Errorf("%w: --embeddings: %s has no `hidden` output (outputs: %s)", errUsage, l.m.Spec.File, strings.Join(l.m.Spec.Outputs, ", "))
	}
	if err := srv.Start(sm); err != nil {
		hs.Close()
		return err
	}
	tname := l.tmpl.Name()
	if tname == "" {
		tname = "the model's own"
	}
	fmt.Fprintf(stderr, "weft serve: ready: model %q, context %d, %d slots, queue %d, chat template %s\n", name, l.ctx, *parallel, *queue, tname)
	select {
	case err := <-serveErr:
		srv.Shutdown(context.Background()) //nolint:errcheck
		return err
	case <-ctx.Done():
	}
	stop()
	fmt.Fprintf(stderr, "weft serve: shutting down: draining in-flight requests for up to %v\n", *drain)
	dctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	// Stop accepting connections and requests; in-flight ones go on.
	done := make(chan error, 1)
	go func() { done <- hs.Shutdown(dctx) }()
	if err := srv.Shutdown(dctx); err != nil {
		fmt.Fprintf(stderr, "weft serve: drain deadline passed: in-flight requests were cancelled\n")
	}
	// Handlers end once their jobs have ended; give them a moment to write.
	fctx, fcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer fcancel()
	select {
	case <-done:
	case <-fctx.Done():
		hs.Close()
	}
	return nil
}

// serveEmbedder serves /v1/embeddings with a model.Embedder, one input at
// a time (the embedder reuses its step), pooled as --pooling or the model
// says (mean where it says none) and scaled to unit length, as OpenAI's
// are (llama-server's --embd-normalize 2).
type serveEmbedder struct {
	mu  sync.Mutex
	e   *model.Embedder
	opt model.EmbedOptions
}

// newServeEmbedder compiles m's embedder; pool < 0 takes the model's
// default pooling (mean where that is none).
func newServeEmbedder(m *model.Model, threads, ctx int, pool model.Pooling) (*serveEmbedder, error) {
	if pool < 0 {
		var err error
		if pool, err = m.DefaultPooling(); err != nil {
			return nil, err
		}
	}
	if pool == model.PoolNone {
		pool = model.PoolMean
	}
	e, err := m.NewEmbedder(model.EngineOptions{Threads: threads, MaxTokens: ctx})
	if err != nil {
		return nil, err
	}
	return &serveEmbedder{e: e, opt: model.EmbedOptions{Pooling: pool, Normalize: true}}, nil
}

// Embed implements server.Embedder.
func (s *serveEmbedder) Embed(ctx context.Context, tokens []int) ([]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(tokens) > s.e.MaxTokens() {
		return nil, fmt.Errorf("embed: %d tokens, at most %d", len(tokens), s.e.MaxTokens())
	}
	v, err := s.e.Embed(ctx, tokens, nil, s.opt)
	if err != nil {
		return nil, err
	}
	if len(v) != 1 {
		return nil, fmt.Errorf("embed: %d vectors for one pooled input", len(v))
	}
	return v[0], nil
}

func (s *serveEmbedder) close() { s.e.Close() }
