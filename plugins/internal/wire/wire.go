// Package wire holds what the plugin host and the plugin SDK share: the
// go-plugin handshake, the gRPC plugin glue and conversions between weft's
// types and the protocol messages.
package wire

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/hashicorp/go-plugin"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
	"google.golang.org/grpc"
)

// ProtocolVersion is the go-plugin protocol version of plugin.proto.
const ProtocolVersion = 1

// PluginName is the name the OpPlugin service is dispensed under.
const PluginName = "ops"

// MaxMessage bounds gRPC messages both ways. Tensors above the inline
// limit travel through shared memory, so only hosts without shared memory
// send messages this large.
const MaxMessage = 1 << 30

// Environment variables the host sets for a plugin process.
const (
	// EnvParentPID is the engine's process id; the plugin exits when its
	// parent is no longer that process.
	EnvParentPID = "WEFT_PLUGIN_PARENT_PID"
	// EnvName is the plugin's name in the spec.
	EnvName = "WEFT_PLUGIN_NAME"
)

// Handshake is the go-plugin handshake. The cookie only tells a user who
// runs a plugin by hand what it is; it is not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "WEFT_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "weft-op-plugin-9c1f3e",
}

// GRPCPlugin is the go-plugin glue for the OpPlugin service: the plugin
// side sets Impl, the host side leaves it nil.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pluginpb.OpPluginServer
}

// GRPCServer registers the service.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return fmt.Errorf("wire: no OpPlugin server")
	}
	pluginpb.RegisterOpPluginServer(s, p.Impl)
	return nil
}

// GRPCClient returns a pluginpb.OpPluginClient.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewOpPluginClient(c), nil
}

// PluginSets returns the VersionedPlugins map for impl (nil on the host).
func PluginSets(impl pluginpb.OpPluginServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Impl: impl}},
	}
}

// AttrToProto converts an attribute value in ops.Attrs form.
func AttrToProto(v any) (*pluginpb.AttrValue, error) {
	switch x := v.(type) {
	case int64:
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_I{I: x}}, nil
	case int:
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_I{I: int64(x)}}, nil
	case float64:
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_F{F: x}}, nil
	case string:
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_S{S: x}}, nil
	case bool:
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_B{B: x}}, nil
	case []int64:
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_Ints{Ints: &pluginpb.IntList{Values: x}}}, nil
	case []int:
		l := make([]int64, len(x))
		for i, e := range x {
			l[i] = int64(e)
		}
		return &pluginpb.AttrValue{Value: &pluginpb.AttrValue_Ints{Ints: &pluginpb.IntList{Values: l}}}, nil
	}
	return nil, fmt.Errorf("attribute value %v of type %T", v, v)
}

// AttrFromProto converts an attribute value to its ops.Attrs form.
func AttrFromProto(v *pluginpb.AttrValue) (any, error) {
	switch x := v.GetValue().(type) {
	case *pluginpb.AttrValue_I:
		return x.I, nil
	case *pluginpb.AttrValue_F:
		return x.F, nil
	case *pluginpb.AttrValue_S:
		return x.S, nil
	case *pluginpb.AttrValue_B:
		return x.B, nil
	case *pluginpb.AttrValue_Ints:
		return append([]int64{}, x.Ints.GetValues()...), nil
	}
	return nil, fmt.Errorf("empty attribute value")
}

// AttrsToProto converts attributes.
func AttrsToProto(a ops.Attrs) (map[string]*pluginpb.AttrValue, error) {
	out := make(map[string]*pluginpb.AttrValue, len(a))
	for k, v := range a {
		p, err := AttrToProto(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

// AttrsFromProto converts attributes.
func AttrsFromProto(m map[string]*pluginpb.AttrValue) (ops.Attrs, error) {
	out := make(ops.Attrs, len(m))
	for k, v := range m {
		a, err := AttrFromProto(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = a
	}
	return out, nil
}

var attrTypes = map[ops.AttrType]pluginpb.AttrType{
	ops.AttrInt:    pluginpb.AttrType_ATTR_INT,
	ops.AttrFloat:  pluginpb.AttrType_ATTR_FLOAT,
	ops.AttrString: pluginpb.AttrType_ATTR_STRING,
	ops.AttrBool:   pluginpb.AttrType_ATTR_BOOL,
	ops.AttrInts:   pluginpb.AttrType_ATTR_INTS,
}

// AttrDefToProto converts an attribute declaration.
func AttrDefToProto(d ops.AttrDef) (*pluginpb.AttrDef, error) {
	t, ok := attrTypes[d.Type]
	if !ok {
		return nil, fmt.Errorf("attribute %s: unknown type %d", d.Name, d.Type)
	}
	p := &pluginpb.AttrDef{Name: d.Name, Type: t, Required: d.Required, Enum: d.Enum, Doc: d.Doc}
	if d.Default != nil {
		v, err := ops.Coerce(d, d.Default)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: default: %w", d.Name, err)
		}
		if p.Default, err = AttrToProto(v); err != nil {
			return nil, fmt.Errorf("attribute %s: default: %w", d.Name, err)
		}
	}
	return p, nil
}

// AttrDefFromProto converts an attribute declaration and checks that its
// default has the declared type.
func AttrDefFromProto(p *pluginpb.AttrDef) (ops.AttrDef, error) {
	d := ops.AttrDef{Name: p.GetName(), Required: p.GetRequired(), Enum: p.GetEnum(), Doc: p.GetDoc()}
	found := false
	for t, pt := range attrTypes {
		if pt == p.GetType() {
			d.Type, found = t, true
		}
	}
	if !found {
		return d, fmt.Errorf("attribute %s: unknown type %v", d.Name, p.GetType())
	}
	if d.Name == "" {
		return d, fmt.Errorf("attribute with no name")
	}
	if p.Default != nil {
		v, err := AttrFromProto(p.Default)
		if err != nil {
			return d, fmt.Errorf("attribute %s: default: %w", d.Name, err)
		}
		if d.Default, err = ops.Coerce(d, v); err != nil {
			return d, fmt.Errorf("attribute %s: default: %w", d.Name, err)
		}
	}
	return d, nil
}

// TypeToProto converts a graph value type (nil: an absent input).
func TypeToProto(t *ops.Type) *pluginpb.TensorType {
	if t == nil {
		return &pluginpb.TensorType{Absent: true}
	}
	p := &pluginpb.TensorType{Dtype: uint32(t.DType), Dims: make([]*pluginpb.Dim, len(t.Shape))}
	for i, d := range t.Shape {
		p.Dims[i] = &pluginpb.Dim{Size: int64(d.N), Sym: d.Sym}
	}
	return p
}

// TypeFromProto converts a graph value type (nil for an absent input).
func TypeFromProto(p *pluginpb.TensorType) (*ops.Type, error) {
	if p.GetAbsent() {
		return nil, nil
	}
	t := &ops.Type{DType: tensor.DType(p.GetDtype()), Shape: make(ops.Shape, len(p.GetDims()))}
	if !t.DType.Known() {
		return nil, fmt.Errorf("unknown dtype %d", p.GetDtype())
	}
	for i, d := range p.GetDims() {
		if d.GetSym() == "" && (d.GetSize() < 0 || d.GetSize() > math.MaxInt32) {
			return nil, fmt.Errorf("dimension %d: size %d", i, d.GetSize())
		}
		t.Shape[i] = ops.Dim{N: int(d.GetSize()), Sym: d.GetSym()}
	}
	return t, nil
}

// SortedKeys returns a map's keys in order (for stable messages).
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
