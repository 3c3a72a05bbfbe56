package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
)

// sharedDir returns the ../shared reference folder beside the repository
// root. It skips the test when the folder is absent, and fails it when CI=true.
func sharedDir(t testing.TB) string {
	t.Helper()
	return testdata.Shared(t) // the one locator of ../shared
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
