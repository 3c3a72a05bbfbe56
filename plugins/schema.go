package plugins

import (
	"fmt"
	"strings"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins/internal/wire"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"github.com/weftrun/weft/tensor"
)

// opSchema is a plugin op's schema, checked and converted.
type opSchema struct {
	pb     *pluginpb.OpSchema
	attrs  []ops.AttrDef
	inputs []ops.Port
	outs   []ops.Port
}

// checkSchema validates a schema a plugin sent: the host trusts nothing
// it did not check.
func checkSchema(s *pluginpb.OpSchema) (*opSchema, error) {
	name := s.GetName()
	if name == "" {
		return nil, fmt.Errorf("an op has no name")
	}
	if strings.ContainsAny(name, " \t\n(),=$") {
		return nil, fmt.Errorf("op name %q: not usable in a spec", name)
	}
	o := &opSchema{pb: s}
	seen := map[string]bool{}
	for _, pa := range s.GetAttrs() {
		a, err := wire.AttrDefFromProto(pa)
		if err != nil {
			return nil, fmt.Errorf("op %s: %w", name, err)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("op %s: attribute %s declared twice", name, a.Name)
		}
		seen[a.Name] = true
		o.attrs = append(o.attrs, a)
	}
	if len(s.GetOutputs()) == 0 {
		return nil, fmt.Errorf("op %s: no outputs", name)
	}
	for i, p := range s.GetInputs() {
		if p.GetName() == "" {
			return nil, fmt.Errorf("op %s: input %d has no name", name, i)
		}
		for _, dt := range p.GetDtypes() {
			if !tensor.DType(dt).Known() {
				return nil, fmt.Errorf("op %s: input %s: unknown dtype %d", name, p.GetName(), dt)
			}
		}
		if len(p.GetDims()) > 0 && int(p.GetRank()) != len(p.GetDims()) {
			return nil, fmt.Errorf("op %s: input %s: rank %d but %d dimension rules", name, p.GetName(), p.GetRank(), len(p.GetDims()))
		}
		for j, d := range p.GetDims() {
			if err := o.checkDim(d, false); err != nil {
				return nil, fmt.Errorf("op %s: input %s dimension %d: %w", name, p.GetName(), j, err)
			}
		}
		o.inputs = append(o.inputs, ops.Port{Name: p.GetName(), Optional: p.GetOptional(), Weight: p.GetWeight(), Doc: p.GetDoc()})
	}
	for i, p := range s.GetOutputs() {
		if p.GetName() == "" {
			return nil, fmt.Errorf("op %s: output %d has no name", name, i)
		}
		o.outs = append(o.outs, ops.Port{Name: p.GetName(), Doc: p.GetDoc()})
	}
	if s.GetDynamicShape() {
		return o, nil
	}
	if len(s.GetShape()) != len(s.GetOutputs()) {
		return nil, fmt.Errorf("op %s: %d shape rules for %d outputs", name, len(s.GetShape()), len(s.GetOutputs()))
	}
	for i, r := range s.GetShape() {
		out := s.GetOutputs()[i].GetName()
		switch rule := r.GetRule().(type) {
		case *pluginpb.OutputRule_SameAsInput:
			if k := rule.SameAsInput; k < 0 || int(k) >= len(s.GetInputs()) {
				return nil, fmt.Errorf("op %s: output %s: same as input %d, which does not exist", name, out, k)
			}
		case *pluginpb.OutputRule_Dims:
			if tensor.DType(rule.Dims.GetDtype()) != tensor.F32 {
				return nil, fmt.Errorf("op %s: output %s: outputs are f32, not %s", name, out, tensor.DType(rule.Dims.GetDtype()))
			}
			if len(rule.Dims.GetDims()) == 0 {
				return nil, fmt.Errorf("op %s: output %s: no dimensions", name, out)
			}
			for j, d := range rule.Dims.GetDims() {
				if err := o.checkDim(d, true); err != nil {
					return nil, fmt.Errorf("op %s: output %s dimension %d: %w", name, out, j, err)
				}
			}
		default:
			return nil, fmt.Errorf("op %s: output %s has no shape rule", name, out)
		}
	}
	return o, nil
}

func (o *opSchema) checkDim(d *pluginpb.DimRule, output bool) error {
	switch r := d.GetRule().(type) {
	case *pluginpb.DimRule_Any:
		if output {
			return fmt.Errorf("an output dimension cannot be any")
		}
	case *pluginpb.DimRule_Constant:
		if r.Constant <= 0 || r.Constant > 1<<40 {
			return fmt.Errorf("size %d", r.Constant)
		}
	case *pluginpb.DimRule_Input:
		if k := r.Input.GetInput(); k < 0 || int(k) >= len(o.pb.GetInputs()) {
			return fmt.Errorf("refers to input %d, which does not exist", k)
		}
	case *pluginpb.DimRule_Attr:
		ok := false
		for _, a := range o.attrs {
			ok = ok || a.Name == r.Attr && a.Type == ops.AttrInt
		}
		if !ok {
			return fmt.Errorf("refers to attribute %q, which is not an int attribute", r.Attr)
		}
	default:
		return fmt.Errorf("empty dimension rule")
	}
	return nil
}

// dimOf evaluates a rule; ok is false for "any" and for a dimension of an
// absent input.
func (o *opSchema) dimOf(d *pluginpb.DimRule, in []*ops.Type, a ops.Attrs) (dim ops.Dim, what string, ok bool, err error) {
	switch r := d.GetRule().(type) {
	case *pluginpb.DimRule_Constant:
		return ops.D(int(r.Constant)), fmt.Sprint(r.Constant), true, nil
	case *pluginpb.DimRule_Attr:
		v := a.Int(r.Attr)
		if v <= 0 {
			return ops.Dim{}, "", false, fmt.Errorf("attribute %s = %d is not a valid size", r.Attr, v)
		}
		return ops.D(v), "attribute " + r.Attr, true, nil
	case *pluginpb.DimRule_Input:
		k := int(r.Input.GetInput())
		if k >= len(in) || in[k] == nil {
			return ops.Dim{}, "", false, nil
		}
		t := in[k]
		j := int(r.Input.GetDim())
		if j < 0 {
			j += len(t.Shape)
		}
		if j < 0 || j >= len(t.Shape) {
			return ops.Dim{}, "", false, fmt.Errorf("input %s is %s: it has no dimension %d", o.inputs[k].Name, t.Shape, r.Input.GetDim())
		}
		return t.Shape[j], fmt.Sprintf("%s's dimension %d", o.inputs[k].Name, j), true, nil
	}
	return ops.Dim{}, "", false, nil
}

// checkInputs applies the declared input constraints.
func (o *opSchema) checkInputs(in []*ops.Type, a ops.Attrs) error {
	for i, p := range o.pb.GetInputs() {
		var t *ops.Type
		if i < len(in) {
			t = in[i]
		}
		if t == nil {
			if !p.GetOptional() {
				return fmt.Errorf("missing input %s", p.GetName())
			}
			continue
		}
		if dts := p.GetDtypes(); len(dts) > 0 {
			ok := false
			var names []string
			for _, dt := range dts {
				ok = ok || tensor.DType(dt) == t.DType
				names = append(names, tensor.DType(dt).String())
			}
			if !ok {
				return fmt.Errorf("input %s is %s, want %s", p.GetName(), t.DType, strings.Join(names, " or "))
			}
		}
		if r := int(p.GetRank()); r > 0 && len(t.Shape) != r {
			return fmt.Errorf("input %s is %s, want %d dimensions", p.GetName(), t.Shape, r)
		}
		for j, d := range p.GetDims() {
			want, what, ok, err := o.dimOf(d, in, a)
			if err != nil {
				return fmt.Errorf("input %s: %w", p.GetName(), err)
			}
			if ok && t.Shape[j] != want {
				return fmt.Errorf("input %s is %s: dimension %d is %s, want %s (%s)", p.GetName(), t.Shape, j, t.Shape[j], want, what)
			}
		}
	}
	if len(in) > len(o.pb.GetInputs()) {
		return fmt.Errorf("%d inputs, the op takes %d", len(in), len(o.pb.GetInputs()))
	}
	return nil
}

// declaredShape applies the declarative output rules.
func (o *opSchema) declaredShape(in []*ops.Type, a ops.Attrs) ([]ops.Type, error) {
	out := make([]ops.Type, len(o.pb.GetShape()))
	for i, r := range o.pb.GetShape() {
		switch rule := r.GetRule().(type) {
		case *pluginpb.OutputRule_SameAsInput:
			k := int(rule.SameAsInput)
			if k >= len(in) || in[k] == nil {
				return nil, fmt.Errorf("output %s: input %s is absent", o.outs[i].Name, o.inputs[k].Name)
			}
			out[i] = ops.Type{DType: in[k].DType, Shape: append(ops.Shape{}, in[k].Shape...)}
		case *pluginpb.OutputRule_Dims:
			t := ops.Type{DType: tensor.DType(rule.Dims.GetDtype())}
			for _, d := range rule.Dims.GetDims() {
				dim, _, ok, err := o.dimOf(d, in, a)
				if err != nil {
					return nil, fmt.Errorf("output %s: %w", o.outs[i].Name, err)
				}
				if !ok {
					return nil, fmt.Errorf("output %s: a dimension refers to an absent input", o.outs[i].Name)
				}
				t.Shape = append(t.Shape, dim)
			}
			out[i] = t
		}
	}
	return out, nil
}

// checkOutputs checks types a Shape RPC returned.
func checkOutputTypes(o *opSchema, ts []ops.Type) error {
	if len(ts) != len(o.outs) {
		return fmt.Errorf("shape gives %d outputs, the op declares %d", len(ts), len(o.outs))
	}
	for i, t := range ts {
		if t.DType != tensor.F32 {
			return fmt.Errorf("output %s is %s; outputs must be f32", o.outs[i].Name, t.DType)
		}
		if len(t.Shape) == 0 || len(t.Shape) > 2 {
			return fmt.Errorf("output %s is %s; outputs are vectors or [rows, features]", o.outs[i].Name, t.Shape)
		}
	}
	return nil
}
