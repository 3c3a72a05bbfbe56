package model_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
)

// TestTruncatedWhileRunning truncates a memory-mapped checkpoint under a
// running engine: the next step must fail with an error that says so, not
// crash the process with SIGBUS.
func TestTruncatedWhileRunning(t *testing.T) {
	shared := testdata.Shared(t)
	data, err := os.ReadFile(filepath.Join(shared, "models", "stories260K", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 2, MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s, err := sampling.New(sampling.Config{})
	if err != nil {
		t.Fatal(err)
	}
	req := scheduler.Request{Prompt: []int{1, 403, 407}, MaxTokens: 4, Sampler: s}
	if _, err := eng.Generate(context.Background(), req, nil); err != nil {
		t.Fatalf("before truncation: %v", err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	_, err = eng.Generate(context.Background(), req, nil)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("after truncation: error %v, want one saying the checkpoint was truncated", err)
	}
	t.Log(err)
}
