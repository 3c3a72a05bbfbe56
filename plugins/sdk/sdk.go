// Package sdk is what a weft op plugin is written with. A plugin is a
// small program whose main calls Serve with its ops:
//
//	func main() { sdk.Serve(myOp{}) }
//
// Each op is a Go value with a Schema (inputs, outputs, attributes, a
// declarative shape rule) and an Execute method. The engine starts the
// program through hashicorp/go-plugin, asks for the schemas, registers the
// ops beside its built-ins and calls Execute once per graph node and
// scheduler step, passing large tensors through shared memory.
//
// Rules for plugin code:
//   - Never write to standard output: go-plugin uses it for its handshake.
//     Serve points file descriptor 1 at standard error, and os.Stdout at a
//     pipe that reaches the engine's log, so stray prints are harmless, but
//     log to os.Stderr (or the log package): the engine prefixes each line
//     with the plugin's name.
//   - A panic kills the plugin process. The engine reports the failed call
//     with the panic message and starts the plugin again.
//   - The plugin exits by itself when the engine dies, even by SIGKILL.
package sdk

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/plugins/internal/wire"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
	"google.golang.org/grpc"
)

// Serve serves ops to the engine that started this program and returns
// when the engine closes the connection. Run by hand, with --describe, it
// prints the ops' schemas. It exits the program with status 1 when a
// schema is invalid or the program was not started by weft.
func Serve(ops ...Op) {
	srv, err := newServer(ops)
	if err != nil {
		fmt.Fprintf(os.Stderr, "weft plugin %s: %v\n", os.Args[0], err)
		os.Exit(1)
	}
	if os.Getenv(wire.Handshake.MagicCookieKey) != wire.Handshake.MagicCookieValue {
		if len(os.Args) > 1 && (os.Args[1] == "--describe" || os.Args[1] == "-describe") {
			srv.printSchemas(os.Stdout)
			return
		}
		fmt.Fprintf(os.Stderr, "%s is a weft op plugin: name it in a spec's plugins: section and run weft,\nor run it with --describe to list its ops.\n", os.Args[0])
		os.Exit(1)
	}
	watchParent()
	if err := redirectStdout(); err != nil {
		fmt.Fprintf(os.Stderr, "weft plugin: %v\n", err)
		os.Exit(1)
	}
	defer srv.close()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.PluginSets(srv),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(wire.MaxMessage), grpc.MaxSendMsgSize(wire.MaxMessage))
			return grpc.NewServer(opts...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: os.Stderr}),
	})
}

// server implements the OpPlugin service.
type server struct {
	pluginpb.UnimplementedOpPluginServer
	ops     map[string]Op
	names   []string
	schemas []*pluginpb.OpSchema
	byName  map[string]*pluginpb.OpSchema
	// attrDefs holds each op's attribute declarations (defaults coerced).
	attrDefs map[string][]ops.AttrDef

	mu     sync.Mutex
	mapper *shm.Mapper
}

func newServer(list []Op) (*server, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("no ops to serve")
	}
	s := &server{ops: map[string]Op{}, byName: map[string]*pluginpb.OpSchema{}, attrDefs: map[string][]ops.AttrDef{}, mapper: shm.NewMapper()}
	for _, op := range list {
		p, err := describe(op)
		if err != nil {
			return nil, err
		}
		if _, dup := s.ops[p.Name]; dup {
			return nil, fmt.Errorf("op %s served twice", p.Name)
		}
		s.ops[p.Name] = op
		s.names = append(s.names, p.Name)
		s.attrDefs[p.Name] = op.Schema().Attrs
		s.byName[p.Name] = p
		s.schemas = append(s.schemas, p)
	}
	return s, nil
}

func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mapper.Close()
}

// outputsKey carries the output regions of a request to NewOutput.
type outputsKey struct{}

type outputs struct {
	bufs [][]byte // the region offered for each output (nil: inline)
}

// NewOutput returns an f32 tensor of the given shape for output i of the
// running call. When the engine offered shared memory of exactly that
// size for the output, the tensor lives there and returning it costs no
// copy; otherwise it is an ordinary allocation. ctx is Execute's.
func NewOutput(ctx context.Context, i int, shape ...int) *tensor.Tensor {
	n := tensor.NumElems(shape)
	if o, ok := ctx.Value(outputsKey{}).(*outputs); ok && i >= 0 && i < len(o.bufs) && len(o.bufs[i]) == 4*n && n > 0 {
		return &tensor.Tensor{DType: tensor.F32, Shape: append([]int{}, shape...), Data: o.bufs[i]}
	}
	return tensor.NewF32("", shape...)
}
