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

// TestRunProgressOnATerminal runs weft run with its standard error on a
// pseudo-terminal and a prompt longer than two prefill steps: it draws a
// load line and a prefill line that ends at the prompt's token count, and
// with standard error not a terminal (the other tests) it draws neither.
func TestRunProgressOnATerminal(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	master, slave := openPTY(t)
	defer master.Close()
	var got bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&got, master) //nolint:errcheck // ends with EIO when the slave closes
	}()
	prompt := strings.Repeat("Once upon a time there was a little girl. ", 4)
	var out bytes.Buffer
	code := realMain([]string{"run", "-m", m, "-p", prompt, "-n", "2", "--temp", "0", "-t", "1", "--batch", "8", "--json"}, &out, slave)
	slave.Close()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, got.String())
	}
	var res struct {
		PromptTokens []int `json:"prompt_tokens"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	n := len(res.PromptTokens)
	if n <= 16 {
		t.Fatalf("the prompt has %d tokens; the test needs more than two steps of 8", n)
	}
	term := got.String()
	if !strings.Contains(term, "load stories260K.gguf") {
		t.Errorf("no load line on the terminal: %q", term)
	}
	want := "100% " + strconv.Itoa(n) + "/" + strconv.Itoa(n)
	if i := strings.Index(term, "prefill"); i < 0 || !strings.Contains(term[i:], want) {
		t.Errorf("no prefill line ending at %q on the terminal: %q", want, term)
	}
}
