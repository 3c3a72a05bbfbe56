// Package ops defines weft's operator registry. An op is defined once, in
// one place: its name, inputs, outputs, typed attributes with defaults and
// a shape function. Built-in ops and ops served by out-of-process plugins
// register into the same Registry, and the graph, the passes, the
// scheduler and the exporters treat them alike. Where and how an op runs
// is a backend's business (package backend): ops knows no device.
package ops

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weftrun/weft/tensor"
)

// Dim is one dimension of a value's shape: a constant (Sym == "") or a
// symbol bound at run time ("T", the tokens in a step).
type Dim struct {
	N   int
	Sym string
}

// Tokens is the symbolic dimension of the tokens in one scheduler step.
var Tokens = Dim{Sym: "T"}

// D returns a constant dimension.
func D(n int) Dim { return Dim{N: n} }

func (d Dim) String() string {
	if d.Sym != "" {
		return d.Sym
	}
	return fmt.Sprint(d.N)
}

// Shape is a row-major shape whose dimensions may be symbolic.
type Shape []Dim

func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Equal reports whether two shapes are the same.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// Last returns the innermost dimension's size (0 if symbolic or empty).
func (s Shape) Last() int {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1].N
}

// ConstShape converts concrete dimensions to a Shape.
func ConstShape(dims ...int) Shape {
	s := make(Shape, len(dims))
	for i, d := range dims {
		s[i] = D(d)
	}
	return s
}

// Type is a value's element type and shape.
type Type struct {
	DType tensor.DType
	Shape Shape
}

func (t Type) String() string { return t.DType.String() + t.Shape.String() }

// AttrType is the type of an attribute.
type AttrType int

// Attribute types.
const (
	AttrInt AttrType = iota
	AttrFloat
	AttrString
	AttrBool
	AttrInts
	// AttrAny takes any value unchecked: the attributes of a placeholder
	// standing in for a plugin op that was not started (weft graph).
	AttrAny
)

func (t AttrType) String() string {
	return [...]string{"int", "float", "string", "bool", "ints", "any"}[t]
}

// AttrDef declares an attribute.
type AttrDef struct {
	Name     string
	Type     AttrType
	Default  any // nil with Required
	Required bool
	Enum     []string // allowed values of a string attribute
	Doc      string
}

// Port declares an input or output.
type Port struct {
	Name     string
	Optional bool // an input that may be absent
	Weight   bool // an input that is normally a checkpoint parameter
	Variadic bool // the last port only: repeats one or more times
	Doc      string
}

// ShapeFunc infers output types from input types (nil for an absent
// optional input) and attributes.
type ShapeFunc func(in []*Type, a Attrs) ([]Type, error)

// HostFunc computes an op on tensors in host memory. It is how an op
// served from outside weft's backends (a plugin) runs: every backend that
// can reach host memory calls it, and the others copy its inputs to the
// host and its outputs back.
type HostFunc func(c *HostCall) error

// HostCall is one invocation of a HostFunc. Activations are F32 tensors
// whose leading dimension is the step's row count; weights keep their
// stored type.
type HostCall struct {
	Ctx   context.Context
	Name  string // node name, for errors
	In    []*tensor.Tensor
	Out   []*tensor.Tensor
	Attrs Attrs
}

// Def is an op definition.
type Def struct {
	Name    string
	Doc     string
	Inputs  []Port
	Outputs []Port
	Attrs   []AttrDef
	Shape   ShapeFunc
	// Plugin names the plugin that serves the op ("" for built-ins).
	Plugin string
	// Host computes the op on host memory for an op served from outside
	// the backends (a plugin's); nil for built-ins, whose kernels the
	// backends own.
	Host HostFunc
	// Stateful ops keep per-sequence state between steps (the KV cache);
	// the scheduler gives each stateful node its own cache slot.
	Stateful bool
	// RowWise ops compute each output row from the same row of each
	// activation input, so rows can be dropped before them.
	RowWise bool
}

// Attr returns the declaration of the named attribute.
func (d *Def) Attr(name string) (AttrDef, bool) {
	for _, a := range d.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return AttrDef{}, false
}

// Registry maps op names to definitions.
type Registry struct {
	defs map[string]*Def
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{defs: map[string]*Def{}} }

// Register adds an op. Names are unique.
func (r *Registry) Register(d *Def) error {
	if d.Name == "" {
		return fmt.Errorf("register: op with no name")
	}
	if _, dup := r.defs[d.Name]; dup {
		return fmt.Errorf("register %s: op already defined", d.Name)
	}
	if d.Shape == nil {
		return fmt.Errorf("register %s: no shape function", d.Name)
	}
	r.defs[d.Name] = d
	return nil
}

// Lookup returns the named op.
func (r *Registry) Lookup(name string) (*Def, bool) { d, ok := r.defs[name]; return d, ok }

// Names returns all op names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.defs))
	for n := range r.defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Attrs holds attribute values after defaults are applied. Ints are int64,
// floats float64, lists []int64.
type Attrs map[string]any

// Int returns an int attribute.
func (a Attrs) Int(name string) int {
	switch v := a[name].(type) {
	case int64:
		return int(v)
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// Float returns a float attribute.
func (a Attrs) Float(name string) float64 {
	switch v := a[name].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	case int:
		return float64(v)
	}
	return 0
}

// String returns a string attribute.
func (a Attrs) String(name string) string { s, _ := a[name].(string); return s }

// Bool returns a bool attribute.
func (a Attrs) Bool(name string) bool { b, _ := a[name].(bool); return b }

// Ints returns a list attribute.
func (a Attrs) Ints(name string) []int {
	v, _ := a[name].([]int64)
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// Coerce checks a raw attribute value against its declaration and
// converts it to the canonical Go type.
func Coerce(ad AttrDef, v any) (any, error) {
	switch ad.Type {
	case AttrInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case uint64:
			return int64(x), nil
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		}
	case AttrFloat:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		}
	case AttrBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case AttrString:
		if s, ok := v.(string); ok {
			if len(ad.Enum) > 0 {
				for _, e := range ad.Enum {
					if e == s {
						return s, nil
					}
				}
				return nil, fmt.Errorf("attribute %s: %q is not one of %s", ad.Name, s, strings.Join(ad.Enum, ", "))
			}
			return s, nil
		}
	case AttrAny:
		return v, nil
	case AttrInts:
		switch x := v.(type) {
		case []int64:
			return x, nil
		case []any:
			out := make([]int64, len(x))
			for i, e := range x {
				c, err := Coerce(AttrDef{Name: ad.Name, Type: AttrInt}, e)
				if err != nil {
					return nil, err
				}
				out[i] = c.(int64)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("attribute %s: want %s, got %T (%v)", ad.Name, ad.Type, v, v)
}

// Rows returns the number of rows of activation tensor t (its leading
// dimension, or 1 for a vector).
func Rows(t *tensor.Tensor) int {
	if len(t.Shape) < 2 {
		return 1
	}
	return t.Shape[0]
}

// KVHeads returns an attention op's kv_heads attribute, defaulting to
// heads.
func KVHeads(a Attrs) int {
	if k := a.Int("kv_heads"); k > 0 {
		return k
	}
	return a.Int("heads")
}
