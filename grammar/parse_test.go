package grammar

import (
	"errors"
	"strings"
	"testing"
)

// byteVocab is a vocabulary of the 256 single bytes plus one
// end-of-generation id (256).
func byteVocab() *Vocab {
	toks := make([][]byte, 257)
	for b := range 256 {
		toks[b] = []byte{byte(b)}
	}
	return NewVocab(toks, []int{256})
}

// matches reports whether s is a complete sentence of g.
func matches(g *Grammar, v *Vocab, s string) bool {
	m := g.NewMatcher(v)
	return m.AcceptBytes([]byte(s)) == nil && m.CanEnd()
}

func TestParseValid(t *testing.T) {
	v := byteVocab()
	tests := []struct {
		name   string
		src    string
		accept []string
		reject []string
	}{
		{"literal", `root ::= "abc"`, []string{"abc"}, []string{"", "ab", "abcd"}},
		{"escapes", `root ::= "\x41\u00e9\U0001F600\t\n\r\\\"\[\]"`, []string{"Aé😀\t\n\r\\\"[]"}, []string{"A"}},
		{"raw unicode", `root ::= "héllo" [ぁ-ゟ]`, []string{"héllo\u3042"}, []string{"hello\u3042", "héllo"}},
		{"class ranges", `root ::= [a-c0-2_]+`, []string{"a", "a0_", "cc22"}, []string{"", "d", "a3"}},
		{"negated class", `root ::= [^a-z\n]`, []string{"A", "é", "😀", "\t"}, []string{"a", "\n", ""}},
		{"dash and caret", `root ::= [a-] [a^] [\]\[]`, []string{"-^]", "aa["}, []string{"b^]"}},
		{"negated empty", `root ::= [^]`, []string{"x", "\x00"}, []string{""}},
		{"dot", `root ::= . .`, []string{"ab", "é😀"}, []string{"a", "abc"}},
		{"star", `root ::= "a"*`, []string{"", "a", "aaaa"}, []string{"b"}},
		{"plus", `root ::= "ab"+`, []string{"ab", "abab"}, []string{"", "a", "aba"}},
		{"optional", `root ::= "a"? "b"`, []string{"b", "ab"}, []string{"aab", "a"}},
		{"exact", `root ::= "a"{3}`, []string{"aaa"}, []string{"aa", "aaaa"}},
		{"at least", `root ::= [0-9]{2,}`, []string{"12", "12345"}, []string{"1"}},
		{"between", `root ::= "a"{2,3}`, []string{"aa", "aaa"}, []string{"a", "aaaa"}},
		{"at most", `root ::= "a"{0,2} "b"`, []string{"b", "ab", "aab"}, []string{"aaab"}},
		{"zero", `root ::= "a"{0} "b"`, []string{"b"}, []string{"ab"}},
		{"spaced braces", `root ::= "a"{ 1 , 2 }`, []string{"a", "aa"}, []string{""}},
		{"repeat repeat", `root ::= "ab"{2}*`, []string{"", "abab", "abababab"}, []string{"ab", "ababab"}},
		{"group", `root ::= ("ab" | "c")+ "d"`, []string{"abd", "cabcd"}, []string{"d", "abc"}},
		{"empty alternative", `root ::= | "a"`, []string{"", "a"}, []string{"aa"}},
		{"empty literal", `root ::= "" "a" ""`, []string{"a"}, []string{""}},
		{"right recursion", `root ::= "(" root ")" | ""`, []string{"", "()", "((()))"}, []string{"(", "())"}},
		{"names", "root ::= my-rule2\nmy-rule2 ::= \"x\" R\nR ::= \"y\"", []string{"xy"}, []string{"x"}},
		{"forward reference", "root ::= a b\nb ::= \"2\"\na ::= \"1\"", []string{"12"}, []string{"21"}},
		{"comments and newlines", "# head\nroot ::= ( # open\n  \"a\" # a\n  | \"b\"\n) # close\n\n# tail", []string{"a", "b"}, []string{"ab"}},
		{"newline after bar", "root ::= \"a\" |\n  \"b\"", []string{"a", "b"}, nil},
		{"newline after ::=", "root ::=\n  \"a\"", []string{"a"}, nil},
		{"crlf", "root ::= a\r\na ::= \"x\" |\r\n \"y\"\r\n", []string{"x", "y"}, []string{"\r"}},
		{"nullable prefix", "root ::= a* b\na ::= \"x\"\nb ::= a? \"y\"", []string{"y", "xy", "xxxy"}, []string{"x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Parse(tc.src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, s := range tc.accept {
				if !matches(g, v, s) {
					t.Errorf("rejects %q", s)
				}
			}
			for _, s := range tc.reject {
				if matches(g, v, s) {
					t.Errorf("accepts %q", s)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"root ::= \"a\"\nfoo", `2:4: expected "::=" after rule name "foo", found end of input`},
		{`root = "a"`, `1:6: expected "::=" after rule name "root", found '='`},
		{` ::= "a"`, `1:2: expected a rule name, found ':'`},
		{"root ::= \"a\"\n | \"b\"", `2:2: expected a rule name, found '|'`},
		{`root ::= "abc`, `1:10: unterminated string literal: expected a closing '"', found end of input`},
		{`root ::= [a-z`, `1:10: unterminated character class: expected ']', found end of input`},
		{"root ::= (a | b\na ::= \"x\"\nb ::= \"y\"", `2:3: expected ")" to close "(" at 1:10, found ':'`},
		{`root ::= "a" )`, `1:14: expected an item, "|" or end of line, found ')'`},
		{`root ::= "é" )`, `1:14: expected an item, "|" or end of line, found ')'`},
		{`root ::= * "a"`, `1:10: expected an item before '*'`},
		{`root ::= "a" | +`, `1:16: expected an item before '+'`},
		{`root ::= ""*`, `1:12: cannot repeat an empty string`},
		{`root ::= "a"{2,1}`, `1:16: repetition maximum 1 is less than minimum 2`},
		{`root ::= "a"{x}`, `1:14: expected a number after "{", found 'x'`},
		{`root ::= "a"{2`, `1:15: expected "," or "}", found end of input`},
		{`root ::= "a"{2,3`, `1:17: expected "}", found end of input`},
		{`root ::= "a"{99999999}`, `1:14: repetition count 99999999 is over the limit of 65536`},
		{`root ::= "\q"`, `1:11: unknown escape "\q": expected one of \x \u \U \t \r \n \\ \" \[ \]`},
		{`root ::= "\x4"`, `1:14: expected 2 hex digits in escape, found '"'`},
		{`root ::= "\U00110000"`, `1:11: escape \U00110000 is beyond U+10FFFF`},
		{`root ::= [z-a]`, `1:13: invalid range: 'a' is before 'z'`},
		{`root ::= []`, `1:10: empty character class [] matches nothing`},
		{"root ::= \"\xff\"", `1:11: invalid UTF-8 in grammar`},
		{`root ::= foo`, `1:10: undefined rule "foo"`},
		{"root ::= a\na ::= \"x\" b", `2:11: undefined rule "b"`},
		{`foo ::= "a"`, `grammar: no "root" rule (generation starts at root)`},
		{"root ::= \"a\"\nroot ::= \"b\"", `2:1: rule "root" is already defined at 1:1`},
		{"root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]",
			`2:1: left recursion: rule "expr" can reach itself without consuming input (expr -> expr)`},
		{"root ::= a\na ::= b? c\nb ::= \"x\"\nc ::= \"y\"? a \"z\"",
			`2:1: left recursion: rule "a" can reach itself without consuming input (a -> c -> a)`},
		{`root ::= ("a"?)*`, `1:1: left recursion: rule "root" can reach itself without consuming input (root); a repeated item must not match the empty string`},
	}
	for _, tc := range tests {
		_, err := Parse(tc.src)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want %q", tc.src, tc.want)
			continue
		}
		got := strings.TrimPrefix(err.Error(), "grammar: ")
		if !strings.HasPrefix(tc.want, "grammar:") && got != tc.want || strings.HasPrefix(tc.want, "grammar:") && err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.src, got, tc.want)
		}
		var se *SyntaxError
		if strings.Contains(tc.want, "root\" rule") != !errors.As(err, &se) {
			t.Errorf("Parse(%q): error type %T", tc.src, err)
		}
	}
}

func TestParseTooLarge(t *testing.T) {
	_, err := Parse(`root ::= "ab"{60000}{60000}`)
	if err == nil || !strings.Contains(err.Error(), "grammar too large") {
		t.Fatalf("got %v, want a size error", err)
	}
}
