package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock tests advance by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestBar(label string, total int64) (*Bar, *bytes.Buffer, *fakeClock) {
	var buf bytes.Buffer
	c := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newBar(&buf, label, total, c.now), &buf, c
}

func lines(out string) []string { return strings.Split(strings.TrimSuffix(out, "\n"), "\r")[1:] }

func TestSilentWhenNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var buf bytes.Buffer
	for name, out := range map[string]interface{ Write([]byte) (int, error) }{"buffer": &buf, "file": f, "pipe": w} {
		b := New(out, "work", 10)
		for range 10 {
			b.Add(1)
		}
		b.Done()
		if b.w != nil {
			t.Errorf("%s: bar draws on a non-terminal", name)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q to a buffer", buf.String())
	}
	if st, _ := f.Stat(); st.Size() != 0 {
		t.Errorf("wrote %d bytes to a file", st.Size())
	}
}

func TestDraw(t *testing.T) {
	b, buf, c := newTestBar("convert", 200)
	c.advance(2 * time.Second)
	b.Add(50)
	c.advance(2 * time.Second)
	b.Add(150)
	b.Done()
	got := lines(buf.String())
	want := []string{
		"convert [=======>                      ]  25% 50/200 25/s 6s left\x1b[K",
		"convert [==============================] 100% 200/200 50/s\x1b[K",
		"convert [==============================] 100% 200/200 50/s in 4s\x1b[K",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("drew\n%q\nwant\n%q", got, want)
	}
	if !strings.HasSuffix(buf.String(), "\n") {
		t.Error("Done did not end the line")
	}
}

func TestDrawBytesAndUnknownTotal(t *testing.T) {
	b, buf, c := newTestBar("load", 3<<30)
	b.Bytes()
	c.advance(time.Second)
	b.Add(1536 << 20)
	if got := lines(buf.String())[0]; !strings.Contains(got, " 50% 1.5 GiB/3.0 GiB 1.5 GiB/s 1s left") {
		t.Errorf("drew %q", got)
	}

	b, buf, c = newTestBar("tokens", 0)
	c.advance(time.Second)
	b.Add(1000)
	b.Done()
	want := []string{"tokens 1000 1000/s\x1b[K", "tokens 1000 1000/s in 1s\x1b[K"}
	if got := lines(buf.String()); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("drew %q, want %q", got, want)
	}

	b, buf, _ = newTestBar("x", 4)
	b.Bytes().Add(2)
	if got := lines(buf.String())[0]; !strings.Contains(got, " 50% 2 B/4 B\x1b[K") {
		t.Errorf("drew %q", got)
	}
}

// TestThrottle adds once a millisecond for two seconds: the bar may redraw
// at most ten times a second, plus the final draws.
func TestThrottle(t *testing.T) {
	b, buf, c := newTestBar("q", 2000)
	for range 2000 {
		c.advance(time.Millisecond)
		b.Add(1)
	}
	b.Done()
	draws := strings.Count(buf.String(), "\r")
	// First draw, one per 100 ms after it, the draw at completion, Done.
	if draws > 1+20+2 || draws < 20 {
		t.Errorf("%d redraws in 2 s", draws)
	}
	b.Add(5) // after Done: ignored
	b.Done()
	if strings.Count(buf.String(), "\r") != draws {
		t.Error("bar drew after Done")
	}
}

func TestConcurrentAdd(t *testing.T) {
	b, _, c := newTestBar("par", 8000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.advance(time.Microsecond)
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	b.Done()
	if b.n != 8000 {
		t.Errorf("counted %d, want 8000", b.n)
	}
}
