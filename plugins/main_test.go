package plugins

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

// bins maps each example plugin to a binary built for this test run.
var bins map[string]string

// helperEnv makes the test binary act as an engine that starts a plugin
// and waits to be killed (TestNoOrphanAfterSIGKILL).
const helperEnv = "WEFT_PLUGINS_TEST_HELPER"

func TestMain(m *testing.M) {
	if bin := os.Getenv(helperEnv); bin != "" {
		helperMain(bin)
		return
	}
	dir, err := os.MkdirTemp("", "weft-plugins-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins, err = buildExamples(dir, "rmsnorm", "dyt", "misbehave")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool finds the go command that runs these tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }

// buildExamples builds plugins/examples/<name> into dir.
func buildExamples(dir string, names ...string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./examples/"+n)
	}
	cmd := exec.CommandContext(ctx, goTool(), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	out := map[string]string{}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		out[n] = p
	}
	return out, nil
}

// helperMain starts the plugin bin, prints its pid and waits to be killed
// (for at most a minute).
func helperMain(bin string) {
	h := NewHost(Options{Binaries: map[string]string{"misbehave": bin}})
	reg := ops.NewRegistry()
	if err := h.Load([]*specs.PluginDecl{{Name: "misbehave"}}, reg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(h.PID("misbehave"))
	time.Sleep(time.Minute)
	os.Exit(2)
}

// syncBuffer is a log a test can read while plugins write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newHost returns a host that finds the test's plugin binaries by name.
func newHost(t testing.TB, opt Options) (*Host, *syncBuffer) {
	t.Helper()
	log := &syncBuffer{}
	if opt.Log == nil {
		opt.Log = log
	}
	if opt.Binaries == nil {
		opt.Binaries = bins
	}
	h := NewHost(opt)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h, log
}

// load loads the named plugins into a fresh built-in registry.
func load(t testing.TB, h *Host, names ...string) *ops.Registry {
	t.Helper()
	reg := ops.Builtins()
	var decls []*specs.PluginDecl
	for _, n := range names {
		decls = append(decls, &specs.PluginDecl{Name: n})
	}
	if err := h.Load(decls, reg); err != nil {
		t.Fatal(err)
	}
	return reg
}

// attrsFor applies def's defaults under the given values.
func attrsFor(t testing.TB, def *ops.Def, set ops.Attrs) ops.Attrs {
	t.Helper()
	out := ops.Attrs{}
	for _, a := range def.Attrs {
		v := a.Default
		if s, ok := set[a.Name]; ok {
			v = s
		}
		if v == nil {
			continue
		}
		c, err := ops.Coerce(a, v)
		if err != nil {
			t.Fatal(err)
		}
		out[a.Name] = c
	}
	return out
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitGone waits up to d for pid to be gone.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return !alive(pid)
}

// readLine reads one line from r within d.
func readLine(r *bufio.Reader, d time.Duration) (string, error) {
	ch := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		s, err := r.ReadString('\n')
		if err != nil {
			errc <- err
			return
		}
		ch <- strings.TrimSpace(s)
	}()
	select {
	case s := <-ch:
		return s, nil
	case err := <-errc:
		return "", err
	case <-time.After(d):
		return "", fmt.Errorf("no line within %v", d)
	}
}

func itoa(n int) string { return fmt.Sprint(n) }
