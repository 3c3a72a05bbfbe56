package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedDir returns the ../shared reference folder beside the repository
// root. It skips the test when the folder is absent, and fails it when CI=true.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("../shared not found (CI=true): %v", err)
		}
		t.Skipf("../shared not found: %v", err)
	}
	return shared
}

// sharedFile returns a file under ../shared, failing if it is missing while
// the folder exists.
func sharedFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(sharedDir(t), rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared reference file missing: %v", err)
	}
	return p
}
