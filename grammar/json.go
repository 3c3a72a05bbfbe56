package grammar

import (
	"fmt"
	"strings"
)

// jsonRules are the GBNF rules for JSON values shared by JSON and the
// schema compiler, with the rules each one uses.
//
// Whitespace between tokens is bounded (one optional newline and up to 20
// blanks) so that a model cannot emit whitespace forever; numbers have at
// most 16 integer and 16 fraction digits and 3 exponent digits; \u escapes
// exclude surrogates (characters beyond U+FFFF are written as UTF-8).
var jsonRules = []struct{ name, body string }{
	{"space", `| " " | "\n" [ \t]{0,20}`},
	{"json-hex4", `[0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}`},
	{"json-char", `[^"\\\x00-\x1F\x7F] | "\\" (["\\/bfnrt] | "u" json-hex4)`},
	{"json-string", `"\"" json-char* "\"" space`},
	{"json-int", `"-"? ("0" | [1-9] [0-9]{0,15})`},
	{"json-integer", `json-int space`},
	{"json-number", `json-int ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? space`},
	{"json-boolean", `("true" | "false") space`},
	{"json-null", `"null" space`},
	{"json-object", `"{" space (json-string ":" space json-value ("," space json-string ":" space json-value)*)? "}" space`},
	{"json-array", `"[" space (json-value ("," space json-value)*)? "]" space`},
	{"json-value", `json-object | json-array | json-string | json-number | json-boolean | json-null`},
}

// jsonRuleBody returns the body of a built-in JSON rule.
func jsonRuleBody(name string) (string, bool) {
	for _, r := range jsonRules {
		if r.name == name {
			return r.body, true
		}
	}
	return "", false
}

// JSONGBNF is the source of the grammar JSON returns.
func JSONGBNF() string {
	var b strings.Builder
	b.WriteString("root ::= json-value\n")
	for _, r := range jsonRules {
		fmt.Fprintf(&b, "%s ::= %s\n", r.name, r.body)
	}
	return b.String()
}

// JSON returns a grammar for any JSON value (for OpenAI's
// response_format {"type": "json_object"}), with bounded whitespace around
// tokens. Each call compiles a new copy; keep it to share.
func JSON() *Grammar {
	g, err := Parse(JSONGBNF())
	if err != nil {
		panic("grammar: built-in JSON grammar: " + err.Error())
	}
	return g
}
