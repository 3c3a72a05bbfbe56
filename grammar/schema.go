package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// SchemaError is a JSON Schema the compiler cannot turn into a grammar: an
// unsupported keyword or value, or an invalid schema. Path is a JSONPath to
// the offending schema ("$.properties.age").
type SchemaError struct {
	Path string
	Msg  string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("grammar: json schema: %s: %s", e.Path, e.Msg)
}

// FromJSONSchema compiles a JSON Schema to a grammar for the JSON texts it
// accepts (SchemaToGBNF, then Parse).
func FromJSONSchema(schema []byte) (*Grammar, error) {
	src, err := SchemaToGBNF(schema)
	if err != nil {
		return nil, err
	}
	g, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("grammar: json schema: compiled grammar: %w", err)
	}
	return g, nil
}

// SchemaToGBNF compiles a JSON Schema to GBNF source whose sentences are
// JSON texts valid under the schema.
//
// Supported: type (one or a list), properties, required,
// additionalProperties (false or absent with properties; any schema
// without), items, prefixItems (and items as an array, with
// additionalItems), minItems, maxItems, minLength, maxLength, pattern (a
// regular expression subset), format (date, time, date-time, uuid),
// minimum, maximum, exclusiveMinimum and exclusiveMaximum (any for integers,
// integer bounds for numbers),
// enum, const, anyOf, oneOf (compiled as anyOf), allOf with one
// constraining subschema, $ref to "#" and JSON pointers into the document
// ("#/$defs/X", "#/definitions/X"), the boolean schema true, and
// annotations (title, description, default, examples, $schema, $id,
// $comment, deprecated, readOnly, writeOnly, content*, discriminator,
// x-*). Properties come out in their
// declared order; optional ones may be left out. Any other keyword is an
// error naming it and its path. See docs/grammar.md.
func SchemaToGBNF(schema []byte) (string, error) {
	root, err := parseJSON(schema)
	if err != nil {
		return "", fmt.Errorf("grammar: json schema: %w", err)
	}
	c := &schemaCompiler{root: root, names: map[string]bool{}, refs: map[string]string{}, used: map[string]bool{}}
	for _, r := range jsonRules {
		c.names[r.name] = true
	}
	for _, r := range formatRules {
		c.names[r.name] = true
	}
	c.names["root"] = true
	body, err := c.compile(root, "$")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "root ::= %s\n", body)
	for _, r := range c.rules {
		fmt.Fprintf(&b, "%s ::= %s\n", r.name, r.body)
	}
	for _, r := range jsonRules {
		if c.used[r.name] {
			fmt.Fprintf(&b, "%s ::= %s\n", r.name, r.body)
		}
	}
	for _, r := range formatRules {
		if c.used[r.name] {
			fmt.Fprintf(&b, "%s ::= %s\n", r.name, r.body)
		}
	}
	return b.String(), nil
}

// jv is a JSON value that keeps the order of object members.
type jv struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	obj  []member
	arr  []*jv
	str  string
	num  json.Number
	b    bool
}

type member struct {
	key string
	val *jv
}

func (v *jv) get(key string) *jv {
	for _, m := range v.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func parseJSON(data []byte) (*jv, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the schema")
	}
	return v, nil
}

const maxJSONDepth = 512

func decodeValue(d *json.Decoder, depth int) (*jv, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("invalid JSON: nested deeper than %d", maxJSONDepth)
	}
	t, err := d.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jv{kind: 'o'}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %w", err)
				}
				k := kt.(string)
				if v.get(k) != nil {
					return nil, fmt.Errorf("invalid JSON: duplicate key %q", k)
				}
				val, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, member{k, val})
			}
			if _, err := d.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			return v, nil
		case '[':
			v := &jv{kind: 'a'}
			for d.More() {
				val, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, val)
			}
			if _, err := d.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			return v, nil
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	case string:
		return &jv{kind: 's', str: t}, nil
	case json.Number:
		return &jv{kind: 'n', num: t}, nil
	case bool:
		return &jv{kind: 'b', b: t}, nil
	case nil:
		return &jv{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("invalid JSON: unexpected token %v", t)
}

// encode writes v as compact JSON, members in order.
func (v *jv) encode(b *bytes.Buffer) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, m := range v.obj {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonString(m.key))
			b.WriteByte(':')
			m.val.encode(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b)
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(jsonString(v.str))
	case 'n':
		b.WriteString(v.num.String())
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	case 'z':
		b.WriteString("null")
	}
}

func jsonString(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// gbnfLiteral quotes s as a GBNF string literal.
func gbnfLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

type schemaCompiler struct {
	root  *jv
	rules []struct{ name, body string }
	names map[string]bool
	refs  map[string]string // $ref -> rule name
	used  map[string]bool   // built-in JSON rules referenced
	depth int
}

// annotations are keywords with no effect on validation.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"$schema": true, "$id": true, "$comment": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "definitions": true, "$defs": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
	"discriminator": true, // OpenAPI's hint for oneOf, as Pydantic writes it
}

// keywords the compiler implements.
var keywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "maxItems": true, "minLength": true, "maxLength": true, "format": true, "pattern": true,
	"enum": true, "const": true, "anyOf": true, "oneOf": true, "$ref": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"allOf": true, "prefixItems": true, "additionalItems": true,
}

// boundKeywords limit numbers; they are supported for integers only.
var boundKeywords = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}

var simpleName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func childPath(path, key string) string {
	if simpleName.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + jsonString(key) + "]"
}

func (c *schemaCompiler) use(name string) string {
	if c.used[name] {
		return name
	}
	c.used[name] = true
	body, _ := jsonRuleBody(name)
	// Mark the built-in rules this one refers to.
	for _, r := range jsonRules {
		if r.name != name && containsWord(body, r.name) {
			c.use(r.name)
		}
	}
	return name
}

func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isNameChar(s[j-1])) && (end == len(s) || !isNameChar(s[end])) {
			return true
		}
		i = end
	}
}

// addRule adds a rule with a fresh name derived from base and returns the
// name.
func (c *schemaCompiler) addRule(base, body string) string {
	name := c.freshName(base)
	c.rules = append(c.rules, struct{ name, body string }{name, body})
	return name
}

func (c *schemaCompiler) freshName(base string) string {
	var b strings.Builder
	for i := 0; i < len(base); i++ {
		ch := base[i]
		if isNameChar(ch) {
			b.WriteByte(ch)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" || strings.HasPrefix(s, "json-") || strings.HasPrefix(s, "fmt-") || s == "space" {
		s = "s-" + s
		s = strings.TrimSuffix(s, "-")
	}
	if len(s) > 48 {
		s = s[:48]
	}
	name := s
	for i := 1; c.names[name]; i++ {
		name = fmt.Sprintf("%s-%d", s, i)
	}
	c.names[name] = true
	return name
}

func errAt(path, format string, args ...any) error {
	return &SchemaError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// ruleBase turns a JSONPath into a rule name stem.
func ruleBase(path string) string {
	s := strings.TrimPrefix(path, "$")
	s = strings.ReplaceAll(s, ".properties", "")
	return "root" + s
}

// compile returns a GBNF expression for the values valid under s.
func (c *schemaCompiler) compile(s *jv, path string) (string, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > 256 {
		return "", errAt(path, "schema nested too deeply")
	}
	switch s.kind {
	case 'b':
		if !s.b {
			return "", errAt(path, "schema false matches nothing")
		}
		return c.use("json-value"), nil
	case 'o':
	default:
		return "", errAt(path, "a schema must be an object or a boolean")
	}
	var asserts []string
	for _, m := range s.obj {
		switch {
		case keywords[m.key]:
			asserts = append(asserts, m.key)
		case annotations[m.key] || strings.HasPrefix(m.key, "x-"):
		default:
			return "", errAt(path, "unsupported keyword %q", m.key)
		}
	}
	only := func(kw string, allowed ...string) error {
		for _, a := range asserts {
			if a != kw && !contains(allowed, a) {
				return errAt(path, "unsupported: %q together with %q", kw, a)
			}
		}
		return nil
	}
	if ref := s.get("$ref"); ref != nil {
		if err := only("$ref"); err != nil {
			return "", err
		}
		return c.ref(ref, path+".$ref")
	}
	if all := s.get("allOf"); all != nil {
		if err := only("allOf"); err != nil {
			return "", err
		}
		if all.kind != 'a' || len(all.arr) == 0 {
			return "", errAt(path+".allOf", "must be a non-empty array of schemas")
		}
		// Only one subschema may constrain (Pydantic wraps a $ref in allOf
		// to give it a description); the rest must be true or annotations.
		pick := -1
		for i, a := range all.arr {
			if trivialSchema(a) {
				continue
			}
			if pick >= 0 {
				return "", errAt(fmt.Sprintf("%s.allOf[%d]", path, i), "unsupported: allOf with more than one constraining schema")
			}
			pick = i
		}
		if pick < 0 {
			return c.use("json-value"), nil
		}
		return c.compile(all.arr[pick], fmt.Sprintf("%s.allOf[%d]", path, pick))
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if alts := s.get(kw); alts != nil {
			if err := only(kw); err != nil {
				return "", err
			}
			if alts.kind != 'a' || len(alts.arr) == 0 {
				return "", errAt(path+"."+kw, "must be a non-empty array of schemas")
			}
			var parts []string
			for i, a := range alts.arr {
				e, err := c.compile(a, fmt.Sprintf("%s.%s[%d]", path, kw, i))
				if err != nil {
					return "", err
				}
				parts = append(parts, e)
			}
			return c.addRule(ruleBase(path), strings.Join(parts, " | ")), nil
		}
	}
	types, err := schemaTypes(s, path)
	if err != nil {
		return "", err
	}
	if v := s.get("const"); v != nil {
		if err := only("const", "type"); err != nil {
			return "", err
		}
		return c.literals([]*jv{v}, types, path+".const")
	}
	if v := s.get("enum"); v != nil {
		if err := only("enum", "type"); err != nil {
			return "", err
		}
		if v.kind != 'a' || len(v.arr) == 0 {
			return "", errAt(path+".enum", "must be a non-empty array")
		}
		return c.literals(v.arr, types, path+".enum")
	}
	if types == nil {
		for _, kw := range boundKeywords {
			if s.get(kw) != nil {
				types = []string{"number"} // bounds only constrain numbers
			}
		}
	}
	if types == nil {
		// No type: take it from the keywords present, else any value.
		switch {
		case s.get("properties") != nil || s.get("required") != nil || s.get("additionalProperties") != nil:
			types = []string{"object"}
		case s.get("items") != nil || s.get("prefixItems") != nil || s.get("minItems") != nil || s.get("maxItems") != nil:
			types = []string{"array"}
		case s.get("minLength") != nil || s.get("maxLength") != nil || s.get("format") != nil || s.get("pattern") != nil:
			types = []string{"string"}
		default:
			return c.use("json-value"), nil
		}
	}
	var parts []string
	for _, t := range types {
		e, err := c.typed(s, t, path)
		if err != nil {
			return "", err
		}
		parts = append(parts, e)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return c.addRule(ruleBase(path), strings.Join(parts, " | ")), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var typeNames = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// schemaTypes returns the types named by "type" (nil if absent).
func schemaTypes(s *jv, path string) ([]string, error) {
	t := s.get("type")
	if t == nil {
		return nil, nil
	}
	var list []*jv
	switch t.kind {
	case 's':
		list = []*jv{t}
	case 'a':
		list = t.arr
		if len(list) == 0 {
			return nil, errAt(path+".type", "empty list of types")
		}
	default:
		return nil, errAt(path+".type", "must be a string or an array of strings")
	}
	var out []string
	for _, x := range list {
		if x.kind != 's' || !contains(typeNames, x.str) {
			var b bytes.Buffer
			x.encode(&b)
			return nil, errAt(path+".type", "unknown type %s (want one of %s)", b.String(), strings.Join(typeNames, ", "))
		}
		if contains(out, x.str) {
			return nil, errAt(path+".type", "type %q listed twice", x.str)
		}
		out = append(out, x.str)
	}
	return out, nil
}

// literals compiles enum or const values, keeping those of the given types.
func (c *schemaCompiler) literals(vals []*jv, types []string, path string) (string, error) {
	var parts []string
	for _, v := range vals {
		if types != nil && !contains(types, valueType(v)) &&
			!(valueType(v) == "integer" && contains(types, "number")) {
			continue
		}
		var b bytes.Buffer
		v.encode(&b)
		lit := gbnfLiteral(b.String())
		if !contains(parts, lit) {
			parts = append(parts, lit)
		}
	}
	if len(parts) == 0 {
		return "", errAt(path, "no value of the schema's type")
	}
	c.use("space")
	return c.addRule(ruleBase(strings.TrimSuffix(strings.TrimSuffix(path, ".enum"), ".const")),
		"("+strings.Join(parts, " | ")+") space"), nil
}

// valueType is the JSON Schema type of v ("integer" for integral numbers).
func valueType(v *jv) string {
	switch v.kind {
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 's':
		return "string"
	case 'b':
		return "boolean"
	case 'z':
		return "null"
	}
	if r, ok := new(big.Rat).SetString(v.num.String()); ok && r.IsInt() {
		return "integer"
	}
	return "number"
}

// count reads a non-negative integer keyword (def if absent).
func count(s *jv, key, path string, def int) (int, error) {
	v := s.get(key)
	if v == nil {
		return def, nil
	}
	if v.kind != 'n' || valueType(v) != "integer" {
		return 0, errAt(path+"."+key, "must be a non-negative integer")
	}
	r, _ := new(big.Rat).SetString(v.num.String())
	if r.Sign() < 0 {
		return 0, errAt(path+"."+key, "must be a non-negative integer")
	}
	if !r.Num().IsInt64() || r.Num().Int64() > maxRepeat {
		return 0, errAt(path+"."+key, "%s is over the supported limit of %d", v.num, maxRepeat)
	}
	return int(r.Num().Int64()), nil
}

// repeatExpr is item repeated min to max times (max -1: no limit),
// separated by sep.
func repeatExpr(item, sep string, min, max int) string {
	switch {
	case max == 0:
		return ""
	case min == 0:
		rest := repeatExpr(item, sep, 1, max)
		return "(" + rest + ")?"
	}
	more := ""
	switch {
	case max < 0 && min == 1:
		more = "*"
	case max < 0:
		more = fmt.Sprintf("{%d,}", min-1)
	case min == 1 && max == 1:
		return item
	case min == max:
		more = fmt.Sprintf("{%d}", min-1)
	default:
		more = fmt.Sprintf("{%d,%d}", min-1, max-1)
	}
	return item + " (" + sep + " " + item + ")" + more
}

func (c *schemaCompiler) typed(s *jv, t, path string) (string, error) {
	switch t {
	case "null":
		return c.use("json-null"), nil
	case "boolean":
		return c.use("json-boolean"), nil
	case "integer":
		return c.integer(s, path)
	case "number":
		return c.number(s, path)
	case "string":
		if f := s.get("format"); f != nil {
			if s.get("pattern") != nil {
				return "", errAt(path, `unsupported: "pattern" together with "format"`)
			}
			return c.format(s, f, path)
		}
		if re := s.get("pattern"); re != nil {
			return c.pattern(s, re, path)
		}
		min, err := count(s, "minLength", path, 0)
		if err != nil {
			return "", err
		}
		max, err := count(s, "maxLength", path, -1)
		if err != nil {
			return "", err
		}
		if max >= 0 && max < min {
			return "", errAt(path, "maxLength %d is less than minLength %d", max, min)
		}
		if min == 0 && max < 0 {
			return c.use("json-string"), nil
		}
		c.use("json-char")
		c.use("space")
		var rep string
		switch {
		case max < 0:
			rep = fmt.Sprintf("{%d,}", min)
		case min == max:
			rep = fmt.Sprintf("{%d}", min)
		default:
			rep = fmt.Sprintf("{%d,%d}", min, max)
		}
		return c.addRule(ruleBase(path), `"\"" json-char`+rep+` "\"" space`), nil
	case "array":
		return c.array(s, path)
	case "object":
		return c.object(s, path)
	}
	return "", errAt(path+".type", "unknown type %q", t)
}

func (c *schemaCompiler) array(s *jv, path string) (string, error) {
	minN, err := count(s, "minItems", path, 0)
	if err != nil {
		return "", err
	}
	maxN, err := count(s, "maxItems", path, -1)
	if err != nil {
		return "", err
	}
	if maxN >= 0 && maxN < minN {
		return "", errAt(path, "maxItems %d is less than minItems %d", maxN, minN)
	}
	// Tuples: prefixItems (2020-12), or items as an array with
	// additionalItems (earlier drafts), then the other items.
	var prefix []*jv
	prefixPath := path + ".prefixItems"
	rest, restPath := s.get("items"), path+".items"
	if p := s.get("prefixItems"); p != nil {
		if p.kind != 'a' {
			return "", errAt(prefixPath, "must be an array of schemas")
		}
		if rest != nil && rest.kind == 'a' {
			return "", errAt(restPath, "must be a schema when prefixItems is given")
		}
		prefix = p.arr
	} else if rest != nil && rest.kind == 'a' {
		prefix, prefixPath = rest.arr, restPath
		rest, restPath = s.get("additionalItems"), path+".additionalItems"
	}
	if rest != nil && rest.kind != 'o' && rest.kind != 'b' {
		return "", errAt(restPath, "must be a schema")
	}
	item := c.use("json-value")
	restMax := -1 // items after the prefix
	if maxN >= 0 {
		restMax = max(0, maxN-len(prefix))
	}
	restMin := max(0, minN-len(prefix))
	switch {
	case rest == nil || rest.kind == 'b' && rest.b:
	case rest.kind == 'b':
		restMax = 0
		if restMin > 0 {
			return "", errAt(restPath, "allows no more items but minItems is %d", minN)
		}
	default:
		if item, err = c.compile(rest, restPath); err != nil {
			return "", err
		}
	}
	c.use("space")
	if len(prefix) == 0 {
		return c.addRule(ruleBase(path), `"[" space `+repeatExpr(item, `"," space`, minN, restMax)+` "]" space`), nil
	}
	ps := make([]string, len(prefix))
	for i, p := range prefix {
		if ps[i], err = c.compile(p, fmt.Sprintf("%s[%d]", prefixPath, i)); err != nil {
			return "", err
		}
	}
	// tail is what follows the first i items: item i (required below
	// minItems) and its tail, or, past the prefix, the other items.
	var tail func(i int) string
	tail = func(i int) string {
		if maxN >= 0 && i >= maxN {
			return ""
		}
		if i == len(ps) {
			if restMax == 0 {
				return ""
			}
			one := `("," space ` + item + ")"
			switch {
			case restMax < 0 && restMin == 0:
				return one + "*"
			case restMax < 0:
				return fmt.Sprintf("%s{%d,}", one, restMin)
			case restMin == restMax:
				return fmt.Sprintf("%s{%d}", one, restMin)
			}
			return fmt.Sprintf("%s{%d,%d}", one, restMin, restMax)
		}
		e := strings.TrimSpace(`"," space ` + ps[i] + " " + tail(i+1))
		if i >= minN {
			e = "(" + e + ")?"
		}
		return e
	}
	inner := ""
	if maxN != 0 {
		inner = strings.TrimSpace(ps[0] + " " + tail(1))
		if minN == 0 {
			inner = "(" + inner + ")?"
		}
	}
	return c.addRule(ruleBase(path), strings.TrimSpace(`"[" space `+inner)+` "]" space`), nil
}

// trivialSchema reports whether s accepts everything: true, or an object
// of annotations only.
func trivialSchema(s *jv) bool {
	if s.kind == 'b' {
		return s.b
	}
	if s.kind != 'o' {
		return false
	}
	for _, m := range s.obj {
		if !annotations[m.key] {
			return false
		}
	}
	return true
}

func (c *schemaCompiler) object(s *jv, path string) (string, error) {
	c.use("space")
	props := s.get("properties")
	if props != nil && props.kind != 'o' {
		return "", errAt(path+".properties", "must be an object")
	}
	addl := s.get("additionalProperties")
	if addl != nil && addl.kind != 'b' && addl.kind != 'o' {
		return "", errAt(path+".additionalProperties", "must be a boolean or a schema")
	}
	closed := addl != nil && addl.kind == 'b' && !addl.b
	if props == nil && !closed {
		// A map: any keys, values under additionalProperties.
		val := c.use("json-value")
		if addl != nil && addl.kind == 'o' {
			var err error
			if val, err = c.compile(addl, path+".additionalProperties"); err != nil {
				return "", err
			}
		}
		if s.get("required") != nil {
			return "", errAt(path+".required", "unsupported: required without properties")
		}
		kv := c.use("json-string") + ` ":" space ` + val
		return c.addRule(ruleBase(path), `"{" space `+repeatExpr(kv, `"," space`, 0, -1)+` "}" space`), nil
	}
	// Other members, when allowed: keys none of the declared ones (so
	// that no member is judged by the wrong schema), values under
	// additionalProperties.
	extra := ""
	extraVal := &jv{kind: 'b', b: true}
	if addl != nil && !closed {
		if addl.kind == 'o' {
			extraVal = addl
		}
		v, err := c.compile(extraVal, path+".additionalProperties")
		if err != nil {
			return "", err
		}
		var keys []string
		if props != nil {
			for _, m := range props.obj {
				keys = append(keys, m.key)
			}
		}
		if req := s.get("required"); req != nil && req.kind == 'a' {
			for _, r := range req.arr {
				if r.kind == 's' {
					keys = append(keys, r.str)
				}
			}
		}
		extra = c.otherKey(keys, ruleBase(path)+"-other") + ` ":" space ` + v
	}

	type prop struct {
		key  string
		val  *jv
		req  bool
		path string
	}
	var list []prop
	if props != nil {
		for _, m := range props.obj {
			list = append(list, prop{key: m.key, val: m.val, path: childPath(path+".properties", m.key)})
		}
	}
	if req := s.get("required"); req != nil {
		if req.kind != 'a' {
			return "", errAt(path+".required", "must be an array of strings")
		}
		for i, r := range req.arr {
			if r.kind != 's' {
				return "", errAt(fmt.Sprintf("%s.required[%d]", path, i), "must be a string")
			}
			found := false
			for j := range list {
				if list[j].key == r.str {
					list[j].req, found = true, true
				}
			}
			if !found {
				if closed {
					return "", errAt(fmt.Sprintf("%s.required[%d]", path, i), "required property %q is not in properties and additionalProperties is false", r.str)
				}
				// Required but undeclared: under additionalProperties.
				list = append(list, prop{key: r.str, val: extraVal, req: true, path: childPath(path+".properties", r.str)})
			}
		}
	}
	// false schemas: the property must be absent.
	kept := list[:0]
	for _, p := range list {
		if p.val.kind == 'b' && !p.val.b {
			if p.req {
				return "", errAt(p.path, "required property has schema false")
			}
			continue
		}
		kept = append(kept, p)
	}
	list = kept
	kvs := make([]string, len(list))
	for i, p := range list {
		v, err := c.compile(p.val, p.path)
		if err != nil {
			return "", err
		}
		kvs[i] = gbnfLiteral(jsonString(p.key)) + ` space ":" space ` + v
	}
	name := ruleBase(path)
	n := len(list)
	allReq := true
	for _, p := range list {
		allReq = allReq && p.req
	}
	// withExtra wraps the declared members' expression (nonEmpty: it
	// always writes one; optional: it may write none) with the others.
	withExtra := func(declared string, optional bool) string {
		if extra == "" {
			if optional {
				declared = "(" + declared + ")?"
			}
			return c.addRule(name, strings.TrimSpace(`"{" space `+declared)+` "}" space`)
		}
		more := `("," space ` + extra + ")*"
		content := declared + " " + more
		if optional {
			content = "(" + declared + " " + more + " | " + extra + " " + more + ")?"
		}
		if declared == "" {
			content = "(" + extra + " " + more + ")?"
		}
		return c.addRule(name, `"{" space `+content+` "}" space`)
	}
	if allReq {
		var b strings.Builder
		for i, kv := range kvs {
			if i > 0 {
				b.WriteString(` "," space `)
			}
			b.WriteString(kv)
		}
		return withExtra(b.String(), false), nil
	}
	// after[i]: members i.. once one member is out (each after a comma).
	// The first member out is any optional one before the first required
	// one, or that required one.
	after := make([]string, n+1)
	for i := n - 1; i >= 1; i-- {
		piece := `"," space ` + kvs[i]
		if !list[i].req {
			piece = "(" + piece + ")?"
		}
		if after[i+1] != "" {
			piece += " " + after[i+1]
		}
		after[i] = c.addRule(name+"-after", piece)
	}
	var firsts []string
	for i := 0; i < n; i++ {
		body := kvs[i]
		if after[i+1] != "" {
			body += " " + after[i+1]
		}
		firsts = append(firsts, body)
		if list[i].req {
			break
		}
	}
	// All optional: the members may be left out altogether.
	return withExtra("("+strings.Join(firsts, " | ")+")", !list[len(firsts)-1].req), nil
}

// otherKey returns a rule for a JSON object key (with the space after it)
// that is none of keys. Such keys are written without escapes, so only
// declared keys that can be written so need excluding: the rule follows a
// prefix tree of them, allowing any character off the tree, and the end
// of the key only where no declared key ends.
func (c *schemaCompiler) otherKey(keys []string, base string) string {
	type node struct {
		next map[rune]*node
		seq  []rune
		end  bool
	}
	root := &node{next: map[rune]*node{}}
	for _, k := range keys {
		if strings.ContainsAny(k, "\"\\\x7f") || strings.IndexFunc(k, func(r rune) bool { return r < 0x20 }) >= 0 {
			continue // never written without escapes
		}
		n := root
		for _, r := range k {
			if n.next[r] == nil {
				n.next[r] = &node{next: map[rune]*node{}}
				n.seq = append(n.seq, r)
			}
			n = n.next[r]
		}
		n.end = true
	}
	const keyChars = `\"\\\x00-\x1F\x7F`
	var rule func(n *node) string
	rule = func(n *node) string {
		var alts []string
		if !n.end {
			alts = append(alts, `""`)
		}
		var off strings.Builder
		for _, r := range n.seq {
			off.WriteString(gbnfClassChar(r))
		}
		alts = append(alts, "[^"+off.String()+keyChars+"] [^"+keyChars+"]*")
		for _, r := range n.seq {
			alts = append(alts, gbnfLiteral(string(r))+" "+rule(n.next[r]))
		}
		return c.addRule(base, strings.Join(alts, " | "))
	}
	return `"\"" ` + rule(root) + ` "\"" space`
}

// ref compiles a $ref (to "#" or a JSON pointer into the document) as a
// rule of its own, so that recursive schemas become recursive rules.
func (c *schemaCompiler) ref(r *jv, path string) (string, error) {
	if r.kind != 's' {
		return "", errAt(path, "must be a string")
	}
	if name, ok := c.refs[r.str]; ok {
		return name, nil
	}
	if !strings.HasPrefix(r.str, "#") {
		return "", errAt(path, "unsupported: $ref %q outside this document", r.str)
	}
	target := c.root
	tpath := "$"
	var last string
	if ptr := r.str[1:]; ptr != "" {
		if !strings.HasPrefix(ptr, "/") {
			return "", errAt(path, "unsupported: $ref %q is not a JSON pointer", r.str)
		}
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			last = tok
			switch target.kind {
			case 'o':
				target = target.get(tok)
				tpath = childPath(tpath, tok)
			case 'a':
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(target.arr) {
					target = nil
					break
				}
				target = target.arr[i]
				tpath = fmt.Sprintf("%s[%d]", tpath, i)
			default:
				target = nil
			}
			if target == nil {
				return "", errAt(path, "$ref %q: no such location in the schema", r.str)
			}
		}
	}
	name := c.freshName("ref-" + last)
	c.refs[r.str] = name
	idx := len(c.rules)
	c.rules = append(c.rules, struct{ name, body string }{name, ""})
	body, err := c.compile(target, tpath)
	if err != nil {
		return "", err
	}
	c.rules[idx].body = body
	return name, nil
}

// maxInt is the largest magnitude of an integer in the grammar (16 digits).
const maxInt = 9999999999999999

// integer compiles an integer with optional bounds. minimum, maximum and
// exclusiveMinimum/exclusiveMaximum may be any numbers (draft 6 and later)
// or, for the exclusive ones, booleans (draft 4).
func (c *schemaCompiler) integer(s *jv, path string) (string, error) {
	lo, hi := big.NewInt(-maxInt), big.NewInt(maxInt)
	bounded := false
	// exclusive reports a draft-4 boolean exclusiveMinimum/Maximum.
	exclusive := func(kw string) bool {
		v := s.get(kw)
		return v != nil && v.kind == 'b' && v.b
	}
	for _, kw := range boundKeywords {
		v := s.get(kw)
		if v == nil || v.kind == 'b' {
			continue
		}
		if v.kind != 'n' {
			return "", errAt(path+"."+kw, "must be a number")
		}
		r, ok := new(big.Rat).SetString(v.num.String())
		if !ok {
			return "", errAt(path+"."+kw, "must be a number")
		}
		bounded = true
		// The integer bound: ceil for lower bounds, floor for upper ones,
		// moved past an exclusive bound that is an integer.
		q := new(big.Int).Quo(r.Num(), r.Denom()) // truncates toward zero
		lower := kw == "minimum" || kw == "exclusiveMinimum"
		excl := kw == "exclusiveMinimum" || kw == "exclusiveMaximum"
		if kw == "minimum" || kw == "maximum" {
			excl = exclusive("exclusive" + strings.ToUpper(kw[:1]) + kw[1:])
		}
		if lower {
			if r.IsInt() {
				if excl {
					q.Add(q, big.NewInt(1))
				}
			} else if r.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			}
			if q.Cmp(lo) > 0 {
				lo = q
			}
		} else {
			if r.IsInt() {
				if excl {
					q.Sub(q, big.NewInt(1))
				}
			} else if r.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			}
			if q.Cmp(hi) < 0 {
				hi = q
			}
		}
	}
	if !bounded {
		return c.use("json-integer"), nil
	}
	if lo.Cmp(hi) > 0 {
		return "", errAt(path, "no integer of at most 16 digits lies between the bounds")
	}
	var alts []string
	if lo.Sign() < 0 {
		// negative numbers: "-" then magnitudes from max(1, -hi) to -lo
		mlo := int64(1)
		if hi.Sign() < 0 {
			mlo = -hi.Int64()
		}
		alts = append(alts, `"-" (`+strings.Join(uintRange(uint64(mlo), uint64(-lo.Int64())), " | ")+")")
	}
	if hi.Sign() >= 0 {
		plo := int64(0)
		if lo.Sign() > 0 {
			plo = lo.Int64()
		}
		alts = append(alts, uintRange(uint64(plo), uint64(hi.Int64()))...)
	}
	c.use("space")
	return c.addRule(ruleBase(path), "("+strings.Join(alts, " | ")+") space"), nil
}

// uintRange returns GBNF alternatives for the decimal numerals without
// leading zeros from lo to hi.
func uintRange(lo, hi uint64) []string {
	var alts []string
	p := uint64(1)
	for d := 1; d <= 16; d++ {
		dlo, dhi := p, p*10-1
		if d == 1 {
			dlo = 0
		}
		p *= 10
		a, b := max(lo, dlo), min(hi, dhi)
		if a <= b {
			alts = append(alts, sameLength(strconv.FormatUint(a, 10), strconv.FormatUint(b, 10))...)
		}
	}
	return alts
}

// sameLength returns GBNF alternatives for the numerals from lo to hi,
// which have the same number of digits.
func sameLength(lo, hi string) []string {
	if lo == "" {
		return []string{""}
	}
	n := len(lo) - 1
	digits := func(n int) string {
		switch n {
		case 0:
			return ""
		case 1:
			return " [0-9]"
		}
		return fmt.Sprintf(" [0-9]{%d}", n)
	}
	class := func(a, b byte) string {
		if a == b {
			return "[" + string(a) + "]"
		}
		return "[" + string(a) + "-" + string(b) + "]"
	}
	if lo[0] == hi[0] {
		var out []string
		for _, rest := range sameLength(lo[1:], hi[1:]) {
			out = append(out, strings.TrimSpace(class(lo[0], lo[0])+" "+rest))
		}
		return out
	}
	var out []string
	a, b := lo[0], hi[0]
	if strings.Trim(lo[1:], "0") != "" {
		for _, rest := range sameLength(lo[1:], strings.Repeat("9", n)) {
			out = append(out, strings.TrimSpace(class(a, a)+" "+rest))
		}
		a++
	}
	last := []string(nil)
	if strings.Trim(hi[1:], "9") != "" {
		for _, rest := range sameLength(strings.Repeat("0", n), hi[1:]) {
			last = append(last, strings.TrimSpace(class(b, b)+" "+rest))
		}
		b--
	}
	if a <= b {
		out = append(out, class(a, b)+digits(n))
	}
	return append(out, last...)
}

// formatRules are the string formats supported, as GBNF for the text
// between the quotes. Dates are valid calendar dates except February 29
// (which needs a leap year); times have no leap second.
var formatRules = []struct{ format, name, body string }{
	{"date", "fmt-date", `[0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))`},
	{"time", "fmt-time", `([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])`},
	{"date-time", "fmt-date-time", `fmt-date "T" fmt-time`},
	{"uuid", "fmt-uuid", `[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}`},
}

// format compiles a string with a format.
func (c *schemaCompiler) format(s, f *jv, path string) (string, error) {
	if f.kind != 's' {
		return "", errAt(path+".format", "must be a string")
	}
	for _, kw := range []string{"minLength", "maxLength"} {
		if s.get(kw) != nil {
			return "", errAt(path, "unsupported: %q together with \"format\"", kw)
		}
	}
	var names []string
	for _, r := range formatRules {
		names = append(names, r.format)
		if r.format == f.str {
			c.useFormat(r.name)
			c.use("space")
			return c.addRule(ruleBase(path), `"\"" `+r.name+` "\"" space`), nil
		}
	}
	return "", errAt(path+".format", "unsupported format %q (supported: %s)", f.str, strings.Join(names, ", "))
}

func (c *schemaCompiler) useFormat(name string) {
	if c.used[name] {
		return
	}
	c.used[name] = true
	for _, r := range formatRules {
		if r.name == name {
			for _, d := range formatRules {
				if d.name != name && containsWord(r.body, d.name) {
					c.useFormat(d.name)
				}
			}
		}
	}
}

// pattern compiles a string with a pattern (see patternGBNF).
func (c *schemaCompiler) pattern(s, re *jv, path string) (string, error) {
	if re.kind != 's' {
		return "", errAt(path+".pattern", "must be a string")
	}
	for _, kw := range []string{"minLength", "maxLength"} {
		if s.get(kw) != nil {
			return "", errAt(path, "unsupported: %q together with \"pattern\"", kw)
		}
	}
	body, err := patternGBNF(re.str)
	if err != nil {
		return "", errAt(path+".pattern", "%v", err)
	}
	if containsWord(body, "json-char") {
		c.use("json-char")
	}
	c.use("space")
	return c.addRule(ruleBase(path), `"\"" `+body+` "\"" space`), nil
}

// numBound is a bound on a number: its value (an integer), whether it is
// exclusive, and whether it is set.
type numBound struct {
	v        int64
	excl, ok bool
}

// numberBounds reads minimum/maximum/exclusiveMinimum/exclusiveMaximum for
// type number; they must be integers. Bounds beyond 16 digits are dropped
// (the grammar's numbers cannot reach them) or make the range empty.
func numberBounds(s *jv, path string) (lo, hi numBound, err error) {
	for _, kw := range boundKeywords {
		v := s.get(kw)
		if v == nil || v.kind == 'b' {
			continue
		}
		r, ok := new(big.Rat).SetString(v.num.String())
		if v.kind != 'n' || !ok {
			return lo, hi, errAt(path+"."+kw, "must be a number")
		}
		if !r.IsInt() {
			return lo, hi, errAt(path+"."+kw, "unsupported: a bound on a number that is not an integer (%s)", v.num)
		}
		lower := kw == "minimum" || kw == "exclusiveMinimum"
		excl := kw == "exclusiveMinimum" || kw == "exclusiveMaximum"
		if kw == "minimum" || kw == "maximum" {
			x := s.get("exclusive" + strings.ToUpper(kw[:1]) + kw[1:])
			excl = x != nil && x.kind == 'b' && x.b
		}
		n := r.Num()
		switch {
		case n.CmpAbs(big.NewInt(maxInt)) > 0 && (n.Sign() < 0) == lower:
			continue // beyond every number of the grammar: no constraint
		case n.CmpAbs(big.NewInt(maxInt)) > 0:
			return lo, hi, errAt(path, "no number of at most 16 integer digits lies between the bounds")
		}
		b := numBound{n.Int64(), excl, true}
		// keep the tighter bound
		if lower && (!lo.ok || b.v > lo.v || b.v == lo.v && b.excl) {
			lo = b
		}
		if !lower && (!hi.ok || b.v < hi.v || b.v == hi.v && b.excl) {
			hi = b
		}
	}
	return lo, hi, nil
}

// number compiles a number, with bounds if any. Bounded numbers are
// written without an exponent.
func (c *schemaCompiler) number(s *jv, path string) (string, error) {
	lo, hi, err := numberBounds(s, path)
	if err != nil {
		return "", err
	}
	if !lo.ok && !hi.ok {
		return c.use("json-number"), nil
	}
	var alts []string
	// x >= 0
	if !(hi.ok && (hi.v < 0 || hi.v == 0 && hi.excl)) {
		a, aStrict := int64(0), false
		if lo.ok && lo.v >= 0 {
			a, aStrict = lo.v, lo.excl
		}
		b, bStrict, capped := int64(maxInt), false, true
		if hi.ok {
			b, bStrict, capped = hi.v, hi.excl, false
		}
		alts = append(alts, magnitudes(a, aStrict, b, bStrict, capped)...)
	}
	// x < 0, as "-" and a magnitude m = -x > 0
	if !(lo.ok && lo.v >= 0) {
		a, aStrict := int64(0), true
		if hi.ok && hi.v < 0 {
			a, aStrict = -hi.v, hi.excl
		}
		b, bStrict, capped := int64(maxInt), false, true
		if lo.ok {
			b, bStrict, capped = -lo.v, lo.excl, false
		}
		if m := magnitudes(a, aStrict, b, bStrict, capped); len(m) > 0 {
			alts = append(alts, `"-" (`+strings.Join(m, " | ")+")")
		}
	}
	if len(alts) == 0 {
		return "", errAt(path, "no number lies between the bounds")
	}
	c.use("space")
	return c.addRule(ruleBase(path), "("+strings.Join(alts, " | ")+") space"), nil
}

// magnitudes returns GBNF alternatives for decimals m (integer part up to
// 16 digits, fraction up to 16) with a <= m <= b, or a < m and m < b for
// strict bounds; capped means b is only the digit limit.
func magnitudes(a int64, aStrict bool, b int64, bStrict, capped bool) []string {
	const (
		anyFrac     = `("." [0-9]{1,16})?`
		zeroFrac    = `("." [0]{1,16})?`
		nonzeroFrac = `"." [0]{0,14} [1-9] [0-9]{0,14}`
	)
	var out []string
	add := func(lo, hi int64, frac string) {
		if lo <= hi {
			out = append(out, "("+strings.Join(uintRange(uint64(lo), uint64(hi)), " | ")+") "+frac)
		}
	}
	switch {
	case a > b:
		return nil
	case a == b: // integer part a, and m = a exactly
		if !aStrict && !bStrict {
			add(a, a, zeroFrac)
		}
		return out
	}
	if aStrict {
		add(a, a, nonzeroFrac)
	} else {
		add(a, a, anyFrac)
	}
	add(a+1, b-1, anyFrac)
	switch {
	case capped:
		add(b, b, anyFrac)
	case !bStrict:
		add(b, b, zeroFrac)
	}
	return out
}
