package gguf

// Metadata holds GGUF key/value pairs. Scalars keep their Go type (uint32,
// int32, float32, bool, string, uint64, ...); arrays are typed slices
// ([]string, []float32, []int32, []uint32, []uint8, []int8, []bool,
// []int64, []uint64, []float64; 16-bit arrays widen to []int64).
type Metadata map[string]any

// Int returns an integer value of any width.
func (m Metadata) Int(key string) (int64, bool) {
	switch v := m[key].(type) {
	case uint8:
		return int64(v), true
	case int8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case int16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case int32:
		return int64(v), true
	case uint64:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// Float returns a numeric value as float64.
func (m Metadata) Float(key string) (float64, bool) {
	switch v := m[key].(type) {
	case float32:
		return float64(v), true
	case float64:
		return v, true
	}
	if i, ok := m.Int(key); ok {
		return float64(i), true
	}
	return 0, false
}

// String returns a string value.
func (m Metadata) String(key string) (string, bool) { s, ok := m[key].(string); return s, ok }

// Bool returns a bool value.
func (m Metadata) Bool(key string) (bool, bool) { b, ok := m[key].(bool); return b, ok }

// Strings returns a string array.
func (m Metadata) Strings(key string) ([]string, bool) { s, ok := m[key].([]string); return s, ok }

// Float32s returns a float32 array.
func (m Metadata) Float32s(key string) ([]float32, bool) { s, ok := m[key].([]float32); return s, ok }

// Ints returns an integer array of any width as int64s.
func (m Metadata) Ints(key string) ([]int64, bool) {
	switch v := m[key].(type) {
	case []int32:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out, true
	case []uint32:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out, true
	case []int64:
		return v, true
	case []uint64:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out, true
	case []uint8:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out, true
	case []int8:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out, true
	}
	return nil, false
}
