package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/server"
)

// TestServeResponseFormat: chat completions with response_format
// json_object and json_schema on stories260K (sampled, several seeds)
// return content that parses and validates (santhosh-tekuri/jsonschema,
// an independent validator) whenever they finish; a bad schema is an
// OpenAI-shaped 400 naming response_format.
func TestServeResponseFormat(t *testing.T) {
	shared := testdata.Shared(t)
	m, err := model.Load(model.Options{Path: filepath.Join(shared, "models", "stories260K", "stories260K.gguf")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tmpl, _ := chat.Builtin("chatml")
	srv := server.New(server.Options{ModelName: "stories"})
	if err := srv.Start(&server.Model{Engine: eng, Tokenizer: m.Tokenizer, Template: tmpl, Context: m.Context(),
		Constrainer: newFormatConstrainer(m.Tokenizer)}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer func() {
		ts.Close()
		srv.Shutdown(context.Background()) //nolint:errcheck
	}()

	post := func(body map[string]any) (int, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	schema := `{"type":"object","properties":{"name":{"type":"string","maxLength":10},"ok":{"type":"boolean"}},"required":["name","ok"]}`
	formats := []struct {
		format map[string]any
		schema string
	}{
		{map[string]any{"type": "json_object"}, `{"type":"object"}`},
		{map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "t", "schema": json.RawMessage(schema)}}, schema},
	}
	finished := 0
	for i, f := range formats {
		sch := compileSchema(t, f.schema)
		for seed := range 3 {
			code, out := post(map[string]any{
				"messages":        []map[string]string{{"role": "user", "content": "Tell me about Lily."}},
				"max_tokens":      72,
				"temperature":     1.0,
				"seed":            seed,
				"response_format": f.format,
			})
			if code != http.StatusOK {
				t.Fatalf("format %d seed %d: status %d: %v", i, seed, code, out)
			}
			choice := out["choices"].([]any)[0].(map[string]any)
			if choice["finish_reason"] != "stop" {
				continue // cut at max_tokens: a prefix, not a whole value
			}
			finished++
			text := choice["message"].(map[string]any)["content"].(string)
			t.Logf("format %d seed %d: %s", i, seed, text)
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
			if err != nil {
				t.Fatalf("format %d seed %d: content %q is not JSON: %v", i, seed, text, err)
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("format %d seed %d: content %q does not validate: %v", i, seed, text, err)
			}
		}
	}
	if finished < len(formats) {
		t.Errorf("only %d replies finished: the test checks too little", finished)
	}

	code, out := post(map[string]any{
		"messages":        []map[string]string{{"role": "user", "content": "hi"}},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "t", "schema": map[string]any{"type": "object", "patternProperties": 7}}},
	})
	if code != http.StatusBadRequest {
		t.Fatalf("bad schema: status %d, want 400: %v", code, out)
	}
	e, _ := out["error"].(map[string]any)
	if e == nil || e["param"] != "response_format" || e["message"] == "" {
		t.Errorf("bad schema: error %v, want an OpenAI error naming response_format", out)
	}
}
