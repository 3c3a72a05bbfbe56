package backend

import (
	"fmt"
	"sync"
)

// Memory is one sequence's encoder output, an encoder-decoder model's
// memory: Rows rows of Cols float32 features, computed once per request by
// the encoder and then only read, by the decoder's cross_attention ops,
// for as long as the request runs (held beside its KV cache rows). Values
// derived from it, such as each cross-attention's key and value
// projections, are computed once and kept with it.
type Memory struct {
	Rows, Cols int
	Data       []float32

	mu      sync.Mutex
	derived map[any]any
}

// NewMemory wraps rows×cols floats of encoder output.
func NewMemory(data []float32, rows, cols int) (*Memory, error) {
	if rows < 1 || cols < 1 || len(data) < rows*cols {
		return nil, fmt.Errorf("memory: %d floats for %d rows of %d", len(data), rows, cols)
	}
	return &Memory{Rows: rows, Cols: cols, Data: data[:rows*cols]}, nil
}

// Derived returns the value kept under key, made by mk on its first use.
// mk's error is returned and nothing is kept.
func (m *Memory) Derived(key any, mk func() (any, error)) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.derived[key]; ok {
		return v, nil
	}
	v, err := mk()
	if err != nil {
		return nil, err
	}
	if m.derived == nil {
		m.derived = map[any]any{}
	}
	m.derived[key] = v
	return v, nil
}
