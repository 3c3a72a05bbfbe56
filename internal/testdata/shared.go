// Package testdata locates the shared reference data (../shared beside the
// repository) for tests, and reads llama.cpp's golden outputs.
package testdata

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Shared returns the path of ../shared beside the repository root. When it
// is missing the test is skipped with a message, or fails when CI=true.
func Shared(t testing.TB) string {
	t.Helper()
	shared, err := SharedPath()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("../shared not found at %s: CI must have it", shared)
		}
		t.Skipf("../shared not found at %s: skipping reference-data test", shared)
	}
	return shared
}

// SharedPath returns where ../shared is, beside the repository root that
// holds the working directory, whether or not it exists. It is for tests
// that use shared data as optional extra input; tests that need it call
// Shared.
func SharedPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("locating ../shared: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("locating ../shared: go.mod not found above the test directory")
		}
		dir = parent
	}
}

// Step is one golden generation step.
type Step struct {
	Token int         `json:"token"`
	Top5  [][]float64 `json:"top5"`
}

// Case is one golden prompt.
type Case struct {
	Prompt       string `json:"prompt"`
	PromptTokens []int  `json:"prompt_tokens"`
	Steps        []Step `json:"steps"`
	Text         string `json:"text"`
}

// Tokens returns the golden generated tokens.
func (c Case) Tokens() []int {
	out := make([]int, len(c.Steps))
	for i, s := range c.Steps {
		out[i] = s.Token
	}
	return out
}

// Golden reads golden/NAME.json.
func Golden(t testing.TB, shared, name string) []Case {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(shared, "golden", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	return cases
}

// Logits reads golden/NAME.I.f32 as rows of vocab floats.
func Logits(t testing.TB, shared, name string, i, vocab int) [][]float32 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(shared, "golden", fmt.Sprintf("%s.%d.f32", name, i)))
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%(4*vocab) != 0 {
		t.Fatalf("golden %s.%d.f32: %d bytes is not a whole number of %d-float rows", name, i, len(data), vocab)
	}
	rows := make([][]float32, len(data)/(4*vocab))
	for r := range rows {
		rows[r] = make([]float32, vocab)
		for j := range rows[r] {
			rows[r][j] = math.Float32frombits(binary.LittleEndian.Uint32(data[(r*vocab+j)*4:]))
		}
	}
	return rows
}

// MaxAbsDiff returns max |a-b|.
func MaxAbsDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > m {
			m = d
		}
	}
	return m
}

// Cosine returns the cosine similarity of a and b.
func Cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}
