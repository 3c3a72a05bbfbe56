package sdk

import (
	"context"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/plugins/internal/wire"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Describe lists the ops.
func (s *server) Describe(context.Context, *pluginpb.DescribeRequest) (*pluginpb.DescribeResponse, error) {
	return &pluginpb.DescribeResponse{Ops: s.schemas}, nil
}

// Shape answers for ops that implement Shaper.
func (s *server) Shape(_ context.Context, req *pluginpb.ShapeRequest) (*pluginpb.ShapeResponse, error) {
	op, ok := s.ops[req.GetOp()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no op %q", req.GetOp())
	}
	sh, ok := op.(Shaper)
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "op %s has declarative shape rules", req.GetOp())
	}
	in := make([]*ops.Type, len(req.GetInputs()))
	for i, t := range req.GetInputs() {
		var err error
		if in[i], err = wire.TypeFromProto(t); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "input %d: %v", i, err)
		}
	}
	attrs, err := s.attrs(req.GetOp(), req.GetAttrs())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	outs, err := sh.Shape(in, attrs)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	resp := &pluginpb.ShapeResponse{}
	for i := range outs {
		resp.Outputs = append(resp.Outputs, wire.TypeToProto(&outs[i]))
	}
	return resp, nil
}

// attrs converts a request's attributes and applies the schema's defaults.
func (s *server) attrs(op string, m map[string]*pluginpb.AttrValue) (ops.Attrs, error) {
	raw, err := wire.AttrsFromProto(m)
	if err != nil {
		return nil, err
	}
	out := ops.Attrs{}
	for _, d := range s.attrDefs[op] {
		v, ok := raw[d.Name]
		if !ok {
			if d.Required {
				return nil, fmt.Errorf("missing attribute %s", d.Name)
			}
			if d.Default != nil {
				if out[d.Name], err = ops.Coerce(d, d.Default); err != nil {
					return nil, err
				}
			}
			continue
		}
		if out[d.Name], err = ops.Coerce(d, v); err != nil {
			return nil, err
		}
	}
	for k := range raw {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("unknown attribute %s", k)
		}
	}
	return out, nil
}

// request is one Execute call's view of shared memory.
type request struct {
	segs     map[uint32][]byte
	writable map[uint32]bool
}

func (s *server) mapSegments(segs []*pluginpb.Segment) (*request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &request{segs: map[uint32][]byte{}, writable: map[uint32]bool{}}
	for _, sg := range segs {
		if sg.GetSize() > math.MaxInt {
			return nil, fmt.Errorf("segment %d: size %d", sg.GetId(), sg.GetSize())
		}
		b, err := s.mapper.Map(sg.GetPath(), int(sg.GetSize()), sg.GetReadOnly())
		if err != nil {
			return nil, err
		}
		r.segs[sg.GetId()] = b[:sg.GetSize()]
		r.writable[sg.GetId()] = !sg.GetReadOnly()
	}
	return r, nil
}

func (r *request) region(g *pluginpb.Region, writable bool) ([]byte, error) {
	b, ok := r.segs[g.GetSegment()]
	if !ok {
		return nil, fmt.Errorf("region in unknown segment %d", g.GetSegment())
	}
	if writable && !r.writable[g.GetSegment()] {
		return nil, fmt.Errorf("output region in read-only segment %d", g.GetSegment())
	}
	off, n := g.GetOffset(), g.GetLength()
	if off > uint64(len(b)) || n > uint64(len(b))-off {
		return nil, fmt.Errorf("region [%d, +%d) outside segment %d of %d bytes", off, n, g.GetSegment(), len(b))
	}
	return b[off : off+n : off+n], nil
}

// locate finds data inside a writable segment of the request.
func (r *request) locate(data []byte) (*pluginpb.Region, bool) {
	if len(data) == 0 {
		return nil, false
	}
	p := uintptr(unsafe.Pointer(&data[0]))
	for id, b := range r.segs {
		if !r.writable[id] || len(b) == 0 {
			continue
		}
		base := uintptr(unsafe.Pointer(&b[0]))
		if p >= base && p+uintptr(len(data)) <= base+uintptr(len(b)) {
			return &pluginpb.Region{Segment: id, Offset: uint64(p - base), Length: uint64(len(data))}, true
		}
	}
	return nil, false
}

func tensorFromProto(r *request, p *pluginpb.Tensor) (*tensor.Tensor, error) {
	if p.GetAbsent() {
		return nil, nil
	}
	t := &tensor.Tensor{DType: tensor.DType(p.GetDtype()), Shape: make([]int, len(p.GetShape()))}
	if !t.DType.Known() {
		return nil, fmt.Errorf("unknown dtype %d", p.GetDtype())
	}
	n := 1
	for i, d := range p.GetShape() {
		if d < 0 || d > math.MaxInt32 || n > 0 && int(d) > math.MaxInt/8/n {
			return nil, fmt.Errorf("shape %v", p.GetShape())
		}
		t.Shape[i] = int(d)
		n *= int(d)
	}
	size, err := t.DType.RowBytes(n)
	if err != nil {
		return nil, err
	}
	switch d := p.GetData().(type) {
	case *pluginpb.Tensor_Inline:
		t.Data = d.Inline
	case *pluginpb.Tensor_Region:
		if t.Data, err = r.region(d.Region, false); err != nil {
			return nil, err
		}
	}
	if len(t.Data) != size {
		return nil, fmt.Errorf("%s%v needs %d bytes, got %d", t.DType, t.Shape, size, len(t.Data))
	}
	return t, nil
}

// Execute runs one op on one batch.
func (s *server) Execute(ctx context.Context, req *pluginpb.ExecuteRequest) (*pluginpb.ExecuteResponse, error) {
	op, ok := s.ops[req.GetOp()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no op %q", req.GetOp())
	}
	schema := s.byName[req.GetOp()]
	r, err := s.mapSegments(req.GetSegments())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if len(req.GetInputs()) != len(schema.GetInputs()) {
		return nil, status.Errorf(codes.InvalidArgument, "%d inputs, want %d", len(req.GetInputs()), len(schema.GetInputs()))
	}
	in := make([]*tensor.Tensor, len(req.GetInputs()))
	for i, p := range req.GetInputs() {
		if in[i], err = tensorFromProto(r, p); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "input %s: %v", schema.GetInputs()[i].GetName(), err)
		}
		if in[i] == nil && !schema.GetInputs()[i].GetOptional() {
			return nil, status.Errorf(codes.InvalidArgument, "input %s is missing", schema.GetInputs()[i].GetName())
		}
	}
	attrs, err := s.attrs(req.GetOp(), req.GetAttrs())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	o := &outputs{bufs: make([][]byte, len(req.GetOutputs()))}
	for i, g := range req.GetOutputs() {
		if g.GetLength() == 0 {
			continue
		}
		if o.bufs[i], err = r.region(g, true); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "output %d: %v", i, err)
		}
	}
	outs, err := op.Execute(context.WithValue(ctx, outputsKey{}, o), in, attrs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Error(codes.Aborted, err.Error())
	}
	if err := ctx.Err(); err != nil {
		// The engine gave up: leave its memory alone.
		return nil, status.FromContextError(err).Err()
	}
	if len(outs) != len(schema.GetOutputs()) {
		return nil, status.Errorf(codes.Aborted, "op returned %d outputs, its schema declares %d", len(outs), len(schema.GetOutputs()))
	}
	resp := &pluginpb.ExecuteResponse{Outputs: make([]*pluginpb.Tensor, len(outs))}
	for i, t := range outs {
		if t == nil {
			return nil, status.Errorf(codes.Aborted, "output %s is nil", schema.GetOutputs()[i].GetName())
		}
		pt := &pluginpb.Tensor{Dtype: uint32(t.DType)}
		for _, d := range t.Shape {
			pt.Shape = append(pt.Shape, int64(d))
		}
		var buf []byte
		if i < len(o.bufs) {
			buf = o.bufs[i]
		}
		switch {
		case len(t.Data) == 0:
		case buf != nil && len(t.Data) == len(buf) && &t.Data[0] == &buf[0]:
			pt.Data = &pluginpb.Tensor_Region{Region: req.GetOutputs()[i]}
		case len(buf) > 0 && len(t.Data) <= len(buf):
			if reg, ok := r.locate(t.Data); ok {
				// Already in shared memory (an input passed through).
				pt.Data = &pluginpb.Tensor_Region{Region: reg}
				break
			}
			shm.Copy(buf, t.Data)
			g := req.GetOutputs()[i]
			pt.Data = &pluginpb.Tensor_Region{Region: &pluginpb.Region{Segment: g.GetSegment(), Offset: g.GetOffset(), Length: uint64(len(t.Data))}}
		case len(buf) == 0 && len(t.Data) <= inlineMax:
			pt.Data = &pluginpb.Tensor_Inline{Inline: t.Data}
		default:
			// It does not fit where the engine expected it: send the shape
			// alone, the engine reports the mismatch.
		}
		resp.Outputs[i] = pt
	}
	return resp, nil
}

// inlineMax bounds an output sent inline when the engine offered no
// shared memory for it (it expected a small one).
const inlineMax = 64 << 20

func (s *server) printSchemas(w io.Writer) {
	for _, name := range s.names {
		fmt.Fprint(w, formatSchema(s.ops[name]))
	}
}
