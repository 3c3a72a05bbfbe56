// Package progress draws a one-line progress bar on a terminal, for long
// jobs such as converting or quantizing a model. It draws nothing when its
// writer is not a terminal, so logs and pipes stay clean.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Interval is the shortest time between two redraws.
const Interval = 100 * time.Millisecond

const barWidth = 30

// Bar is a progress bar. Its methods are safe for concurrent use.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer // nil: silent
	label string
	total int64
	n     int64
	bytes bool
	now   func() time.Time
	start time.Time
	last  time.Time // time of the last draw; zero before the first
	done  bool
}

// New returns a bar labelled label that counts up to total (0 or less if
// the total is unknown). It draws on w only if w is an *os.File open on a
// terminal.
func New(w io.Writer, label string, total int64) *Bar {
	if f, ok := w.(*os.File); !ok || !isTerminal(f.Fd()) {
		w = nil
	}
	return newBar(w, label, total, time.Now)
}

// newBar returns a bar that draws on w unconditionally (nil: never), with
// a clock tests can drive.
func newBar(w io.Writer, label string, total int64, now func() time.Time) *Bar {
	return &Bar{w: w, label: label, total: total, now: now, start: now()}
}

// Bytes makes the bar show its counts as sizes (KiB, MiB, GiB) and returns
// the bar.
func (b *Bar) Bytes() *Bar {
	b.mu.Lock()
	b.bytes = true
	b.mu.Unlock()
	return b
}

// Add advances the bar by n and redraws it if the last redraw is at least
// Interval old or the total is reached.
func (b *Bar) Add(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.n += n
	if b.w == nil {
		return
	}
	t := b.now()
	if !b.last.IsZero() && t.Sub(b.last) < Interval && (b.total <= 0 || b.n < b.total) {
		return
	}
	b.last = t
	b.draw(t)
}

// Done draws the final state and ends the line. Later calls to Add and
// Done do nothing.
func (b *Bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	if b.w == nil {
		return
	}
	b.draw(b.now())
	io.WriteString(b.w, "\n")
}

// draw writes the bar over the current line: label, bar, percentage,
// counts, rate and time left (or taken, once done).
func (b *Bar) draw(t time.Time) {
	var sb strings.Builder
	sb.WriteString("\r")
	sb.WriteString(b.label)
	elapsed := t.Sub(b.start)
	if b.total > 0 {
		frac := min(1, max(0, float64(b.n)/float64(b.total)))
		full := int(frac * barWidth)
		sb.WriteString(" [")
		sb.WriteString(strings.Repeat("=", full))
		if full < barWidth {
			sb.WriteString(">")
			sb.WriteString(strings.Repeat(" ", barWidth-full-1))
		}
		fmt.Fprintf(&sb, "] %3d%% %s/%s", int(frac*100), b.count(b.n), b.count(b.total))
	} else {
		fmt.Fprintf(&sb, " %s", b.count(b.n))
	}
	if secs := elapsed.Seconds(); secs > 0 && b.n > 0 {
		rate := float64(b.n) / secs
		fmt.Fprintf(&sb, " %s/s", b.count(int64(rate)))
		switch {
		case b.done:
			fmt.Fprintf(&sb, " in %s", elapsed.Round(time.Second/10))
		case b.total > b.n:
			left := time.Duration(float64(b.total-b.n) / rate * float64(time.Second))
			fmt.Fprintf(&sb, " %s left", left.Round(time.Second))
		}
	}
	sb.WriteString("\x1b[K") // clear the rest of a longer previous line
	io.WriteString(b.w, sb.String())
}

// count formats n as a plain number or, for a byte bar, a binary size.
func (b *Bar) count(n int64) string {
	if !b.bytes {
		return fmt.Sprint(n)
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}
