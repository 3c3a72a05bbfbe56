package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftrun/weft/internal/testdata"
)

func TestVersionAndHelp(t *testing.T) {
	cases := []struct {
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{[]string{"--version"}, 0, "weft ", ""},
		{[]string{"help"}, 0, "weft help CMD", ""},
		{[]string{"--help"}, 0, "commands:", ""},
		{[]string{"help", "run"}, 0, "usage: weft run -m MODEL", ""},
		{[]string{"help", "quantize"}, 0, "Q4_0", ""},
		{[]string{"run", "-h"}, 0, "-ctx-size", ""},
		{[]string{"bench", "--help"}, 0, "-threads", ""},
		{[]string{"run", "--version"}, 0, "weft ", ""}, // llama.cpp's tools take it anywhere
		{[]string{"graph", "-s", "llama", "-version"}, 0, "weft ", ""},
		{[]string{"help", "nope"}, 2, "", `unknown command "nope"`},
		{[]string{}, 2, "", "commands:"},
		{[]string{"run", "--nope"}, 2, "", "usage: weft run"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := weft(tc.args...)
			if code != tc.code || !strings.Contains(out, tc.wantStdout) || !strings.Contains(errOut, tc.wantStderr) {
				t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q, stderr with %q", code, out, errOut, tc.code, tc.wantStdout, tc.wantStderr)
			}
			if tc.code == 0 && errOut != "" {
				t.Errorf("help wrote to stderr: %q", errOut)
			}
		})
	}
}

// TestHabitsEverywhere checks that every command that runs a model takes
// llama.cpp's spellings: -t and --threads, and -c and --ctx-size where it
// has a context, -f and --file where it reads a file; and that the flags
// do what they say: -c bounds the context (and is named when it is too
// small), -f - reads standard input.
func TestHabitsEverywhere(t *testing.T) {
	cases := map[string][]string{
		"run":        {"-t ", "-threads ", "-c ", "-ctx-size ", "-f ", "-file "},
		"bench":      {"-t ", "-threads "},
		"perplexity": {"-t ", "-threads ", "-c ", "-ctx-size ", "-f ", "-file "},
		"embed":      {"-t ", "-threads ", "-f ", "-file "},
		"serve":      {"-t ", "-threads ", "-c ", "-ctx-size "},
		"chat":       {"-t ", "-threads ", "-c ", "-ctx-size "},
	}
	for cmd, flags := range cases {
		code, out, errOut := weft("help", cmd)
		if code != 0 {
			t.Fatalf("help %s: exit %d: %s", cmd, code, errOut)
		}
		for _, f := range flags {
			if !strings.Contains(out, "  "+f) {
				t.Errorf("weft %s has no %s", cmd, strings.TrimSpace(f))
			}
		}
	}
	t.Run("behaviour", func(t *testing.T) {
		shared := testdata.Shared(t)
		m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
		long := strings.Repeat("Once upon a time there was a little girl named Lily. ", 12)
		text := filepath.Join(t.TempDir(), "story.txt")
		if err := os.WriteFile(text, []byte(long), 0o644); err != nil {
			t.Fatal(err)
		}
		ppl := []string{"perplexity", "-m", m, "-t", "1", "--json"}
		code, fromFile, errOut := weft(append(ppl, "-f", text, "-c", "16")...)
		if code != 0 || !strings.Contains(fromFile, `"perplexity":`) {
			t.Fatalf("perplexity -f %s: exit %d: %s%s", text, code, fromFile, errOut)
		}
		behaviours := []struct {
			name     string
			args     []string
			stdin    string // "" leaves standard input alone
			wantCode int
			wantOut  string
			wantErr  string
		}{
			{"run -c bounds the prompt", []string{"run", "-m", m, "-p", long, "-c", "8", "-n", "1"}, "", 1, "", "exceed the context of 8 (-c)"},
			{"run --ctx-size", []string{"run", "-m", m, "-p", long, "--ctx-size", "8", "-n", "1"}, "", 1, "", "exceed the context of 8 (-c)"},
			{"run -c fits", []string{"run", "-m", m, "-p", "Once", "-c", "8", "-n", "-1", "--temp", "0", "--json"}, "", 0, `"tokens":[`, ""},
			{"run -f -", []string{"run", "-m", m, "-f", "-", "-n", "1", "--temp", "0", "--json"}, "Once upon a time", 0, `"prompt_tokens":[1,403,`, ""},
			{"perplexity -c sets the window", []string{"perplexity", "-m", m, "-f", text, "-c", "16", "--json"}, "", 0, `"ctx":16,`, ""},
			{"perplexity --ctx-size", []string{"perplexity", "-m", m, "-f", text, "--ctx-size", "32", "--json"}, "", 0, `"ctx":32,`, ""},
			{"perplexity -c too large", []string{"perplexity", "-m", m, "-f", text, "-c", "4096"}, "", 1, "", "a window of 4096 (-c)"},
			{"perplexity -f - reads stdin", append(ppl, "-f", "-", "-c", "16"), long, 0, fromFile, ""},
			{"perplexity --file -", append(ppl, "--file", "-", "-c", "16"), long, 0, fromFile, ""},
			{"perplexity -f missing", []string{"perplexity", "-m", m, "-f", text + ".nope"}, "", 1, "", "-f: open "},
			{"chat -c bounds the conversation", []string{"chat", "-m", m, "-c", "8", "--temp", "0"}, long + "\n", 0, "", "fill the context of 8"},
			{"bench -t", []string{"bench", "-m", m, "-t", "-1"}, "", 2, "", "-t must be"},
			{"run -t -1", []string{"run", "-m", m, "-p", "Once", "-t", "-1", "-n", "1"}, "", 1, "", "threads -1: want 0 (all cores) or more"},
			{"embed -t -1", []string{"embed", "-m", m, "-p", "Once", "-t", "-1"}, "", 1, "", "threads -1"},
			{"chat -n -1", []string{"chat", "-m", m, "-c", "48", "-n", "-1", "--temp", "0"}, "Once\n", 0, "", ""},
			{"chat -n -2", []string{"chat", "-m", m, "-n", "-2"}, "", 2, "", "-n -2"},
		}
		for _, tc := range behaviours {
			t.Run(tc.name, func(t *testing.T) {
				var code int
				var out, errOut string
				call := func() { code, out, errOut = weft(tc.args...) }
				if tc.stdin != "" {
					withStdin(t, tc.stdin, call)
				} else {
					call()
				}
				if code != tc.wantCode || !strings.Contains(out, tc.wantOut) || !strings.Contains(errOut, tc.wantErr) {
					t.Errorf("exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q, stderr with %q", code, out, errOut, tc.wantCode, tc.wantOut, tc.wantErr)
				}
			})
		}
	})
}

// withStdin runs f with os.Stdin reading text.
func withStdin(t *testing.T, text string, f func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	f()
}

func TestRunHabits(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	c := testdata.Golden(t, shared, "stories260K")[1]
	promptFile := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(promptFile, []byte(c.Prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		PromptTokens []int  `json:"prompt_tokens"`
		Tokens       []int  `json:"tokens"`
		Seed         uint64 `json:"seed"`
	}
	run := func(t *testing.T, args ...string) (result, string) {
		t.Helper()
		code, out, errOut := weft(append([]string{"run", "-m", m, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r, errOut
	}
	greedy := []string{"--temp", "0", "-n", "8", "-t", "1"}
	want, _ := run(t, append([]string{"-p", c.Prompt}, greedy...)...)
	t.Run("-f FILE", func(t *testing.T) {
		got, _ := run(t, append([]string{"-f", promptFile}, greedy...)...)
		if !slices.Equal(got.PromptTokens, want.PromptTokens) || !slices.Equal(got.Tokens, want.Tokens) {
			t.Errorf("-f: %v %v, want %v %v", got.PromptTokens, got.Tokens, want.PromptTokens, want.Tokens)
		}
	})
	for _, flag := range []string{"-p", "-f", "--file"} {
		t.Run(flag+" -", func(t *testing.T) {
			withStdin(t, c.Prompt, func() {
				got, _ := run(t, append([]string{flag, "-"}, greedy...)...)
				if !slices.Equal(got.PromptTokens, want.PromptTokens) {
					t.Errorf("prompt from stdin: %v, want %v", got.PromptTokens, want.PromptTokens)
				}
			})
		})
	}
	t.Run("-p and -f", func(t *testing.T) {
		if code, _, errOut := weft("run", "-m", m, "-p", "x", "-f", promptFile); code != 2 || !strings.Contains(errOut, "not both") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("-n -1", func(t *testing.T) {
		// Until end of text or the context (--set ctx=64) is full.
		got, _ := run(t, "-p", c.Prompt, "--temp", "0", "-n", "-1", "--set", "ctx=64")
		eos := len(got.Tokens) > 0 && got.Tokens[len(got.Tokens)-1] == 2
		if !eos && len(got.PromptTokens)+len(got.Tokens) != 64 {
			t.Errorf("-n -1: %d prompt + %d tokens, last %v: neither end of text nor a full context of 64", len(got.PromptTokens), len(got.Tokens), got.Tokens[len(got.Tokens)-1:])
		}
		if code, _, errOut := weft("run", "-m", m, "-p", "x", "-n", "-2"); code != 2 || !strings.Contains(errOut, "-n -2") {
			t.Errorf("-n -2: exit %d: %s", code, errOut)
		}
	})
	t.Run("seed", func(t *testing.T) {
		got, _ := run(t, "-p", c.Prompt, "-n", "8", "--seed", "1234")
		if got.Seed != 1234 {
			t.Errorf("--seed 1234: json seed %d", got.Seed)
		}
		random, errOut := run(t, "-p", c.Prompt, "-n", "8", "--temp", "1")
		if !strings.Contains(errOut, "weft run: seed "+itoa(int(random.Seed))) {
			t.Errorf("--json with a random seed: stderr %q does not report seed %d", errOut, random.Seed)
		}
		again, _ := run(t, "-p", c.Prompt, "-n", "8", "--temp", "1", "--seed", itoa(int(random.Seed)))
		if !slices.Equal(random.Tokens, again.Tokens) {
			t.Errorf("the reported seed %d does not repeat the sample: %v then %v", random.Seed, random.Tokens, again.Tokens)
		}
		code, _, errOut := weft("run", "-m", m, "-p", c.Prompt, "-n", "2", "--temp", "1")
		if code != 0 || !strings.Contains(errOut, "weft run: seed ") {
			t.Errorf("a random seed is not reported on stderr: %q", errOut)
		}
	})
}

func itoa(v int) string { return strconv.Itoa(v) }

// interruptingWriter sends the process SIGINT at its nth write and holds
// that write until the signal has had time to land: a user pressing
// Ctrl-C while tokens stream.
type interruptingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	n      int
}

func (w *interruptingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.writes == w.n {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(200 * time.Millisecond)
	}
	return w.buf.Write(p)
}

func TestCtrlCEndsQuietly(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	out := &interruptingWriter{n: 6} // the prompt, then 5 pieces
	var errOut bytes.Buffer
	code := realMain([]string{"run", "-m", m, "-p", "Once upon a time", "-n", "400", "--temp", "0", "--set", "ctx=512", "-t", "1"}, out, &errOut)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr %q", code, errOut.String())
	}
	if s := errOut.String(); strings.Contains(s, "context canceled") || strings.Contains(s, "weft run:") && !strings.Contains(s, "seed") {
		t.Errorf("stderr is not quiet: %q", s)
	}
	text := out.buf.String()
	if !strings.HasPrefix(text, "Once upon a time") || len(text) <= len("Once upon a time") || out.writes > 40 {
		t.Errorf("stdout %q (%d writes): want the prompt and the few tokens before Ctrl-C", text, out.writes)
	}
}

// TestBenchRemembersBandwidth checks that weft bench measures the memory
// bandwidth only when --membw asks, and then uses the remembered figure.
func TestBenchRemembersBandwidth(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	bench := []string{"bench", "-m", m, "-t", "1", "-p", "8", "-n", "4", "-r", "1", "--membw-mib", "8"}
	if code, out, errOut := weft(bench...); code != 0 || !strings.Contains(out, "memory bandwidth not measured") {
		t.Fatalf("before --membw: exit %d, %s%s", code, out, errOut)
	}
	code, out, errOut := weft("bench", "--membw", "-t", "1", "--membw-mib", "8")
	if code != 0 || !strings.Contains(out, "memory read bandwidth: ") {
		t.Fatalf("--membw: exit %d, %s%s", code, out, errOut)
	}
	code, out, errOut = weft(append(bench, "--json")...)
	var res benchResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !(res.MembwBytesS > 0) || !(res.RooflineRatio > 0) {
		t.Fatalf("after --membw: exit %d, %s%s", code, out, errOut)
	}
}
