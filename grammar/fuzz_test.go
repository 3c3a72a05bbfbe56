package grammar

import (
	"errors"
	"testing"
)

// fuzzVocab is small so that each fuzz input runs fast.
func fuzzVocab() *Vocab {
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	for _, s := range []string{`{"`, `":`, `null`, "é", "a\xc3", "\xa9", "  ", "ab", "abc", "ab\"", " a", " ab", " abc",
		" é", " éa", "éé", "中", "中文", "中\xe6", "\xe4\xb8", "\xe4\xb8\xadx", "\x80a", "0.5", "[1,"} {
		toks = append(toks, []byte(s))
	}
	toks = append(toks, nil)
	return NewVocab(toks, []int{len(toks) - 1})
}

// exercise drives a matcher a few steps over input, checking invariants
// that must hold for any grammar.
func exercise(t *testing.T, g *Grammar, v *Vocab, input []byte) {
	m := g.NewMatcher(v)
	m.limStacks = 512
	m.limSkip = 1 // check every subtree skip against Allows
	mask := make([]bool, v.Size())
	for i := 0; i < len(input) && i < 64; i++ {
		n, err := m.Mask(mask)
		if errors.Is(err, ErrTooComplex) || errors.Is(err, ErrDeadEnd) {
			return
		}
		if err != nil {
			t.Fatalf("Mask: %v", err)
		}
		if n == 0 {
			if !m.Done() {
				t.Fatal("no token allowed, no error, not done")
			}
			return
		}
		for id, ok := range mask {
			if ok != m.Allows(id) {
				t.Fatalf("token %d: mask %v, Allows %v", id, ok, !ok)
			}
		}
		// Take the input byte's token if allowed, else the first allowed.
		id := int(input[i])
		if !mask[id] {
			for id = range mask {
				if mask[id] {
					break
				}
			}
		}
		if err := m.Accept(id); err != nil {
			t.Fatalf("Accept(%d) of an allowed token: %v", id, err)
		}
		if m.Done() {
			return
		}
	}
}

func FuzzParseGBNF(f *testing.F) {
	for _, s := range []string{
		`root ::= "a" | [b-d]+ x` + "\nx ::= (\"y\" . [^z])* \"\\u00e9\"{1,3}",
		JSONGBNF(),
		"root ::= ( # c\n a |\n b )?\na ::= \"\\x41\"\nb ::= [\\]\\[-]{2,}",
		`root ::= expr` + "\nexpr ::= expr \"+\" | \"1\"",
		`root ::= "a"{3}{2,} ""`,
		`root ::= [`,
	} {
		f.Add(s, []byte("a{\"b"))
	}
	v := fuzzVocab()
	f.Fuzz(func(t *testing.T, src string, input []byte) {
		g, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) && err.Error() != `grammar: no "root" rule (generation starts at root)` {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		exercise(t, g, v, input)
	})
}

func FuzzJSONSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"enum":[1,"x",null]},"maxItems":3}},"required":["a"]}`,
		`{"$defs":{"T":{"properties":{"k":{"type":"array","items":{"$ref":"#/$defs/T"}}}}},"$ref":"#/$defs/T"}`,
		`{"anyOf":[{"type":["string","null"],"maxLength":3},{"const":{"a":[1.5]}}]}`,
		`{"type":"object","additionalProperties":{"type":"boolean"}}`,
		`true`,
		`{"type":"string","pattern":"^(?:[a-c\\d]+|x{2,3}\\.)*$"}`,
		`{"type":"object","properties":{"d":{"format":"date-time"},"n":{"type":"integer","minimum":-5,"exclusiveMaximum":300}}}`,
	} {
		f.Add([]byte(s), []byte(`{"a":1}`))
	}
	v := fuzzVocab()
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		g, err := FromJSONSchema(schema)
		if err != nil {
			return
		}
		exercise(t, g, v, input)
	})
}
