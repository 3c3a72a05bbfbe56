package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// handRolled matches a test building the ../shared path itself: as a
// literal, or as a last path element joined on ("shared") or appended to a
// slice of parts ("shared"}), or as a step up then into it (.., shared).
var handRolled = regexp.MustCompile(`"\.\./shared|"shared"\s*[)}]|"\.\.", "shared"`)

// TestOneLocator checks that every test finds ../shared through
// internal/testdata (Shared, or SharedPath for optional data), so that all
// of them skip, or fail under CI=true, the same way. It reads test files
// only: a tool's flag default of ../shared locates nothing for a test.
// (It lives here: go test ./... skips directories named testdata.)
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
		if !strings.HasSuffix(path, "_test.go") || path == self || strings.HasSuffix(path, "locator_test.go") {
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

// TestHandRolledPattern checks handRolled against the ways tests have
// built the ../shared path themselves, and against lines that only use
// the locator.
func TestHandRolledPattern(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{`m := "../shared/models/stories260K/stories260K.gguf"`, true},
		{`shared := filepath.Join(filepath.Dir(root), "shared")`, true},
		{`return os.ReadFile(filepath.Join(append([]string{filepath.Dir(dir), "shared"}, parts...)...))`, true},
		{`p := filepath.Join("..", "..", "shared", "models")`, true},
		{`shared := testdata.Shared(t)`, false},
		{`dir, err := testdata.SharedPath()`, false},
		{`p := filepath.Join(root, "..", "shared")`, true},
		{`t.Run("shared", func(t *testing.T) {`, false},
		{`t.Skip("shared data absent")`, false},
	}
	for _, tc := range cases {
		if got := handRolled.MatchString(tc.line); got != tc.want {
			t.Errorf("handRolled.MatchString(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
