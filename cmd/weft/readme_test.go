//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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

// tourPort is the port the README's serve step uses; the test runs the
// tour with a free port in its place, so that it does not collide with a
// server already running on the machine.
const tourPort = "8080"

// TestReadmeTour runs the README's tour top to bottom, as a newcomer
// would, in a fresh clone of the repository's HEAD with ../shared beside
// it, and fails on the first step that fails. It then checks what the
// steps printed: generated text, a chat completion, an embedding. The Go
// build cache is shared with the working tree's builds (-trimpath makes
// the clone's compiled packages the same as any other clone's), so only
// the first run compiles everything.
func TestReadmeTour(t *testing.T) {
	shared := testdata.Shared(t) // the tour uses ../shared's models
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	dir := freshClone(t, ctx, root, shared)
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := tour(t, string(data))
	if strings.Count(steps, tourPort) < 2 {
		t.Fatalf("the tour no longer serves on port %s (and then calls it): update tourPort", tourPort)
	}
	steps = strings.ReplaceAll(steps, tourPort, freePort(t))
	script := "set -euo pipefail\nset -x\n" + steps

	var stdout, all bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(runtime.GOROOT(), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOFLAGS=-trimpath "+os.Getenv("GOFLAGS"))
	cmd.Stdout = io.MultiWriter(&stdout, &all)
	cmd.Stderr = &all
	// The tour starts a server in the background: a timeout or a failed
	// step must not leave it running, so the script gets its own process
	// group and the whole group is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("the tour took %v (clone and build included)", time.Since(start).Round(time.Second))
	if err != nil {
		tail := all.String()
		if len(tail) > 6000 {
			tail = "…" + tail[len(tail)-6000:]
		}
		t.Fatalf("the README tour failed: %v\n%s", err, tail)
	}
	for _, f := range []string{"out/tiny-q8_0.gguf", "out/stories260K.gguf", "out/stories.html", "out/bert.gguf", "out/t5.gguf"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("the tour did not write %s: %v", f, err)
		}
	}
	checkTourOutput(t, stdout.String())
}

// checkTourOutput checks the JSON objects the tour printed, one a line
// start:
// each kind of answer the tour asks for is there and not empty.
func checkTourOutput(t *testing.T, stdout string) {
	t.Helper()
	type answer struct {
		Text       *string   `json:"text"`
		Beams      []any     `json:"beams"`
		Choices    []any     `json:"choices"`
		IDs        []int     `json:"ids"`
		Embedding  []float64 `json:"embedding"`
		Object     string    `json:"object"`
		PromptToks []int     `json:"prompt_tokens"`
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		// An object may run on into the next step's output (curl ends
		// its body with no newline): decode the first value only.
		var raw json.RawMessage
		if err := json.NewDecoder(strings.NewReader(line)).Decode(&raw); err != nil {
			continue
		}
		line = string(raw)
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil {
			continue
		}
		switch {
		case a.Object == "chat.completion":
			var c struct {
				Choices []struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(line), &c) == nil && len(c.Choices) > 0 && strings.TrimSpace(c.Choices[0].Message.Content) != "" {
				seen["a chat completion with content"] = true
			}
		case a.Text != nil && len(a.PromptToks) > 0:
			if strings.TrimSpace(*a.Text) != "" {
				seen["generated text (run --json)"] = true
			}
			if len(a.Beams) > 1 {
				seen["beams"] = true
			}
			if len(a.Choices) == 3 {
				seen["three choices"] = true
			}
		case len(a.IDs) > 0:
			seen["token ids"] = true
		case len(a.Embedding) > 0:
			seen["an embedding"] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"generated text (run --json)", "beams", "three choices", "token ids", "an embedding", "a chat completion with content"} {
		if !seen[want] {
			t.Errorf("the tour printed no %s", want)
		}
	}
}

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// freshClone returns a clone of the repository's HEAD with ../shared
// beside it (a link to the real one), so that the tour runs as on a
// newcomer's fresh clone: nothing untracked, nothing built by hand.
// Uncommitted changes are not in it. Where the repository is not a git
// checkout (an unpacked archive), or git is missing, it returns root.
func freshClone(t *testing.T, ctx context.Context, root, shared string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Logf("%s is not a git checkout: the tour runs in it", root)
		return root
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Logf("no git: the tour runs in %s", root)
		return root
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(out) > 0 {
		t.Logf("the tour runs the committed HEAD, without the working tree's changes")
	}
	base := t.TempDir()
	// The link is ../shared as the clone sees it.
	if err := os.Symlink(shared, filepath.Join(base, filepath.Base(shared))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "weft")
	if out, err := exec.CommandContext(ctx, "git", "clone", "--quiet", "--no-hardlinks", root, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return dir
}
