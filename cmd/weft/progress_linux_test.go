package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrun/weft/internal/testdata"
)

// openPTY returns both ends of a new pseudo-terminal, or skips the test
// where the system has none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty: %v", err)
	}
	return m, s
}

// onTerminal runs weft with args, its standard error on a new
// pseudo-terminal, and returns the exit status, standard output and what
// the terminal received.
func onTerminal(t *testing.T, args ...string) (code int, stdout, term string) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	var got bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&got, master) //nolint:errcheck // ends with EIO when the slave closes
	}()
	var out bytes.Buffer
	code = realMain(args, &out, slave)
	slave.Close()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	return code, out.String(), got.String()
}

// TestRunProgressOnATerminal runs weft run with its standard error on a
// pseudo-terminal and a prompt longer than two prefill steps: it draws a
// load line and a prefill line that ends at the prompt's token count, and
// with standard error not a terminal (the other tests) it draws neither.
func TestRunProgressOnATerminal(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	prompt := strings.Repeat("Once upon a time there was a little girl. ", 4)
	code, out, term := onTerminal(t, "run", "-m", m, "-p", prompt, "-n", "2", "--temp", "0", "-t", "1", "--batch", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, term)
	}
	var res struct {
		PromptTokens []int `json:"prompt_tokens"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	n := len(res.PromptTokens)
	if n <= 16 {
		t.Fatalf("the prompt has %d tokens; the test needs more than two steps of 8", n)
	}
	if !strings.Contains(term, "load stories260K.gguf") {
		t.Errorf("no load line on the terminal: %q", term)
	}
	want := "100% " + strconv.Itoa(n) + "/" + strconv.Itoa(n)
	if i := strings.Index(term, "prefill"); i < 0 || !strings.Contains(term[i:], want) {
		t.Errorf("no prefill line ending at %q on the terminal: %q", want, term)
	}
}

// TestProgressOnATerminalEverywhere runs each long command with standard
// error on a pseudo-terminal and checks the lines it draws there: the
// model's load line and the command's own bar (synth, quantize and
// convert draw the file they write).
func TestProgressOnATerminalEverywhere(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Once upon a time there was a little girl named Lily. ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	synth := filepath.Join(dir, "tiny.gguf")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"bench", []string{"bench", "-m", m, "-t", "1", "-p", "16", "-n", "4", "-r", "2"}, []string{"load stories260K.gguf", "bench"}},
		{"perplexity", []string{"perplexity", "-m", m, "-t", "1", "-f", text, "-c", "64"}, []string{"load stories260K.gguf"}},
		{"embed", []string{"embed", "-m", m, "-t", "1", "-p", "Once", "--json"}, []string{"load stories260K.gguf", "embed"}},
		{"synth", []string{"synth", "-s", "llama", "--set", "hidden=64,layers=2,heads=4,ffn=128,vocab=512,ctx=64", "--dtype", "f32", "--seed", "1", "-o", synth}, []string{"synth tiny.gguf"}},
		{"quantize", []string{"quantize", synth, filepath.Join(dir, "tiny-q8.gguf"), "q8_0"}, []string{"quantize tiny-q8.gguf"}},
		{"convert", []string{"convert", "--dtype", "f16", synth, filepath.Join(dir, "tiny-f16.gguf")}, []string{"load tiny.gguf", "convert tiny-f16.gguf"}},
	}
	for _, tc := range cases { // in order: quantize and convert read synth's file
		t.Run(tc.name, func(t *testing.T) {
			code, _, got := onTerminal(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("no %q line on the terminal: %q", w, got)
				}
			}
		})
	}
}
