package progress

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns both ends of a new pseudo-terminal, or skips the test.
func openPTY(t *testing.T) (master, slave *os.File) {
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

func TestDrawsOnATerminal(t *testing.T) {
	m, s := openPTY(t)
	defer m.Close()
	defer s.Close()
	b := New(s, "tty", 2)
	if b.w == nil {
		t.Fatal("bar is silent on a terminal")
	}
	b.Add(2)
	b.Done()
	buf := make([]byte, 4096)
	n, err := m.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:n]); !strings.Contains(got, "tty [") || !strings.Contains(got, "100% 2/2") {
		t.Errorf("terminal got %q", got)
	}
}
