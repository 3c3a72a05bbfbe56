package tokenizer

import (
	"math/rand"
	"strings"
	"testing"
)

// splitWith runs one stage over the whole of s.
func splitWith(t *testing.T, st splitStage, s string) []string {
	t.Helper()
	var sc splitScratch
	spans, err := st.split(nil, s, 0, len(s), &sc)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = s[sp.start:sp.end]
	}
	return out
}

// randomText draws from characters that exercise every branch of the
// split patterns: letters of several scripts and cases, digits and other
// numbers, apostrophes before contraction letters, ASCII and Unicode
// whitespace, \r and \n, punctuation, combining marks, emoji, unassigned
// code points and invalid UTF-8.
func randomText(rng *rand.Rand, n int) string {
	parts := []string{
		"a", "b", "s", "t", "d", "m", "l", "r", "v", "e", "S", "T", "D", "M", "L", "R", "V", "E", "Z",
		"é", "ж", "Ж", "中", "ǅ", "ʰ", "ß",
		"0", "7", "٣", "½", "Ⅻ", "12", "345", "6789",
		"'", "'", "'", "\"", ".", ",", "!", "?", "(", ")", "-", "$", "+", "<", "^", "`", "|", "~", "/", "…", "。",
		" ", " ", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\v",
		"\u0301", "\u200d", "\ufe0f", "🦙", "😁", "\u0378", "\xff", "\x80", "\xe2\x96",
		"ll", "ve", "re", "LL", "Ve",
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(parts[rng.Intn(len(parts))])
	}
	return b.String()
}

// TestHandWrittenSplitters checks the hand-written splitters against
// regexp2 running the reference patterns, on the vector inputs and on
// random text.
func TestHandWrittenSplitters(t *testing.T) {
	cases := []struct {
		name    string
		fast    splitStage
		pattern string
	}{
		{"gpt2", gpt2Stage{}, patGPT2},
		{"gpt2+\\s+", gpt2Stage{}, patGPT2 + `|\s+`},
		{"llama3", llama3Stage{maxDigits: 3}, patLlama3},
		{"llama3 (?i)", llama3Stage{maxDigits: 3}, `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
		{"qwen2", llama3Stage{maxDigits: 1}, patQwen2},
		{"\\p{N}", runStage{in: isNumberRune, single: true}, patNumber},
		{"\\p{N}+", runStage{in: isNumberRune}, patNumbers},
		{"default punctuation", runStage{in: isPunctOrDefaultSym}, patDefaultPunc},
		{"falcon punctuation", runStage{in: isPunctOrFalconSym}, patFalconPunc},
		{"three digits", digits3Stage{}, patDigits3},
	}
	inputs := []string{"", " ", "'s", "'S", "a'll", "x 'RE", "  \n  a", " \t\n\nb", "3333333", "  ", "a  ", "\n"}
	if vecs := tryVectorInputs(); vecs != nil {
		inputs = append(inputs, vecs...)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		inputs = append(inputs, randomText(rng, 1+rng.Intn(40)))
	}
	for _, c := range cases {
		ref, err := newRegexStage(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for _, s := range inputs {
			got, want := splitWith(t, c.fast, s), splitWith(t, ref, s)
			if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") {
				t.Errorf("%s: split(%q)\n got  %q\n want %q", c.name, s, got, want)
				if bad++; bad > 5 {
					break
				}
			}
		}
	}
}

// tryVectorInputs returns the strings of the shared vectors, if present.
func tryVectorInputs() []string {
	data, err := readSharedOptional("tokenizer-vectors", "ggml-vocab-gpt-2.gguf.inp")
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n__ggml_vocab_test__\n")
}

// TestPreTokenizersCover compiles every named pre-tokenizer and checks
// that its words cover the text exactly, in order.
func TestPreTokenizersCover(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	texts := []string{"", "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～", "3.14159 + 1234567 = x\n\n\tdone  "}
	for i := 0; i < 50; i++ {
		texts = append(texts, randomText(rng, 30))
	}
	for name := range preTokenizerDefs {
		p, err := lookupPreTokenizer(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var sc splitScratch
		for _, s := range texts {
			spans, err := p.split(s, &sc)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				break
			}
			at := 0
			for _, sp := range spans {
				if sp.start != at || sp.end <= sp.start {
					t.Errorf("%s: split(%q): span %v after %d", name, s, sp, at)
					break
				}
				at = sp.end
			}
			if at != len(s) {
				t.Errorf("%s: split(%q) covers %d of %d bytes", name, s, at, len(s))
			}
		}
	}
	if _, err := lookupPreTokenizer("no-such-pre"); err == nil {
		t.Error("unknown pre-tokenizer: no error")
	}
}

// TestPreTokenizerExamples pins splits of a few pre-tokenizers whose
// behaviour differs, written out by hand from their patterns.
func TestPreTokenizerExamples(t *testing.T) {
	cases := []struct {
		pre, in string
		want    []string
	}{
		{"gpt-2", "Hello world's  end 123", []string{"Hello", " world", "'s", " ", " end", " 123"}},
		{"llama3", "Hello world's  end 12345\n\n", []string{"Hello", " world", "'s", " ", " end", " ", "123", "45", "\n\n"}},
		{"qwen2", "ab 123", []string{"ab", " ", "1", "2", "3"}},
		{"starcoder", "x 123", []string{"x", " ", "1", "2", "3"}},
		{"falcon", "a,b 1234", []string{"a", ",", "b", " ", "123", "4"}},
		{"falcon", "1234", []string{"123", "4"}},
		{"deepseek-coder", "if x: 12", []string{"if", " x", ":", " ", "1", "2"}},
		{"bloom", "Hi, you.", []string{"Hi", ",", " you", "."}},
		{"superbpe", "1234567", []string{"1", "234", "567"}},
		{"gpt-4o", "HelloWorld's", []string{"Hello", "World's"}},
	}
	for _, c := range cases {
		p, err := lookupPreTokenizer(c.pre)
		if err != nil {
			t.Fatal(err)
		}
		var sc splitScratch
		spans, err := p.split(c.in, &sc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sp := range spans {
			got = append(got, c.in[sp.start:sp.end])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: split(%q) = %q, want %q", c.pre, c.in, got, c.want)
		}
	}
}
