package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weftrun/weft/internal/testdata"
)

// tour returns the shell block under README.md's "A short tour".
func tour(t *testing.T, readme string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "## A short tour")
	if !ok {
		t.Fatal(`README.md has no "## A short tour" section`)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatal("the tour has no ```sh block")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the tour's ```sh block is not closed")
	}
	return block
}

// TestReadmeTour runs the README's tour top to bottom, as a newcomer
// would from the repository root, and fails on the first step that fails.
// The files it writes go to out/ (ignored by git).
func TestReadmeTour(t *testing.T) {
	shared := testdata.Shared(t) // the tour uses ../shared's models
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\nset -x\n" + tour(t, string(data))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := freshClone(t, ctx, root, shared)
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(runtime.GOROOT(), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := string(out)
		if len(tail) > 6000 {
			tail = "…" + tail[len(tail)-6000:]
		}
		t.Fatalf("the README tour failed: %v\n%s", err, tail)
	}
	for _, f := range []string{"out/tiny-q8_0.gguf", "out/stories260K.gguf", "out/stories.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("the tour did not write %s: %v", f, err)
		}
	}
}

// freshClone returns, with WEFT_TOUR_CLONE=1, a clone of the repository's
// committed state with ../shared beside it (a link to the real one), so
// that the tour runs as on a newcomer's fresh clone: nothing untracked,
// nothing built (about a minute more: every package compiles again).
// Otherwise, and where the repository is not a git checkout, it returns
// root itself: CI's checkout is a fresh clone already.
func freshClone(t *testing.T, ctx context.Context, root, shared string) string {
	t.Helper()
	if os.Getenv("WEFT_TOUR_CLONE") != "1" {
		return root
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		return root
	}
	if _, err := exec.LookPath("git"); err != nil {
		return root
	}
	base := t.TempDir()
	if err := os.Symlink(shared, filepath.Join(base, filepath.Base(shared))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "weft")
	if out, err := exec.CommandContext(ctx, "git", "clone", "--quiet", "--no-hardlinks", root, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return dir
}
