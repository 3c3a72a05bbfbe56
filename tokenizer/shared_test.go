package tokenizer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
)

// sharedDir locates ../shared beside the repository root. It skips the test
// when the folder is absent, and fails instead when CI=true.
func sharedDir(t testing.TB) string {
	t.Helper()
	return testdata.Shared(t) // the one locator of ../shared
}

// sharedFile returns a path under ../shared, failing when it is missing
// (the folder exists, so its documented files must too).
func sharedFile(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{sharedDir(t)}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared file: %v", err)
	}
	return p
}

// readSharedOptional reads a file under ../shared if it is there, for
// tests that use shared data as extra input but do not need it.
func readSharedOptional(parts ...string) ([]byte, error) {
	dir, err := testdata.SharedPath() // the one locator of ../shared
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(append([]string{dir}, parts...)...))
}
