package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftrun/weft/internal/testdata"
)

// beWeft, set in a test binary's environment, makes it run as weft: the
// interrupt tests start it as a subprocess and send it a real SIGINT.
const beWeft = "WEFT_TEST_BE_WEFT"

func TestMain(m *testing.M) {
	if os.Getenv(beWeft) == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// lockedBuffer is a buffer a subprocess's output is copied into while the
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// interruptWeft runs weft with args as a subprocess, sends it SIGINT as
// soon as ready (polled every 10 ms) reports true, and returns its exit
// status and output. It fails the test if ready never holds within a
// minute or weft does not end within a minute of the signal.
func interruptWeft(t *testing.T, ready func(stdout string) bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), beWeft+"=1")
	var out, errOut lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// Standard input stays open and empty: chat waits at its prompt.
	stdin, keep, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	cmd.Stdin = stdin
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(time.Minute)
	for !ready(out.String()) {
		select {
		case err := <-done:
			t.Fatalf("weft %s ended before the signal (%v): %s%s", strings.Join(args, " "), err, out.String(), errOut.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("weft %s: not ready after a minute: %s%s", strings.Join(args, " "), out.String(), errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("weft %s did not end within a minute of SIGINT", strings.Join(args, " "))
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode() // -1: killed by the signal, not a quiet exit
	default:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// sleep sleeps for d and reports true.
func sleep(d time.Duration) bool {
	time.Sleep(d)
	return true
}

// tempFileIn reports whether dir holds a file whose name starts with
// prefix.
func tempFileIn(dir, prefix string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			return true
		}
	}
	return false
}

// TestCtrlCLongCommands sends a real SIGINT to weft's long commands while
// they work: each ends with status 130, prints no error, keeps what it
// produced (perplexity's windows, bench's rounds, embed's vectors) and
// leaves no partial file (synth, quantize, convert).
func TestCtrlCLongCommands(t *testing.T) {
	shared := testdata.Shared(t)
	stories := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	dir := t.TempDir()
	// About 70 MB of f32 weights: writing it takes long enough to be
	// interrupted once its temporary file appears.
	big := filepath.Join(dir, "big.gguf")
	if code, _, errOut := weft("synth", "-s", "llama", "--set", "hidden=256,layers=2,heads=4,ffn=512,vocab=32000,ctx=64",
		"--dtype", "f32", "--seed", "1", "-o", big); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	bert := filepath.Join(dir, "bert.gguf")
	if code, _, errOut := weft("synth", "-s", "bert", "--set", "hidden=16,layers=1,heads=2,ffn=24,ctx=32,vocab=30522", "--dtype", "f32",
		"--vocab", filepath.Join(shared, "tokenizer-vectors", "ggml-vocab-bert-bge.gguf"), "-o", bert); code != 0 {
		t.Fatalf("synth bert: exit %d: %s", code, errOut)
	}
	text := filepath.Join(dir, "long.txt")
	story := "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. "
	if err := os.WriteFile(text, []byte(strings.Repeat(story, 3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := filepath.Join(dir, "lines.txt")
	if err := os.WriteFile(lines, []byte(strings.Repeat("a b c d e f g h\n", 200000)), 0o644); err != nil {
		t.Fatal(err)
	}
	whenTemp := func(name string) func(string) bool {
		return func(string) bool { return tempFileIn(dir, "."+name+".tmp") }
	}
	cases := []struct {
		name     string
		args     []string
		ready    func(stdout string) bool
		check    func(t *testing.T, stdout string)
		wantCode int // 0: 130
	}{
		{"perplexity", []string{"perplexity", "-m", stories, "-f", text, "-c", "64", "-t", "1"},
			func(s string) bool { return strings.Contains(s, "[2]") },
			func(t *testing.T, s string) {
				if !strings.HasPrefix(s, "[1]") || !strings.Contains(s, "perplexity ") || !strings.Contains(s, "(interrupted after ") {
					t.Errorf("stdout %q: want the windows so far and the estimate over them", s)
				}
			}, 0},
		{"bench", []string{"bench", "-m", stories, "-p", "32", "-n", "16", "-r", "100000", "-t", "1"},
			// Measuring (the header is out); a round of this tiny model
			// takes milliseconds, so a second gives a few.
			func(s string) bool { return strings.Contains(s, "kv cache") && sleep(time.Second) },
			func(t *testing.T, s string) {
				if !strings.Contains(s, "pp32 ") || !strings.Contains(s, "interrupted: ") {
					t.Errorf("stdout %q: want the rounds measured so far", s)
				}
			}, 0},
		{"embed", []string{"embed", "-m", bert, "-f", lines, "-t", "1"},
			func(s string) bool { return strings.Count(s, "\n") >= 2 },
			func(t *testing.T, s string) {
				rows := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
				if !strings.HasSuffix(s, "\n") || len(rows) < 2 || len(rows) >= 200000 {
					t.Fatalf("%d lines: want whole vectors, fewer than the texts", len(rows))
				}
				for i, r := range rows {
					if n := len(strings.Fields(r)); n != 16 {
						t.Fatalf("line %d has %d numbers, want 16", i+1, n)
					}
				}
			}, 0},
		// At chat's prompt, Ctrl-C ends the chat as asked (status 0).
		{"chat", []string{"chat", "-m", stories, "-t", "1"}, func(s string) bool { return strings.Contains(s, "> ") }, nil, -1},
		{"quantize", []string{"quantize", big, filepath.Join(dir, "q.gguf"), "q4_0"}, whenTemp("q.gguf"), nil, 0},
		{"convert", []string{"convert", "--dtype", "q8_0", big, filepath.Join(dir, "c.gguf")}, whenTemp("c.gguf"), nil, 0},
		{"synth", []string{"synth", "-s", "llama", "--set", "hidden=256,layers=2,heads=4,ffn=512,vocab=32000,ctx=64",
			"--dtype", "f32", "--seed", "2", "-o", filepath.Join(dir, "s.gguf")}, whenTemp("s.gguf"), nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := interruptWeft(t, tc.ready, tc.args...)
			want := 130
			if tc.wantCode < 0 {
				want = 0
			}
			if code != want {
				t.Fatalf("exit %d, want %d; stderr %q", code, want, errOut)
			}
			if tc.name != "chat" && strings.Contains(errOut, "weft "+tc.name+":") || strings.Contains(errOut, "context canceled") || strings.Contains(errOut, "goroutine") {
				t.Errorf("stderr is not quiet: %q", errOut)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
			// No partial output: neither the file nor its temporary.
			for _, n := range []string{"q.gguf", "c.gguf", "s.gguf"} {
				if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
					t.Errorf("%s was written", n)
				}
				if tempFileIn(dir, "."+n+".tmp") {
					t.Errorf("a temporary file of %s is left", n)
				}
			}
		})
	}
}
