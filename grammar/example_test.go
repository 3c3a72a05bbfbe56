package grammar_test

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/weftrun/weft/grammar"
)

// A sampling loop: mask the logits, pick, accept.
func Example() {
	g, err := grammar.Parse(`root ::= "yes" | "no"`)
	if err != nil {
		panic(err)
	}
	// The vocabulary as bytes per id; 4 is a special token, 5 ends generation.
	toks := [][]byte{[]byte("y"), []byte("es"), []byte("no"), []byte("maybe"), nil, []byte("</s>")}
	v := grammar.NewVocab(toks, []int{5})
	m := g.NewMatcher(v)
	mask := make([]bool, len(toks))
	logits := []float32{0.1, 0.2, 0.3, 2.0, 1.0, 0.5} // a model's favourite is "maybe"
	var out []byte
	for !m.Done() {
		if _, err := m.Mask(mask); err != nil {
			if errors.Is(err, grammar.ErrDeadEnd) {
				fmt.Println("finish reason: grammar dead end")
			}
			break
		}
		best := -1
		for id, ok := range mask {
			if ok && (best < 0 || logits[id] > logits[best]) {
				best = id
			}
		}
		if err := m.Accept(best); err != nil {
			panic(err)
		}
		out = append(out, toks[best]...)
		logits[best] = float32(math.Inf(-1)) // a toy model: never the same twice
	}
	fmt.Printf("%s\n", out)
	// Output: no
}

func ExampleFromJSONSchema() {
	src, err := grammar.SchemaToGBNF([]byte(`{
		"type": "object",
		"properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0, "maximum": 150}},
		"required": ["name"],
		"additionalProperties": false}`))
	if err != nil {
		panic(err)
	}
	// The schema's own rules come first, then the shared JSON rules.
	fmt.Print(src[:strings.Index(src, "space ::=")])

	_, err = grammar.FromJSONSchema([]byte(`{"properties": {"age": {"type": "integer", "multipleOf": 5}}}`))
	fmt.Println(err)
	// Output:
	// root ::= root-1
	// root-age ::= ([0-9] | [1-9] [0-9] | [1] [0-4] [0-9] | [1] [5] [0]) space
	// root-after ::= ("," space "\"age\"" space ":" space root-age)?
	// root-1 ::= "{" space ("\"name\"" space ":" space json-string root-after) "}" space
	// grammar: json schema: $.properties.age: unsupported keyword "multipleOf"
}

func ExampleParse_error() {
	_, err := grammar.Parse("root ::= item+\nitem ::= [a-z] | (\"x\" item")
	fmt.Println(err)
	_, err = grammar.Parse("root ::= list\nlist ::= list \",\" item | item\nitem ::= [a-z]")
	fmt.Println(err)
	// Output:
	// grammar: 2:27: expected ")" to close "(" at 2:18, found end of input
	// grammar: 2:1: left recursion: rule "list" can reach itself without consuming input (list -> list)
}
