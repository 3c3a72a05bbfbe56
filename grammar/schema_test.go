package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSchemaCompile(t *testing.T) {
	v := byteVocab()
	tests := []struct {
		name   string
		schema string
		accept []string
		reject []string
	}{
		{"string", `{"type":"string"}`, []string{`""`, `"a b"`, `"\"\\\/\b\f\n\r\t\u00e9"`, `"é😀"`},
			[]string{`"a`, `"\x"`, "\"a\nb\"", `"\ud800"`, `1`}},
		{"string lengths", `{"type":"string","minLength":2,"maxLength":3}`, []string{`"ab"`, `"abc"`, `"é\n"`},
			[]string{`"a"`, `"abcd"`}},
		{"integer", `{"type":"integer"}`, []string{`0`, `-12`, `1234567890123456`}, []string{`01`, `1.5`, `1e3`, `-`, `12345678901234567`}},
		{"number", `{"type":"number"}`, []string{`0`, `-1.25`, `3e10`, `1.5E-3`}, []string{`.5`, `1.`, `+1`, `1e`}},
		{"boolean null", `{"type":["boolean","null"]}`, []string{`true`, `false`, `null`}, []string{`0`, `"true"`}},
		{"enum", `{"enum":["a",1,null,[1,{"b":2}]]}`, []string{`"a"`, `1`, `null`, `[1,{"b":2}]`}, []string{`"b"`, `2`, `[1, {"b":2}]`}},
		{"enum typed", `{"type":"string","enum":["a",1]}`, []string{`"a"`}, []string{`1`}},
		{"const", `{"const":"x\"y"}`, []string{`"x\"y"`}, []string{`"xy"`}},
		{"object", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"]}`,
			[]string{`{"a":1}`, `{ "a": 1, "b": "x" }`, "{\n  \"a\": 1,\n  \"b\": \"\"\n}"},
			[]string{`{}`, `{"b":"x"}`, `{"b":"x","a":1}`, `{"a":1,"c":2}`, `{"a":1,}`}},
		{"all optional", `{"properties":{"a":{"const":1},"b":{"const":2},"c":{"const":3}}}`,
			[]string{`{}`, `{"a":1}`, `{"b":2}`, `{"a":1,"c":3}`, `{"a":1,"b":2,"c":3}`},
			[]string{`{"c":3,"a":1}`, `{,"b":2}`, `{"a":1,}`}},
		{"required in the middle", `{"properties":{"a":{"const":1},"b":{"const":2},"c":{"const":3}},"required":["b"]}`,
			[]string{`{"b":2}`, `{"a":1,"b":2}`, `{"b":2,"c":3}`, `{"a":1,"b":2,"c":3}`},
			[]string{`{}`, `{"a":1}`, `{"a":1,"c":3}`}},
		{"closed empty", `{"type":"object","properties":{},"additionalProperties":false}`, []string{`{}`, `{ }`}, []string{`{"a":1}`}},
		{"any object", `{"type":"object"}`, []string{`{}`, `{"x":[1,{"y":null}]}`}, []string{`[]`}},
		{"map", `{"type":"object","additionalProperties":{"type":"integer"}}`, []string{`{}`, `{"x":1,"y":2}`}, []string{`{"x":"1"}`}},
		{"array", `{"type":"array","items":{"type":"integer"}}`, []string{`[]`, `[1]`, `[1, 2,3]`}, []string{`[1,]`, `["a"]`}},
		{"array bounds", `{"type":"array","minItems":1,"maxItems":2}`, []string{`[1]`, `[1,"a"]`}, []string{`[]`, `[1,2,3]`}},
		{"array exact", `{"items":{"const":0},"minItems":2,"maxItems":2}`, []string{`[0,0]`}, []string{`[0]`, `[0,0,0]`}},
		{"array at most", `{"items":{"const":0},"maxItems":2}`, []string{`[]`, `[0]`, `[0,0]`}, []string{`[0,0,0]`}},
		{"array at least", `{"items":{"const":0},"minItems":2}`, []string{`[0,0]`, `[0,0,0,0]`}, []string{`[0]`}},
		{"items false", `{"type":"array","items":false}`, []string{`[]`}, []string{`[1]`}},
		{"anyOf", `{"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]}`, []string{`1`, `"a"`}, []string{`"ab"`, `null`}},
		{"oneOf", `{"oneOf":[{"type":"null"},{"type":"boolean"}]}`, []string{`null`, `true`}, []string{`1`}},
		{"defs ref", `{"$defs":{"P":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},"type":"array","items":{"$ref":"#/$defs/P"}}`,
			[]string{`[{"x":1},{"x":2}]`}, []string{`[{}]`}},
		{"definitions ref", `{"definitions":{"S":{"type":"string"}},"$ref":"#/definitions/S"}`, []string{`"a"`}, []string{`1`}},
		{"recursive ref", `{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#"}}},"required":["v"]}`,
			[]string{`{"v":1}`, `{"v":1,"kids":[{"v":2,"kids":[]},{"v":3}]}`}, []string{`{"v":1,"kids":[{}]}`}},
		{"nullable string", `{"type":["string","null"],"maxLength":1}`, []string{`"a"`, `null`}, []string{`"ab"`}},
		{"true", `true`, []string{`1`, `{"a":[]}`}, []string{`x`}},
		{"annotations", `{"title":"T","description":"d","default":1,"examples":[1],"$schema":"x","type":"integer"}`, []string{`1`}, nil},
		{"escaped key", `{"properties":{"a\"b\u00e9":{"type":"null"}},"required":["a\"b\u00e9"]}`, []string{`{"a\"bé":null}`}, []string{`{"a\"b\u00e9":null}`}},
		{"date", `{"type":"string","format":"date"}`, []string{`"2024-01-31"`, `"0000-12-01"`, `"1999-02-28"`, `"2023-04-30"`},
			[]string{`"2024-1-31"`, `"2024-13-01"`, `"2024-04-31"`, `"2024-02-30"`, `"2024-00-10"`, `"2024-01-00"`}},
		{"time", `{"format":"time"}`, []string{`"23:59:59Z"`, `"00:00:00.123+05:30"`}, []string{`"24:00:00Z"`, `"12:00:00"`, `"12:60:00Z"`}},
		{"date-time", `{"type":"string","format":"date-time"}`, []string{`"2024-05-06T07:08:09.5-01:00"`}, []string{`"2024-05-06 07:08:09Z"`}},
		{"uuid", `{"type":"string","format":"uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`}, []string{`"123e4567e89b12d3a456426614174000"`}},
		{"other members", `{"properties":{"a":{"type":"integer"},"ab":{"const":0}},"required":["a"],"additionalProperties":true}`,
			[]string{`{"a":1}`, `{"a":1,"b":[2]}`, `{"a":1,"ab":0,"abc":2,"":3,"x":{}}`, `{"a":1,"aa":2,"é":3}`},
			[]string{`{"a":1,"a":2}`, `{"b":1}`, `{"a":1,"ab":1}`, `{"a":1,"b":1,"ab":0}`, `{"a":1,"q\"":2}`}},
		{"other members optional", `{"properties":{"a":{"const":1}},"additionalProperties":{"type":"string"}}`,
			[]string{`{}`, `{"a":1}`, `{"x":"y"}`, `{"a":1,"x":"y"}`, `{"x":"y","z":""}`},
			[]string{`{"x":1}`, `{"a":2}`, `{"x":"y","a":1}`, `{"a":"s"}`, `{,"x":"y"}`}},
		{"other members empty key", `{"properties":{"":{"const":0}},"additionalProperties":true}`,
			[]string{`{"":0}`, `{"x":1}`}, []string{`{"":1}`}},
		{"allOf wrapper", `{"allOf":[{"$ref":"#/$defs/A"},{"description":"x"}],"$defs":{"A":{"type":"integer"}}}`, []string{`1`}, []string{`"1"`}},
		{"prefixItems", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}`,
			[]string{`[]`, `[1]`, `[1,"a"]`}, []string{`["a"]`, `[1,"a",2]`, `[1,2]`}},
		{"prefixItems bounded", `{"prefixItems":[{"const":1},{"const":2}],"items":{"const":0},"minItems":2,"maxItems":4}`,
			[]string{`[1,2]`, `[1,2,0]`, `[1,2,0,0]`}, []string{`[1]`, `[1,2,0,0,0]`, `[1,2,1]`}},
		{"prefixItems cut", `{"prefixItems":[{"const":1},{"const":2},{"const":3}],"maxItems":2}`, []string{`[1,2]`, `[1]`, `[]`}, []string{`[1,2,3]`}},
		{"tuple items", `{"items":[{"type":"null"},{"type":"boolean"}],"additionalItems":{"type":"integer"},"minItems":2}`,
			[]string{`[null,true]`, `[null,false,3,4]`}, []string{`[null]`, `[null,true,"x"]`}},
		{"required undeclared", `{"properties":{"a":{"type":"null"}},"required":["z"]}`, []string{`{"z":[1]}`, `{"a":null,"z":1}`}, []string{`{"a":null}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := FromJSONSchema([]byte(tc.schema))
			if err != nil {
				t.Fatalf("FromJSONSchema: %v", err)
			}
			for _, s := range tc.accept {
				if !matches(g, v, s) {
					src, _ := SchemaToGBNF([]byte(tc.schema))
					t.Errorf("rejects %s\n%s", s, src)
				}
			}
			for _, s := range tc.reject {
				if matches(g, v, s) {
					t.Errorf("accepts %s", s)
				}
			}
		})
	}
}

func TestIntegerRanges(t *testing.T) {
	v := byteVocab()
	r := rand.New(rand.NewSource(1))
	for range 40 {
		lo := r.Intn(1200) - 600
		hi := lo + r.Intn(1300)
		var schema string
		switch r.Intn(3) {
		case 0:
			schema = fmt.Sprintf(`{"type":"integer","minimum":%d,"maximum":%d}`, lo, hi)
		case 1:
			schema = fmt.Sprintf(`{"type":"integer","exclusiveMinimum":%d,"exclusiveMaximum":%d}`, lo-1, hi+1)
		default:
			schema = fmt.Sprintf(`{"type":"integer","minimum":%g,"maximum":%g,"exclusiveMaximum":true}`, float64(lo)-0.5, float64(hi)+0.5)
		}
		g, err := FromJSONSchema([]byte(schema))
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		m := g.NewMatcher(v)
		for x := -1400; x <= 1400; x++ {
			m.Reset()
			got := m.AcceptBytes([]byte(strconv.Itoa(x))) == nil && m.CanEnd()
			if want := lo <= x && x <= hi; got != want {
				src, _ := SchemaToGBNF([]byte(schema))
				t.Fatalf("%s: %d: got %v, want %v\n%s", schema, x, got, want, src)
			}
		}
	}
	for _, tc := range []struct {
		schema    string
		in, notIn []string
	}{
		{`{"type":"integer","minimum":0}`, []string{"0", "7", "9999999999999999"}, []string{"-1", "-0", "00"}},
		{`{"type":"integer","maximum":-3}`, []string{"-3", "-9999999999999999"}, []string{"-2", "0"}},
		{`{"type":"integer","minimum":100,"maximum":100}`, []string{"100"}, []string{"10", "101", "1000"}},
		{`{"type":["integer","null"],"exclusiveMinimum":0}`, []string{"1", "null"}, []string{"0"}},
	} {
		g, err := FromJSONSchema([]byte(tc.schema))
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		for _, s := range tc.in {
			if !matches(g, v, s) {
				t.Errorf("%s rejects %s", tc.schema, s)
			}
		}
		for _, s := range tc.notIn {
			if matches(g, v, s) {
				t.Errorf("%s accepts %s", tc.schema, s)
			}
		}
	}
}

func TestNumberRanges(t *testing.T) {
	v := byteVocab()
	r := rand.New(rand.NewSource(2))
	for range 40 {
		var parts []string
		var lo, hi *big.Rat
		loEx, hiEx := false, false
		if r.Intn(4) != 0 {
			x := r.Intn(21) - 10
			lo = big.NewRat(int64(x), 1)
			loEx = r.Intn(2) == 0
			parts = append(parts, fmt.Sprintf(`"%s":%d`, map[bool]string{false: "minimum", true: "exclusiveMinimum"}[loEx], x))
		}
		if r.Intn(4) != 0 {
			x := r.Intn(21) - 5
			hi = big.NewRat(int64(x), 1)
			hiEx = r.Intn(2) == 0
			parts = append(parts, fmt.Sprintf(`"%s":%d`, map[bool]string{false: "maximum", true: "exclusiveMaximum"}[hiEx], x))
		}
		schema := `{"type":"number"` + strings.Join(append([]string{""}, parts...), ",") + `}`
		in := func(x *big.Rat) bool {
			if lo != nil && (x.Cmp(lo) < 0 || loEx && x.Cmp(lo) == 0) {
				return false
			}
			return hi == nil || x.Cmp(hi) < 0 || !hiEx && x.Cmp(hi) == 0
		}
		g, err := FromJSONSchema([]byte(schema))
		if err != nil {
			// only an empty range may fail
			for x := -60; x <= 60; x++ {
				if in(big.NewRat(int64(x), 4)) {
					t.Fatalf("%s: %v", schema, err)
				}
			}
			continue
		}
		m := g.NewMatcher(v)
		for x := -60; x <= 60; x++ {
			for _, text := range []string{
				fmt.Sprintf("%g", float64(x)/4),
				fmt.Sprintf("%.2f", float64(x)/4),
				fmt.Sprintf("%.3f", float64(x)/4+0.001),
			} {
				val, _ := new(big.Rat).SetString(text)
				m.Reset()
				got := m.AcceptBytes([]byte(text)) == nil && m.CanEnd()
				// negative zero is never written
				want := in(val) && !(strings.HasPrefix(text, "-") && val.Sign() == 0)
				if got != want {
					src, _ := SchemaToGBNF([]byte(schema))
					t.Fatalf("%s: %s: got %v, want %v\n%s", schema, text, got, want, src)
				}
			}
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"properties":{"age":{"type":"integer","multipleOf":5}}}`, `$.properties.age: unsupported keyword "multipleOf"`},
		{`{"type":"number","minimum":0.5}`, `$.minimum: unsupported: a bound on a number that is not an integer (0.5)`},
		{`{"type":"number","minimum":3,"exclusiveMaximum":3}`, `$: no number lies between the bounds`},
		{`{"type":"integer","minimum":5,"maximum":4}`, `$: no integer of at most 16 digits lies between the bounds`},
		{`{"type":"array","contains":{}}`, `$: unsupported keyword "contains"`},
		{`{"allOf":[{"type":"string"},{"maxLength":3}]}`, `$.allOf[1]: unsupported: allOf with more than one constraining schema`},
		{`{"prefixItems":[{}],"items":[{}]}`, `$.items: must be a schema when prefixItems is given`},
		{`{"prefixItems":[{}],"items":false,"minItems":2}`, `$.items: allows no more items but minItems is 2`},
		{`{"anyOf":[{"type":"string"},{"not":{}}]}`, `$.anyOf[1]: unsupported keyword "not"`},
		{`{"allOf":[]}`, `$.allOf: must be a non-empty array of schemas`},
		{`{"properties":{"a b":{"uniqueItems":true}}}`, `$.properties["a b"]: unsupported keyword "uniqueItems"`},
		{`{"type":"string","pattern":"a(?!b)"}`, `$.pattern: at offset 2: unsupported group (lookaround or named group)`},
		{`{"type":"string","format":"email"}`, `$.format: unsupported format "email" (supported: date, time, date-time, uuid)`},
		{`{"type":"string","format":"date","maxLength":5}`, `$: unsupported: "maxLength" together with "format"`},
		{`{"type":"strin"}`, `$.type: unknown type "strin" (want one of object, array, string, number, integer, boolean, null)`},
		{`{"$ref":"#/$defs/missing"}`, `$.$ref: $ref "#/$defs/missing": no such location in the schema`},
		{`{"$ref":"http://x/y.json"}`, `$.$ref: unsupported: $ref "http://x/y.json" outside this document`},
		{`{"type":"array","minItems":3,"maxItems":2}`, `$: maxItems 2 is less than minItems 3`},
		{`{"type":"array","minItems":-1}`, `$.minItems: must be a non-negative integer`},
		{`{"type":"string","maxLength":1.5}`, `$.maxLength: must be a non-negative integer`},
		{`{"type":"array","maxItems":1000000}`, `$.maxItems: 1000000 is over the supported limit of 65536`},
		{`{"properties":{"a":{}},"required":["b"],"additionalProperties":false}`, `$.required[0]: required property "b" is not in properties and additionalProperties is false`},
		{`{"enum":[]}`, `$.enum: must be a non-empty array`},
		{`{"type":"string","enum":[1]}`, `$.enum: no value of the schema's type`},
		{`{"anyOf":[{"type":"string"}],"type":"string"}`, `$: unsupported: "anyOf" together with "type"`},
		{`false`, `$: schema false matches nothing`},
		{`{"properties":{"a":false},"required":["a"]}`, `$.properties.a: required property has schema false`},
		{`{"$defs":{"A":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"}`, `left recursion`},
		{`[1]`, `$: a schema must be an object or a boolean`},
		{`{"type":`, `invalid JSON: unexpected EOF`},
		{`{"a":1,"a":2}`, `invalid JSON: duplicate key "a"`},
		{`{} {}`, `invalid JSON: data after the schema`},
	}
	for _, tc := range tests {
		_, err := FromJSONSchema([]byte(tc.schema))
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.schema, tc.want)
			continue
		}
		got := strings.TrimPrefix(err.Error(), "grammar: json schema: ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.schema, got, tc.want)
		}
		var se *SchemaError
		if strings.HasPrefix(tc.want, "$") && (!errors.As(err, &se) || !strings.HasPrefix(tc.want, se.Path+":")) {
			t.Errorf("%s: error %T %v is not a SchemaError at the path", tc.schema, err, err)
		}
	}
}

func TestJSONGrammar(t *testing.T) {
	g := JSON()
	v := byteVocab()
	for _, s := range []string{`0`, `"x"`, `[]`, `{}`, `{"a":[1,2,{"b":null}],"c":true} `, "[\n  1,\n  2\n]", `-0.5e+10`} {
		if !matches(g, v, s) {
			t.Errorf("rejects %s", s)
		}
	}
	for _, s := range []string{``, ` 0`, `[1,]`, `{"a"}`, `01`, `nul`, `"\ud800"`, "0\n\n"} {
		if matches(g, v, s) {
			t.Errorf("accepts %q", s)
		}
	}
}

// The rest of this file is a validator for the schema subset, written from
// the JSON Schema specification independently of the compiler, and a
// property test: random schemas, random walks, validated outputs.

type validator struct{ root any }

func decodeNumbers(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

func rat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		panic("bad number " + n)
	}
	return r
}

func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		return ok && rat(a).Cmp(rat(b)) == 0
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	}
	return a == b
}

func hasType(x any, t string) bool {
	switch t {
	case "null":
		return x == nil
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "number":
		_, ok := x.(json.Number)
		return ok
	case "integer":
		n, ok := x.(json.Number)
		return ok && rat(n).IsInt()
	case "array":
		_, ok := x.([]any)
		return ok
	case "object":
		_, ok := x.(map[string]any)
		return ok
	}
	return false
}

func (v *validator) resolve(ref string) any {
	var cur any = v.root
	if ref == "#" {
		return cur
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cur = cur.(map[string]any)[tok]
	}
	return cur
}

func num(x any) int {
	n, _ := strconv.Atoi(string(x.(json.Number)))
	return n
}

// validate checks x against schema s (the supported subset; oneOf means
// exactly one).
func (v *validator) validate(s, x any) error {
	if b, ok := s.(bool); ok {
		if !b {
			return errors.New("schema false")
		}
		return nil
	}
	sm := s.(map[string]any)
	if ref, ok := sm["$ref"]; ok {
		return v.validate(v.resolve(ref.(string)), x)
	}
	if all, ok := sm["allOf"]; ok {
		for _, a := range all.([]any) {
			if err := v.validate(a, x); err != nil {
				return fmt.Errorf("allOf: %w", err)
			}
		}
	}
	if alts, ok := sm["anyOf"]; ok {
		for _, a := range alts.([]any) {
			if v.validate(a, x) == nil {
				return nil
			}
		}
		return errors.New("no anyOf branch matches")
	}
	if alts, ok := sm["oneOf"]; ok {
		n := 0
		for _, a := range alts.([]any) {
			if v.validate(a, x) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%d oneOf branches match", n)
		}
		return nil
	}
	if t, ok := sm["type"]; ok {
		types, _ := t.([]any)
		if s, ok := t.(string); ok {
			types = []any{s}
		}
		match := false
		for _, t := range types {
			match = match || hasType(x, t.(string))
		}
		if !match {
			return fmt.Errorf("%v is not of type %v", x, t)
		}
	}
	if c, ok := sm["const"]; ok && !jsonEqual(c, x) {
		return fmt.Errorf("%v is not the const %v", x, c)
	}
	if e, ok := sm["enum"]; ok {
		found := false
		for _, c := range e.([]any) {
			found = found || jsonEqual(c, x)
		}
		if !found {
			return fmt.Errorf("%v is not in the enum", x)
		}
	}
	switch x := x.(type) {
	case json.Number:
		for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			b, ok := sm[kw].(json.Number)
			if !ok {
				continue
			}
			c := rat(x).Cmp(rat(b))
			if kw == "minimum" && c < 0 || kw == "maximum" && c > 0 ||
				kw == "exclusiveMinimum" && c <= 0 || kw == "exclusiveMaximum" && c >= 0 {
				return fmt.Errorf("%v violates %s %v", x, kw, b)
			}
		}
	case string:
		if re, ok := sm["pattern"].(string); ok && !regexp.MustCompile(re).MatchString(x) {
			return fmt.Errorf("%q does not match %q", x, re)
		}
		if f, ok := sm["format"].(string); ok {
			if err := checkFormat(f, x); err != nil {
				return err
			}
		}
		n := utf8.RuneCountInString(x)
		if m, ok := sm["minLength"]; ok && n < num(m) {
			return fmt.Errorf("%q shorter than %v", x, m)
		}
		if m, ok := sm["maxLength"]; ok && n > num(m) {
			return fmt.Errorf("%q longer than %v", x, m)
		}
	case []any:
		if m, ok := sm["minItems"]; ok && len(x) < num(m) {
			return fmt.Errorf("fewer than %v items", m)
		}
		if m, ok := sm["maxItems"]; ok && len(x) > num(m) {
			return fmt.Errorf("more than %v items", m)
		}
		var prefix []any
		rest, hasRest := sm["items"]
		if p, ok := sm["prefixItems"].([]any); ok {
			prefix = p
		} else if p, ok := rest.([]any); ok {
			prefix = p
			rest, hasRest = sm["additionalItems"]
		}
		for i, e := range x {
			var err error
			switch {
			case i < len(prefix):
				err = v.validate(prefix[i], e)
			case hasRest:
				err = v.validate(rest, e)
			}
			if err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	case map[string]any:
		props, _ := sm["properties"].(map[string]any)
		for k, e := range x {
			ps, declared := props[k]
			if !declared {
				ps, declared = sm["additionalProperties"]
			}
			if declared {
				if err := v.validate(ps, e); err != nil {
					return fmt.Errorf("property %q: %w", k, err)
				}
			}
		}
		if req, ok := sm["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					return fmt.Errorf("required property %q missing", r)
				}
			}
		}
	}
	return nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// checkFormat validates the string formats of RFC 3339 (through the time
// package's parser) and RFC 4122.
func checkFormat(f, s string) error {
	var err error
	switch f {
	case "date":
		_, err = time.Parse("2006-01-02", s)
	case "time":
		_, err = time.Parse(time.RFC3339Nano, "2000-01-01T"+s)
	case "date-time":
		_, err = time.Parse(time.RFC3339Nano, s)
	case "uuid":
		if !uuidRE.MatchString(s) {
			err = errors.New("not a uuid")
		}
	default:
		err = fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return fmt.Errorf("%q is not a %s: %w", s, f, err)
	}
	return nil
}

// ordered is a JSON object that keeps its members' order when marshaled.
type ordered []struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o *ordered) add(k string, v any) {
	*o = append(*o, struct {
		k string
		v any
	}{k, v})
}

type sgen struct {
	r    *rand.Rand
	defs []string
}

var keyAlphabet = []string{"a", "b", "id", "name", "x y", "é", `q"t`, `b\s`, "tab\t", "😀"}

func (g *sgen) literal(depth int) any {
	switch g.r.Intn(7) {
	case 0:
		return keyAlphabet[g.r.Intn(len(keyAlphabet))]
	case 1:
		return g.r.Intn(100) - 50
	case 2:
		return 1.5
	case 3:
		return g.r.Intn(2) == 0
	case 4:
		return nil
	case 5:
		if depth < 2 {
			return []any{g.literal(depth + 1), g.literal(depth + 1)}
		}
		return "s"
	default:
		if depth < 2 {
			var o ordered
			o.add(keyAlphabet[g.r.Intn(len(keyAlphabet))], g.literal(depth+1))
			return o
		}
		return 7
	}
}

var disjointTypes = []string{"string", "integer", "boolean", "null", "object", "array"}

func (g *sgen) schema(depth int) any {
	var o ordered
	k := g.r.Intn(16)
	if depth > 3 {
		k = g.r.Intn(6)
	}
	switch k {
	case 0:
		o.add("type", "string")
		if g.r.Intn(2) == 0 {
			o.add("minLength", g.r.Intn(3))
		}
		if g.r.Intn(2) == 0 {
			o.add("maxLength", 3+g.r.Intn(3))
		}
	case 1:
		o.add("type", []string{"integer", "number", "boolean", "null"}[g.r.Intn(4)])
		if o[0].v == "number" && g.r.Intn(2) == 0 {
			lo := g.r.Intn(20) - 10
			o.add([]string{"minimum", "exclusiveMinimum"}[g.r.Intn(2)], lo)
			if g.r.Intn(2) == 0 {
				o.add([]string{"maximum", "exclusiveMaximum"}[g.r.Intn(2)], lo+1+g.r.Intn(30))
			}
		}
		if o[0].v == "integer" && g.r.Intn(2) == 0 {
			lo := g.r.Intn(200) - 100
			o.add([]string{"minimum", "exclusiveMinimum"}[g.r.Intn(2)], lo)
			if g.r.Intn(2) == 0 {
				o.add("maximum", lo+2+g.r.Intn(300))
			}
		}
	case 2:
		var vals []any
		for range 1 + g.r.Intn(4) {
			vals = append(vals, g.literal(0))
		}
		o.add("enum", vals)
	case 3:
		o.add("const", g.literal(0))
	case 4:
		if g.r.Intn(3) == 0 {
			o.add("pattern", []string{`^\d{3}-\d{4}$`, `^[a-z]+$`, `a"b`, `^(?:x|y\\z)+$`, `é.`, `^[^"]{2}$`, `\t`}[g.r.Intn(7)])
			break
		}
		if g.r.Intn(2) == 0 {
			o.add("type", "string")
			o.add("format", []string{"date", "time", "date-time", "uuid"}[g.r.Intn(4)])
			break
		}
		o.add("type", []string{"string", "null"})
		o.add("title", "nullable")
	case 5:
		if len(g.defs) > 0 {
			o.add("$ref", g.defs[g.r.Intn(len(g.defs))])
		} else {
			return true
		}
	case 6, 7, 8:
		o.add("type", "object")
		var props ordered
		var req []string
		for i := range g.r.Intn(5) {
			key := keyAlphabet[(i*3+g.r.Intn(3))%len(keyAlphabet)]
			dup := false
			for _, p := range props {
				dup = dup || p.k == key
			}
			if dup {
				continue
			}
			props.add(key, g.schema(depth+1))
			if g.r.Intn(2) == 0 {
				req = append(req, key)
			}
		}
		o.add("properties", props)
		if len(req) > 0 {
			o.add("required", req)
		}
		switch g.r.Intn(4) {
		case 0, 1:
			o.add("additionalProperties", false)
		case 2:
			if g.r.Intn(2) == 0 {
				o.add("additionalProperties", true)
			} else {
				o.add("additionalProperties", g.schema(depth+1))
			}
		}
	case 9:
		o.add("type", "object")
		if g.r.Intn(2) == 0 {
			o.add("additionalProperties", g.schema(depth+1))
		}
	case 10, 11:
		o.add("type", "array")
		if g.r.Intn(4) != 0 {
			o.add("items", g.schema(depth+1))
		}
		min := 0
		if g.r.Intn(2) == 0 {
			min = g.r.Intn(3)
			o.add("minItems", min)
		}
		if g.r.Intn(2) == 0 {
			o.add("maxItems", min+g.r.Intn(3))
		}
	case 12:
		if g.r.Intn(3) == 0 {
			o.add("allOf", []any{g.schema(depth + 1), map[string]string{"description": "wrapped"}})
			break
		}
		if g.r.Intn(2) == 0 {
			o.add("type", "array")
			o.add("prefixItems", []any{g.schema(depth + 1), g.schema(depth + 1)})
			switch g.r.Intn(3) {
			case 0:
				o.add("items", false)
			case 1:
				o.add("items", g.schema(depth+1))
			}
			if g.r.Intn(2) == 0 {
				o.add("minItems", g.r.Intn(3))
			}
			break
		}
		var alts []any
		for range 2 + g.r.Intn(2) {
			alts = append(alts, g.schema(depth+1))
		}
		o.add("anyOf", alts)
	case 13:
		var alts []any
		for _, i := range g.r.Perm(len(disjointTypes))[:2+g.r.Intn(2)] {
			var b ordered
			b.add("type", disjointTypes[i])
			alts = append(alts, b)
		}
		o.add("oneOf", alts)
	case 14:
		return true
	default:
		o.add("description", "anything")
	}
	return o
}

// randomSchema returns a schema with up to two $defs, one of them
// possibly recursive.
func randomSchema(r *rand.Rand) []byte {
	g := &sgen{r: r}
	var defs ordered
	if r.Intn(2) == 0 {
		g.defs = append(g.defs, "#/$defs/Tree")
		var tree, props, kids ordered
		kids.add("type", "array")
		kids.add("items", map[string]string{"$ref": "#/$defs/Tree"})
		kids.add("maxItems", 2)
		props.add("v", map[string]string{"type": "integer"})
		props.add("kids", kids)
		tree.add("type", "object")
		tree.add("properties", props)
		tree.add("required", []string{"v"})
		defs.add("Tree", tree)
	}
	if r.Intn(2) == 0 {
		d := g.schema(2)
		g.defs = append(g.defs, "#/$defs/D")
		defs.add("D", d)
	}
	root := g.schema(0)
	if o, ok := root.(ordered); ok && len(defs) > 0 {
		o.add("$defs", defs)
		root = o
	}
	b, err := json.Marshal(root)
	if err != nil {
		panic(err)
	}
	return b
}

func TestPropertySchema(t *testing.T) {
	tv := newTestVocab()
	n := 300
	if testing.Short() {
		n = 50
	}
	complete, total := 0, 0
	for seed := range n {
		r := rand.New(rand.NewSource(int64(seed)))
		schema := randomSchema(r)
		g, err := FromJSONSchema(schema)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, schema, err)
		}
		root, err := decodeNumbers(schema)
		if err != nil {
			t.Fatal(err)
		}
		val := &validator{root: root}
		m := g.NewMatcher(tv.v)
		if seed%2 == 0 {
			m.limSkip = 1
		}
		for range 6 {
			m.Reset()
			w := randomWalk(t, r, m, tv, 400, seed%20 == 0)
			if w.complex {
				t.Fatalf("seed %d: %s: too complex", seed, schema)
			}
			total++
			if !w.complete {
				continue
			}
			complete++
			x, err := decodeNumbers(w.out)
			if err != nil {
				t.Fatalf("seed %d: schema %s\noutput %q is not JSON: %v", seed, schema, w.out, err)
			}
			if err := val.validate(root, x); err != nil {
				src, _ := SchemaToGBNF(schema)
				t.Fatalf("seed %d: schema %s\noutput %s\ninvalid: %v\ngrammar:\n%s", seed, schema, w.out, err, src)
			}
		}
	}
	t.Logf("%d of %d walks completed and validated", complete, total)
	if complete < total*3/4 {
		t.Errorf("only %d of %d walks completed: the test checks too little", complete, total)
	}
}

// TestMaskLargeVocab checks masks over a 6000-token English-like
// vocabulary, where the walk skips large subtrees, token by token against
// Allows, along random walks under random schemas and the JSON grammar.
func TestMaskLargeVocab(t *testing.T) {
	toks, eog := englishVocab(6000)
	tv := &testVocab{toks: toks, eog: eog, v: NewVocab(toks, []int{eog})}
	n := 40
	if testing.Short() {
		n = 8
	}
	for seed := range n {
		r := rand.New(rand.NewSource(int64(seed)))
		g := JSON()
		if seed%4 == 1 {
			g, _ = FromJSONSchema([]byte(`{"type":"array","items":{"type":"string","minLength":3,"maxLength":40}}`))
		} else if seed%4 != 0 {
			var err error
			if g, err = FromJSONSchema(randomSchema(r)); err != nil {
				t.Fatal(err)
			}
		}
		m := g.NewMatcher(tv.v)
		m.limSkip = int32(1 + seed%20)
		for range 2 {
			m.Reset()
			randomWalk(t, r, m, tv, 200, true)
		}
		// and a random GBNF grammar (negated classes, '.', counters)
		_, src := randomGrammar(r)
		if g, err := Parse(src); err == nil {
			m := g.NewMatcher(tv.v)
			m.limSkip, m.limStacks = int32(1+seed%20), 256
			randomWalk(t, r, m, tv, 100, true)
		}
	}
}

func TestSchemaPattern(t *testing.T) {
	v := byteVocab()
	for _, tc := range []struct {
		pattern        string
		accept, reject []string
	}{
		{`^\d{3}-[A-Z]+$`, []string{`"123-AB"`}, []string{`"12-AB"`, `"123-ab"`, `"x123-AB"`}},
		{`ab`, []string{`"ab"`, `"xaby"`}, []string{`"a"`, `"ba"`}},
		{`^a"b\\c$`, []string{`"a\"b\\c"`}, []string{`"a"b\\c"`, `"a\"bc"`}},
		{`^(?:foo|ba[rz])*?$`, []string{`""`, `"foobaz"`, `"barbar"`}, []string{`"fo"`, `"bax"`}},
		{`^[^a]$`, []string{`"b"`, `"\""`, `"\n"`, `"\u0001"`, `"é"`}, []string{`"a"`, `"bb"`, `"\u0061"`}},
		{`^.$`, []string{`"x"`, `"\t"`}, []string{`"\n"`, `"\r"`}},
		{`^\s\S$`, []string{"\"\u00a0x\"", `"\tx"`}, []string{`"x "`}},
		{`^\w+@\w+\.com$`, []string{`"a_1@b.com"`}, []string{`"a@b.org"`, `"a@bxcom"`}},
		{`^x{2,3}y?$`, []string{`"xx"`, `"xxxy"`}, []string{`"x"`, `"xxxx"`}},
		{`^[\x41-\x43\u00e9]$`, []string{`"B"`, `"é"`}, []string{`"D"`}},
		{`^[a\-z]$`, []string{`"-"`, `"z"`}, []string{`"b"`}},
	} {
		schema := fmt.Sprintf(`{"type":"string","pattern":%s}`, jsonString(tc.pattern))
		g, err := FromJSONSchema([]byte(schema))
		if err != nil {
			t.Errorf("%s: %v", schema, err)
			continue
		}
		for _, s := range tc.accept {
			if !matches(g, v, s) {
				t.Errorf("%s rejects %s", tc.pattern, s)
			}
		}
		for _, s := range tc.reject {
			if matches(g, v, s) {
				t.Errorf("%s accepts %s", tc.pattern, s)
			}
		}
	}
	for _, tc := range []struct{ pattern, want string }{
		{`a(?=b)`, `$.pattern: at offset 2: unsupported group (lookaround or named group)`},
		{`(a)\1`, `$.pattern: at offset 5: unsupported backreference`},
		{`\bword`, `$.pattern: at offset 2: unsupported word boundary \b`},
		{`a^b`, `$.pattern: at offset 2: unsupported anchor '^' inside the pattern`},
		{`^a|b$`, `$.pattern: anchors around a top-level alternation are ambiguous: write ^(a|b)$`},
		{`(ab`, `$.pattern: at offset 3: missing )`},
		{`*a`, `$.pattern: at offset 1: nothing to repeat before '*'`},
		{`[^\s\S]`, `$.pattern: a character class matches nothing`},
	} {
		schema := fmt.Sprintf(`{"type":"string","pattern":%s}`, jsonString(tc.pattern))
		_, err := FromJSONSchema([]byte(schema))
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s", tc.pattern, err, tc.want)
		}
	}
}

// TestPropertyPattern generates regular expressions, walks their
// grammars and checks each completed string, decoded, with Go's regexp
// (the generated subset means the same in RE2 and ECMA-262).
func TestPropertyPattern(t *testing.T) {
	tv := newTestVocab()
	n := 150
	if testing.Short() {
		n = 30
	}
	complete, total := 0, 0
	for seed := range n {
		r := rand.New(rand.NewSource(int64(seed)))
		re := randomRegex(r, 0)
		if r.Intn(2) == 0 {
			re = "^" + re
		}
		if r.Intn(2) == 0 {
			re += "$"
		}
		if strings.Contains(re, "|") && (strings.HasPrefix(re, "^") || strings.HasSuffix(re, "$")) {
			re = "^(?:" + strings.Trim(re, "^$") + ")$"
		}
		goRE, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("seed %d: Go cannot compile %q: %v", seed, re, err)
		}
		g, err := FromJSONSchema([]byte(fmt.Sprintf(`{"type":"string","pattern":%s}`, jsonString(re))))
		if err != nil {
			t.Fatalf("seed %d: %q: %v", seed, re, err)
		}
		m := g.NewMatcher(tv.v)
		m.limSkip = 1
		for range 4 {
			m.Reset()
			w := randomWalk(t, r, m, tv, 300, false)
			if w.complex {
				t.Fatalf("seed %d: %q: too complex", seed, re)
			}
			total++
			if !w.complete {
				continue
			}
			complete++
			x, err := decodeNumbers(w.out)
			if err != nil {
				t.Fatalf("seed %d: %q: output %q is not JSON: %v", seed, re, w.out, err)
			}
			if s, ok := x.(string); !ok || !goRE.MatchString(s) {
				t.Fatalf("seed %d: output %s does not match %q", seed, w.out, re)
			}
		}
	}
	t.Logf("%d of %d walks completed and matched", complete, total)
	if complete < total/2 {
		t.Errorf("only %d of %d walks completed", complete, total)
	}
}

var regexAtoms = []string{`a`, `b`, `é`, `\"`, `"`, `\\`, `\n`, `\t`, `.`, `\d`, `\w`, `\W`, `\D`, `\S`,
	`[abc]`, `[^a"]`, `[a-c\d]`, `[\x00-\x1f]`, `\.`, `\x41`, `[é-ê]`, `-`, `/`}

func randomRegex(r *rand.Rand, depth int) string {
	var b strings.Builder
	for range 1 + r.Intn(3) {
		switch k := r.Intn(8); {
		case k < 5 || depth > 2:
			b.WriteString(regexAtoms[r.Intn(len(regexAtoms))])
		case k == 5:
			b.WriteString("(?:" + randomRegex(r, depth+1) + "|" + randomRegex(r, depth+1) + ")")
		default:
			b.WriteString("(" + randomRegex(r, depth+1) + ")")
		}
		switch r.Intn(8) {
		case 0:
			b.WriteString("*")
		case 1:
			b.WriteString("+")
		case 2:
			b.WriteString("?")
		case 3:
			fmt.Fprintf(&b, "{%d,%d}", r.Intn(2), 1+r.Intn(3))
		case 4:
			fmt.Fprintf(&b, "{%d}", 1+r.Intn(2))
		}
	}
	if depth == 0 && r.Intn(4) == 0 {
		return b.String() + "|" + randomRegex(r, 1)
	}
	return b.String()
}

// TestRealisticSchemas compiles schemas shaped like those Pydantic and
// OpenAI tool definitions produce, and validates random outputs.
func TestRealisticSchemas(t *testing.T) {
	schemas := []string{
		// A Pydantic v2 model with a nested model, an optional field, an
		// enum, a tagged union and a description on a $ref.
		`{"$defs":{"Color":{"enum":["red","green","blue"],"title":"Color","type":"string"},
		  "Cat":{"properties":{"kind":{"const":"cat","title":"Kind"},"lives":{"maximum":9,"minimum":0,"title":"Lives","type":"integer"}},"required":["kind","lives"],"title":"Cat","type":"object"},
		  "Dog":{"properties":{"kind":{"const":"dog","title":"Kind"},"good":{"default":true,"title":"Good","type":"boolean"}},"required":["kind"],"title":"Dog","type":"object"}},
		 "properties":{"name":{"title":"Name","type":"string","minLength":1,"maxLength":20},
		  "color":{"allOf":[{"$ref":"#/$defs/Color"}],"description":"favourite colour"},
		  "nickname":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Nickname"},
		  "pet":{"discriminator":{"mapping":{"cat":"#/$defs/Cat","dog":"#/$defs/Dog"},"propertyName":"kind"},"oneOf":[{"$ref":"#/$defs/Cat"},{"$ref":"#/$defs/Dog"}],"title":"Pet"},
		  "scores":{"items":{"type":"number","minimum":0,"maximum":100},"title":"Scores","type":"array","maxItems":5},
		  "born":{"format":"date","type":"string"},
		  "id":{"format":"uuid","type":"string"},
		  "extra":{"additionalProperties":{"type":"integer"},"type":"object"}},
		 "required":["name","color","pet"],"title":"Person","type":"object"}`,
		// An OpenAI-style strict tool schema.
		`{"type":"object","properties":{"location":{"type":"string","description":"City and country"},
		  "unit":{"type":["string","null"],"enum":["celsius","fahrenheit",null]},
		  "days":{"type":"integer","minimum":1,"maximum":14}},
		 "required":["location","unit","days"],"additionalProperties":false}`,
		// llama.cpp's README example: an array of 10 to 100 {name, age}.
		`{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100},
		  "age":{"type":"integer","minimum":0,"maximum":150}},"required":["name","age"],"additionalProperties":false},
		 "minItems":10,"maxItems":100}`,
	}
	tv := newTestVocab()
	for i, schema := range schemas {
		g, err := FromJSONSchema([]byte(schema))
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		root, err := decodeNumbers([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		val := &validator{root: root}
		r := rand.New(rand.NewSource(int64(i)))
		m := g.NewMatcher(tv.v)
		done := 0
		for range 20 {
			m.Reset()
			w := randomWalk(t, r, m, tv, 3000, false)
			if !w.complete {
				continue
			}
			done++
			x, err := decodeNumbers(w.out)
			if err != nil {
				t.Fatalf("schema %d: %q is not JSON: %v", i, w.out, err)
			}
			if err := val.validate(root, x); err != nil {
				t.Fatalf("schema %d: %s: %v", i, w.out, err)
			}
		}
		if done == 0 {
			t.Errorf("schema %d: no walk completed", i)
		}
	}
}
