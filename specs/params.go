package specs

import (
	"fmt"
	"sort"
	"strings"
)

// Params holds resolved hyperparameters and structure choices.
type Params map[string]any

// Int returns a param as an int (0 if absent or not a number).
func (p Params) Int(name string) int {
	switch v := p[name].(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// Float returns a param as a float64.
func (p Params) Float(name string) float64 {
	switch v := p[name].(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

// Names returns the param names, sorted.
func (p Params) Names() []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Meta is checkpoint metadata offered to a spec's params.
type Meta struct {
	Format string         // naming scheme: gguf, hf or llama2c
	Arch   string         // replaces a leading "." in GGUF keys
	Values map[string]any // the checkpoint's own keys
	// HasTensor, when set, answers a param's "tensor:NAME" source: true
	// when the checkpoint holds tensor NAME (llama.cpp marks Llama 3.1's
	// RoPE scaling by a rope_freqs.weight tensor, not by a key).
	HasTensor func(name string) bool
}

// Lookup returns the checkpoint value that sets param d, and its key: the
// first of d's keys for the format that the checkpoint has, with a
// leading "." standing for the architecture, dotted HF keys walking
// nested objects, and "tensor:NAME" true when the tensor exists. A null
// (JSON null in an HF config) means "not set".
func (m *Meta) Lookup(d *ParamDecl) (key string, v any, ok bool) {
	if m == nil {
		return "", nil, false
	}
	first, ok := d.From[m.Format]
	if !ok {
		return "", nil, false
	}
	for _, key := range append([]string{first}, d.Also[m.Format]...) {
		if name, isTensor := strings.CutPrefix(key, "tensor:"); isTensor {
			if m.HasTensor != nil && m.HasTensor(name) {
				return key, true, true
			}
			continue
		}
		if strings.HasPrefix(key, ".") {
			key = m.Arch + key
		}
		if raw, ok := lookupMeta(m, key); ok && raw != nil {
			return key, raw, true
		}
	}
	return "", nil, false
}

// ResolveParams evaluates the spec's params in dependency order. A value
// set in overrides wins, then checkpoint metadata, then the spec's
// default. Cycles are reported with their path.
func (s *Spec) ResolveParams(meta *Meta, overrides map[string]any) (Params, error) {
	decls := map[string]*ParamDecl{}
	for _, d := range s.Params {
		decls[d.Name] = d
	}
	out := Params{}
	for _, c := range s.Structure {
		out[c.Name] = c.Value
	}
	for k, v := range overrides {
		if _, ok := decls[k]; !ok {
			if _, isChoice := out[k]; !isChoice {
				return nil, fmt.Errorf("%s: --set %s: no such param or structure choice", s.File, k)
			}
		}
		out[k] = v
	}
	state := map[string]int{} // 1 = evaluating, 2 = done
	var stack []string
	var resolve func(name string) (any, error)
	resolve = func(name string) (any, error) {
		if v, ok := out[name]; ok {
			return v, nil
		}
		d, ok := decls[name]
		if !ok {
			return nil, fmt.Errorf("unknown name %q", name)
		}
		if state[name] == 1 {
			i := 0
			for stack[i] != name {
				i++
			}
			return nil, &Error{Pos: d.Pos, Msg: fmt.Sprintf("params: cycle %s -> %s", strings.Join(stack[i:], " -> "), name)}
		}
		state[name] = 1
		stack = append(stack, name)
		defer func() { stack = stack[:len(stack)-1] }()
		if key, raw, ok := meta.Lookup(d); ok {
			v, err := metaValue(raw)
			if err != nil {
				return nil, &Error{Pos: d.Pos, Msg: fmt.Sprintf("params.%s: checkpoint key %s: %v", name, key, err)}
			}
			if i, isInt := v.(int64); isInt {
				if _, wantFloat := d.Literal.(float64); wantFloat {
					v = float64(i) // a whole number (8.0 in JSON, 8 in a GGUF) for a float param
				}
			}
			out[name] = v
			state[name] = 2
			return v, nil
		}
		if d.Expr == nil {
			out[name] = d.Literal
			state[name] = 2
			return d.Literal, nil
		}
		var inner error
		act := &scope{lazy: func(n string) (any, bool) {
			if _, known := decls[n]; !known {
				if v, ok := out[n]; ok {
					return v, true
				}
				return nil, false
			}
			v, err := resolve(n)
			if err != nil {
				if inner == nil {
					inner = err
				}
				return nil, false
			}
			return v, true
		}}
		v, err := d.Expr.eval(act)
		if inner != nil {
			return nil, inner
		}
		if err != nil {
			return nil, &Error{Pos: d.Expr.Pos, Msg: fmt.Sprintf("params.%s = %s: %v", name, d.Expr.Src, err)}
		}
		out[name] = v
		state[name] = 2
		return v, nil
	}
	for _, d := range s.Params {
		if _, err := resolve(d.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// metaValue converts a checkpoint metadata value: integers to int64,
// floats to float64; an array gives its length.
func metaValue(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case float64:
		if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
			// JSON numbers decode as float64; keep whole ones integral.
			return int64(x), nil
		}
		return x, nil
	case bool, string:
		return x, nil
	case []string:
		return int64(len(x)), nil
	case []any:
		return int64(len(x)), nil
	case []float32:
		return int64(len(x)), nil
	case []int32:
		return int64(len(x)), nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

// lookupMeta finds key in the checkpoint's metadata. In an HF config a
// dotted key that is not a top-level name walks nested objects:
// "rope_scaling.factor" is config.json's {"rope_scaling": {"factor": ...}}.
func lookupMeta(meta *Meta, key string) (any, bool) {
	if v, ok := meta.Values[key]; ok || meta.Format != "hf" || !strings.Contains(key, ".") {
		return v, ok
	}
	var cur any = meta.Values
	for _, part := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
