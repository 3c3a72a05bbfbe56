package plugins

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"
	"unsafe"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/plugins/internal/wire"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// def builds the registry entry of a plugin op.
func (p *proc) def(s *opSchema) *ops.Def {
	return &ops.Def{
		Name:    s.pb.GetName(),
		Doc:     s.pb.GetDoc(),
		Inputs:  s.inputs,
		Outputs: s.outs,
		Attrs:   s.attrs,
		Plugin:  p.name,
		RowWise: s.pb.GetRowWise(),
		Shape:   func(in []*ops.Type, a ops.Attrs) ([]ops.Type, error) { return p.shape(s, in, a) },
		Host:    func(c *ops.HostCall) error { return p.execute(s, c) },
	}
}

// shape infers output types: the declared input checks, then the
// declarative rules or the plugin's Shape RPC.
func (p *proc) shape(s *opSchema, in []*ops.Type, a ops.Attrs) ([]ops.Type, error) {
	if err := s.checkInputs(in, a); err != nil {
		return nil, err
	}
	var outs []ops.Type
	if !s.pb.GetDynamicShape() {
		var err error
		if outs, err = s.declaredShape(in, a); err != nil {
			return nil, err
		}
	} else {
		req := &pluginpb.ShapeRequest{Op: s.pb.GetName()}
		for _, t := range in {
			req.Inputs = append(req.Inputs, wire.TypeToProto(t))
		}
		var err error
		if req.Attrs, err = wire.AttrsToProto(a); err != nil {
			return nil, err
		}
		var resp *pluginpb.ShapeResponse
		err = p.invoke(context.Background(), s.pb.GetName(), "", func(ctx context.Context, c *conn) error {
			var err error
			resp, err = c.rpc.Shape(ctx, req)
			return err
		})
		if err != nil {
			return nil, err
		}
		for i, pt := range resp.GetOutputs() {
			t, err := wire.TypeFromProto(pt)
			if err != nil || t == nil {
				return nil, fmt.Errorf("plugin %q: shape of %s: output %d: bad type (%v)", p.name, s.pb.GetName(), i, err)
			}
			outs = append(outs, *t)
		}
	}
	if err := checkOutputTypes(s, outs); err != nil {
		return nil, fmt.Errorf("plugin %q: %w", p.name, err)
	}
	return outs, nil
}

// invoke makes one RPC to the running process under the call timeout and
// turns failures into errors that name the plugin, the op and the node.
// When the process died or did not answer in time it is restarted once.
func (p *proc) invoke(ctx context.Context, op, node string, f func(ctx context.Context, c *conn) error) error {
	where := fmt.Sprintf("plugin %q: op %s", p.name, op)
	if node != "" {
		where += fmt.Sprintf(" (node %q)", node)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	c, err := p.conn()
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	cctx, cancel := context.WithTimeout(ctx, p.h.opt.CallTimeout)
	defer cancel()
	err = f(cctx, c)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil { // the caller gave up
		return fmt.Errorf("%s: %w", where, ctx.Err())
	}
	st, _ := status.FromError(err)
	if st.Code() == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
		// When the caller's deadline is the call's, a deadline error is the
		// caller's even if its own timer has not fired yet: gRPC can report
		// the deadline (the server's copy of it, say) a moment before ctx
		// does on a loaded machine. That is a cancellation, not a plugin
		// that failed to answer, so nothing is restarted.
		if d, ok := ctx.Deadline(); ok {
			if cd, _ := cctx.Deadline(); !cd.Before(d) {
				return fmt.Errorf("%s: %w", where, context.DeadlineExceeded)
			}
		}
	}
	switch {
	case st.Code() == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		msg := fmt.Sprintf("%s: no answer within %v", where, p.h.opt.CallTimeout)
		return p.failed(c, msg)
	case st.Code() == codes.Unavailable || st.Code() == codes.Canceled || c.client.Exited():
		msg := fmt.Sprintf("%s: the plugin crashed", where)
		if exited(c, 2*time.Second) {
			if r := p.tail.reason(); r != "" {
				msg += ": " + r
			}
			if ps := c.cmd.ProcessState; ps != nil {
				msg += " (" + ps.String() + ")"
			}
		} else {
			msg += fmt.Sprintf(" (connection lost: %s)", st.Message())
		}
		return p.failed(c, msg)
	}
	return fmt.Errorf("%s: %s", where, st.Message())
}

// failed restarts the plugin after a crash or a timeout and returns the
// call's error.
func (p *proc) failed(c *conn, msg string) error {
	p.logf("%s", msg)
	if err := p.restart(c.gen); err != nil {
		return fmt.Errorf("%s; restarting it failed: %w", msg, err)
	}
	return errors.New(msg + "; restarted it")
}

// weightKey identifies a weight tensor by its memory, plus a sample of its
// contents in case that memory was reused.
type weightKey struct {
	ptr   uintptr
	n     int
	dtype tensor.DType
	fp    uint64
}

func keyOf(t *tensor.Tensor) weightKey {
	k := weightKey{ptr: uintptr(unsafe.Pointer(&t.Data[0])), n: len(t.Data), dtype: t.DType}
	h := fnv.New64a()
	const samples = 16
	for i := range samples {
		off := (len(t.Data) - 8) * i / (samples - 1)
		if off < 0 {
			off = 0
		}
		h.Write(t.Data[off:min(off+8, len(t.Data))])
	}
	k.fp = h.Sum64()
	return k
}

// weightRegion returns where weight t lives in the weights segment,
// copying it there the first time.
func (p *proc) weightRegion(t *tensor.Tensor) (*pluginpb.Segment, *pluginpb.Region, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	k := keyOf(t)
	seg := func() *pluginpb.Segment {
		return &pluginpb.Segment{Id: 0, Path: p.weights.Path(), Size: uint64(p.weights.Size()), ReadOnly: true}
	}
	if r, ok := p.wcache[k]; ok {
		return seg(), r, nil
	}
	off := align(p.wused)
	need := off + len(t.Data)
	if p.weights == nil {
		s, err := shm.Create(p.h.shmDirs, p.name+"-weights", 0, need)
		if err != nil {
			return nil, nil, err
		}
		p.weights = s
	} else if err := p.weights.Grow(need); err != nil {
		return nil, nil, err
	}
	shm.Copy(p.weights.Bytes()[off:], t.Data)
	p.wused = need
	r := &pluginpb.Region{Segment: 0, Offset: uint64(off), Length: uint64(len(t.Data))}
	p.wcache[k] = r
	return seg(), r, nil
}

func align(n int) int { return (n + 63) &^ 63 }

// getScratch returns an idle scratch segment of at least size bytes.
func (p *proc) getScratch(size int) (*shm.Segment, error) {
	p.smu.Lock()
	var s *shm.Segment
	if n := len(p.free); n > 0 {
		s = p.free[n-1]
		p.free = p.free[:n-1]
	}
	id := p.nextSeg
	if s == nil {
		p.nextSeg++
	}
	p.smu.Unlock()
	if s == nil {
		return shm.Create(p.h.shmDirs, p.name, id, size)
	}
	if err := s.Grow(size); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// putScratch makes a segment idle again. A segment the plugin may still
// be writing (a call that timed out or was cancelled) is dropped instead.
func (p *proc) putScratch(s *shm.Segment, reuse bool) {
	if s == nil {
		return
	}
	p.smu.Lock()
	defer p.smu.Unlock()
	if !reuse || p.sclosed {
		s.Close()
		return
	}
	p.free = append(p.free, s)
}

// execute is the CPU kernel of a plugin op.
func (p *proc) execute(s *opSchema, c *ops.HostCall) error {
	ctx := c.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	op := s.pb.GetName()
	fail := func(err error) error { return fmt.Errorf("plugin %q: op %s (node %q): %w", p.name, op, c.Name, err) }
	if len(c.In) > len(s.inputs) || len(c.Out) != len(s.outs) {
		return fail(fmt.Errorf("called with %d inputs and %d outputs, the op has %d and %d", len(c.In), len(c.Out), len(s.inputs), len(s.outs)))
	}
	req := &pluginpb.ExecuteRequest{Op: op, Node: c.Name}
	var err error
	if req.Attrs, err = wire.AttrsToProto(c.Attrs); err != nil {
		return fail(err)
	}
	// Lay out the request: weights by reference to the weights segment,
	// small tensors inline, the rest in one scratch segment.
	inlineMax := p.h.opt.InlineMax
	if !shm.Supported {
		inlineMax = math.MaxInt // everything inline, weights too
	}
	type place struct {
		data []byte
		off  int
	}
	var copies []place
	var inScratch []*pluginpb.Region // regions to point at the scratch segment
	used := 0
	var weightSeg *pluginpb.Segment
	for i := range s.inputs {
		pt := &pluginpb.Tensor{}
		req.Inputs = append(req.Inputs, pt)
		var t *tensor.Tensor
		if i < len(c.In) {
			t = c.In[i]
		}
		if t == nil {
			pt.Absent = true
			continue
		}
		pt.Dtype = uint32(t.DType)
		pt.Shape = make([]int64, len(t.Shape))
		for j, d := range t.Shape {
			pt.Shape[j] = int64(d)
		}
		switch {
		case len(t.Data) == 0 || len(t.Data) <= inlineMax && (!s.inputs[i].Weight || !shm.Supported):
			pt.Data = &pluginpb.Tensor_Inline{Inline: t.Data}
		case s.inputs[i].Weight:
			seg, r, err := p.weightRegion(t)
			if err != nil {
				return fail(fmt.Errorf("input %s: %w", s.inputs[i].Name, err))
			}
			weightSeg = seg
			pt.Data = &pluginpb.Tensor_Region{Region: r}
		default:
			off := align(used)
			used = off + len(t.Data)
			copies = append(copies, place{t.Data, off})
			r := &pluginpb.Region{Offset: uint64(off), Length: uint64(len(t.Data))}
			inScratch = append(inScratch, r)
			pt.Data = &pluginpb.Tensor_Region{Region: r}
		}
	}
	for _, t := range c.Out {
		r := &pluginpb.Region{}
		if len(t.Data) > inlineMax {
			off := align(used)
			used = off + len(t.Data)
			r.Offset, r.Length = uint64(off), uint64(len(t.Data))
			inScratch = append(inScratch, r)
		}
		req.Outputs = append(req.Outputs, r)
	}
	var scratch *shm.Segment
	if used > 0 {
		if scratch, err = p.getScratch(used); err != nil {
			return fail(err)
		}
		mem := scratch.Bytes()
		for _, pl := range copies {
			shm.Copy(mem[pl.off:], pl.data)
		}
		for _, r := range inScratch {
			r.Segment = scratch.ID
		}
		req.Segments = append(req.Segments, &pluginpb.Segment{Id: scratch.ID, Path: scratch.Path(), Size: uint64(scratch.Size())})
	}
	if weightSeg != nil {
		req.Segments = append(req.Segments, weightSeg)
	}

	var resp *pluginpb.ExecuteResponse
	err = p.invoke(ctx, op, c.Name, func(ctx context.Context, cn *conn) error {
		if cn.ch != nil {
			r, used, err := cn.ch.call(ctx, cn, req)
			if used {
				resp = r
				return err
			}
		}
		var err error
		resp, err = cn.rpc.Execute(ctx, req)
		return err
	})
	if err != nil {
		// After a crash or a timeout the process was killed, so nothing
		// writes the scratch memory any more; after a cancellation the
		// plugin may still be running the op.
		p.putScratch(scratch, ctx.Err() == nil)
		return err
	}
	err = p.readOutputs(s, c, resp, scratch)
	p.putScratch(scratch, true)
	if err != nil {
		return fail(err)
	}
	return nil
}

// readOutputs checks the plugin's outputs against the node's and copies
// them into place.
func (p *proc) readOutputs(s *opSchema, c *ops.HostCall, resp *pluginpb.ExecuteResponse, scratch *shm.Segment) error {
	if len(resp.GetOutputs()) != len(c.Out) {
		return fmt.Errorf("the plugin returned %d outputs, want %d", len(resp.GetOutputs()), len(c.Out))
	}
	for i, pt := range resp.GetOutputs() {
		want := c.Out[i]
		name := s.outs[i].Name
		if dt := tensor.DType(pt.GetDtype()); dt != want.DType {
			return fmt.Errorf("output %s is %s, want %s", name, dt, want.DType)
		}
		if !sameShape(pt.GetShape(), want.Shape) {
			return fmt.Errorf("output %s has shape %v, want %v", name, pt.GetShape(), want.Shape)
		}
		var data []byte
		switch d := pt.GetData().(type) {
		case *pluginpb.Tensor_Inline:
			data = d.Inline
		case *pluginpb.Tensor_Region:
			r := d.Region
			if scratch == nil || r.GetSegment() != scratch.ID {
				return fmt.Errorf("output %s: region in segment %d, not the call's scratch memory", name, r.GetSegment())
			}
			mem := scratch.Bytes()
			if r.GetOffset() > uint64(len(mem)) || r.GetLength() > uint64(len(mem))-r.GetOffset() {
				return fmt.Errorf("output %s: region [%d, +%d) outside the %d-byte scratch memory", name, r.GetOffset(), r.GetLength(), len(mem))
			}
			data = mem[r.GetOffset() : r.GetOffset()+r.GetLength()]
		}
		if len(data) != len(want.Data) {
			return fmt.Errorf("output %s: %d bytes of data, want %d", name, len(data), len(want.Data))
		}
		shm.Copy(want.Data, data)
	}
	return nil
}

func sameShape(a []int64, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != int64(b[i]) {
			return false
		}
	}
	return true
}
