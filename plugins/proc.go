package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/plugins/internal/wire"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// proc is one plugin: its process (restarted when it fails), its op
// schemas and the shared memory it uses.
type proc struct {
	h    *Host
	name string
	path string
	sum  []byte // pinned sha256, or nil

	tail    tail
	writers []*lineWriter // raw stderr, synced stdout, synced stderr

	mu      sync.Mutex
	cur     *conn // nil when not running
	gen     int
	closed  bool
	schemas map[string]*opSchema // fixed at the first start
	order   []string

	wmu     sync.Mutex
	weights *shm.Segment
	wused   int
	wcache  map[weightKey]*pluginpb.Region

	smu     sync.Mutex
	free    []*shm.Segment // idle scratch segments
	nextSeg uint32
	sclosed bool
}

// conn is one running process of a plugin.
type conn struct {
	gen    int
	client *plugin.Client
	cmd    *exec.Cmd
	rpc    pluginpb.OpPluginClient
	ch     *hostChannel // nil: Execute over gRPC only
}

func newProc(h *Host, name, path string, sum []byte) *proc {
	p := &proc{h: h, name: name, path: path, sum: sum, wcache: map[weightKey]*pluginpb.Region{}, nextSeg: 1}
	for range 3 {
		p.writers = append(p.writers, &lineWriter{out: h.log, prefix: "plugin " + name + ": ", tail: &p.tail})
	}
	return p
}

func (p *proc) logf(format string, args ...any) {
	fmt.Fprintf(p.h.log, "plugin %s: weft: %s\n", p.name, fmt.Sprintf(format, args...))
}

// ready starts the plugin if it is not running.
func (p *proc) ready() error {
	_, err := p.conn()
	return err
}

// conn returns the running process, starting one if there is none.
func (p *proc) conn() (*conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	if p.cur != nil {
		return p.cur, nil
	}
	if err := p.startLocked(); err != nil {
		return nil, err
	}
	return p.cur, nil
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil || p.cur.cmd.Process == nil {
		return 0
	}
	return p.cur.cmd.Process.Pid
}

// startLocked starts a process and reads its schemas (p.mu held).
func (p *proc) startLocked() error {
	p.tail.reset()
	cmd := exec.Command(p.path)
	cmd.Env = pluginEnv(p.name)
	cmd.SysProcAttr = sysProcAttr()
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.PluginSets(nil),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     p.h.opt.StartTimeout,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: p.name, Level: hclog.Off, Output: io.Discard}),
		Stderr:           p.writers[0],
		SyncStdout:       p.writers[1],
		SyncStderr:       p.writers[2],
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(wire.MaxMessage), grpc.MaxCallSendMsgSize(wire.MaxMessage))},
	}
	if p.sum != nil {
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: p.sum, Hash: sha256.New()}
	}
	c := &conn{cmd: cmd}
	err := p.h.onSpawner(func() error {
		c.client = plugin.NewClient(cfg)
		cp, err := c.client.Client()
		if err != nil {
			return err
		}
		raw, err := cp.Dispense(wire.PluginName)
		if err != nil {
			return err
		}
		rpc, ok := raw.(pluginpb.OpPluginClient)
		if !ok {
			return fmt.Errorf("dispensed %T, not an OpPlugin client", raw)
		}
		c.rpc = rpc
		return nil
	})
	if err == nil {
		err = p.describe(c)
	}
	if err != nil {
		if c.client != nil {
			p.killConn(c)
		}
		return p.startError(err)
	}
	p.openChannel(c)
	p.gen++
	c.gen = p.gen
	p.cur = c
	return nil
}

// startError explains a failed start.
func (p *proc) startError(err error) error {
	if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
		actual := "unreadable"
		if sum, rerr := fileSHA256(p.path); rerr == nil {
			actual = hex.EncodeToString(sum)
		}
		return fmt.Errorf("refusing to start %s: its sha256 is %s, the spec pins %s", p.path, actual, hex.EncodeToString(p.sum))
	}
	msg := fmt.Sprintf("start %s: %v", p.path, err)
	if r := p.tail.reason(); r != "" {
		msg += " (it said: " + r + ")"
	}
	return errors.New(msg)
}

// describe asks a new process for its schemas: they define the ops at the
// first start and must not change at a restart.
func (p *proc) describe(c *conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.h.opt.CallTimeout)
	defer cancel()
	resp, err := c.rpc.Describe(ctx, &pluginpb.DescribeRequest{})
	if err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	if p.schemas != nil {
		if len(resp.GetOps()) != len(p.order) {
			return fmt.Errorf("describe: the plugin now serves %d ops, it served %d when loaded", len(resp.GetOps()), len(p.order))
		}
		for _, s := range resp.GetOps() {
			old, ok := p.schemas[s.GetName()]
			if !ok || !proto.Equal(old.pb, s) {
				return fmt.Errorf("describe: op %s changed since the plugin was loaded", s.GetName())
			}
		}
		return nil
	}
	if len(resp.GetOps()) == 0 {
		return fmt.Errorf("describe: the plugin serves no ops")
	}
	schemas := map[string]*opSchema{}
	var order []string
	for _, s := range resp.GetOps() {
		o, err := checkSchema(s)
		if err != nil {
			return fmt.Errorf("describe: %w", err)
		}
		if _, dup := schemas[o.pb.GetName()]; dup {
			return fmt.Errorf("describe: op %s listed twice", o.pb.GetName())
		}
		schemas[o.pb.GetName()] = o
		order = append(order, o.pb.GetName())
	}
	p.schemas, p.order = schemas, order
	return nil
}

func pluginEnv(name string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, wire.EnvParentPID+"=") && !strings.HasPrefix(kv, wire.EnvName+"=") {
			env = append(env, kv)
		}
	}
	return append(env, wire.EnvParentPID+"="+strconv.Itoa(os.Getpid()), wire.EnvName+"="+name)
}

// killConn ends a process and its process group, and waits until its
// output has been logged.
func (p *proc) killConn(c *conn) {
	if c.cmd.Process != nil {
		killGroup(c.cmd.Process.Pid)
	}
	c.client.Kill()
	if c.ch != nil {
		if err := c.ch.close(); err != nil {
			p.logf("%v", err)
		}
	}
	for _, w := range p.writers {
		w.flush()
	}
}

// restart replaces the process of generation gen, unless that was done
// already, and reports whether the new one runs.
func (p *proc) restart(gen int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	if p.cur != nil && p.cur.gen != gen {
		return nil // restarted by another call
	}
	if p.cur != nil {
		p.killConn(p.cur)
		p.cur = nil
	}
	if err := p.startLocked(); err != nil {
		p.logf("restart failed: %v", err)
		return err
	}
	p.logf("restarted (pid %d)", p.cur.cmd.Process.Pid)
	return nil
}

// exited waits up to d for the process of c to exit.
func exited(c *conn, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if c.client.Exited() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// register adds the plugin's ops to reg.
func (p *proc) register(reg *ops.Registry) error {
	p.mu.Lock()
	order, schemas := p.order, p.schemas
	p.mu.Unlock()
	for _, name := range order {
		if d, ok := reg.Lookup(name); ok {
			if d.Plugin == p.name {
				continue
			}
			owner := "a built-in op"
			if d.Plugin != "" {
				owner = "an op of plugin " + strconv.Quote(d.Plugin)
			}
			return fmt.Errorf("op %s clashes with %s", name, owner)
		}
		if err := reg.Register(p.def(schemas[name])); err != nil {
			return err
		}
	}
	return nil
}

// close kills the process and frees the shared memory.
func (p *proc) close() error {
	p.mu.Lock()
	p.closed = true
	if p.cur != nil {
		p.killConn(p.cur)
		p.cur = nil
	}
	p.mu.Unlock()
	var errs []error
	p.wmu.Lock()
	if p.weights != nil {
		errs = append(errs, p.weights.Close())
		p.weights = nil
	}
	p.wmu.Unlock()
	p.smu.Lock()
	p.sclosed = true
	for _, s := range p.free {
		errs = append(errs, s.Close())
	}
	p.free = nil
	p.smu.Unlock()
	return errors.Join(errs...)
}
