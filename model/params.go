package model

import (
	"fmt"
	"math"
	"reflect"

	"github.com/weftrun/weft/specs"
)

// paramRange is the allowed range of a well-known spec param.
type paramRange struct {
	integer bool
	min     float64 // inclusive, or exclusive when open
	max     float64 // inclusive
	open    bool    // min is exclusive
}

func (r paramRange) String() string {
	if r.integer {
		return fmt.Sprintf("an integer from %d to %d", int64(r.min), int64(r.max))
	}
	lo := "≥ "
	if r.open {
		lo = "> "
	}
	if math.IsInf(r.max, 1) {
		return "a finite number " + lo + fmt.Sprint(r.min)
	}
	return fmt.Sprintf("a number %s%v and ≤ %v", lo, r.min, r.max)
}

func (r paramRange) holds(v float64) bool {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return false
	case r.integer && v != math.Trunc(v):
		return false
	case r.open && v <= r.min, !r.open && v < r.min:
		return false
	}
	return v <= r.max
}

// knownRanges bounds the params the built-in specs share. The limits are
// far beyond released models and well below what would exhaust memory
// building the graph or the KV cache.
var knownRanges = map[string]paramRange{
	"hidden":       {integer: true, min: 1, max: 1 << 20},
	"ffn":          {integer: true, min: 1, max: 1 << 22},
	"layers":       {integer: true, min: 1, max: 4096},
	"heads":        {integer: true, min: 1, max: 4096},
	"kv_heads":     {integer: true, min: 1, max: 4096},
	"head_dim":     {integer: true, min: 1, max: 1 << 16},
	"rope_dim":     {integer: true, min: 0, max: 1 << 16},
	"vocab":        {integer: true, min: 1, max: 1 << 24},
	"ctx":          {integer: true, min: 1, max: 1 << 24},
	"experts":      {integer: true, min: 0, max: 1 << 12}, // 0: a dense model
	"experts_used": {integer: true, min: 0, max: 1 << 12},
	"window":       {integer: true, min: 0, max: 1 << 24},
	"types":        {integer: true, min: 0, max: 1 << 16},
	"norm_eps":     {min: 0, max: 1, open: true},
	"rope_base":    {min: 0, max: math.Inf(1), open: true},
}

// CheckParams checks resolved params before a graph is built: every
// --set value (set) has the type of the param's default, and every param
// with a known meaning lies in its range. An error names where the bad
// value came from: the --set flag, the checkpoint metadata key (meta may
// be nil) or the spec line.
func CheckParams(sp *specs.Spec, params specs.Params, set map[string]any, meta *specs.Meta) error {
	for _, d := range sp.Params {
		v, ok := params[d.Name]
		if !ok {
			continue
		}
		src := valueSource(d, set, meta)
		if raw, isSet := set[d.Name]; isSet {
			if err := setType(d, raw); err != nil {
				return fmt.Errorf("%s: %s: %w", sp.File, src, err)
			}
		}
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		default:
			continue
		}
		r, known := knownRanges[d.Name]
		if !known {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%s: %s: %s is %v, want a finite number", sp.File, src, d.Name, v)
			}
			continue
		}
		if !r.holds(f) {
			return fmt.Errorf("%s: %s: %s is %v, want %s", sp.File, src, d.Name, v, r)
		}
	}
	return nil
}

// CheckMeta checks the checkpoint metadata values that set params with a
// known range, before any param is computed from them (so that a zero
// head count is reported as such, not as a division by zero in a spec
// expression). Errors name the metadata key.
func CheckMeta(sp *specs.Spec, meta *specs.Meta) error {
	if meta == nil {
		return nil
	}
	for _, d := range sp.Params {
		r, known := knownRanges[d.Name]
		if !known {
			continue
		}
		key, raw, ok := meta.Lookup(d)
		if !ok {
			continue
		}
		f, ok := number(raw)
		if ok && !r.holds(f) {
			return fmt.Errorf("%s: checkpoint key %s: %s is %v, want %s", sp.File, key, d.Name, raw, r)
		}
	}
	return nil
}

// number converts a scalar metadata value to a float64; an array counts
// its elements (how a vocabulary size is read from the token list).
func number(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.Slice:
		return float64(rv.Len()), true
	}
	return 0, false
}

// valueSource says where param d's value came from.
func valueSource(d *specs.ParamDecl, set map[string]any, meta *specs.Meta) string {
	if raw, ok := set[d.Name]; ok {
		return fmt.Sprintf("--set %s=%v", d.Name, raw)
	}
	if key, _, ok := meta.Lookup(d); ok {
		return fmt.Sprintf("checkpoint key %s", key)
	}
	return fmt.Sprintf("%s (params.%s)", d.Pos, d.Name)
}

// setType checks a --set value against the type of the param's default
// literal (a param defined by an expression takes any number).
func setType(d *specs.ParamDecl, raw any) error {
	want := "a number"
	switch d.Literal.(type) {
	case int64:
		want = "an integer"
	case bool:
		want = "true or false"
	case string:
		want = "a string"
	}
	ok := false
	switch x := raw.(type) {
	case int64:
		ok = want == "an integer" || want == "a number"
	case float64:
		ok = want == "a number" || want == "an integer" && x == math.Trunc(x) && !math.IsInf(x, 0)
	case bool:
		ok = want == "true or false"
	case string:
		ok = want == "a string"
	}
	if !ok {
		return fmt.Errorf("want %s", want)
	}
	return nil
}
