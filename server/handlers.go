package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /health", s.health)
	m.HandleFunc("GET /v1/health", s.health)
	m.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	m.HandleFunc("GET /v1/models", s.ready(s.models))
	m.HandleFunc("POST /v1/chat/completions", s.ready(s.chatCompletions))
	m.HandleFunc("POST /v1/completions", s.ready(s.completions))
	m.HandleFunc("POST /v1/embeddings", s.ready(s.embeddings))
	m.HandleFunc("POST /tokenize", s.ready(s.tokenize))
	m.HandleFunc("POST /detokenize", s.ready(s.detokenize))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &requestError{status: http.StatusNotFound, msg: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
	s.mux = m
}

// arrivalKey keys the time a request's headers were read in its context.
type arrivalKey struct{}

// arrival returns when r reached the server (now when it was not stamped).
func arrival(r *http.Request) time.Time {
	if t, ok := r.Context().Value(arrivalKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}

// ready wraps a handler that needs the model: 503 while it loads.
func (s *Server) ready(h func(http.ResponseWriter, *http.Request, *Model)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.model.Load()
		if m == nil {
			writeError(w, &requestError{status: http.StatusServiceUnavailable, msg: "the model is loading"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes)
		r = r.WithContext(context.WithValue(r.Context(), arrivalKey{}, time.Now()))
		h(w, r, m)
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if !s.Ready() {
		writeError(w, &requestError{status: http.StatusServiceUnavailable, msg: "the model is loading"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request, m *Model) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{
		{"id": s.opt.ModelName, "object": "model", "created": s.created, "owned_by": "weft"}}})
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client may be gone
}

// errorBody turns err into OpenAI's error shape and its status.
func errorBody(err error) (int, apiError) {
	var re *requestError
	if !errors.As(err, &re) {
		switch {
		case errors.Is(err, errBusy):
			re = &requestError{status: http.StatusTooManyRequests, msg: err.Error()}
		case errors.Is(err, errDraining), errors.Is(err, errAborted):
			re = &requestError{status: http.StatusServiceUnavailable, msg: err.Error()}
		default:
			re = &requestError{status: http.StatusInternalServerError, msg: err.Error()}
		}
	}
	typ, code := re.typ, re.code
	if typ == "" {
		switch re.status {
		case http.StatusBadRequest:
			typ = "invalid_request_error"
		case http.StatusNotFound:
			typ, code = "invalid_request_error", "not_found"
		case http.StatusTooManyRequests:
			typ, code = "rate_limit_error", "rate_limit_exceeded"
		case http.StatusServiceUnavailable:
			typ = "unavailable_error"
		default:
			typ = "server_error"
		}
	}
	b := apiError{Error: apiErrorBody{Message: re.msg, Type: typ}}
	if code != "" {
		b.Error.Code = &code
	}
	if re.param != "" {
		b.Error.Param = &re.param
	}
	return re.status, b
}

// writeError answers err in OpenAI's error shape.
func writeError(w http.ResponseWriter, err error) {
	status, body := errorBody(err)
	if (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, body)
}

// decode reads a JSON body into v.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return badRequest("", "the request body exceeds %d bytes", mbe.Limit)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return badRequest(te.Field, "field %s: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return badRequest("", "invalid JSON body: %v", err)
	}
	return nil
}

// genParams is a parsed generation request.
type genParams struct {
	req         scheduler.Request
	stops       []string
	stream      bool
	usage       bool
	logprobs    bool
	topLogprobs int
}

// build validates the sampling fields and makes the engine request for
// prompt.
// promptField names the prompt's field in errors (messages or prompt).
func (s *Server) build(m *Model, f *samplingFields, prompt []int, promptField string) (*genParams, error) {
	// Like llama-server, any model name is served by the one model.
	limitPrompt := m.Context
	if s.opt.MaxPromptTokens > 0 {
		limitPrompt = min(limitPrompt, s.opt.MaxPromptTokens)
	}
	if len(prompt) == 0 {
		return nil, badRequest(promptField, "the prompt is empty")
	}
	if len(prompt) > limitPrompt {
		return nil, badRequest(promptField, "the prompt has %d tokens; this server accepts at most %d", len(prompt), limitPrompt)
	}
	room := m.Context - len(prompt)
	if room < 1 {
		return nil, badRequest(promptField, "the prompt's %d tokens fill the model's context of %d", len(prompt), m.Context)
	}
	maxTok := min(room, s.opt.MaxTokens)
	if s.opt.MaxTokens <= 0 {
		maxTok = room
	}
	asked := f.MaxCompletionTokens
	field := "max_completion_tokens"
	if asked == nil {
		asked, field = f.MaxTokens, "max_tokens"
	}
	if asked != nil {
		switch {
		case *asked < 1:
			return nil, badRequest(field, "%s is %d; it must be at least 1", field, *asked)
		case s.opt.MaxTokens > 0 && *asked > s.opt.MaxTokens:
			return nil, badRequest(field, "%s is %d; this server allows at most %d", field, *asked, s.opt.MaxTokens)
		case *asked > room:
			return nil, badRequest(field, "this model's maximum context length is %d tokens; you requested %d tokens (%d in the prompt, %d for the completion)",
				m.Context, len(prompt)+*asked, len(prompt), *asked)
		}
		maxTok = *asked
	}
	n := 1
	if f.N != nil {
		n = *f.N
		if n < 1 || n > s.opt.MaxN {
			return nil, badRequest("n", "n is %d; it must be between 1 and %d", n, s.opt.MaxN)
		}
	}
	cfg := sampling.DefaultConfig()
	// presence_penalty and frequency_penalty are OpenAI's (openaiPenalties),
	// not llama.cpp's: they count the completion's tokens, not the prompt's.
	var presence, frequency float64
	checks := []struct {
		name   string
		v      *float64
		lo, hi float64
		dst    *float64
	}{
		{"temperature", f.Temperature, 0, 2, &cfg.Temperature},
		{"top_p", f.TopP, 0, 1, &cfg.TopP},
		{"min_p", f.MinP, 0, 1, &cfg.MinP},
		{"typical_p", f.TypicalP, 0, 1, &cfg.TypicalP},
		{"presence_penalty", f.PresencePenalty, -2, 2, &presence},
		{"frequency_penalty", f.FrequencyPenalty, -2, 2, &frequency},
		{"repetition_penalty", f.RepetitionPenalty, 0, 10, &cfg.RepeatPenalty},
		{"repeat_penalty", f.RepeatPenalty, 0, 10, &cfg.RepeatPenalty},
	}
	for _, c := range checks {
		if c.v == nil {
			continue
		}
		if math.IsNaN(*c.v) || *c.v < c.lo || *c.v > c.hi {
			return nil, badRequest(c.name, "%s is %v; it must be between %v and %v", c.name, *c.v, c.lo, c.hi)
		}
		*c.dst = *c.v
	}
	if f.TopK != nil {
		if *f.TopK < 0 {
			return nil, badRequest("top_k", "top_k is %d; it must be ≥ 0 (0: off)", *f.TopK)
		}
		cfg.TopK = *f.TopK
	}
	if f.RepeatLastN != nil {
		if *f.RepeatLastN < -1 {
			return nil, badRequest("repeat_last_n", "repeat_last_n is %d; it must be ≥ -1", *f.RepeatLastN)
		}
		cfg.RepeatLastN = *f.RepeatLastN
	}
	vocab := m.Tokenizer.VocabSize()
	for k, v := range f.LogitBias {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 || id >= vocab {
			return nil, badRequest("logit_bias", "logit_bias key %q is not a token id of the vocabulary (0 to %d)", k, vocab-1)
		}
		if math.IsNaN(v) || v < -100 || v > 100 {
			return nil, badRequest("logit_bias", "logit_bias of token %d is %v; it must be between -100 and 100", id, v)
		}
		b := v
		if v == -100 {
			b = math.Inf(-1) // OpenAI: -100 bans the token
		}
		cfg.LogitBias = append(cfg.LogitBias, sampling.LogitBias{Token: id, Bias: b})
	}
	if f.IgnoreEOS {
		// llama.cpp's ignore_eos: the end-of-generation tokens are banned,
		// not only no longer ending the reply.
		cfg.IgnoreEOS = true
		for id := range vocab {
			if m.Tokenizer.IsEOG(id) {
				cfg.EOS = append(cfg.EOS, id)
			}
		}
		if len(cfg.EOS) == 0 {
			cfg.IgnoreEOS = false
		}
	}
	seed := s.seed()
	if f.Seed != nil {
		seed = uint64(*f.Seed)
	}
	for _, st := range f.Stop {
		if st == "" {
			return nil, badRequest("stop", "a stop string is empty")
		}
	}
	if len(f.Stop) > 4 {
		return nil, badRequest("stop", "%d stop strings; at most 4", len(f.Stop))
	}
	p := &genParams{stops: f.Stop, stream: f.Stream, usage: f.StreamOptions != nil && f.StreamOptions.IncludeUsage}
	if f.StreamOptions != nil && !f.Stream {
		return nil, badRequest("stream_options", "stream_options is only allowed when stream is true")
	}
	tok := m.Tokenizer
	p.req = scheduler.Request{Prompt: prompt, MaxTokens: maxTok, N: n}
	if !f.IgnoreEOS {
		p.req.Stop = tok.IsEOG
	}
	format := f.ResponseFormat
	constrained := format != nil && format.Type != "" && format.Type != "text"
	if format != nil {
		switch format.Type {
		case "", "text", "json_object", "json_schema":
		default:
			return nil, badRequest("response_format.type", "response_format type %q: want text, json_object or json_schema", format.Type)
		}
	}
	if constrained && m.Constrainer == nil {
		return nil, badRequest("response_format", "response_format %s is not supported by this build (grammar-constrained decoding is not wired into the server yet)", format.Type)
	}
	for i := 0; i < n; i++ {
		c := cfg
		c.Seed = seed + uint64(i)
		smp, err := sampling.New(c)
		if err != nil {
			return nil, badRequest("", "sampling: %v", err)
		}
		var pk scheduler.Picker = smp
		if presence != 0 || frequency != 0 {
			pk = newOpenAIPenalties(smp, frequency, presence)
		}
		if constrained {
			if pk, err = m.Constrainer.Constrain(*format, pk); err != nil {
				return nil, badRequest("response_format", "response_format: %v", err)
			}
		}
		if n == 1 {
			p.req.Sampler = pk
		} else {
			p.req.Pickers = append(p.req.Pickers, pk)
		}
	}
	return p, nil
}

// encode tokenizes a rendered prompt, adding BOS as the model asks, once.
func encode(tok tokenizer.Tokenizer, text string) ([]int, error) {
	ids, err := tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
	if err != nil {
		return nil, err
	}
	if b := tok.BOS(); b >= 0 && len(ids) >= 2 && ids[0] == b && ids[1] == b {
		ids = ids[1:] // the template wrote BOS and the tokenizer added one
	}
	return ids, nil
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request, m *Model) {
	var req chatRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, badRequest("messages", "messages is empty"))
		return
	}
	if m.Template == nil {
		writeError(w, badRequest("messages", "the model has no chat template; use /v1/completions or start the server with --chat-template"))
		return
	}
	msgs := make([]chat.Message, len(req.Messages))
	for i, mm := range req.Messages {
		if mm.Role == "" {
			writeError(w, badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d] has no role", i))
			return
		}
		text, err := contentText(mm.Content)
		if err != nil {
			writeError(w, badRequest(fmt.Sprintf("messages[%d].content", i), "messages[%d].content: %v", i, err))
			return
		}
		msgs[i] = chat.Message{Role: mm.Role, Content: text}
	}
	text, err := m.Template.Render(msgs, chat.Options{AddGenerationPrompt: true, BOS: m.BOS, EOS: m.EOS})
	if err != nil {
		writeError(w, badRequest("messages", "%v", err))
		return
	}
	prompt, err := encode(m.Tokenizer, text)
	if err != nil {
		writeError(w, badRequest("messages", "tokenize the prompt: %v", err))
		return
	}
	p, err := s.build(m, &req.samplingFields, prompt, "messages")
	if err != nil {
		writeError(w, err)
		return
	}
	if req.TopLogprobs != nil {
		if *req.TopLogprobs < 0 || *req.TopLogprobs > 20 {
			writeError(w, badRequest("top_logprobs", "top_logprobs is %d; it must be between 0 and 20", *req.TopLogprobs))
			return
		}
		if !req.Logprobs {
			writeError(w, badRequest("top_logprobs", "top_logprobs needs logprobs to be true"))
			return
		}
		p.topLogprobs = *req.TopLogprobs
	}
	p.logprobs = req.Logprobs
	s.generate(w, r, m, p, true)
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request, m *Model) {
	var req completionRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	texts, toks, err := promptInputs(req.Prompt)
	if err != nil {
		writeError(w, badRequest("prompt", "prompt %v", err))
		return
	}
	if len(texts)+len(toks) != 1 {
		writeError(w, badRequest("prompt", "%d prompts: this server takes one per request", len(texts)+len(toks)))
		return
	}
	if req.Echo {
		writeError(w, badRequest("echo", "echo is not supported"))
		return
	}
	var prompt []int
	if len(texts) == 1 {
		if prompt, err = encode(m.Tokenizer, texts[0]); err != nil {
			writeError(w, badRequest("prompt", "tokenize the prompt: %v", err))
			return
		}
	} else {
		prompt = toks[0]
		for _, t := range prompt {
			if t < 0 || t >= m.Tokenizer.VocabSize() {
				writeError(w, badRequest("prompt", "prompt token %d is outside the vocabulary of %d", t, m.Tokenizer.VocabSize()))
				return
			}
		}
	}
	p, err := s.build(m, &req.samplingFields, prompt, "prompt")
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Logprobs != nil {
		if *req.Logprobs < 0 || *req.Logprobs > 5 {
			writeError(w, badRequest("logprobs", "logprobs is %d; it must be between 0 and 5", *req.Logprobs))
			return
		}
		p.logprobs, p.topLogprobs = true, *req.Logprobs
	}
	s.generate(w, r, m, p, false)
}

// sse writes server-sent events.
type sse struct {
	w       http.ResponseWriter
	f       http.Flusher
	started bool
	err     error
}

func (e *sse) send(v any) {
	if e.err != nil {
		return
	}
	if !e.started {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else if b, e.err = json.Marshal(v); e.err != nil {
		return
	}
	if _, e.err = fmt.Fprintf(e.w, "data: %s\n\n", b); e.err == nil && e.f != nil {
		e.f.Flush()
	}
}

// generate runs p through the engine and answers as a chat (isChat) or
// completions response, streamed or whole.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, m *Model, p *genParams, isChat bool) {
	p.req.Logprobs = p.logprobs
	p.req.TopLogprobs = p.topLogprobs
	j := newJob(p.req, arrival(r))
	if err := s.submit(j); err != nil {
		if errors.Is(err, errBusy) {
			w.Header().Set("Retry-After", strconv.Itoa(s.opt.RetryAfter))
		}
		writeError(w, err)
		return
	}
	s.met.prepare.Observe(time.Since(j.arrived).Seconds())
	n := j.n
	id := fmt.Sprintf("%s%x%04x", map[bool]string{true: "chatcmpl-", false: "cmpl-"}[isChat], s.created, s.ids.Add(1))
	object := "text_completion"
	if isChat {
		object = "chat.completion"
	}
	fp := "weft"
	choices := make([]*choiceText, n)
	for i := range choices {
		choices[i] = newChoiceText(m.Tokenizer, p.stops)
	}
	chatLP := make([]*chatLogprobs, n)
	compLP := make([]*completionLogprobs, n)
	if p.logprobs {
		for i := range n {
			chatLP[i] = &chatLogprobs{Content: []tokenLogprob{}, Refusal: nil}
			compLP[i] = &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
		}
	}
	var out *sse
	if p.stream {
		f, _ := w.(http.Flusher)
		out = &sse{w: w, f: f}
	}
	var usageNull json.RawMessage
	if p.usage {
		usageNull = json.RawMessage("null")
	}
	type chunkC struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Choices           any             `json:"choices"`
		Usage             json.RawMessage `json:"usage,omitempty"`
	}
	chunk := func(choices any) chunkC {
		obj := object
		if isChat {
			obj = "chat.completion.chunk"
		}
		return chunkC{ID: id, Object: obj, Created: time.Now().Unix(), Model: s.opt.ModelName, SystemFingerprint: fp, Choices: choices, Usage: usageNull}
	}
	if p.stream && isChat {
		for i := range n {
			empty := ""
			out.send(chunk([]chunkChoice{{Index: i, Delta: delta{Role: "assistant", Content: &empty}}}))
		}
	}
	offsets := make([]int, n)
	var evs []scheduler.TokenEvent
	ctx := r.Context()
	var genErr error
loop:
	for {
		select {
		case <-ctx.Done():
			s.giveUp(j)
			return // the client is gone
		case <-j.notify:
		}
		var closed bool
		var pushed time.Time
		evs, pushed, closed, genErr = j.take(evs)
		for _, ev := range evs {
			if ev.Seq < 0 || ev.Seq >= n {
				continue
			}
			c := choices[ev.Seq]
			if ev.Reason == "error" {
				if genErr == nil && ev.Err != nil {
					genErr = ev.Err
				}
				c.done, c.finish = true, "error"
				continue
			}
			if c.done {
				continue
			}
			piece := c.push(ev.Token, ev.Done, ev.Reason)
			var lpC *chatLogprobs
			var lpT *completionLogprobs
			if p.logprobs {
				t := tokenText(m.Tokenizer, ev.Token)
				tl := tokenLogprob{Token: t, Logprob: ev.Logprob, Bytes: byteList(t), TopLogprobs: []topLogprob{}}
				tops := map[string]float64{}
				for _, tp := range ev.Top {
					tt := tokenText(m.Tokenizer, tp.Token)
					tl.TopLogprobs = append(tl.TopLogprobs, topLogprob{Token: tt, Logprob: tp.Logprob, Bytes: byteList(tt)})
					tops[tt] = tp.Logprob
				}
				chatLP[ev.Seq].Content = append(chatLP[ev.Seq].Content, tl)
				cl := compLP[ev.Seq]
				cl.Tokens = append(cl.Tokens, t)
				cl.TokenLogprobs = append(cl.TokenLogprobs, ev.Logprob)
				cl.TopLogprobs = append(cl.TopLogprobs, tops)
				cl.TextOffset = append(cl.TextOffset, offsets[ev.Seq])
				lpC = &chatLogprobs{Content: []tokenLogprob{tl}}
				lpT = &completionLogprobs{Tokens: []string{t}, TokenLogprobs: []float64{ev.Logprob}, TopLogprobs: []map[string]float64{tops}, TextOffset: []int{offsets[ev.Seq]}}
			}
			offsets[ev.Seq] += len(piece)
			if p.stream && (piece != "" || lpC != nil) {
				if isChat {
					out.send(chunk([]chunkChoice{{Index: ev.Seq, Delta: delta{Content: &piece}, Logprobs: lpC}}))
				} else {
					out.send(chunk([]completionChoice{{Text: piece, Index: ev.Seq, Logprobs: lpT}}))
				}
			}
			if c.done && p.stream {
				fr := c.finish
				if isChat {
					out.send(chunk([]chunkChoice{{Index: ev.Seq, Delta: delta{}, FinishReason: &fr}}))
				} else {
					out.send(chunk([]completionChoice{{Text: "", Index: ev.Seq, FinishReason: &fr}}))
				}
			}
		}
		if out != nil && out.err != nil {
			s.giveUp(j)
			return // the client stopped reading
		}
		if p.stream && len(evs) > 0 && !pushed.IsZero() {
			s.met.delivery.Observe(time.Since(pushed).Seconds())
		}
		all := true
		for _, c := range choices {
			all = all && c.done
		}
		if all && !closed {
			s.giveUp(j) // stop strings ended every choice: free the slot now
			break loop
		}
		if closed || all {
			break loop
		}
	}
	if genErr != nil && !errors.Is(genErr, context.Canceled) {
		if p.stream && out.started {
			_, body := errorBody(genErr)
			out.send(body)
			return
		}
		writeError(w, genErr)
		return
	}
	u := usage{PromptTokens: len(p.req.Prompt)}
	for _, c := range choices {
		u.CompletionTokens += c.tokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if p.stream {
		if p.usage {
			ch := chunk([]struct{}{})
			b, _ := json.Marshal(u)
			ch.Usage = b
			out.send(ch)
		}
		out.send("[DONE]")
		return
	}
	if isChat {
		resp := chatResponse{ID: id, Object: object, Created: time.Now().Unix(), Model: s.opt.ModelName, SystemFingerprint: fp, Usage: u}
		for i, c := range choices {
			resp.Choices = append(resp.Choices, chatChoice{Index: i, Message: chatMessage{Role: "assistant", Content: c.text.String()},
				Logprobs: chatLP[i], FinishReason: c.finish})
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	resp := completionResponse{ID: id, Object: object, Created: time.Now().Unix(), Model: s.opt.ModelName, SystemFingerprint: fp, Usage: &u}
	for i, c := range choices {
		fr := c.finish
		resp.Choices = append(resp.Choices, completionChoice{Text: c.text.String(), Index: i, Logprobs: compLP[i], FinishReason: &fr})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request, m *Model) {
	var req embeddingRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if m.Embedder == nil {
		writeError(w, badRequest("model", "embeddings are not supported by this build for this model"))
		return
	}
	texts, toks, err := promptInputs(req.Input)
	if err != nil {
		writeError(w, badRequest("input", "input %v", err))
		return
	}
	if len(texts) == 0 && len(toks) == 0 {
		writeError(w, badRequest("input", "input is an empty list: give at least one text or token list"))
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		writeError(w, badRequest("encoding_format", "encoding_format %q: only float is supported", req.EncodingFormat))
		return
	}
	for _, t := range texts {
		ids, err := encode(m.Tokenizer, t)
		if err != nil {
			writeError(w, badRequest("input", "tokenize: %v", err))
			return
		}
		toks = append(toks, ids)
	}
	resp := embeddingResponse{Object: "list", Model: s.opt.ModelName}
	for i, ids := range toks {
		if len(ids) == 0 || len(ids) > m.Context {
			writeError(w, badRequest("input", "input %d has %d tokens; it must have 1 to %d", i, len(ids), m.Context))
			return
		}
		v, err := m.Embedder.Embed(r.Context(), ids)
		if err != nil {
			writeError(w, err)
			return
		}
		resp.Data = append(resp.Data, embeddingData{Object: "embedding", Index: i, Embedding: v})
		resp.Usage.PromptTokens += len(ids)
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	writeJSON(w, http.StatusOK, resp)
}

// tokenize is llama-server's POST /tokenize: {"content", "add_special",
// "parse_special", "with_pieces"} → {"tokens"}.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request, m *Model) {
	var req struct {
		Content      *string `json:"content"`
		AddSpecial   bool    `json:"add_special"`
		ParseSpecial *bool   `json:"parse_special"`
		WithPieces   bool    `json:"with_pieces"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Content == nil {
		writeError(w, badRequest("content", "content is missing"))
		return
	}
	parse := req.ParseSpecial == nil || *req.ParseSpecial
	ids, err := m.Tokenizer.Encode(*req.Content, tokenizer.EncodeOptions{AddSpecial: req.AddSpecial, ParseSpecial: parse})
	if err != nil {
		writeError(w, badRequest("content", "tokenize: %v", err))
		return
	}
	if !req.WithPieces {
		if ids == nil {
			ids = []int{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"tokens": ids})
		return
	}
	type piece struct {
		ID    int `json:"id"`
		Piece any `json:"piece"`
	}
	out := make([]piece, len(ids))
	for i, id := range ids {
		t := tokenText(m.Tokenizer, id)
		d := m.Tokenizer.NewStreamDecoder()
		raw := d.Push(id)
		if rest := d.Flush(); rest != "" || !utf8.ValidString(raw) {
			out[i] = piece{ID: id, Piece: byteList(t)} // not whole UTF-8: its bytes, as llama-server
			continue
		}
		out[i] = piece{ID: id, Piece: t}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

// detokenize is llama-server's POST /detokenize: {"tokens"} → {"content"}.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request, m *Model) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	for _, t := range req.Tokens {
		if t < 0 || t >= m.Tokenizer.VocabSize() {
			writeError(w, badRequest("tokens", "token %d is outside the vocabulary of %d", t, m.Tokenizer.VocabSize()))
			return
		}
	}
	var b strings.Builder
	d := m.Tokenizer.NewStreamDecoder()
	for _, t := range req.Tokens {
		b.WriteString(d.Push(t))
	}
	b.WriteString(d.Flush())
	writeJSON(w, http.StatusOK, map[string]string{"content": b.String()})
}
