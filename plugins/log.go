package plugins

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// lockedWriter serialises writes from every plugin to the engine's log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// tail keeps a plugin's last lines of output, to explain a crash.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 64

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == tailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:tailLines-1]
	}
	t.lines = append(t.lines, line)
}

func (t *tail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = nil
}

// reason returns the line that best explains a crash: a Go panic or fatal
// error, else the last line.
func (t *tail) reason() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.lines {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return l
		}
	}
	for i := len(t.lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(t.lines[i]); s != "" && !strings.HasPrefix(s, "goroutine ") {
			return s
		}
	}
	return ""
}

// lineWriter prefixes each line written to it with the plugin's name.
// A plugin has several (its raw standard error and go-plugin's streamed
// copies), each buffering its own partial line.
type lineWriter struct {
	mu     sync.Mutex
	out    io.Writer
	prefix string
	tail   *tail
	buf    []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a very long line: emit what we have
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
	return len(b), nil
}

func (w *lineWriter) emit(line []byte) {
	s := strings.TrimRight(string(line), "\r")
	w.tail.add(s)
	w.out.Write([]byte(w.prefix + s + "\n"))
}

// flush writes a pending partial line.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
}
