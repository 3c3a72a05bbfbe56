// Package plugins runs weft ops in separate processes: op plugins, started
// through hashicorp/go-plugin and spoken to over gRPC (plugin.proto in
// proto/), with large tensors passed through shared memory.
//
// A spec names the plugins it uses:
//
//	plugins:
//	  - name: rmsnorm                      # looked up in the plugin dirs
//	  - name: dyt
//	    path: ../../bin/plugins/dyt        # relative to the spec file, inside a plugin dir
//	    sha256: 9f86d0...                  # optional pin
//
// Host.Load starts each plugin, asks for its op schemas and registers the
// ops into an ops.Registry, where the graph builder, the passes, the
// scheduler and the exporters treat them like built-ins. Write plugins
// with the sdk package; docs/plugins.md walks through it.
package plugins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/specs"
)

// EnvPath names the environment variable holding plugin directories
// (separated like PATH).
const EnvPath = "WEFT_PLUGIN_PATH"

// Options configures a Host.
type Options struct {
	// Dirs are searched, in order, for a plugin the spec names without a
	// path: the binary is Dirs[i]/<name>.
	Dirs []string
	// SpecDir is the directory relative plugin paths of a spec are
	// resolved against (the spec file's directory; "" for the working
	// directory).
	SpecDir string
	// TrustSpecPaths lets a spec start a binary it names by path outside
	// Dirs. Without it a spec's path: must lead into one of Dirs: a spec
	// is data a user may have downloaded, and opening it must not run a
	// program the user did not choose (--trust-spec-plugins).
	TrustSpecPaths bool
	// Binaries maps plugin names to binaries, overriding the spec and
	// Dirs (for tests and tools).
	Binaries map[string]string
	// Log receives each plugin's standard error, every line prefixed with
	// "plugin <name>: ", and the host's own notices. Nil: os.Stderr.
	Log io.Writer
	// CallTimeout bounds one Execute or Shape call; a plugin that does not
	// answer in time is killed and restarted. 0: 30s.
	CallTimeout time.Duration
	// StartTimeout bounds a plugin's start-up handshake. 0: 20s.
	StartTimeout time.Duration
	// GRPCOnly sends every call through the Execute RPC instead of the
	// faster shared-memory channel (Linux) that plugins built with the sdk
	// package offer.
	GRPCOnly bool
	// InlineMax is the largest tensor, in bytes, sent inside a gRPC
	// message; larger ones go through shared memory. 0: 4096; negative:
	// every tensor through shared memory.
	InlineMax int
}

// Host starts and supervises plugins and serves their ops. It implements
// model.PluginLoader. Its methods are safe for concurrent use.
type Host struct {
	opt     Options
	log     io.Writer
	shmDirs []string
	noShm   bool

	startOnce sync.Once
	spawnMu   sync.RWMutex // held for reading while a start is under way
	spawn     chan func()  // nil before the first plugin and after Close

	mu     sync.Mutex
	procs  map[string]*proc
	closed bool
}

// NewHost returns a host. It does nothing until Load names a plugin.
func NewHost(opt Options) *Host {
	if opt.Log == nil {
		opt.Log = os.Stderr
	}
	if opt.CallTimeout <= 0 {
		opt.CallTimeout = 30 * time.Second
	}
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = 20 * time.Second
	}
	if opt.InlineMax == 0 {
		opt.InlineMax = 4096
	}
	return &Host{opt: opt, log: &lockedWriter{w: opt.Log}, shmDirs: shm.Dirs(), procs: map[string]*proc{}}
}

// start readies the host for its first plugin: it removes shared memory
// left by engines that died, and starts the spawner thread.
func (h *Host) start() {
	h.startOnce.Do(func() {
		shm.Sweep(h.shmDirs)
		h.spawnMu.Lock()
		h.spawn = make(chan func())
		go h.spawner(h.spawn)
		h.spawnMu.Unlock()
	})
}

// spawner starts plugin processes from one OS thread that lives as long as
// the host: a plugin's parent-death signal fires when the thread that
// forked it exits, and Go may retire other threads at any time.
func (h *Host) spawner(jobs chan func()) {
	runtime.LockOSThread()
	// Never unlocked: when the host closes, this thread exits with the
	// goroutine and takes any plugin it started with it.
	for f := range jobs {
		f()
	}
}

// SetSpecDir sets Options.SpecDir; call it before Load.
func (h *Host) SetSpecDir(dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opt.SpecDir = dir
}

// Load starts the plugins decls name (those not already running) and
// registers their ops into reg.
func (h *Host) Load(decls []*specs.PluginDecl, reg *ops.Registry) error {
	for _, d := range decls {
		p, err := h.proc(d)
		if err != nil {
			return fmt.Errorf("%s: plugin %q: %w", d.Pos, d.Name, err)
		}
		if err := p.register(reg); err != nil {
			return fmt.Errorf("%s: plugin %q: %w", d.Pos, d.Name, err)
		}
	}
	return nil
}

// proc returns the running plugin d names, starting it if needed.
func (h *Host) proc(d *specs.PluginDecl) (*proc, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errClosed
	}
	h.start()
	path, err := h.resolve(d)
	if err != nil {
		h.mu.Unlock()
		return nil, err
	}
	var sum []byte
	if d.SHA256 != "" {
		if sum, err = hex.DecodeString(d.SHA256); err != nil || len(sum) != sha256.Size {
			h.mu.Unlock()
			return nil, fmt.Errorf("sha256 %q: want 64 hex digits", d.SHA256)
		}
	}
	if p, ok := h.procs[d.Name]; ok {
		h.mu.Unlock()
		if p.path != path {
			return nil, fmt.Errorf("already running from %s, not %s", p.path, path)
		}
		if sum != nil && !bytes.Equal(sum, p.sum) {
			actual, err := fileSHA256(path)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(actual, sum) {
				return nil, fmt.Errorf("refusing to use %s: its sha256 is %x, the spec pins %x", path, actual, sum)
			}
		}
		return p, p.ready()
	}
	p := newProc(h, d.Name, path, sum)
	h.procs[d.Name] = p
	h.mu.Unlock()
	if err := p.ready(); err != nil {
		h.mu.Lock()
		delete(h.procs, d.Name)
		h.mu.Unlock()
		p.close()
		return nil, err
	}
	return p, nil
}

func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return h.Sum(nil), nil
}

// resolve finds the binary of d (h.mu held).
func (h *Host) resolve(d *specs.PluginDecl) (string, error) {
	if p, ok := h.opt.Binaries[d.Name]; ok {
		return checkBinary(p)
	}
	if d.Path != "" {
		p := d.Path
		base := h.opt.SpecDir
		if !filepath.IsAbs(p) {
			if base == "" {
				base = "."
			}
			p = filepath.Join(base, p)
		}
		bin, err := checkBinary(p)
		if err != nil {
			return "", fmt.Errorf("path %s (relative to %s): %w", d.Path, base, err)
		}
		if !h.opt.TrustSpecPaths && !inDirs(bin, h.opt.Dirs) {
			where := "no plugin directory was named"
			if len(h.opt.Dirs) > 0 {
				where = "outside the plugin directories " + strings.Join(h.opt.Dirs, ", ")
			}
			return "", fmt.Errorf("refusing to start %s: %s; weft starts a spec's plugin only from a directory you name (--plugin-dir, $%s) or with --trust-spec-plugins", bin, where, EnvPath)
		}
		return bin, nil
	}
	if d.Name == "" || strings.ContainsAny(d.Name, `/\`) || d.Name == "." || d.Name == ".." {
		return "", fmt.Errorf("a plugin name without path: must be a plain file name")
	}
	if len(h.opt.Dirs) == 0 {
		return "", fmt.Errorf("no plugin directories to look in: pass --plugin-dir, set %s or give path: in the spec", EnvPath)
	}
	for _, dir := range h.opt.Dirs {
		for _, n := range binaryNames(d.Name) {
			if bin, err := checkBinary(filepath.Join(dir, n)); err == nil {
				return bin, nil
			}
		}
	}
	return "", fmt.Errorf("no binary %q in %s", d.Name, strings.Join(h.opt.Dirs, ", "))
}

// inDirs reports whether the file bin lies inside one of dirs, after
// resolving symbolic links on both sides (a link in a trusted directory
// to a file elsewhere does not count).
func inDirs(bin string, dirs []string) bool {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			continue
		}
		rel, err := filepath.Rel(abs, real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func binaryNames(name string) []string {
	if runtime.GOOS == "windows" {
		return []string{name + ".exe", name}
	}
	return []string{name}
}

// checkBinary returns the absolute path of an executable regular file.
func checkBinary(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist (built plugins land in bin/plugins with `make plugins`)", abs)
		}
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", abs)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable", abs)
	}
	return abs, nil
}

// PID returns the process id of the named plugin's running process, or 0.
func (h *Host) PID(name string) int {
	h.mu.Lock()
	p, ok := h.procs[name]
	h.mu.Unlock()
	if !ok {
		return 0
	}
	return p.pid()
}

// Close kills every plugin's process group and removes the shared memory.
// Later calls of the plugins' ops fail.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	procs := h.procs
	h.procs = map[string]*proc{}
	h.mu.Unlock()
	var errs []error
	for _, p := range procs {
		errs = append(errs, p.close())
	}
	h.startOnce.Do(func() {}) // never start after Close
	h.spawnMu.Lock()
	if h.spawn != nil {
		close(h.spawn)
		h.spawn = nil
	}
	h.spawnMu.Unlock()
	return errors.Join(errs...)
}

// onSpawner runs f on the spawner thread and returns its error.
func (h *Host) onSpawner(f func() error) error {
	h.spawnMu.RLock()
	defer h.spawnMu.RUnlock()
	if h.spawn == nil {
		return errClosed
	}
	done := make(chan error, 1)
	h.spawn <- func() { done <- f() }
	return <-done
}

var errClosed = errors.New("plugin host is closed")
