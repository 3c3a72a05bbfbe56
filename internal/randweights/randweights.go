// Package randweights supplies seeded random weights for a model spec, so
// that a spec can be compiled, shape-checked and run without a checkpoint.
//
// Build the spec once without a source (specs.BuildOptions.Source == nil):
// each parameter of that unbound graph names the checkpoint tensor it
// would bind to (graph.Param.Source) and its shape. A Source then serves
// exactly those tensors, as F32, filled by one rule applied in order:
//
//  1. Bias: the checkpoint name ends in "bias" (".bias", "_bias"), or the
//     spec's weight key ends in "_b" or "bias". Values: BiasStd·N(0,1),
//     zeros by default.
//  2. Norm or scale weight: the key or the name contains "norm", or the
//     tensor is 1-D (any other vector is a multiplicative scale).
//     Values: 1 + NormStd·N(0,1), ones by default.
//  3. Anything else (matrices, stacked expert tensors): Std·N(0,1), with
//     Std = 0.02 by default.
//
// Each tensor is drawn from its own generator, seeded by Config.Seed and
// the tensor's name, so its values do not depend on which other tensors
// a spec uses or in what order.
//
// The tensors take the shape the spec expects after load-time transforms,
// under the name the unbound build picked (the first of a fallback list).
// A naming scheme whose rules transform tensors (transpose, rows) would
// need the inverse shape; use one without transforms (usually gguf), or
// serve the fused tensor from a spec variant that declares it whole.
package randweights

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// DefaultStd is the standard deviation of matrix entries (GPT-2's
// initialiser).
const DefaultStd = 0.02

// Config sets the seed and the spread of each kind of tensor.
type Config struct {
	Seed    uint64
	Std     float64 // matrices; 0 means DefaultStd
	BiasStd float64 // biases; 0 gives zeros
	NormStd float64 // norm and scale vectors: 1 + NormStd·N(0,1); 0 gives ones
}

// Kind is the class a tensor falls into under the package's rule.
type Kind int

// Tensor kinds.
const (
	Matrix Kind = iota
	Bias
	Norm
)

func (k Kind) String() string { return [...]string{"matrix", "bias", "norm"}[k] }

// Classify applies the package's rule to a spec weight key, a checkpoint
// tensor name and a shape.
func Classify(key, name string, shape []int) Kind {
	switch {
	case strings.HasSuffix(name, "bias") || strings.HasSuffix(key, "_b") || strings.HasSuffix(key, "bias"):
		return Bias
	case strings.Contains(key, "norm") || strings.Contains(name, "norm") || len(shape) == 1:
		return Norm
	}
	return Matrix
}

type entry struct {
	key   string
	shape []int
	t     *tensor.Tensor
}

// Source is a specs.TensorSource of seeded random F32 tensors.
type Source struct {
	cfg     Config
	entries map[string]*entry
}

// New returns a source for the parameters of g, an unbound graph (built
// with a nil source). Tensors are generated when first asked for.
func New(g *graph.Graph, c Config) (*Source, error) {
	if c.Std == 0 {
		c.Std = DefaultStd
	}
	s := &Source{cfg: c, entries: map[string]*entry{}}
	for _, v := range g.Params() {
		p := v.Param
		if p.Source == "" {
			return nil, fmt.Errorf("randweights: parameter %s has no checkpoint name", v.Name)
		}
		shape := make([]int, len(v.Type.Shape))
		for i, d := range v.Type.Shape {
			if d.Sym != "" || d.N <= 0 {
				return nil, fmt.Errorf("randweights: parameter %s has shape %s", v.Name, v.Type.Shape)
			}
			shape[i] = d.N
		}
		if old, ok := s.entries[p.Source]; ok {
			if !sameDims(old.shape, shape) {
				return nil, fmt.Errorf("randweights: tensor %s is wanted as %v (%s) and as %v (%s)", p.Source, old.shape, old.key, shape, p.Key)
			}
			continue
		}
		s.entries[p.Source] = &entry{key: p.Key, shape: shape}
	}
	return s, nil
}

// ForSpec builds sp unbound with params p and the given naming scheme,
// and returns a source for its parameters.
func ForSpec(sp *specs.Spec, reg *ops.Registry, p specs.Params, format string, c Config) (*Source, error) {
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: p, Format: format, Outputs: sp.Outputs})
	if err != nil {
		return nil, err
	}
	return New(g, c)
}

// Has reports whether the source serves name.
func (s *Source) Has(name string) bool { _, ok := s.entries[name]; return ok }

// Names returns the tensor names served, sorted.
func (s *Source) Names() []string {
	out := make([]string, 0, len(s.entries))
	for n := range s.entries {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Key returns the spec weight key that first asked for name.
func (s *Source) Key(name string) string {
	if e, ok := s.entries[name]; ok {
		return e.key
	}
	return ""
}

// Tensor returns the named tensor, generating it on first use. Later
// calls return the same tensor.
func (s *Source) Tensor(name string) (*tensor.Tensor, error) {
	e, ok := s.entries[name]
	if !ok {
		return nil, fmt.Errorf("randweights: no tensor %q", name)
	}
	if e.t == nil {
		e.t = s.generate(name, e)
	}
	return e.t, nil
}

func (s *Source) generate(name string, e *entry) *tensor.Tensor {
	n := 1
	for _, d := range e.shape {
		n *= d
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	r := rand.New(rand.NewPCG(s.cfg.Seed, h.Sum64()))
	vals := make([]float32, n)
	var base, std float64
	switch Classify(e.key, name, e.shape) {
	case Bias:
		std = s.cfg.BiasStd
	case Norm:
		base, std = 1, s.cfg.NormStd
	default:
		std = s.cfg.Std
	}
	for i := range vals {
		v := base
		if std != 0 {
			v += std * r.NormFloat64()
		}
		vals[i] = float32(v)
	}
	return &tensor.Tensor{Name: name, DType: tensor.F32, Shape: append([]int(nil), e.shape...), Data: tensor.F32ToBytes(vals)}
}

func sameDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
