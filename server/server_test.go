package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

// fakeEngine generates token 403 (" Once") for every sequence (or tokens,
// in turn, when set), one per step, each step taking delay, and records
// what the server asks of it.
type fakeEngine struct {
	delay  time.Duration
	tokens []int

	mu        sync.Mutex
	queries   map[int]*scheduler.Request
	counts    map[int]int
	next      int
	added     int
	cancelled []int
	infers    int
	// firstStep is how many queries the first Infer call held.
	firstStep int
}

func newFake(delay time.Duration) *fakeEngine {
	return &fakeEngine{delay: delay, queries: map[int]*scheduler.Request{}, counts: map[int]int{}}
}

func (f *fakeEngine) AddQuery(r scheduler.Request) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.next
	f.next++
	f.added++
	f.queries[id] = &r
	return id, nil
}

func (f *fakeEngine) Infer(ctx context.Context) ([]scheduler.TokenEvent, error) {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.infers++
	if f.infers == 1 {
		f.firstStep = len(f.queries)
	}
	var evs []scheduler.TokenEvent
	for id, r := range f.queries {
		k := f.counts[id]
		f.counts[id] = k + 1
		ev := scheduler.TokenEvent{Query: id, Token: 403, Index: k}
		if len(f.tokens) > 0 {
			ev.Token = f.tokens[k%len(f.tokens)]
		}
		if k+1 >= r.MaxTokens {
			ev.Done, ev.Reason = true, "length"
			delete(f.queries, id)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func (f *fakeEngine) Cancel(id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.queries[id]; ok {
		f.cancelled = append(f.cancelled, id)
		delete(f.queries, id)
	}
}

func (f *fakeEngine) Stats() scheduler.Stats { return scheduler.Stats{} }

func (f *fakeEngine) state() (added int, cancelled []int, live int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.added, append([]int(nil), f.cancelled...), len(f.queries)
}

// fakeServer serves a fake engine with stories260K's tokenizer.
func fakeServer(t *testing.T, f *fakeEngine, opt Options) (*Server, *httptest.Server) {
	t.Helper()
	tm := loadStories(t, 0)
	tmpl, _ := chat.Builtin("chatml")
	s := New(opt)
	if err := s.Start(&Model{Engine: f, Tokenizer: tm.m.Tokenizer, Template: tmpl, Context: 100000}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck
	})
	return s, ts
}

func post(t *testing.T, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return http.DefaultClient.Do(req)
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestQueueFullAnswers429(t *testing.T) {
	f := newFake(2 * time.Millisecond)
	_, ts := fakeServer(t, f, Options{Parallel: 1, Queue: 1, RetryAfter: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := `{"prompt": "Once", "max_tokens": 90000, "stream": true}`
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // one runs, one waits
		wg.Go(func() {
			if resp, err := post(t, ctx, ts.URL+"/v1/completions", long); err == nil {
				io.Copy(io.Discard, resp.Body) //nolint:errcheck
				resp.Body.Close()
			}
		})
		if i == 0 {
			waitFor(t, "the first request to run", func() bool { a, _, _ := f.state(); return a == 1 })
		}
	}
	time.Sleep(20 * time.Millisecond) // the second is queued by now (it cannot run)
	resp, err := post(t, context.Background(), ts.URL+"/v1/completions", long)
	if err != nil {
		t.Fatal(err)
	}
	var body apiError
	json.NewDecoder(resp.Body).Decode(&body) //nolint:errcheck
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "3" ||
		body.Error.Type != "rate_limit_error" || body.Error.Code == nil || *body.Error.Code != "rate_limit_exceeded" {
		t.Errorf("status %d, Retry-After %q, error %+v; want 429, 3, rate_limit_error", resp.StatusCode, resp.Header.Get("Retry-After"), body.Error)
	}
	if a, _, _ := f.state(); a != 1 {
		t.Errorf("%d queries reached the engine with one slot", a)
	}
	cancel()
	wg.Wait()
}

// TestBatchWindowGathersABurst checks that an idle server waits for the
// rest of a burst (requests arriving less than burstGap apart) so that the
// burst's prompts share the first step, and that a lone request is not
// held for the whole window once arrivals pause.
func TestBatchWindowGathersABurst(t *testing.T) {
	const n = 6
	f := newFake(time.Millisecond)
	s, ts := fakeServer(t, f, Options{Parallel: n, BatchWindow: 20 * time.Second})
	// A gap far above the arrivals' spacing, so that a loaded machine's
	// scheduling delays (other packages' tests run beside this one) cannot
	// end the burst early.
	s.burstGap = time.Second
	body := `{"prompt": "Once", "max_tokens": 2}`
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Go(func() {
			resp, err := post(t, context.Background(), ts.URL+"/v1/completions", body)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
		})
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	f.mu.Lock()
	first := f.firstStep
	f.mu.Unlock()
	if first != n {
		t.Errorf("the first step held %d of a burst of %d requests", first, n)
	}
	// The burst ended long before the 20 s window: the step started when
	// arrivals paused, not at the window's end.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the burst took %v: the server waited for the whole window", d)
	}
}

// TestDisconnectCancels checks that a client that goes away mid-stream, or
// while it waits for a whole answer, has its query cancelled in the engine.
func TestDisconnectCancels(t *testing.T) {
	for _, stream := range []bool{true, false} {
		f := newFake(time.Millisecond)
		s, ts := fakeServer(t, f, Options{Parallel: 2})
		ctx, cancel := context.WithCancel(context.Background())
		body := `{"prompt": "Once", "max_tokens": 90000, "stream": false}`
		if stream {
			body = strings.Replace(body, "false", "true", 1)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := post(t, ctx, ts.URL+"/v1/completions", body)
			if err != nil {
				return
			}
			bufio.NewReader(resp.Body).ReadString('\n') //nolint:errcheck
			resp.Body.Close()
		}()
		waitFor(t, "the query to run", func() bool { a, _, l := f.state(); return a == 1 && l == 1 })
		cancel()
		<-done
		waitFor(t, "the engine to cancel the query", func() bool { _, c, l := f.state(); return len(c) == 1 && l == 0 })
		waitFor(t, "running to drop to 0", func() bool { return testutil.ToFloat64(s.met.running) == 0 })
	}
}

func TestShutdownDrainsThenCancels(t *testing.T) {
	// In-flight requests finish within the deadline; new ones get 503.
	f := newFake(time.Millisecond)
	s, ts := fakeServer(t, f, Options{Parallel: 2})
	type result struct {
		status int
		body   string
	}
	res := make(chan result, 1)
	go func() {
		resp, err := post(t, context.Background(), ts.URL+"/v1/completions", `{"prompt": "Once", "max_tokens": 100}`)
		if err != nil {
			res <- result{}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{resp.StatusCode, string(b)}
	}()
	waitFor(t, "the query to run", func() bool { a, _, _ := f.state(); return a == 1 })
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	waitFor(t, "draining", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.draining })
	resp, err := post(t, context.Background(), ts.URL+"/v1/completions", `{"prompt": "Once", "max_tokens": 1}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a request while draining: status %d, want 503", resp.StatusCode)
	}
	r := <-res
	if r.status != 200 || strings.Count(r.body, "Once") != 100 {
		t.Errorf("the in-flight request: %d %.80s", r.status, r.body)
	}
	if err := <-shut; err != nil {
		t.Errorf("shutdown: %v", err)
	}

	// Past the deadline, in-flight requests are cancelled with an error.
	f = newFake(time.Millisecond)
	s, ts = fakeServer(t, f, Options{Parallel: 2})
	go func() {
		resp, err := post(t, context.Background(), ts.URL+"/v1/completions", `{"prompt": "Once", "max_tokens": 90000}`)
		if err != nil {
			res <- result{}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{resp.StatusCode, string(b)}
	}()
	waitFor(t, "the query to run", func() bool { a, _, _ := f.state(); return a == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown past its deadline: %v", err)
	}
	r = <-res
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, `"error"`) {
		t.Errorf("the cancelled request: %d %.200s", r.status, r.body)
	}
	if _, c, l := f.state(); len(c) != 1 || l != 0 {
		t.Errorf("engine: cancelled %v, %d live", c, l)
	}
}

func TestHealthWhileLoading(t *testing.T) {
	s := New(Options{ModelName: "m"})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, path := range []string{"/health", "/v1/models"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body apiError
		json.NewDecoder(resp.Body).Decode(&body) //nolint:errcheck
		resp.Body.Close()
		if resp.StatusCode != 503 || body.Error.Type != "unavailable_error" || body.Error.Message == "" {
			t.Errorf("%s while loading: %d %+v", path, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/metrics while loading: %d", resp.StatusCode)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestMetrics checks the vLLM series the inference gateway's endpoint
// picker reads, after real requests on stories260K.
func TestMetrics(t *testing.T) {
	tm := loadStories(t, 64<<20)
	_, ts, _ := startServer(t, tm, Options{Parallel: 2})
	prompt := `{"prompt": "` + strings.Repeat("Once upon a time ", 10) + `", "max_tokens": 5, "temperature": 0}`
	for i := 0; i < 2; i++ { // the second finds the first's prompt blocks
		body := prompt
		if i == 1 {
			body = strings.Replace(prompt, "{", `{"stream": true, `, 1)
		}
		resp, err := post(t, context.Background(), ts.URL+"/v1/completions", body)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		resp.Body.Close()
	}
	ids, err := encode(tm.m.Tokenizer, strings.Repeat("Once upon a time ", 10))
	if err != nil || len(ids) <= 32 || len(ids) > 48 {
		t.Fatalf("the prompt has %d tokens (%v): the counts below assume 33 to 48", len(ids), err)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	// The prefix cache looks up the prompt's full blocks (leaving one
	// token to compute) until the first miss: the first request misses
	// block 0 (one lookup), the second finds blocks 0 and 1 (two lookups,
	// two hits): 3 and 2 blocks of 16 tokens.
	want := []string{
		`vllm:num_requests_waiting{model_name="stories260K"} 0`,
		`vllm:num_requests_running{model_name="stories260K"} 0`,
		`vllm:kv_cache_usage_perc{model_name="stories260K"} 0`,
		`vllm:cache_config_info{block_size="16",model_name="stories260K",num_gpu_blocks="100"} 1`,
		`vllm:time_to_first_token_seconds_count{model_name="stories260K"} 2`,
		`vllm:inter_token_latency_seconds_count{model_name="stories260K"} 8`,
		`vllm:e2e_request_latency_seconds_count{model_name="stories260K"} 2`,
		`vllm:request_queue_time_seconds_count{model_name="stories260K"} 2`,
		fmt.Sprintf(`vllm:prompt_tokens_total{model_name="stories260K"} %d`, 2*len(ids)),
		`vllm:generation_tokens_total{model_name="stories260K"} 10`,
		`vllm:prefix_cache_queries_total{model_name="stories260K"} 48`,
		`vllm:prefix_cache_hits_total{model_name="stories260K"} 32`,
		`vllm:request_success_total{finished_reason="length",model_name="stories260K"} 2`,
		// weft's breakdown: each request is one prefill step (the second
		// only the tokens past its 32 cached ones) and 4 decode steps of
		// one token; both were prepared; the streamed one was delivered.
		`weft:request_prepare_seconds_count{model_name="stories260K"} 2`,
		`weft:engine_step_seconds_count{kind="prefill",model_name="stories260K"} 2`,
		`weft:engine_step_seconds_count{kind="decode",model_name="stories260K"} 8`,
		fmt.Sprintf(`weft:engine_step_tokens_sum{kind="prefill",model_name="stories260K"} %d`, 2*len(ids)-32),
		`weft:engine_step_tokens_sum{kind="decode",model_name="stories260K"} 8`,
	}
	if !regexp.MustCompile(`\nweft:token_delivery_seconds_count\{model_name="stories260K"\} [1-9]`).MatchString(text) {
		t.Error("/metrics has no token delivery of the streamed request")
	}
	for _, w := range want {
		if !strings.Contains(text, w+"\n") {
			t.Errorf("/metrics lacks %s", w)
			if testing.Verbose() {
				t.Log(text)
			}
		}
	}
}

// TestTokenizeShapes compares /tokenize and /detokenize with llama-server's
// answers on stories260K (recorded from llama-server c392e50).
func TestTokenizeShapes(t *testing.T) {
	tm := loadStories(t, 0)
	_, ts, _ := startServer(t, tm, Options{})
	cases := []struct{ path, body, want string }{
		{"/tokenize", `{"content": "Once upon a time"}`, `{"tokens":[403,407,261,378]}`},
		{"/tokenize", `{"content": "Once upon a time", "add_special": true}`, `{"tokens":[1,403,407,261,378]}`},
		{"/tokenize", `{"content": "Once upon a time", "with_pieces": true}`, `{"tokens":[{"id":403,"piece":" Once"},{"id":407,"piece":" upon"},{"id":261,"piece":" a"},{"id":378,"piece":" time"}]}`},
		{"/detokenize", `{"tokens": [403, 407, 261]}`, `{"content":" Once upon a"}`},
		{"/detokenize", `{"tokens": []}`, `{"content":""}`},
	}
	for _, tc := range cases {
		resp, err := post(t, context.Background(), ts.URL+tc.path, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.TrimSpace(string(b)); resp.StatusCode != 200 || got != tc.want {
			t.Errorf("%s %s: %d %s, want %s", tc.path, tc.body, resp.StatusCode, got, tc.want)
		}
	}
}

// TestChoiceText checks stop strings (held back while they may still
// match, cut at the earliest) and that no piece splits a UTF-8 character.
func TestChoiceText(t *testing.T) {
	tm := loadStories(t, 0)
	tok := tm.m.Tokenizer
	cases := []struct {
		text   string
		stops  []string
		want   string
		finish string
	}{
		{"Once upon a time there was", nil, " Once upon a time there was", "length"},
		{"Once upon a time there was", []string{"a ti"}, " Once upon ", "stop"},
		{"Once upon a time there was", []string{"there", "upon"}, " Once ", "stop"},
		{"Once upon a time there was", []string{"was not"}, " Once upon a time there was", "length"},
		{"Once upon a time", []string{"e"}, " Onc", "stop"},
		{"héllo ☃ wörld ✓ 日本", nil, " héllo ☃ wörld ✓ 日本", "length"},
		{"héllo ☃ wörld", []string{"☃"}, " héllo ", "stop"},
	}
	for _, tc := range cases {
		ids, err := tok.Encode(tc.text, tokenizer.EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := newChoiceText(tok, tc.stops)
		var got strings.Builder
		for i, id := range ids {
			piece := c.push(id, i == len(ids)-1, "length")
			if !utf8.ValidString(piece) {
				t.Errorf("%q: piece %q splits a character", tc.text, piece)
			}
			got.WriteString(piece)
		}
		if got.String() != tc.want || c.finish != tc.finish || c.text.String() != tc.want {
			t.Errorf("%q stops %q: %q (%s), want %q (%s)", tc.text, tc.stops, got.String(), c.finish, tc.want, tc.finish)
		}
	}
}

// TestDisconnectFreesKV runs a long streaming request on stories260K's
// real engine, drops the client after its first tokens, and checks that
// the engine gives the request's KV memory back at once: the running
// count and vllm:kv_cache_usage_perc fall to 0 while the request had
// thousands of tokens left.
func TestDisconnectFreesKV(t *testing.T) {
	// stories260K with a context of 16384: thousands of tokens take
	// seconds, so the request is still running when the client leaves.
	tm := loadStoriesSet(t, 256<<20, map[string]any{"ctx": int64(16384)})
	_, ts, _ := startServer(t, tm, Options{Parallel: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := post(t, ctx, ts.URL+"/v1/completions", `{"prompt": "Once upon a time", "max_tokens": 16000, "ignore_eos": true, "stream": true}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rd := bufio.NewReader(resp.Body)
	for i := 0; i < 8; i++ { // a few tokens in: the request holds KV blocks
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "KV usage above 0 while the request runs", func() bool { return metricValue(t, ts.URL, "vllm:kv_cache_usage_perc") > 0 })
	cancel()
	resp.Body.Close()
	waitFor(t, "the request to leave the engine", func() bool { return metricValue(t, ts.URL, "vllm:num_requests_running") == 0 })
	if v := metricValue(t, ts.URL, "vllm:kv_cache_usage_perc"); v != 0 {
		t.Errorf("KV usage %v after the client went away, want 0", v)
	}
}
