package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

// The tests in this file check request fields through the SDK against
// references independent of the server's code: the non-streamed answer of
// the same request, the unbiased logprobs with the fields' definitions
// written out, and the greedy answer.

// lpTok is a chat logprob entry without the SDK's JSON metadata.
type lpTok struct {
	Token   string
	Logprob float64
	Bytes   []int64
	Top     []lpTop
}

type lpTop struct {
	Token   string
	Logprob float64
}

func plainLogprobs(in []openai.ChatCompletionTokenLogprob) []lpTok {
	out := make([]lpTok, len(in))
	for i, e := range in {
		out[i] = lpTok{Token: e.Token, Logprob: e.Logprob, Bytes: e.Bytes}
		for _, tp := range e.TopLogprobs {
			out[i].Top = append(out[i].Top, lpTop{tp.Token, tp.Logprob})
		}
	}
	return out
}

// sameLogprobs compares logprobs: the same tokens and bytes, the values
// within 1e-4 (the second request finds the first's prompt in the prefix
// cache, and a prefill of other rows sums in another order).
func sameLogprobs(a, b []lpTok) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-4 }
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Token != b[i].Token || fmt.Sprint(a[i].Bytes) != fmt.Sprint(b[i].Bytes) || !near(a[i].Logprob, b[i].Logprob) || len(a[i].Top) != len(b[i].Top) {
			return false
		}
		for j := range a[i].Top {
			if a[i].Top[j].Token != b[i].Top[j].Token || !near(a[i].Top[j].Logprob, b[i].Top[j].Logprob) {
				return false
			}
		}
	}
	return true
}

// TestSDKStreamedChoicesAndLogprobs checks that a streamed n=2 request
// with a seed, logprobs and top_logprobs sends each choice the text and
// logprobs of the same request answered whole, and each choice's
// finish_reason in that choice's last chunk.
func TestSDKStreamedChoicesAndLogprobs(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 2, Queue: 2})
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
		MaxTokens: openai.Int(40), Temperature: openai.Float(1), N: openai.Int(2), Seed: openai.Int(42),
		Logprobs: openai.Bool(true), TopLogprobs: openai.Int(3)}
	whole, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != 2 || whole.Choices[0].Message.Content == whole.Choices[1].Message.Content {
		t.Fatalf("non-streamed choices %+v: want two different samples", whole.Choices)
	}

	st := c.Chat.Completions.NewStreaming(ctx, params)
	var text [2]strings.Builder
	var lps [2][]openai.ChatCompletionTokenLogprob
	var finish [2]string
	var chunks [2]int
	for st.Next() {
		for _, ch := range st.Current().Choices {
			i := ch.Index
			if i < 0 || i > 1 {
				t.Fatalf("choice index %d", i)
			}
			if finish[i] != "" {
				t.Errorf("choice %d: chunk %s after its finish reason", i, st.Current().RawJSON())
			}
			chunks[i]++
			text[i].WriteString(ch.Delta.Content)
			lps[i] = append(lps[i], ch.Logprobs.Content...)
			finish[i] = string(ch.FinishReason)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	for i, w := range whole.Choices {
		if chunks[i] < 3 {
			t.Errorf("choice %d came in %d chunks", i, chunks[i])
		}
		if text[i].String() != w.Message.Content {
			t.Errorf("choice %d streamed %q, answered whole %q", i, text[i].String(), w.Message.Content)
		}
		if finish[i] != w.FinishReason || finish[i] == "" {
			t.Errorf("choice %d: finish reason %q in its last chunk, %q answered whole", i, finish[i], w.FinishReason)
		}
		got, want := plainLogprobs(lps[i]), plainLogprobs(w.Logprobs.Content)
		if len(want) != 40 && w.FinishReason == "length" {
			t.Errorf("choice %d: %d logprobs for 40 tokens", i, len(want))
		}
		if !sameLogprobs(got, want) {
			t.Errorf("choice %d: streamed logprobs\n%v\nanswered whole\n%v", i, got, want)
		}
	}
}

// tokenIDs returns the tokens of tok whose text is text (a piece and a
// byte token may spell the same).
func tokenIDs(t *testing.T, tok tokenizer.Tokenizer, text string) []int {
	t.Helper()
	var ids []int
	for i := 0; i < tok.VocabSize(); i++ {
		if tokenText(tok, i) == text {
			ids = append(ids, i)
		}
	}
	if ids == nil {
		t.Fatalf("no token spells %q", text)
	}
	return ids
}

// TestSDKLogitBias checks logit_bias against its definition applied to the
// unbiased top logprobs of the first token: a bias is added to the token's
// logit (so to its logprob, up to the softmax's shift) and greedy takes
// the largest; -100 bans the token, +100 forces it. The biases go on every
// token that spells the same text.
func TestSDKLogitBias(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 1})
	ctx := context.Background()
	tok := tm.m.Tokenizer
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
		MaxTokens: openai.Int(1), Temperature: openai.Float(0), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(20)}
	res, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	top := res.Choices[0].Logprobs.Content[0].TopLogprobs
	if len(top) != 20 || top[0].Logprob-top[1].Logprob < 0.05 || top[0].Token == top[1].Token {
		t.Fatalf("top logprobs %+v: the test wants 20 and a clear greedy token", top)
	}
	gap := top[0].Logprob - top[1].Logprob
	type bias map[int]float64 // by rank in top
	cases := []struct {
		name string
		bias bias
	}{
		{"-100 bans the greedy token", bias{0: -100}},
		{"-100 on two", bias{0: -100, 1: -100}},
		{"+100 forces a token", bias{15: 100}},
		{"just above the gap", bias{1: gap + 0.02}},
		{"just below the gap", bias{1: gap - 0.02}},
		{"the greedy token lowered below the second", bias{0: -gap - 0.02}},
		{"the greedy token lowered less than the gap", bias{0: -gap + 0.02}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := map[string]float64{}
			byText := map[string]float64{}
			for j, b := range tc.bias {
				byText[top[j].Token] = b
				for _, id := range tokenIDs(t, tok, top[j].Token) {
					req[strconv.Itoa(id)] = b
				}
			}
			// The reference: the largest biased logprob (-100: banned).
			want, best := "", math.Inf(-1)
			for _, e := range top {
				v := e.Logprob + byText[e.Token]
				if byText[e.Token] == -100 {
					v = math.Inf(-1)
				}
				if v > best {
					want, best = e.Token, v
				}
			}
			res, err := c.Chat.Completions.New(ctx, params, option.WithJSONSet("logit_bias", req))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Choices[0].Logprobs.Content[0].Token; got != want {
				t.Errorf("logit_bias %v: first token %q, want %q (unbiased top: %q %v, %q %v)", req, got, want,
					top[0].Token, top[0].Logprob, top[1].Token, top[1].Logprob)
			}
		})
	}
}

// TestSDKPresenceFrequencyPenalty checks presence_penalty and
// frequency_penalty against OpenAI's definition applied to the returned
// (unpenalized) top logprobs: at each step greedy takes the largest
// logprob − count·frequency_penalty − (count > 0)·presence_penalty, where
// count is how often the token was generated before (the prompt does not
// count).
func TestSDKPresenceFrequencyPenalty(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 1})
	ctx := context.Background()
	const steps = 48
	run := func(freq, pres float64) []openai.ChatCompletionTokenLogprob {
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m",
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story about Lily and the dog.")},
			MaxTokens: openai.Int(steps), Temperature: openai.Float(0), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(20),
			FrequencyPenalty: openai.Float(freq), PresencePenalty: openai.Float(pres)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Logprobs.Content
	}
	plain := run(0, 0)
	for _, tc := range []struct{ freq, pres float64 }{{1.5, 0}, {0, 1.5}, {0.7, 0.4}, {-1, 0}} {
		t.Run(fmt.Sprintf("frequency %v presence %v", tc.freq, tc.pres), func(t *testing.T) {
			got := run(tc.freq, tc.pres)
			count := map[string]int{}
			changed := false
			for k, e := range got {
				if k < len(plain) && e.Token != plain[k].Token {
					changed = true
				}
				score := func(token string, lp float64) float64 {
					n := count[token]
					s := lp - float64(n)*tc.freq
					if n > 0 {
						s -= tc.pres
					}
					return s
				}
				chosen := score(e.Token, e.Logprob)
				for _, tp := range e.TopLogprobs {
					if s := score(tp.Token, tp.Logprob); s > chosen+1e-3 {
						t.Fatalf("step %d: chose %q (%d before, score %.4f) over %q (%d before, score %.4f)", k, e.Token, count[e.Token], chosen,
							tp.Token, count[tp.Token], s)
					}
				}
				count[e.Token]++
			}
			if !changed {
				t.Errorf("the penalties changed none of %d tokens", len(got))
			}
		})
	}
}

// TestSDKExtraSamplers checks the llama.cpp-named samplers by behaviour:
// top_k 1 and min_p 1 leave only the most likely token, so temperature 1
// with any seed gives the greedy answer; repeat_penalty is llama.cpp's
// (a positive logit of a token among the last repeat_last_n tokens,
// prompt included, is divided by it), checked against llama.cpp's golden
// logits; ignore_eos runs a reply that ends with EOS to max_tokens without
// generating EOS.
func TestSDKExtraSamplers(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 2})
	ctx := context.Background()
	chat := func(seed int64, maxTok int64, opts ...option.RequestOption) *openai.ChatCompletion {
		t.Helper()
		params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
			MaxTokens: openai.Int(maxTok), Temperature: openai.Float(1), Seed: openai.Int(seed), Logprobs: openai.Bool(true)}
		res, err := c.Chat.Completions.New(ctx, params, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	greedy := chat(0, 40, option.WithJSONSet("temperature", 0)).Choices[0].Message.Content
	sampled := 0
	for seed := int64(1); seed <= 3; seed++ {
		if chat(seed, 40).Choices[0].Message.Content != greedy {
			sampled++
		}
		for _, f := range []struct {
			name string
			v    any
		}{{"top_k", 1}, {"min_p", 1.0}} {
			if got := chat(seed, 40, option.WithJSONSet(f.name, f.v)).Choices[0].Message.Content; got != greedy {
				t.Errorf("%s %v, temperature 1, seed %d: %q; want the greedy %q", f.name, f.v, seed, got, greedy)
			}
		}
	}
	if sampled == 0 {
		t.Fatal("temperature 1 gave the greedy answer for every seed: the checks above prove nothing")
	}

	// ignore_eos: with EOS forced by logit_bias the reply ends at once;
	// with ignore_eos too, EOS is banned (llama.cpp's --ignore-eos), so the
	// reply is the greedy one, to max_tokens.
	eos := map[string]float64{strconv.Itoa(tm.m.Tokenizer.EOS()): 100}
	greedyLP := chat(0, 40, option.WithJSONSet("temperature", 0))
	res := chat(0, 40, option.WithJSONSet("temperature", 0), option.WithJSONSet("logit_bias", eos))
	if ch := res.Choices[0]; ch.FinishReason != "stop" || ch.Message.Content != "" || res.Usage.CompletionTokens != 1 {
		t.Errorf("EOS forced: %q (%s, %d tokens); want an empty reply ended by its one EOS token", ch.Message.Content, ch.FinishReason, res.Usage.CompletionTokens)
	}
	res = chat(0, 40, option.WithJSONSet("temperature", 0), option.WithJSONSet("logit_bias", eos), option.WithJSONSet("ignore_eos", true))
	if ch := res.Choices[0]; ch.FinishReason != "length" || ch.Message.Content != greedy || res.Usage.CompletionTokens != 40 ||
		!sameLogprobs(plainLogprobs(ch.Logprobs.Content), plainLogprobs(greedyLP.Choices[0].Logprobs.Content)) {
		t.Errorf("EOS forced, ignore_eos: %q (%s, %d tokens); want the greedy %q (length, 40 tokens)", ch.Message.Content, ch.FinishReason,
			res.Usage.CompletionTokens, greedy)
	}
}

// TestSDKRepeatPenalty checks repeat_penalty (llama.cpp's name) against
// llama.cpp's golden logits: along the golden greedy continuation, the
// token chosen is the largest of the golden top 5 after llama.cpp's
// penalty (a token among the last repeat_last_n tokens, prompt included,
// has a positive logit divided by the penalty, a negative one
// multiplied), up to the first step the penalty changes.
func TestSDKRepeatPenalty(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 1})
	tok := tm.m.Tokenizer
	const rp, lastN = 1.3, 64
	for _, g := range testdata.Golden(t, testdata.Shared(t), "stories260K") {
		res, err := c.Completions.New(context.Background(), openai.CompletionNewParams{Model: "m", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(g.Prompt)},
			MaxTokens: openai.Int(int64(len(g.Steps))), Temperature: openai.Float(0), Logprobs: openai.Int(1)},
			option.WithJSONSet("repeat_penalty", rp), option.WithJSONSet("repeat_last_n", lastN))
		if err != nil {
			t.Fatal(err)
		}
		got := res.Choices[0].Logprobs.Tokens
		hist := append([]int(nil), g.PromptTokens...)
		changed := false
		for k, st := range g.Steps {
			if k >= len(got) {
				t.Fatalf("%q: %d tokens", g.Prompt, len(got))
			}
			win := hist[max(0, len(hist)-lastN):]
			best, bestV := -1, math.Inf(-1)
			for _, e := range st.Top5 {
				id, v := int(e[0]), e[1]
				if slices.Contains(win, id) {
					if v > 0 {
						v /= rp
					} else {
						v *= rp
					}
				}
				if v > bestV {
					best, bestV = id, v
				}
			}
			if bestV <= st.Top5[len(st.Top5)-1][1] {
				break // a token outside the golden top 5 may win
			}
			if got[k] != tokenText(tok, best) {
				t.Fatalf("%q step %d: chose %q; llama.cpp's logits with the penalty choose %q", g.Prompt, k, got[k], tokenText(tok, best))
			}
			if best != st.Token {
				changed = true
				break // the continuation leaves the golden one
			}
			hist = append(hist, best)
		}
		if !changed {
			t.Errorf("%q: the penalty changed no token of the checked steps", g.Prompt)
		}
	}
}

// TestSDKContentParts checks that a message's content given as text parts
// gets the reply of the same text given as a string, and that a part of
// another type answers 400 naming the field.
func TestSDKContentParts(t *testing.T) {
	tm := loadStories(t, 0)
	_, _, c := startServer(t, tm, Options{Parallel: 1})
	ctx := context.Background()
	ask := func(msgs ...openai.ChatCompletionMessageParamUnion) (*openai.ChatCompletion, error) {
		return c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: msgs, MaxTokens: openai.Int(24), Temperature: openai.Float(0)})
	}
	want, err := ask(openai.SystemMessage("You are a storyteller."), openai.UserMessage("Tell me a story about a cat."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ask(openai.SystemMessage([]openai.ChatCompletionContentPartTextParam{{Text: "You are "}, {Text: "a storyteller."}}),
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("Tell me a story "), openai.TextContentPart("about a cat.")}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != want.Choices[0].Message.Content || got.Usage.PromptTokens != want.Usage.PromptTokens {
		t.Errorf("text parts: %q (%d prompt tokens); the same text as a string: %q (%d)", got.Choices[0].Message.Content, got.Usage.PromptTokens,
			want.Choices[0].Message.Content, want.Usage.PromptTokens)
	}

	_, err = ask(openai.SystemMessage("You are a storyteller."), openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("What is this?"),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,AAAA"})}))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("an image part: error %v, want an API error", err)
	}
	if apiErr.StatusCode != 400 || apiErr.Type != "invalid_request_error" || apiErr.Param != "messages[1].content" || !strings.Contains(apiErr.Message, "image_url") {
		t.Errorf("an image part: %d %q param %q: %q; want 400 invalid_request_error messages[1].content, naming the part's type", apiErr.StatusCode,
			apiErr.Type, apiErr.Param, apiErr.Message)
	}
}

// TestSDKMaxPromptTokens checks Options.MaxPromptTokens (weft serve
// --max-prompt-tokens): a longer prompt answers an OpenAI-shaped 400 that
// names the limit, on both endpoints; a prompt at the limit is served.
func TestSDKMaxPromptTokens(t *testing.T) {
	tm := loadStories(t, 0)
	const limit = 12
	_, _, c := startServer(t, tm, Options{Parallel: 1, MaxPromptTokens: limit})
	ctx := context.Background()
	tok := tm.m.Tokenizer
	prompt := func(n int) string { // a text of n tokens (BOS included)
		for s := "Once upon a time there was a girl named Lily who loved to play"; ; s = s[:strings.LastIndexByte(s, ' ')] {
			if ids, err := encode(tok, s); err != nil || len(ids) <= n {
				if len(ids) != n {
					t.Fatalf("no prefix of %d tokens (%q has %d)", n, s, len(ids))
				}
				return s
			}
		}
	}
	check := func(name, param string, err error) {
		t.Helper()
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: error %v, want an API error", name, err)
		}
		if apiErr.StatusCode != 400 || apiErr.Type != "invalid_request_error" || apiErr.Param != param || !strings.Contains(apiErr.Message, strconv.Itoa(limit)) {
			t.Errorf("%s: %d %q param %q: %q; want 400 invalid_request_error %s naming the limit %d", name, apiErr.StatusCode, apiErr.Type, apiErr.Param,
				apiErr.Message, param, limit)
		}
		var body struct {
			Error map[string]any `json:"error"`
		}
		if json.Unmarshal([]byte(apiErr.RawJSON()), &body.Error) != nil {
			t.Errorf("%s: error body %s", name, apiErr.RawJSON())
		}
		for _, k := range []string{"message", "type", "param", "code"} {
			if _, ok := body.Error[k]; !ok {
				t.Errorf("%s: error body %s lacks %q", name, apiErr.RawJSON(), k)
			}
		}
	}
	comp := func(p string) error {
		_, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "m", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(p)}, MaxTokens: openai.Int(2)})
		return err
	}
	if err := comp(prompt(limit)); err != nil {
		t.Errorf("a prompt of %d tokens: %v", limit, err)
	}
	check("completions", "prompt", comp(prompt(limit+1)))
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		MaxTokens: openai.Int(2)})
	check("chat", "messages", err)
}

// TestSDKModels checks GET /v1/models on a started server, through the SDK
// and as raw JSON.
func TestSDKModels(t *testing.T) {
	tm := loadStories(t, 0)
	_, ts, c := startServer(t, tm, Options{ModelName: "weft-stories"})
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "weft-stories" || page.Data[0].Object != "model" || page.Data[0].OwnedBy == "" || page.Data[0].Created <= 0 {
		t.Errorf("models %+v", page.Data)
	}
	m, err := c.Models.Get(context.Background(), "weft-stories")
	if err == nil && m.ID != "weft-stories" {
		t.Errorf("model %+v", m)
	}
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Object string
		Data   []map[string]any
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1/models: %d %s (%v)", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	if body.Object != "list" || len(body.Data) != 1 || body.Data[0]["id"] != "weft-stories" || body.Data[0]["object"] != "model" {
		t.Errorf("GET /v1/models: %+v", body)
	}
}

// metricValue reads one unlabelled-but-for-the-model series from /metrics.
func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+"{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// gatedEngine is a real engine whose steps each wait for a value on gate
// (closed: no more waiting), so that a test can hold a request mid-flight.
type gatedEngine struct {
	*scheduler.Engine
	gate chan struct{}
}

func (g *gatedEngine) Infer(ctx context.Context) ([]scheduler.TokenEvent, error) {
	<-g.gate
	return g.Engine.Infer(ctx)
}

// TestSDKMetricsWhileRunning checks the gauges while stories260K's engine
// holds a streamed request between two steps: one running, none waiting,
// KV cache usage above 0; and all back to 0 once it ends.
func TestSDKMetricsWhileRunning(t *testing.T) {
	tm := loadStories(t, 64<<20)
	eng := &gatedEngine{Engine: tm.eng, gate: make(chan struct{}, 1)}
	eng.gate <- struct{}{} // the first step: the prompt and the first token
	released := false
	release := func() {
		if !released {
			released = true
			close(eng.gate)
		}
	}
	s := New(Options{ModelName: "stories260K", Parallel: 1})
	tok := tm.m.Tokenizer
	if err := s.Start(&Model{Engine: eng, Tokenizer: tok, Context: tm.m.Context(), NumBlocks: 100}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer func() {
		release()
		ts.Close()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	for _, name := range []string{"vllm:kv_cache_usage_perc", "vllm:num_requests_running", "vllm:num_requests_waiting"} {
		if v := metricValue(t, ts.URL, name); v != 0 {
			t.Errorf("before any request: %s %v", name, v)
		}
	}
	st := c.Completions.NewStreaming(context.Background(), openai.CompletionNewParams{Model: "m",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")}, MaxTokens: openai.Int(20), Temperature: openai.Float(0)},
		option.WithJSONSet("ignore_eos", true))
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	// The engine now waits before its second step, holding the request.
	var kv, running, waiting float64
	waitFor(t, "the gauges to show the running request", func() bool {
		kv, running, waiting = metricValue(t, ts.URL, "vllm:kv_cache_usage_perc"), metricValue(t, ts.URL, "vllm:num_requests_running"),
			metricValue(t, ts.URL, "vllm:num_requests_waiting")
		return kv > 0 && running == 1
	})
	if kv > 1 || waiting != 0 {
		t.Errorf("while a request runs: kv_cache_usage_perc %v, running %v, waiting %v; want in (0, 1], 1, 0", kv, running, waiting)
	}
	release()
	for st.Next() {
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gauges to return to 0", func() bool {
		return metricValue(t, ts.URL, "vllm:kv_cache_usage_perc") == 0 && metricValue(t, ts.URL, "vllm:num_requests_running") == 0
	})
}
