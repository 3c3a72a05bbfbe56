package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
)

// The tests in this file drive the server with the official OpenAI Go SDK
// over loopback HTTP, on stories260K, and compare what it answers with
// llama.cpp: the greedy continuations of golden/stories260K.json
// (llama-cli) and testdata/llama-server-chat.json, which llama-server
// (commit c392e50) answered with
//
//	llama-server -m stories260K.gguf --chat-template chatml -np 1 -t 1
//
// to the requests stored beside each answer.

// testModel is stories260K with its engine, loaded once per test.
type testModel struct {
	m   *model.Model
	eng *scheduler.Engine
}

func loadStories(t testing.TB, budget int64) *testModel {
	t.Helper()
	return loadStoriesSet(t, budget, nil)
}

// loadStoriesSet is loadStories with spec params overridden (--set).
func loadStoriesSet(t testing.TB, budget int64, set map[string]any) *testModel {
	t.Helper()
	shared := testdata.Shared(t)
	m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "stories260K", "stories260K.gguf"), Set: set})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 256, KVBudget: budget})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Close()
		m.Close()
	})
	return &testModel{m: m, eng: eng}
}

// startServer serves tm with opt on 127.0.0.1 and returns an SDK client
// for it.
func startServer(t testing.TB, tm *testModel, opt Options) (*Server, *httptest.Server, openai.Client) {
	t.Helper()
	if opt.ModelName == "" {
		opt.ModelName = "stories260K"
	}
	s := New(opt)
	tmpl, _ := chat.Builtin("chatml")
	tok := tm.m.Tokenizer
	if err := s.Start(&Model{Engine: tm.eng, Tokenizer: tok, Template: tmpl, Context: tm.m.Context(),
		BOS: tok.Piece(tok.BOS()), EOS: tok.Piece(tok.EOS()), NumBlocks: 100}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	return s, ts, c
}

func TestSDKCompletionsGreedyMatchesLlamaCpp(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 4, Queue: 4})
	ctx := context.Background()
	for _, g := range testdata.Golden(t, testdata.Shared(t), "stories260K") {
		t.Run(g.Prompt, func(t *testing.T) {
			params := openai.CompletionNewParams{Model: "stories260K", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(g.Prompt)},
				MaxTokens: openai.Int(int64(len(g.Steps))), Temperature: openai.Float(0)}
			res, err := c.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Choices) != 1 || res.Choices[0].Text != g.Text || res.Choices[0].FinishReason != "length" {
				t.Fatalf("got %+v\nwant text %q, finish_reason length", res.Choices, g.Text)
			}
			if res.Usage.PromptTokens != int64(len(g.PromptTokens)) || res.Usage.CompletionTokens != int64(len(g.Steps)) {
				t.Errorf("usage %+v, want %d prompt and %d completion tokens", res.Usage, len(g.PromptTokens), len(g.Steps))
			}
			if res.Object != "text_completion" || res.Model != "stories260K" || !strings.HasPrefix(res.ID, "cmpl-") {
				t.Errorf("object %q model %q id %q", res.Object, res.Model, res.ID)
			}

			// The same, streamed: the chunks add up to the same text, and
			// the finish reason comes in the last choice chunk.
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			st := c.Completions.NewStreaming(ctx, params)
			var text strings.Builder
			var finish []string
			var usage *openai.CompletionUsage
			for st.Next() {
				ch := st.Current()
				if usage != nil {
					t.Fatal("a chunk after the usage chunk")
				}
				if len(ch.Choices) == 0 {
					u := ch.Usage
					usage = &u
					continue
				}
				if finish != nil {
					t.Fatalf("a choice chunk %q after the finish reason", ch.RawJSON())
				}
				text.WriteString(ch.Choices[0].Text)
				if ch.Choices[0].FinishReason != "" {
					finish = append(finish, string(ch.Choices[0].FinishReason))
				}
			}
			if err := st.Err(); err != nil {
				t.Fatal(err)
			}
			if text.String() != g.Text || len(finish) != 1 || finish[0] != "length" {
				t.Errorf("streamed %q, finish %v; want %q, [length]", text.String(), finish, g.Text)
			}
			if usage == nil || usage.PromptTokens != int64(len(g.PromptTokens)) || usage.CompletionTokens != int64(len(g.Steps)) {
				t.Errorf("stream usage %+v", usage)
			}
		})
	}
}

func TestSDKChatMatchesLlamaServer(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 2, Queue: 2})
	data, err := os.ReadFile("testdata/llama-server-chat.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Request struct {
			Messages []struct{ Role, Content string }
		}
		Content      string
		FinishReason string `json:"finish_reason"`
		Usage        struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range cases {
		var msgs []openai.ChatCompletionMessageParamUnion
		for _, m := range tc.Request.Messages {
			switch m.Role {
			case "system":
				msgs = append(msgs, openai.SystemMessage(m.Content))
			default:
				msgs = append(msgs, openai.UserMessage(m.Content))
			}
		}
		params := openai.ChatCompletionNewParams{Model: "stories260K", Messages: msgs, MaxTokens: openai.Int(tc.Usage.CompletionTokens), Temperature: openai.Float(0)}
		res, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Choices) != 1 {
			t.Fatalf("%d choices", len(res.Choices))
		}
		ch := res.Choices[0]
		if ch.Message.Content != tc.Content || ch.Message.Role != "assistant" || ch.FinishReason != tc.FinishReason {
			t.Errorf("got %q (%s, %s), llama-server %q (%s)", ch.Message.Content, ch.Message.Role, ch.FinishReason, tc.Content, tc.FinishReason)
		}
		if res.Usage.PromptTokens != tc.Usage.PromptTokens || res.Usage.CompletionTokens != tc.Usage.CompletionTokens ||
			res.Usage.TotalTokens != tc.Usage.PromptTokens+tc.Usage.CompletionTokens {
			t.Errorf("usage %+v, llama-server %+v", res.Usage, tc.Usage)
		}
		if res.Object != "chat.completion" || !strings.HasPrefix(res.ID, "chatcmpl-") {
			t.Errorf("object %q id %q", res.Object, res.ID)
		}

		// Streamed: role first, then content, the finish reason in the last
		// choice chunk, the usage chunk with no choices before [DONE].
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		st := c.Chat.Completions.NewStreaming(ctx, params)
		var text strings.Builder
		var n, finishAt, usageAt int
		finishAt, usageAt = -1, -1
		var usage openai.CompletionUsage
		for st.Next() {
			chunk := st.Current()
			if chunk.Object != "chat.completion.chunk" || chunk.ID == "" {
				t.Errorf("chunk object %q id %q", chunk.Object, chunk.ID)
			}
			if len(chunk.Choices) == 0 {
				usageAt, usage = n, chunk.Usage
			} else {
				if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens != 0 {
					t.Errorf("chunk %d carries usage %s", n, chunk.JSON.Usage.Raw())
				}
				c := chunk.Choices[0]
				if n == 0 && (c.Delta.Role != "assistant" || c.Delta.Content != "") {
					t.Errorf("first chunk %s: want role assistant and empty content", chunk.RawJSON())
				}
				if n > 0 && c.Delta.Role != "" {
					t.Errorf("chunk %d repeats the role", n)
				}
				if finishAt >= 0 {
					t.Errorf("chunk %d comes after the finish reason", n)
				}
				if c.FinishReason != "" {
					finishAt = n
					if c.FinishReason != tc.FinishReason {
						t.Errorf("finish reason %q, want %q", c.FinishReason, tc.FinishReason)
					}
				}
				text.WriteString(c.Delta.Content)
			}
			n++
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		if text.String() != tc.Content {
			t.Errorf("streamed %q, want %q", text.String(), tc.Content)
		}
		if finishAt < 0 || usageAt != n-1 || finishAt != n-2 {
			t.Errorf("finish reason in chunk %d, usage in %d, of %d chunks: want the usage last, the finish reason just before", finishAt, usageAt, n)
		}
		if usage.PromptTokens != tc.Usage.PromptTokens || usage.CompletionTokens != tc.Usage.CompletionTokens {
			t.Errorf("streamed usage %+v, want %+v", usage, tc.Usage)
		}
	}
}

// TestSDKLogprobs checks logprobs against llama.cpp's logits: a
// log-softmax keeps the differences of the logits, so the top
// logprobs must differ as the golden top-5 logits do.
func TestSDKLogprobs(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 2})
	ctx := context.Background()
	g := testdata.Golden(t, testdata.Shared(t), "stories260K")[0]
	const steps = 8
	tok := tm.m.Tokenizer
	text := func(id int) string { return tokenText(tok, id) }

	res, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "m", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(g.Prompt)},
		MaxTokens: openai.Int(steps), Temperature: openai.Float(0), Logprobs: openai.Int(5)})
	if err != nil {
		t.Fatal(err)
	}
	lp := res.Choices[0].Logprobs
	if len(lp.Tokens) != steps || len(lp.TokenLogprobs) != steps || len(lp.TopLogprobs) != steps || len(lp.TextOffset) != steps {
		t.Fatalf("logprobs %+v", lp)
	}
	off := 0
	for k := 0; k < steps; k++ {
		top := g.Steps[k].Top5
		if lp.Tokens[k] != text(g.Steps[k].Token) {
			t.Errorf("step %d: token %q, want %q", k, lp.Tokens[k], text(g.Steps[k].Token))
		}
		if lp.TextOffset[k] != int64(off) {
			t.Errorf("step %d: text offset %d, want %d", k, lp.TextOffset[k], off)
		}
		off += len(lp.Tokens[k])
		if lp.TokenLogprobs[k] > 0 || lp.TokenLogprobs[k] != lp.TopLogprobs[k][lp.Tokens[k]] {
			t.Errorf("step %d: logprob %v, top %v", k, lp.TokenLogprobs[k], lp.TopLogprobs[k])
		}
		for _, e := range top[1:] {
			got := lp.TopLogprobs[k][text(int(top[0][0]))] - lp.TopLogprobs[k][text(int(e[0]))]
			if want := top[0][1] - e[1]; math.Abs(got-want) > 1e-3 {
				t.Errorf("step %d: logprob gap to token %v is %v, llama.cpp's logit gap %v", k, e[0], got, want)
			}
		}
	}

	// Chat: logprobs and top_logprobs, in order, with each token's bytes.
	cres, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		MaxTokens: openai.Int(steps), Temperature: openai.Float(0), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(3)})
	if err != nil {
		t.Fatal(err)
	}
	content := cres.Choices[0].Logprobs.Content
	var joined strings.Builder
	for i, e := range content {
		joined.WriteString(e.Token)
		if len(e.TopLogprobs) != 3 || e.TopLogprobs[0].Token != e.Token || e.TopLogprobs[0].Logprob != e.Logprob {
			t.Errorf("token %d: %+v: greedy chooses the first of the top logprobs", i, e)
		}
		if string(bytesOf(e.Bytes)) != e.Token {
			t.Errorf("token %d: bytes %v are not %q", i, e.Bytes, e.Token)
		}
		var sum float64
		for j, tp := range e.TopLogprobs {
			sum += math.Exp(tp.Logprob)
			if j > 0 && tp.Logprob > e.TopLogprobs[j-1].Logprob {
				t.Errorf("token %d: top logprobs out of order", i)
			}
		}
		if sum > 1+1e-9 {
			t.Errorf("token %d: the top probabilities sum to %v", i, sum)
		}
	}
	if len(content) != steps || joined.String() != cres.Choices[0].Message.Content {
		t.Errorf("%d logprobs spelling %q; content %q", len(content), joined.String(), cres.Choices[0].Message.Content)
	}
}

func bytesOf(b []int64) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = byte(v)
	}
	return out
}

func TestSDKChoicesSeedAndStop(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 4, Queue: 4})
	ctx := context.Background()
	g := testdata.Golden(t, testdata.Shared(t), "stories260K")[0]
	prompt := openai.CompletionNewParamsPromptUnion{OfString: openai.String(g.Prompt)}

	// n=2, greedy: both choices are llama.cpp's continuation.
	res, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "m", Prompt: prompt, MaxTokens: openai.Int(64), Temperature: openai.Float(0), N: openai.Int(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 2 || res.Choices[0].Index != 0 || res.Choices[1].Index != 1 {
		t.Fatalf("choices %+v", res.Choices)
	}
	for _, ch := range res.Choices {
		if ch.Text != g.Text {
			t.Errorf("choice %d: %q, want %q", ch.Index, ch.Text, g.Text)
		}
	}
	if res.Usage.CompletionTokens != 128 {
		t.Errorf("usage %+v: want 128 completion tokens for 2 choices", res.Usage)
	}

	// Sampling with a seed: the same seed gives the same choices, the two
	// choices differ, another seed differs.
	sample := func(seed int64) []string {
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
			MaxTokens: openai.Int(40), Temperature: openai.Float(1), N: openai.Int(2), Seed: openai.Int(seed)})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ch := range res.Choices {
			out = append(out, ch.Message.Content)
		}
		return out
	}
	a, b, other := sample(42), sample(42), sample(7)
	if len(a) != 2 || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("seed 42 twice: %q then %q", a, b)
	}
	if a[0] == a[1] || a[0] == other[0] {
		t.Errorf("seed 42 gave %q, seed 7 %q: choices and seeds should differ", a, other)
	}

	// stop: the text ends before the first stop string, finish_reason stop,
	// streamed or not.
	i := strings.Index(g.Text, "Lily")
	stop := openai.CompletionNewParamsStopUnion{OfStringArray: []string{"zzz", "Lily"}}
	params := openai.CompletionNewParams{Model: "m", Prompt: prompt, MaxTokens: openai.Int(64), Temperature: openai.Float(0), Stop: stop}
	res, err = c.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Text != g.Text[:i] || res.Choices[0].FinishReason != "stop" {
		t.Errorf("stop: %q (%s), want %q (stop)", res.Choices[0].Text, res.Choices[0].FinishReason, g.Text[:i])
	}
	st := c.Completions.NewStreaming(ctx, params)
	var text strings.Builder
	finish := ""
	for st.Next() {
		for _, ch := range st.Current().Choices {
			text.WriteString(ch.Text)
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if st.Err() != nil || text.String() != g.Text[:i] || finish != "stop" {
		t.Errorf("streamed stop: %q (%s, %v), want %q (stop)", text.String(), finish, st.Err(), g.Text[:i])
	}
}

func TestSDKErrors(t *testing.T) {
	tm := loadStories(t, 0)
	_, ts, c := startServer(t, tm, Options{Parallel: 1, MaxTokens: 100})
	ctx := context.Background()
	user := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}
	cases := []struct {
		name   string
		params openai.ChatCompletionNewParams
		status int
		param  string
	}{
		{"temperature", openai.ChatCompletionNewParams{Messages: user, Temperature: openai.Float(3)}, 400, "temperature"},
		{"max_tokens over the limit", openai.ChatCompletionNewParams{Messages: user, MaxTokens: openai.Int(101)}, 400, "max_tokens"},
		{"max_tokens over the context", openai.ChatCompletionNewParams{MaxCompletionTokens: openai.Int(100),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("Once upon a time ", 15))}}, 400, "max_completion_tokens"},
		{"n", openai.ChatCompletionNewParams{Messages: user, N: openai.Int(0)}, 400, "n"},
		{"no messages", openai.ChatCompletionNewParams{}, 400, "messages"},
		{"logit_bias key", openai.ChatCompletionNewParams{Messages: user, LogitBias: map[string]int64{"99999": 1}}, 400, "logit_bias"},
		{"response_format", openai.ChatCompletionNewParams{Messages: user, ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}}, 400, "response_format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.params.Model = "m"
			_, err := c.Chat.Completions.New(ctx, tc.params)
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not an API error", err)
			}
			if apiErr.StatusCode != tc.status || apiErr.Type != "invalid_request_error" || apiErr.Param != tc.param || apiErr.Message == "" {
				t.Errorf("status %d type %q param %q message %q; want %d invalid_request_error %q", apiErr.StatusCode, apiErr.Type, apiErr.Param, apiErr.Message, tc.status, tc.param)
			}
		})
	}
	// Raw requests: bad JSON, a wrong field type, an unknown route, an
	// oversized body. Unknown fields are ignored.
	raw := []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/completions", `{"prompt": "x",`, 400},
		{"POST", "/v1/completions", `{"prompt": "x", "max_tokens": "many"}`, 400},
		{"POST", "/v1/completions", `{"prompt": {"a": 1}}`, 400},
		{"GET", "/v1/nothing", ``, 404},
		{"POST", "/v1/completions", `{"prompt": "` + strings.Repeat("x", 5<<20) + `"}`, 400},
		{"POST", "/v1/completions", `{"prompt": "Once", "max_tokens": 2, "temperature": 0, "frobnicate": [1, 2]}`, 200},
	}
	for _, tc := range raw {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error *struct {
				Message, Type string
				Code, Param   *string
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || err != nil || (tc.status != 200) != (body.Error != nil) {
			t.Errorf("%s %s %.40q: status %d (%v), body %+v; want %d", tc.method, tc.path, tc.body, resp.StatusCode, err, body.Error, tc.status)
			continue
		}
		if body.Error != nil && (body.Error.Message == "" || body.Error.Type == "") {
			t.Errorf("%s %s: error %+v lacks a message or type", tc.method, tc.path, body.Error)
		}
	}
}

// TestSDKConcurrentStreams runs a few streams at once: each equals the
// single-client output (no crossed tokens between requests).
func TestSDKConcurrentStreams(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 8, Queue: 8})
	golden := testdata.Golden(t, testdata.Shared(t), "stories260K")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		g := golden[i%len(golden)]
		wg.Go(func() {
			st := c.Completions.NewStreaming(context.Background(), openai.CompletionNewParams{Model: "m",
				Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(g.Prompt)}, MaxTokens: openai.Int(64), Temperature: openai.Float(0)})
			var text strings.Builder
			for st.Next() {
				for _, ch := range st.Current().Choices {
					text.WriteString(ch.Text)
				}
			}
			if st.Err() != nil || text.String() != g.Text {
				t.Errorf("stream %d: %q (%v), want %q", i, text.String(), st.Err(), g.Text)
			}
		})
	}
	wg.Wait()
}
