package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftrun/weft/chat"
)

// FuzzRequestBody posts arbitrary bodies to every JSON endpoint of a
// server running stories260K's real engine and checks the server's
// contract for bad input: an answer within a bound (never a hang), no
// 5xx, and every error in OpenAI's shape {"error": {"message", "type"}}.
// max_tokens is capped at 4 and n at 2 so that an accepted request stays
// cheap whatever it asks for.
func FuzzRequestBody(f *testing.F) {
	seeds := []struct {
		path, body string
	}{
		{"/v1/completions", `{"prompt":"Once upon a time","max_tokens":3,"temperature":0}`},
		{"/v1/completions", `{"prompt":[[1,2,3]],"max_tokens":2,"logprobs":2,"stream":true}`},
		{"/v1/completions", `{"prompt":"x","stop":["a","b"],"seed":7,"top_k":-1,"min_p":2,"logit_bias":{"403":-100}}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"n":2,"logprobs":true,"top_logprobs":3,"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/chat/completions", `{"messages":[],"temperature":-1,"top_p":1e309}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}}}`},
		{"/v1/embeddings", `{"input":["a","b"]}`},
		{"/tokenize", `{"content":"Once upon","add_special":true,"with_pieces":true}`},
		{"/detokenize", `{"tokens":[1,403,-5,99999999]}`},
		{"/v1/completions", `{"prompt":"x","max_tokens":1e99,"presence_penalty":"a"}`},
		{"/v1/completions", `[`},
	}
	paths := []string{"/v1/completions", "/v1/chat/completions", "/v1/embeddings", "/tokenize", "/detokenize"}
	for _, s := range seeds {
		for i, p := range paths {
			if p == s.path {
				f.Add(uint8(i), []byte(s.body))
			}
		}
	}
	tm := loadStories(f, 0)
	s := New(Options{ModelName: "stories260K", Parallel: 4, Queue: 64, MaxTokens: 4, MaxN: 2})
	tok := tm.m.Tokenizer
	tmpl, _ := chat.Builtin("chatml")
	if err := s.Start(&Model{Engine: tm.eng, Tokenizer: tok, Template: tmpl, Context: tm.m.Context(),
		BOS: tok.Piece(tok.BOS()), EOS: tok.Piece(tok.EOS()), NumBlocks: 100}); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // the fuzz verdict is already in
	})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(rec, req)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("POST %s %q: no answer in 30 s", path, body)
		}
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: status %d: %s", path, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code == http.StatusOK {
			if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
				return
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST %s %q: 200 with a body that is not JSON: %q", path, body, rec.Body.Bytes())
			}
			return
		}
		var e struct {
			Error *struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Fatalf("POST %s %q: status %d with a body not in OpenAI's error shape: %q", path, body, rec.Code, rec.Body.Bytes())
		}
	})
}
