package main

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/weftrun/weft/grammar"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/server"
	"github.com/weftrun/weft/tokenizer"
)

// formatConstrainer serves response_format through the grammar package's
// constrained decoding: json_object as a grammar for any JSON object,
// json_schema by compiling the request's schema. Compiled grammars are
// kept per schema text, so a schema sent again costs nothing to compile
// and its matchers' caches stay warm.
type formatConstrainer struct {
	vocab *grammar.Vocab

	mu    sync.Mutex
	pools map[string]*grammar.Pool
}

// maxFormatPools bounds the compiled schemas kept (each holds its
// matchers' caches); past it the cache starts over.
const maxFormatPools = 64

func newFormatConstrainer(tk tokenizer.Tokenizer) *formatConstrainer {
	toks, eog := tokenizer.TokenBytes(tk)
	return &formatConstrainer{vocab: grammar.NewVocab(toks, eog), pools: map[string]*grammar.Pool{}}
}

// Constrain implements server.Constrainer.
func (c *formatConstrainer) Constrain(f server.ResponseFormat, base scheduler.Picker) (scheduler.Picker, error) {
	var schema []byte
	switch f.Type {
	case "json_object":
		schema = []byte(`{"type": "object"}`)
	case "json_schema":
		var js struct {
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(f.JSONSchema, &js); err != nil || len(js.Schema) == 0 {
			return nil, fmt.Errorf("json_schema: want an object with a \"schema\" field")
		}
		schema = js.Schema
	default:
		return nil, fmt.Errorf("type %q: want json_object or json_schema", f.Type)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pools[string(schema)]
	if !ok {
		g, err := grammar.FromJSONSchema(schema)
		if err != nil {
			return nil, err
		}
		if len(c.pools) >= maxFormatPools {
			clear(c.pools)
		}
		p = grammar.NewPool(g, c.vocab)
		c.pools[string(schema)] = p
	}
	return grammar.NewConstrained(base, p.Get()), nil
}
