package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// handRolled matches a test building the ../shared path itself.
var handRolled = regexp.MustCompile(`"\.\./shared|"shared"\)|"\.\.", "\.\.", "shared"`)

// TestOneLocator checks that every test finds ../shared through
// internal/testdata.Shared, so that all of them skip, or fail under
// CI=true, the same way. (It lives here: go test ./... skips directories
// named testdata.)
func TestOneLocator(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(root, "internal", "testdata", "shared.go")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "out" || d.Name() == "testdata" && path != filepath.Dir(self)) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || path == self || strings.HasSuffix(path, "locator_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if handRolled.MatchString(line) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d locates ../shared itself; use internal/testdata.Shared", rel, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
