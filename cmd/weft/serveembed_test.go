package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/server"
)

// TestServeDecoderEmbeddingsSDK serves a decoder (the shared mini-llama,
// loaded for generation as `weft serve --embeddings --pooling P` loads it)
// and asks /v1/embeddings through the official OpenAI Go SDK: each
// input's vector is llama-embedding's (model/testdata/decoder-embed,
// --embd-normalize 2) for mean and last pooling, completions still work
// beside it, and an empty input is an OpenAI-shaped 400.
func TestServeDecoderEmbeddingsSDK(t *testing.T) {
	shared := testdata.Shared(t)
	var g struct {
		Texts  []string                          `json:"texts"`
		Models map[string]map[string][][]float64 `json:"models"`
	}
	if err := json.Unmarshal(readFile(t, "../../model/testdata/decoder-embed/mini-llama.json"), &g); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "mini-llama", "mini-llama-f16.gguf")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 64, Context: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tmpl, _ := chat.Builtin("llama2")
	for _, pool := range []model.Pooling{model.PoolMean, model.PoolLast} {
		t.Run(pool.String(), func(t *testing.T) {
			want := g.Models["mini-llama-f16.gguf"][pool.String()+" 2"]
			if len(want) != len(g.Texts) {
				t.Fatalf("reference has %d vectors for %d texts", len(want), len(g.Texts))
			}
			emb, err := newServeEmbedder(m, 2, 128, pool)
			if err != nil {
				t.Fatal(err)
			}
			defer emb.close()
			srv := server.New(server.Options{ModelName: "mini-llama"})
			if err := srv.Start(&server.Model{Engine: eng, Tokenizer: m.Tokenizer, Template: tmpl, Context: 128, Embedder: emb}); err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			defer func() {
				ts.Close()
				srv.Shutdown(context.Background()) //nolint:errcheck
			}()
			client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("none"), option.WithMaxRetries(0))
			ctx := context.Background()
			res, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "mini-llama",
				Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: g.Texts}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Data) != len(g.Texts) {
				t.Fatalf("%d embeddings for %d inputs", len(res.Data), len(g.Texts))
			}
			for i, d := range res.Data {
				if d.Index != int64(i) || len(d.Embedding) != len(want[i]) {
					t.Fatalf("input %d: index %d, %d dimensions, want %d", i, d.Index, len(d.Embedding), len(want[i]))
				}
				if c := cosine64(d.Embedding, want[i]); !(c >= 0.999999) {
					t.Errorf("input %q: cosine %.7f with llama-embedding, want ≥ 0.999999", g.Texts[i], c)
				}
			}
			if res.Usage.PromptTokens <= 0 {
				t.Errorf("usage.prompt_tokens = %d", res.Usage.PromptTokens)
			}
			// The same server still generates.
			c, err := client.Completions.New(ctx, openai.CompletionNewParams{Model: "mini-llama",
				Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Hello")}, MaxTokens: openai.Int(3), Temperature: openai.Float(0)})
			if err != nil || len(c.Choices) != 1 || c.Usage.CompletionTokens != 3 {
				t.Fatalf("completion beside embeddings: %v, %+v", err, c)
			}
			_, err = client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "mini-llama",
				Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{}}})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Message == "" {
				t.Errorf("empty input: %v, want an OpenAI-shaped 400", err)
			}
		})
	}
}

func cosine64(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// TestServePoolingFlag: --pooling takes mean, cls or last; none (one
// vector per token) is no OpenAI embedding, so it is a usage error.
func TestServePoolingFlag(t *testing.T) {
	for _, p := range []string{"none", "max"} {
		code, _, e := weft("serve", "-m", "x.gguf", "--pooling", p)
		if code != 2 || !strings.Contains(e, "--pooling") {
			t.Errorf("--pooling %s: exit %d, %q; want exit 2 naming --pooling", p, code, e)
		}
	}
}
