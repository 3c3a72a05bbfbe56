package sdk

import (
	"context"
	"fmt"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/wire"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
)

// Op is an operator a plugin serves.
type Op interface {
	// Schema describes the op to the engine's registry.
	Schema() Schema
	// Execute runs the op on one batch: every row of a scheduler step.
	// in holds one tensor per declared input (nil for an absent optional
	// one); attrs has every declared attribute, defaults applied (ints are
	// int64, floats float64, lists []int64). It returns one f32 tensor per
	// declared output. Inputs are valid only until Execute returns and must
	// not be written: weights live in memory the engine shares with every
	// call. ctx is cancelled when the engine gives up on the call.
	Execute(ctx context.Context, in []*tensor.Tensor, attrs ops.Attrs) ([]*tensor.Tensor, error)
}

// Shaper is implemented by ops whose output types no declarative rule can
// express: the engine then asks Shape, through the plugin's Shape RPC,
// while it builds a graph. in holds nil for an absent optional input;
// dimensions may be symbolic (ops.Tokens).
type Shaper interface {
	Shape(in []*ops.Type, attrs ops.Attrs) ([]ops.Type, error)
}

// Schema describes an op.
type Schema struct {
	Name    string // e.g. "example.rms_norm"; unique among the engine's ops
	Doc     string
	Inputs  []Input
	Outputs []Output
	Attrs   []ops.AttrDef
	// RowWise: each output row depends only on the same row of each
	// activation input (lets the engine drop unwanted rows earlier).
	RowWise bool
}

// Input declares an input and the checks the engine makes on it when it
// builds a graph.
type Input struct {
	Name     string
	Doc      string
	Optional bool
	// Weight marks a checkpoint parameter: the engine copies it to shared
	// memory once and passes a reference on every call.
	Weight bool
	// DTypes lists the allowed element types (nil: any).
	DTypes []tensor.DType
	// Dims constrains each dimension (nil: any rank).
	Dims []Dim
}

// Activation declares a [tokens, features] f32 activation input.
func Activation(name string) Input {
	return Input{Name: name, DTypes: []tensor.DType{tensor.F32}, Dims: []Dim{Any(), Any()}}
}

// Output declares an output and its type.
type Output struct {
	Name  string
	Doc   string
	Shape Shape // ignored when the op implements Shaper
}

// Shape is a declarative output type rule.
type Shape struct {
	sameAs int // input index + 1; 0: dims
	dtype  tensor.DType
	dims   []Dim
}

// SameAs gives an output the type (dtype and shape) of an input.
func SameAs(input int) Shape { return Shape{sameAs: input + 1} }

// Dims gives an output the element type dt and one rule per dimension.
// Activation outputs are f32.
func Dims(dt tensor.DType, dims ...Dim) Shape { return Shape{dtype: dt, dims: dims} }

// Dim gives or constrains one dimension.
type Dim struct {
	kind  dimKind
	n     int
	input int
	dim   int
	attr  string
}

type dimKind int

const (
	dimAny dimKind = iota
	dimConst
	dimInput
	dimAttr
)

// Any leaves a dimension unconstrained (inputs only).
func Any() Dim { return Dim{kind: dimAny} }

// Size is a fixed size.
func Size(n int) Dim { return Dim{kind: dimConst, n: n} }

// DimOf is dimension dim of input (dim < 0 counts from the end).
func DimOf(input, dim int) Dim { return Dim{kind: dimInput, input: input, dim: dim} }

// Rows is the leading dimension of input (the tokens of an activation).
func Rows(input int) Dim { return DimOf(input, 0) }

// Cols is the innermost dimension of input (the features of an activation).
func Cols(input int) Dim { return DimOf(input, -1) }

// AttrDim is the value of an int attribute.
func AttrDim(name string) Dim { return Dim{kind: dimAttr, attr: name} }

func (d Dim) proto() *pluginpb.DimRule {
	switch d.kind {
	case dimConst:
		return &pluginpb.DimRule{Rule: &pluginpb.DimRule_Constant{Constant: int64(d.n)}}
	case dimInput:
		return &pluginpb.DimRule{Rule: &pluginpb.DimRule_Input{Input: &pluginpb.InputDim{Input: int32(d.input), Dim: int32(d.dim)}}}
	case dimAttr:
		return &pluginpb.DimRule{Rule: &pluginpb.DimRule_Attr{Attr: d.attr}}
	}
	return &pluginpb.DimRule{Rule: &pluginpb.DimRule_Any{Any: true}}
}

// check validates a dimension rule of a schema.
func (d Dim) check(s *Schema, output bool) error {
	switch d.kind {
	case dimAny:
		if output {
			return fmt.Errorf("an output dimension cannot be Any")
		}
	case dimConst:
		if d.n <= 0 {
			return fmt.Errorf("size %d", d.n)
		}
	case dimInput:
		if d.input < 0 || d.input >= len(s.Inputs) {
			return fmt.Errorf("DimOf(%d, %d): no input %d", d.input, d.dim, d.input)
		}
		if dims := s.Inputs[d.input].Dims; dims != nil && (d.dim >= len(dims) || d.dim < -len(dims)) {
			return fmt.Errorf("DimOf(%d, %d): input %s has %d dimensions", d.input, d.dim, s.Inputs[d.input].Name, len(dims))
		}
	case dimAttr:
		a, ok := attrDef(s, d.attr)
		if !ok || a.Type != ops.AttrInt {
			return fmt.Errorf("AttrDim(%q): no int attribute %q", d.attr, d.attr)
		}
	}
	return nil
}

func attrDef(s *Schema, name string) (ops.AttrDef, bool) {
	for _, a := range s.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return ops.AttrDef{}, false
}

// describe validates op's schema and converts it for Describe.
func describe(op Op) (*pluginpb.OpSchema, error) {
	s := op.Schema()
	if s.Name == "" {
		return nil, fmt.Errorf("op with no name")
	}
	_, dynamic := op.(Shaper)
	p := &pluginpb.OpSchema{Name: s.Name, Doc: s.Doc, RowWise: s.RowWise, DynamicShape: dynamic}
	if len(s.Outputs) == 0 {
		return nil, fmt.Errorf("op %s: no outputs", s.Name)
	}
	seen := map[string]bool{}
	for _, a := range s.Attrs {
		if seen[a.Name] {
			return nil, fmt.Errorf("op %s: attribute %s declared twice", s.Name, a.Name)
		}
		seen[a.Name] = true
		pa, err := wire.AttrDefToProto(a)
		if err != nil {
			return nil, fmt.Errorf("op %s: %w", s.Name, err)
		}
		p.Attrs = append(p.Attrs, pa)
	}
	for i, in := range s.Inputs {
		if in.Name == "" {
			return nil, fmt.Errorf("op %s: input %d has no name", s.Name, i)
		}
		pp := &pluginpb.Port{Name: in.Name, Optional: in.Optional, Weight: in.Weight, Doc: in.Doc, Rank: int32(len(in.Dims))}
		for _, dt := range in.DTypes {
			if !dt.Known() {
				return nil, fmt.Errorf("op %s: input %s: unknown dtype %d", s.Name, in.Name, uint32(dt))
			}
			pp.Dtypes = append(pp.Dtypes, uint32(dt))
		}
		for j, d := range in.Dims {
			if err := d.check(&s, false); err != nil {
				return nil, fmt.Errorf("op %s: input %s dimension %d: %w", s.Name, in.Name, j, err)
			}
			pp.Dims = append(pp.Dims, d.proto())
		}
		p.Inputs = append(p.Inputs, pp)
	}
	for i, out := range s.Outputs {
		if out.Name == "" {
			return nil, fmt.Errorf("op %s: output %d has no name", s.Name, i)
		}
		p.Outputs = append(p.Outputs, &pluginpb.Port{Name: out.Name, Doc: out.Doc})
		if dynamic {
			continue
		}
		sh := out.Shape
		switch {
		case sh.sameAs > 0:
			if sh.sameAs > len(s.Inputs) {
				return nil, fmt.Errorf("op %s: output %s: SameAs(%d): no such input", s.Name, out.Name, sh.sameAs-1)
			}
			p.Shape = append(p.Shape, &pluginpb.OutputRule{Rule: &pluginpb.OutputRule_SameAsInput{SameAsInput: int32(sh.sameAs - 1)}})
		case len(sh.dims) > 0:
			if sh.dtype != tensor.F32 {
				return nil, fmt.Errorf("op %s: output %s: outputs are f32, not %s", s.Name, out.Name, sh.dtype)
			}
			r := &pluginpb.Dims{Dtype: uint32(sh.dtype)}
			for j, d := range sh.dims {
				if err := d.check(&s, true); err != nil {
					return nil, fmt.Errorf("op %s: output %s dimension %d: %w", s.Name, out.Name, j, err)
				}
				r.Dims = append(r.Dims, d.proto())
			}
			p.Shape = append(p.Shape, &pluginpb.OutputRule{Rule: &pluginpb.OutputRule_Dims{Dims: r}})
		default:
			return nil, fmt.Errorf("op %s: output %s has no shape rule (use SameAs or Dims, or implement Shaper)", s.Name, out.Name)
		}
	}
	return p, nil
}
