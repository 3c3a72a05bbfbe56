package plugins

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestLoadRegistersSchema(t *testing.T) {
	h, _ := newHost(t, Options{})
	reg := load(t, h, "rmsnorm", "dyt", "misbehave")
	def, ok := reg.Lookup("example.rms_norm")
	if !ok {
		t.Fatal("example.rms_norm not registered")
	}
	if def.Plugin != "rmsnorm" || !def.RowWise || def.Host == nil {
		t.Errorf("def = plugin %q, row-wise %v, cpu kernel %v", def.Plugin, def.RowWise, def.Host != nil)
	}
	builtin, _ := reg.Lookup("rms_norm")
	if len(def.Inputs) != len(builtin.Inputs) {
		t.Fatalf("inputs %+v, built-in has %+v", def.Inputs, builtin.Inputs)
	}
	for i, p := range def.Inputs {
		b := builtin.Inputs[i]
		if p.Name != b.Name || p.Optional != b.Optional || p.Weight != b.Weight {
			t.Errorf("input %d = %+v, built-in %+v", i, p, b)
		}
	}
	eps, ok := def.Attr("eps")
	if !ok || eps.Type != ops.AttrFloat || eps.Default != 1e-5 {
		t.Errorf("eps = %+v", eps)
	}
	d, _ := reg.Lookup("example.dyt")
	if d == nil || d.Plugin != "dyt" || len(d.Inputs) != 4 || !d.Inputs[1].Weight || !d.Inputs[3].Optional {
		t.Errorf("example.dyt = %+v", d)
	}
	m, _ := reg.Lookup("example.misbehave")
	mode, _ := m.Attr("mode")
	if mode.Type != ops.AttrString || mode.Default != "ok" || len(mode.Enum) == 0 {
		t.Errorf("mode = %+v", mode)
	}
	// Loading again into the same registry is harmless; a clash is not.
	if err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm"}}, reg); err != nil {
		t.Errorf("second load: %v", err)
	}
	clash := ops.NewRegistry()
	clash.Register(&ops.Def{Name: "example.rms_norm", Shape: func([]*ops.Type, ops.Attrs) ([]ops.Type, error) { return nil, nil }})
	err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm"}}, clash)
	if err == nil || !strings.Contains(err.Error(), "clashes with a built-in op") {
		t.Errorf("clash: %v", err)
	}
}

// refRMSNorm is RMSNorm written out in float64.
func refRMSNorm(x, w []float32, d int, eps float64) []float32 {
	out := make([]float32, len(x))
	for r := 0; r < len(x)/d; r++ {
		var ss float64
		for i := 0; i < d; i++ {
			v := float64(x[r*d+i])
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(d)+eps)
		for i := 0; i < d; i++ {
			v := float64(x[r*d+i]) * s
			if w != nil {
				v *= float64(w[i])
			}
			out[r*d+i] = float32(v)
		}
	}
	return out
}

func randF32(rng *rand.Rand, n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = (rng.Float32()*2 - 1) * scale
	}
	return out
}

func TestRMSNormKernel(t *testing.T) {
	cases := []struct {
		name       string
		rows, d    int
		weight     bool
		inlineMax  int
		eps        float64
		wantShared bool
	}{
		{"one row inline", 1, 8, true, 0, 1e-5, false},
		{"no weight", 3, 64, false, 0, 1e-6, false},
		{"all through shared memory", 3, 64, true, -1, 1e-5, true},
		{"large batch", 64, 4096, true, 0, 1e-5, true},
		// Inline 1 MiB messages exceed the channel: gRPC carries them.
		{"large batch inline", 64, 4096, true, 1 << 30, 1e-5, false},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHost(t, Options{InlineMax: tc.inlineMax})
			def, _ := load(t, h, "rmsnorm").Lookup("example.rms_norm")
			x := randF32(rng, tc.rows*tc.d, 3)
			var w []float32
			in := []*tensor.Tensor{tensor.FromF32("x", x, tc.rows, tc.d), nil}
			if tc.weight {
				w = randF32(rng, tc.d, 2)
				in[1] = tensor.FromF32("w", w, tc.d)
			}
			out := tensor.NewF32("out", tc.rows, tc.d)
			c := &ops.HostCall{Ctx: context.Background(), Name: "h", In: in, Out: []*tensor.Tensor{out},
				Attrs: attrsFor(t, def, ops.Attrs{"eps": tc.eps})}
			for range 2 { // the second call reuses the cached weight and scratch memory
				clear(out.Data)
				if err := def.Host(c); err != nil {
					t.Fatal(err)
				}
				want := refRMSNorm(x, w, tc.d, tc.eps)
				for i, v := range out.F32() {
					if math.Abs(float64(v-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("out[%d] = %v, want %v", i, v, want[i])
					}
				}
			}
			p := h.procs["rmsnorm"]
			p.smu.Lock()
			shared := len(p.free) > 0
			p.smu.Unlock()
			if shared != tc.wantShared {
				t.Errorf("used shared memory for activations: %v, want %v", shared, tc.wantShared)
			}
		})
	}
}

func TestShapeRules(t *testing.T) {
	h, _ := newHost(t, Options{})
	reg := load(t, h, "rmsnorm", "dyt")
	T := ops.Tokens
	f32 := func(dims ...ops.Dim) *ops.Type { return &ops.Type{DType: tensor.F32, Shape: dims} }
	cases := []struct {
		op      string
		in      []*ops.Type
		want    string // output shape, or an error fragment
		wantErr bool
	}{
		{"example.rms_norm", []*ops.Type{f32(T, ops.D(64)), f32(ops.D(64))}, "[T 64]", false},
		{"example.rms_norm", []*ops.Type{f32(T, ops.D(64)), nil}, "[T 64]", false},
		{"example.rms_norm", []*ops.Type{f32(ops.D(5), ops.D(8)), f32(ops.D(8))}, "[5 8]", false},
		{"example.rms_norm", []*ops.Type{f32(T, ops.D(64)), f32(ops.D(32))}, "input w is [32]: dimension 0 is 32, want 64 (x's dimension 1)", true},
		{"example.rms_norm", []*ops.Type{{DType: tensor.F16, Shape: ops.Shape{T, ops.D(64)}}, nil}, "input x is f16, want f32", true},
		{"example.rms_norm", []*ops.Type{f32(ops.D(64)), nil}, "want 2 dimensions", true},
		{"example.rms_norm", []*ops.Type{nil, nil}, "missing input x", true},
		{"example.dyt", []*ops.Type{f32(T, ops.D(16)), f32(ops.D(1)), f32(ops.D(16)), f32(ops.D(16))}, "[T 16]", false},
		{"example.dyt", []*ops.Type{f32(T, ops.D(16)), f32(ops.D(2)), f32(ops.D(16)), nil}, "input alpha is [2]: dimension 0 is 2, want 1", true},
		{"example.dyt", []*ops.Type{f32(T, ops.D(16)), f32(ops.D(1)), nil, nil}, "missing input gamma", true},
	}
	for _, tc := range cases {
		def, _ := reg.Lookup(tc.op)
		outs, err := def.Shape(tc.in, ops.Attrs{})
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %v: error %v, want %q", tc.op, tc.in, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", tc.op, tc.in, err)
			continue
		}
		if len(outs) != 1 || outs[0].Shape.String() != tc.want || outs[0].DType != tensor.F32 {
			t.Errorf("%s %v = %v, want f32%s", tc.op, tc.in, outs, tc.want)
		}
	}
}

// misbehaveCall runs example.misbehave on a small tensor.
func misbehaveCall(t *testing.T, def *ops.Def, ctx context.Context, node string, set ops.Attrs, rows, cols int) (*tensor.Tensor, []float32, error) {
	t.Helper()
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(i) * 0.5
	}
	out := tensor.NewF32("out", rows, cols)
	err := def.Host(&ops.HostCall{Ctx: ctx, Name: node, In: []*tensor.Tensor{tensor.FromF32("x", x, rows, cols)},
		Out: []*tensor.Tensor{out}, Attrs: attrsFor(t, def, set)})
	return out, x, err
}

func checkIdentity(t *testing.T, def *ops.Def, rows, cols int) {
	t.Helper()
	out, x, err := misbehaveCall(t, def, context.Background(), "ok", nil, rows, cols)
	if err != nil {
		t.Fatalf("mode=ok after a failure: %v", err)
	}
	for i, v := range out.F32() {
		if v != x[i] {
			t.Fatalf("out[%d] = %v, want %v", i, v, x[i])
		}
	}
}

// transports runs f with calls sent through the shared-memory channel and
// through gRPC.
func transports(t *testing.T, f func(t *testing.T, grpcOnly bool)) {
	for _, grpcOnly := range []bool{false, true} {
		name := "channel"
		if grpcOnly {
			name = "grpc"
		}
		t.Run(name, func(t *testing.T) { f(t, grpcOnly) })
	}
}

func TestMisbehave(t *testing.T) { transports(t, testMisbehave) }

// usesChannel reports whether the named plugin's process has a channel.
func usesChannel(h *Host, name string) bool {
	p := h.procs[name]
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur != nil && p.cur.ch != nil
}

func testMisbehave(t *testing.T, grpcOnly bool) {
	h, log := newHost(t, Options{CallTimeout: time.Second, GRPCOnly: grpcOnly})
	def, _ := load(t, h, "misbehave").Lookup("example.misbehave")
	wantChannel := !grpcOnly && shm.ChannelsSupported
	if got := usesChannel(h, "misbehave"); got != wantChannel {
		t.Fatalf("channel open: %v, want %v", got, wantChannel)
	}
	checkIdentity(t, def, 2, 8)
	checkIdentity(t, def, 300, 1000) // through shared memory, zero-copy in the plugin

	cases := []struct {
		mode     string
		attrs    ops.Attrs
		wantErr  []string
		restarts bool
	}{
		{"panic", nil, []string{`plugin "misbehave"`, "op example.misbehave", `node "bad_panic"`, "crashed", "panic: misbehave: asked to panic", "restarted"}, true},
		{"sleep", ops.Attrs{"ms": int64(20000)}, []string{`plugin "misbehave"`, "op example.misbehave", `node "bad_sleep"`, "no answer within 1s", "restarted"}, true},
		{"shape", nil, []string{`plugin "misbehave"`, `node "bad_shape"`, "output out has shape [2 9], want [2 8]"}, false},
		{"error", nil, []string{`plugin "misbehave"`, `node "bad_error"`, "misbehave: asked to fail"}, false},
		{"exit", nil, []string{`plugin "misbehave"`, `node "bad_exit"`, "crashed", "restarted"}, true},
		{"print", nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			pid := h.PID("misbehave")
			set := ops.Attrs{"mode": tc.mode}
			for k, v := range tc.attrs {
				set[k] = v
			}
			start := time.Now()
			_, _, err := misbehaveCall(t, def, context.Background(), "bad_"+tc.mode, set, 2, 8)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the failing call took %v", took)
			}
			t.Logf("mode=%s: %v", tc.mode, err)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
			}
			if newPID := h.PID("misbehave"); (newPID != pid) != tc.restarts || newPID == 0 {
				t.Errorf("pid %d → %d, want a restart: %v", pid, newPID, tc.restarts)
			}
			if tc.restarts && runtime.GOOS == "linux" && !waitGone(pid, 5*time.Second) {
				t.Errorf("the old process %d is still alive", pid)
			}
			checkIdentity(t, def, 2, 8)
			checkIdentity(t, def, 300, 1000)
			if got := usesChannel(h, "misbehave"); got != wantChannel {
				t.Errorf("channel open after %s: %v, want %v", tc.mode, got, wantChannel)
			}
		})
	}
	// Everything the plugin printed reaches the log (asynchronously), line
	// by line, with its name.
	for _, want := range []string{
		"plugin misbehave: panic: misbehave: asked to panic",
		"plugin misbehave: misbehave: printing to stdout",
		"plugin misbehave: misbehave: writing to file descriptor 1",
		"plugin misbehave: weft: restarted",
	} {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(log.String(), want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestContextCancel(t *testing.T) { transports(t, testContextCancel) }

func testContextCancel(t *testing.T, grpcOnly bool) {
	h, _ := newHost(t, Options{GRPCOnly: grpcOnly})
	def, _ := load(t, h, "misbehave").Lookup("example.misbehave")
	pid := h.PID("misbehave")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := misbehaveCall(t, def, ctx, "slow", ops.Attrs{"mode": "sleep", "ms": int64(3000)}, 300, 1000)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `node "slow"`) {
		t.Errorf("error %v, want the context's", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancelled call took %v", took)
	}
	// A cancelled request is not a plugin failure: no restart, and the
	// plugin serves the next call while the old one still sleeps.
	checkIdentity(t, def, 300, 1000)
	if h.PID("misbehave") != pid {
		t.Error("the plugin was restarted after a cancellation")
	}
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if _, _, err := misbehaveCall(t, def, cancelled, "x", nil, 2, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("call with a cancelled context: %v", err)
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func TestPin(t *testing.T) {
	good := sha256File(t, bins["rmsnorm"])
	bad := strings.Repeat("ab", 32)
	cases := []struct {
		pin     string
		wantErr []string
	}{
		{good, nil},
		{strings.ToUpper(good[:1]) + good[1:], nil},
		{bad, []string{bins["rmsnorm"], "sha256 is " + good, "pins " + bad, "refusing to start"}},
		{"xyz", []string{`sha256 "xyz": want 64 hex digits`}},
	}
	for _, tc := range cases {
		h, _ := newHost(t, Options{})
		reg := ops.Builtins()
		err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm", SHA256: strings.ToLower(tc.pin), Pos: graph.Pos{File: "x.yaml", Line: 7}}}, reg)
		if tc.wantErr == nil {
			if err != nil {
				t.Errorf("pin %s: %v", tc.pin, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("pin %s: no error", tc.pin)
			continue
		}
		for _, w := range append(tc.wantErr, "x.yaml:7", `plugin "rmsnorm"`) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("pin %s: error %q lacks %q", tc.pin, err, w)
			}
		}
		if _, ok := reg.Lookup("example.rms_norm"); ok {
			t.Errorf("pin %s: ops registered despite the error", tc.pin)
		}
	}
	// A running plugin named again with a pin: the binary is checked.
	h, _ := newHost(t, Options{})
	load(t, h, "rmsnorm")
	if err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm", SHA256: good}}, ops.Builtins()); err != nil {
		t.Errorf("running plugin, right pin: %v", err)
	}
	if err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm", SHA256: bad}}, ops.Builtins()); err == nil || !strings.Contains(err.Error(), "sha256 is "+good) {
		t.Errorf("running plugin, wrong pin: %v", err)
	}
}

func TestDiscovery(t *testing.T) {
	dir := t.TempDir()
	specDir := filepath.Join(dir, "specs")
	binDir := filepath.Join(dir, "bin")
	for _, d := range []string{specDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(bins["rmsnorm"])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "norm"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "noexec"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(binDir, "norm")
	linkDir := filepath.Join(dir, "links")
	if err := os.MkdirAll(linkDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(linkDir, "norm")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opt     Options
		decl    specs.PluginDecl
		wantErr string
	}{
		{"by name in a dir", Options{Dirs: []string{t.TempDir(), binDir}}, specs.PluginDecl{Name: "norm"}, ""},
		{"relative to the spec, into a plugin dir", Options{SpecDir: specDir, Dirs: []string{binDir}}, specs.PluginDecl{Name: "x", Path: "../bin/norm"}, ""},
		{"absolute, into a plugin dir", Options{Dirs: []string{binDir}}, specs.PluginDecl{Name: "x", Path: abs}, ""},
		{"relative to the spec, trusted", Options{SpecDir: specDir, TrustSpecPaths: true}, specs.PluginDecl{Name: "x", Path: "../bin/norm"}, ""},
		{"absolute, trusted", Options{TrustSpecPaths: true}, specs.PluginDecl{Name: "x", Path: abs}, ""},
		{"spec path, no dirs, untrusted", Options{SpecDir: specDir}, specs.PluginDecl{Name: "x", Path: "../bin/norm"}, "refusing to start " + abs + ": no plugin directory was named"},
		{"spec path outside the dirs", Options{Dirs: []string{specDir}}, specs.PluginDecl{Name: "x", Path: abs}, "refusing to start " + abs + ": outside the plugin directories " + specDir},
		{"spec path escaping a dir with ..", Options{Dirs: []string{specDir}}, specs.PluginDecl{Name: "x", Path: filepath.Join(specDir, "..", "bin", "norm")}, "refusing to start"},
		{"link in a dir to a file outside", Options{Dirs: []string{linkDir}}, specs.PluginDecl{Name: "x", Path: filepath.Join(linkDir, "norm")}, "refusing to start"},
		{"link in a dir to a file outside, by name", Options{Dirs: []string{linkDir}}, specs.PluginDecl{Name: "norm"}, ""},
		{"missing in dirs", Options{Dirs: []string{specDir}}, specs.PluginDecl{Name: "norm"}, `no binary "norm" in ` + specDir},
		{"no dirs", Options{}, specs.PluginDecl{Name: "norm"}, "no plugin directories to look in"},
		{"missing path", Options{SpecDir: specDir, TrustSpecPaths: true}, specs.PluginDecl{Name: "x", Path: "nope"}, filepath.Join(specDir, "nope") + " does not exist"},
		{"not executable", Options{Dirs: []string{binDir}}, specs.PluginDecl{Name: "x", Path: filepath.Join(binDir, "noexec")}, "is not executable"},
		{"name with a slash", Options{Dirs: []string{binDir}}, specs.PluginDecl{Name: "../bin/norm"}, "plain file name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			opt.Binaries = map[string]string{}
			h, _ := newHost(t, opt)
			reg := ops.Builtins()
			err := h.Load([]*specs.PluginDecl{&tc.decl}, reg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if d, ok := reg.Lookup("example.rms_norm"); !ok || d.Plugin != tc.decl.Name {
					t.Errorf("op not registered under plugin %q", tc.decl.Name)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestCloseKillsPlugins(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	h := NewHost(Options{Binaries: bins, Log: &syncBuffer{}})
	reg := ops.Builtins()
	if err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm"}, {Name: "misbehave"}}, reg); err != nil {
		t.Fatal(err)
	}
	def, _ := reg.Lookup("example.misbehave")
	checkIdentity(t, def, 300, 1000) // creates a shared-memory segment
	pids := []int{h.PID("rmsnorm"), h.PID("misbehave")}
	segs, _ := filepath.Glob(filepath.Join(h.shmDirs[0], "weft-"+itoa(os.Getpid())+"-*"))
	if len(segs) == 0 {
		t.Fatal("no shared-memory segment")
	}
	for _, pid := range pids {
		if pid == 0 || !alive(pid) {
			t.Fatalf("plugin pid %d not running", pid)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !waitGone(pid, 5*time.Second) {
			t.Errorf("plugin %d alive after Close", pid)
		}
	}
	for _, s := range segs {
		if fileExists(s) {
			t.Errorf("segment %s left after Close", s)
		}
	}
	if _, _, err := misbehaveCall(t, def, context.Background(), "late", nil, 2, 2); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("call after Close: %v", err)
	}
	if err := h.Load([]*specs.PluginDecl{{Name: "rmsnorm"}}, ops.Builtins()); err == nil {
		t.Error("Load after Close succeeded")
	}
}

// TestNoOrphanAfterSIGKILL starts an engine process (this test binary in
// helper mode) that loads a plugin, kills the engine with SIGKILL and
// checks that the plugin does not outlive it.
func TestNoOrphanAfterSIGKILL(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+bins["misbehave"])
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := readLine(bufio.NewReader(stdout), 30*time.Second)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	pid, err := strconv.Atoi(line)
	if err != nil || pid <= 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper printed %q, want a pid", line)
	}
	if !alive(pid) {
		t.Fatalf("plugin %d is not running", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !waitGone(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("plugin %d outlived its engine by 5s", pid)
	}
}

// TestDynamicShape checks an op whose output shape the plugin computes
// (the Shape RPC), and a second op served by the same plugin.
func TestDynamicShape(t *testing.T) {
	h, _ := newHost(t, Options{})
	reg := load(t, h, "misbehave")
	def, ok := reg.Lookup("example.tile")
	if !ok || def.Plugin != "misbehave" {
		t.Fatalf("example.tile: %+v", def)
	}
	x := &ops.Type{DType: tensor.F32, Shape: ops.Shape{ops.Tokens, ops.D(8)}}
	cases := []struct {
		times   int64
		want    string
		wantErr string
	}{
		{1, "[T 8]", ""},
		{3, "[T 24]", ""},
		{0, "", "times = 0, want at least 1"},
	}
	for _, tc := range cases {
		outs, err := def.Shape([]*ops.Type{x}, ops.Attrs{"times": tc.times})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `plugin "misbehave"`) {
				t.Errorf("times=%d: error %v, want %q from the plugin", tc.times, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(outs) != 1 || outs[0].Shape.String() != tc.want {
			t.Errorf("times=%d: %v, %v; want %s", tc.times, outs, err, tc.want)
		}
	}
	// Declared input checks apply before the plugin is asked.
	if _, err := def.Shape([]*ops.Type{{DType: tensor.I32, Shape: ops.Shape{ops.Tokens, ops.D(8)}}}, ops.Attrs{"times": int64(2)}); err == nil || !strings.Contains(err.Error(), "input x is i32, want f32") {
		t.Errorf("i32 input: %v", err)
	}
	in := tensor.FromF32("x", []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	out := tensor.NewF32("out", 2, 6)
	if err := def.Host(&ops.HostCall{Ctx: context.Background(), Name: "t", In: []*tensor.Tensor{in}, Out: []*tensor.Tensor{out}, Attrs: ops.Attrs{"times": int64(2)}}); err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}
	for i, v := range out.F32() {
		if v != want[i] {
			t.Fatalf("out = %v, want %v", out.F32(), want)
		}
	}
}

// TestRunByHand checks what a plugin binary does when a person runs it.
func TestRunByHand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bins["rmsnorm"], "--describe").Output()
	if err != nil {
		t.Fatalf("--describe: %v", err)
	}
	for _, want := range []string{"example.rms_norm: RMSNorm", "input 1  w (weight, optional) f32 [x.dim(-1)]", "output   out like x", "attr     eps float = 1e-05"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--describe output lacks %s:\n%s", want, out)
		}
	}
	cmd := exec.CommandContext(ctx, bins["rmsnorm"])
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "is a weft op plugin") {
		t.Errorf("run without weft: %v, %s", err, msg)
	}
}

// TestExampleSpecPaths checks that the example specs find their plugins
// where `make plugins` puts them, relative to the spec files.
func TestExampleSpecPaths(t *testing.T) {
	root := t.TempDir()
	specDir := filepath.Join(root, "specs", "examples")
	binDir := filepath.Join(root, "bin", "plugins")
	for _, d := range []string{specDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ spec, plugin, op string }{
		{"llama-plugin-norm.yaml", "rmsnorm", "example.rms_norm"},
		{"llama-dyt.yaml", "dyt", "example.dyt"},
	} {
		data, err := os.ReadFile(bins[tc.plugin])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(binDir, tc.plugin), data, 0o755); err != nil {
			t.Fatal(err)
		}
		sp, err := specs.Load(exampleSpec(t, tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := newHost(t, Options{SpecDir: specDir, Dirs: []string{binDir}, Binaries: map[string]string{}})
		reg := ops.Builtins()
		if err := h.Load(sp.Plugins, reg); err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if d, ok := reg.Lookup(tc.op); !ok || d.Plugin != tc.plugin {
			t.Errorf("%s: op %s not served by plugin %s", tc.spec, tc.op, tc.plugin)
		}
	}
}

// TestEarlyDeadlineIsTheCallers: gRPC may report a deadline a moment
// before the caller's context notices it (the server's copy of the
// deadline fires first on a loaded machine). When the caller's deadline is
// the call's, that is the caller's cancellation: its error, and no
// restart of a plugin that did nothing wrong.
func TestEarlyDeadlineIsTheCallers(t *testing.T) {
	h, _ := newHost(t, Options{GRPCOnly: true})
	load(t, h, "misbehave")
	p := h.procs["misbehave"]
	pid := h.PID("misbehave")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // before the 30 s call timeout
	defer cancel()
	early := func(context.Context, *conn) error { return status.Error(codes.DeadlineExceeded, "deadline exceeded") }
	if err := p.invoke(ctx, "example.misbehave", "n", early); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
	if h.PID("misbehave") != pid {
		t.Error("the plugin was restarted")
	}
	// Without a caller's deadline the same error is the call timeout's.
	if err := p.invoke(context.Background(), "example.misbehave", "n", early); err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("error %v, want the call timeout's", err)
	}
}
