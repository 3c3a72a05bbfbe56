package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRender feeds arbitrary templates and message text to Parse and Render:
// they must return errors, never panic, and the whitespace rewrite must keep
// every tag. Run it with
//
//	go test -run '^$' -fuzz FuzzRender -fuzztime 10s ./chat
func FuzzRender(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "templates", "*.jinja"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "Hello!")
	}
	for _, name := range BuiltinNames() {
		b, _ := Builtin(name)
		f.Add(b.Source(), " <|im_end|>\n")
	}
	for _, src := range []string{
		"{{ 'a' * -1 }}",
		"{% for i in range(3) %}{{ i }}{% endfor %}",
		"{{ raise_exception(messages[0].content) }}",
		"{% raw %}{{ x }}{% endraw %}",
		"{{ messages[0].content[::-1] | trim }}\n",
		"{% if messages[0].content.startswith('{') %}{{ messages | tojson }}{% endif %}",
		"{{",
		"{% if %}",
		"{#",
	} {
		f.Add(src, "{{ x }}")
	}
	f.Fuzz(func(t *testing.T, src, content string) {
		if len(src) > 4096 || len(content) > 1024 {
			return
		}
		if in, ok := scanTags(src); ok {
			out, ok := scanTags(conformWhitespace(src))
			if !ok || len(out) != len(in) {
				t.Fatalf("rewrite changed the tags: %d, then %d (ok=%v)", len(in), len(out), ok)
			}
		}
		tmpl, err := Parse(src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "chat: parse template: ") {
				t.Fatalf("parse error without context: %v", err)
			}
			return
		}
		msgs := []Message{{Role: "system", Content: content}, {Role: "user", Content: content}}
		if _, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>"}); err != nil &&
			!strings.HasPrefix(err.Error(), "chat: render template: ") {
			t.Fatalf("render error without context: %v", err)
		}
	})
}
