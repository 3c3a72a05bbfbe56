package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/server"
)

// TestServeEmbeddings serves the random-weight BERT of
// model/testdata/embed/bert.json (rebuilt with weft synth, as its recipe
// says) and compares /v1/embeddings with llama-embedding's CLS vectors
// there, scaled to unit length as OpenAI's embeddings are.
func TestServeEmbeddings(t *testing.T) {
	shared := testdata.Shared(t)
	var g struct {
		Cases []struct {
			Text string
			CLS  [][]float64 `json:"cls"`
		}
	}
	if err := json.Unmarshal(readFile(t, "../../model/testdata/embed/bert.json"), &g); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bert.gguf")
	if err := cmdSynth([]string{"-s", "bert", "--set", "hidden=32,layers=2,heads=4,ffn=48,ctx=64,vocab=30522", "--dtype", "f32", "--seed", "7",
		"--random-vectors", "--vocab", filepath.Join(shared, "tokenizer-vectors", "ggml-vocab-bert-bge.gguf"), "-o", path}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	emb, err := newServeEmbedder(m, 1, m.Context(), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.close()
	tmpl, _ := chat.Builtin("chatml")
	srv := server.New(server.Options{ModelName: "bert"})
	if err := srv.Start(&server.Model{Engine: eng, Tokenizer: m.Tokenizer, Template: tmpl, Context: m.Context(), Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer func() {
		ts.Close()
		srv.Shutdown(context.Background()) //nolint:errcheck
	}()
	var inputs []string
	for _, c := range g.Cases {
		inputs = append(inputs, c.Text)
	}
	body, _ := json.Marshal(map[string]any{"model": "bert", "input": inputs})
	resp, err := http.Post(ts.URL+"/v1/embeddings", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Object string
		Data   []struct {
			Index     int
			Embedding []float64
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if got.Object != "list" || len(got.Data) != len(g.Cases) {
		t.Fatalf("object %q, %d embeddings for %d inputs", got.Object, len(got.Data), len(g.Cases))
	}
	for i, c := range g.Cases {
		want := c.CLS[0]
		var n float64
		for _, x := range want {
			n += x * x
		}
		n = math.Sqrt(n)
		d := got.Data[i]
		if d.Index != i || len(d.Embedding) != len(want) {
			t.Fatalf("input %d: index %d, %d dimensions, want %d", i, d.Index, len(d.Embedding), len(want))
		}
		for j := range want {
			if diff := math.Abs(d.Embedding[j] - want[j]/n); diff > 1e-4 {
				t.Errorf("input %q, dimension %d: %v, llama-embedding %v", c.Text, j, d.Embedding[j], want[j]/n)
				break
			}
		}
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
