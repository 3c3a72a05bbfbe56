package chat

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// conversation is the fixed conversation every family is rendered on:
// system + user + assistant + user, with a generation prompt.
var conversation = []Message{
	{Role: "system", Content: "You are a helpful assistant."},
	{Role: "user", Content: "Hello!"},
	{Role: "assistant", Content: "Hi there! How can I help?"},
	{Role: "user", Content: "What is the capital of France?"},
}

// Each family's special-token texts.
var (
	llama3Tokens   = Options{AddGenerationPrompt: true, BOS: "<|begin_of_text|>", EOS: "<|eot_id|>"}
	sentencePiece  = Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>"}
	chatmlTokens   = Options{AddGenerationPrompt: true, BOS: "", EOS: "<|im_end|>"}
	gemmaTokens    = Options{AddGenerationPrompt: true, BOS: "<bos>", EOS: "<eos>"}
	phi3Tokens     = Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "<|endoftext|>"}
	deepseekTokens = Options{AddGenerationPrompt: true, BOS: "<｜begin▁of▁sentence｜>", EOS: "<｜end▁of▁sentence｜>"}
	cohereTokens   = Options{AddGenerationPrompt: true, BOS: "<BOS_TOKEN>", EOS: "<|END_OF_TURN_TOKEN|>"}
)

// The expected prompts, written out from each family's documented format.
const (
	wantLlama3 = "<|begin_of_text|>" +
		"<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>" +
		"<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>" +
		"<|start_header_id|>assistant<|end_header_id|>\n\nHi there! How can I help?<|eot_id|>" +
		"<|start_header_id|>user<|end_header_id|>\n\nWhat is the capital of France?<|eot_id|>" +
		"<|start_header_id|>assistant<|end_header_id|>\n\n"
	wantLlama31 = "<|begin_of_text|>" +
		"<|start_header_id|>system<|end_header_id|>\n\n" +
		"Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" +
		"You are a helpful assistant.<|eot_id|>" +
		"<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>" +
		"<|start_header_id|>assistant<|end_header_id|>\n\nHi there! How can I help?<|eot_id|>" +
		"<|start_header_id|>user<|end_header_id|>\n\nWhat is the capital of France?<|eot_id|>" +
		"<|start_header_id|>assistant<|end_header_id|>\n\n"
	wantLlama2 = "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHello! [/INST]" +
		" Hi there! How can I help? </s>" +
		"<s>[INST] What is the capital of France? [/INST]"
	wantChatML = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
		"<|im_start|>user\nHello!<|im_end|>\n" +
		"<|im_start|>assistant\nHi there! How can I help?<|im_end|>\n" +
		"<|im_start|>user\nWhat is the capital of France?<|im_end|>\n" +
		"<|im_start|>assistant\n"
	// Qwen2 adds its default system prompt when the conversation has none.
	wantQwen2NoSystem = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
		"<|im_start|>user\nHello!<|im_end|>\n" +
		"<|im_start|>assistant\nHi there! How can I help?<|im_end|>\n" +
		"<|im_start|>user\nWhat is the capital of France?<|im_end|>\n" +
		"<|im_start|>assistant\n"
	// Mistral v1 has no system role: the original template rejects one, so
	// it is compared without; the built-in puts it before the first user
	// turn.
	wantMistralNoSystem = "<s>[INST] Hello! [/INST]Hi there! How can I help?</s>" +
		"[INST] What is the capital of France? [/INST]"
	wantMistral = "<s>[INST] You are a helpful assistant.\n\nHello! [/INST]Hi there! How can I help?</s>" +
		"[INST] What is the capital of France? [/INST]"
	// Mistral v3 puts the system prompt at the head of the last user turn.
	wantMistralV3 = "<s>[INST] Hello![/INST] Hi there! How can I help?</s>" +
		"[INST] You are a helpful assistant.\n\nWhat is the capital of France?[/INST]"
	wantMistralTekken = "<s>[INST]Hello![/INST]Hi there! How can I help?</s>" +
		"[INST]You are a helpful assistant.\n\nWhat is the capital of France?[/INST]"
	// Gemma has no system role: the real templates reject one; the built-in
	// puts it at the head of the first user turn, as Gemma's documentation
	// says to.
	wantGemma7bNoSystem = "<start_of_turn>user\nHello!<end_of_turn>\n" +
		"<start_of_turn>model\nHi there! How can I help?<end_of_turn>\n" +
		"<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n" +
		"<start_of_turn>model\n"
	wantGemmaNoSystem = "<bos>" + wantGemma7bNoSystem
	wantGemma         = "<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHello!<end_of_turn>\n" +
		"<start_of_turn>model\nHi there! How can I help?<end_of_turn>\n" +
		"<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n" +
		"<start_of_turn>model\n"
	wantPhi3 = "<|system|>\nYou are a helpful assistant.<|end|>\n" +
		"<|user|>\nHello!<|end|>\n" +
		"<|assistant|>\nHi there! How can I help?<|end|>\n" +
		"<|user|>\nWhat is the capital of France?<|end|>\n" +
		"<|assistant|>\n"
	wantZephyr = "<|system|>\nYou are a helpful assistant.</s>\n" +
		"<|user|>\nHello!</s>\n" +
		"<|assistant|>\nHi there! How can I help?</s>\n" +
		"<|user|>\nWhat is the capital of France?</s>\n" +
		"<|assistant|>\n"
	wantDeepSeek = "<｜begin▁of▁sentence｜>You are a helpful assistant.\n\n" +
		"User: Hello!\n\n" +
		"Assistant: Hi there! How can I help?<｜end▁of▁sentence｜>" +
		"User: What is the capital of France?\n\n" +
		"Assistant:"
	wantDeepSeekCoder = "<｜begin▁of▁sentence｜>You are a helpful assistant." +
		"### Instruction:\nHello!\n" +
		"### Response:\nHi there! How can I help?\n<|EOT|>\n" +
		"### Instruction:\nWhat is the capital of France?\n" +
		"### Response:\n"
	wantDeepSeek3 = "<｜begin▁of▁sentence｜>You are a helpful assistant." +
		"<｜User｜>Hello!" +
		"<｜Assistant｜>Hi there! How can I help?<｜end▁of▁sentence｜>" +
		"<｜User｜>What is the capital of France?" +
		"<｜Assistant｜><think>\n"
	wantCommandR = "<BOS_TOKEN>" +
		"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant.<|END_OF_TURN_TOKEN|>" +
		"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello!<|END_OF_TURN_TOKEN|>" +
		"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there! How can I help?<|END_OF_TURN_TOKEN|>" +
		"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>What is the capital of France?<|END_OF_TURN_TOKEN|>" +
		"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
	// Vicuna v1.1 (FastChat's vicuna_v1.1 format; its models ship no
	// template).
	wantVicuna = "You are a helpful assistant. USER: Hello! ASSISTANT: Hi there! How can I help?</s>" +
		"USER: What is the capital of France? ASSISTANT:"
	// ChatGLM3 puts a space after each role line; its template also checks
	// the engine's whitespace handling (see conformWhitespace).
	wantChatGLM3 = "[gMASK]sop<|system|>\n You are a helpful assistant." +
		"<|user|>\n Hello!" +
		"<|assistant|>\n Hi there! How can I help?" +
		"<|user|>\n What is the capital of France?" +
		"<|assistant|>"
)

// realCases renders real templates (testdata/templates) on the fixed
// conversation. builtin names the built-in for the same family, which must
// give the same prompt; noSystem renders the conversation without its system
// message, for families whose templates reject one (wantErr is then what
// the template says about the full conversation).
var realCases = []struct {
	file     string
	opts     Options
	noSystem bool
	want     string
	wantErr  string
	builtin  string
	detect   string
}{
	{file: "Meta-Llama-3-8B-Instruct.jinja", opts: llama3Tokens, want: wantLlama3, builtin: "llama3", detect: "llama3"},
	{file: "Llama-3.1-8B-Instruct.jinja", opts: llama3Tokens, want: wantLlama31, detect: "llama3"},
	{file: "Llama-2-7b-chat-hf.jinja", opts: sentencePiece, want: wantLlama2, builtin: "llama2", detect: "llama2"},
	{file: "OpenHermes-2.5-Mistral-7B.jinja", opts: chatmlTokens, want: wantChatML, builtin: "chatml", detect: "chatml"},
	{file: "Qwen2-7B-Instruct.jinja", opts: chatmlTokens, want: wantChatML, builtin: "chatml", detect: "chatml"},
	{file: "Qwen2.5-7B-Instruct.jinja", opts: chatmlTokens, want: wantChatML, builtin: "chatml", detect: "chatml"},
	{file: "Mistral-7B-Instruct-v0.1.jinja", opts: sentencePiece, noSystem: true, want: wantMistralNoSystem,
		wantErr: "Conversation roles must alternate user/assistant/user/assistant/...", builtin: "mistral", detect: "mistral"},
	{file: "Mistral-Large-Instruct-2407.jinja", opts: sentencePiece, want: wantMistralV3, builtin: "mistral-v3", detect: "mistral-v3"},
	{file: "Mistral-Nemo-Instruct-2407.jinja", opts: sentencePiece, want: wantMistralTekken, builtin: "mistral-v3-tekken", detect: "mistral-v3-tekken"},
	{file: "gemma-7b-it.jinja", opts: gemmaTokens, noSystem: true, want: wantGemma7bNoSystem,
		wantErr: "System role not supported", detect: "gemma"},
	{file: "gemma-2-2b-it.jinja", opts: gemmaTokens, noSystem: true, want: wantGemmaNoSystem,
		wantErr: "System role not supported", builtin: "gemma", detect: "gemma"},
	{file: "Phi-3.5-mini-instruct.jinja", opts: phi3Tokens, want: wantPhi3, builtin: "phi3", detect: "phi3"},
	{file: "Phi-3-small-8k-instruct.jinja", opts: phi3Tokens, want: "<s>" + wantPhi3, detect: "phi3"},
	{file: "zephyr-7b-beta.jinja", opts: sentencePiece, want: wantZephyr, builtin: "zephyr", detect: "zephyr"},
	{file: "DeepSeek-V2-Chat.jinja", opts: deepseekTokens, want: wantDeepSeek, builtin: "deepseek", detect: "deepseek"},
	{file: "deepseek-coder-33b-instruct.jinja", opts: Options{AddGenerationPrompt: true, BOS: deepseekTokens.BOS, EOS: "<|EOT|>"}, want: wantDeepSeekCoder},
	{file: "DeepSeek-R1-Distill-Qwen-32B.jinja", opts: deepseekTokens, want: wantDeepSeek3, builtin: "deepseek3", detect: "deepseek3"},
	{file: "c4ai-command-r-plus.jinja", opts: cohereTokens, want: wantCommandR, builtin: "command-r", detect: "command-r"},
	{file: "chatglm3-6b.jinja", opts: Options{AddGenerationPrompt: true}, want: wantChatGLM3},
}

func readTestdata(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "templates", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parse(t *testing.T, src string) *Template {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestRealTemplates(t *testing.T) {
	for _, tc := range realCases {
		t.Run(tc.file, func(t *testing.T) {
			tmpl := parse(t, readTestdata(t, tc.file))
			msgs := conversation
			if tc.noSystem {
				msgs = conversation[1:]
				_, err := tmpl.Render(conversation, tc.opts)
				var re *RaiseError
				if !errors.As(err, &re) || re.Message != tc.wantErr {
					t.Fatalf("with a system message: got error %v, want the template's %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q does not include the template's message", err)
				}
			}
			got, err := tmpl.Render(msgs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestBuiltinsMatchRealTemplates(t *testing.T) {
	for _, tc := range realCases {
		if tc.builtin == "" {
			continue
		}
		t.Run(tc.builtin+"/"+tc.file, func(t *testing.T) {
			real := parse(t, readTestdata(t, tc.file))
			b, ok := Builtin(tc.builtin)
			if !ok {
				t.Fatalf("no built-in %q", tc.builtin)
			}
			msgs := conversation
			if tc.noSystem {
				msgs = conversation[1:]
			}
			want, err := real.Render(msgs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Render(msgs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("built-in %s gives\n%q\nthe model's template gives\n%q", tc.builtin, got, want)
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"chatml", chatmlTokens, wantChatML},
		{"command-r", cohereTokens, wantCommandR},
		{"deepseek", deepseekTokens, wantDeepSeek},
		{"deepseek3", deepseekTokens, wantDeepSeek3},
		{"gemma", gemmaTokens, wantGemma},
		{"llama2", sentencePiece, wantLlama2},
		{"llama3", llama3Tokens, wantLlama3},
		{"mistral", sentencePiece, wantMistral},
		{"mistral-v3", sentencePiece, wantMistralV3},
		{"mistral-v3-tekken", sentencePiece, wantMistralTekken},
		{"phi3", phi3Tokens, wantPhi3},
		{"vicuna", sentencePiece, wantVicuna},
		{"zephyr", sentencePiece, wantZephyr},
	}
	var names []string
	for _, tc := range cases {
		names = append(names, tc.name)
		t.Run(tc.name, func(t *testing.T) {
			b, ok := Builtin(tc.name)
			if !ok {
				t.Fatalf("no built-in %q", tc.name)
			}
			if b.Name() != tc.name {
				t.Errorf("Name() = %q", b.Name())
			}
			got, err := b.Render(conversation, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			// Every built-in copes with any conversation shape.
			for _, msgs := range [][]Message{nil, conversation[:1], conversation[1:2], conversation[2:]} {
				if _, err := b.Render(msgs, Options{}); err != nil {
					t.Errorf("%d messages: %v", len(msgs), err)
				}
			}
		})
	}
	if got := BuiltinNames(); !slices.Equal(got, names) {
		t.Errorf("BuiltinNames() = %q, want %q", got, names)
	}
	for _, name := range []string{"", "nope", "../chat", "templates/chatml", "chatml.jinja"} {
		if _, ok := Builtin(name); ok {
			t.Errorf("Builtin(%q) found a template", name)
		}
	}
}

func TestGenerationPrompt(t *testing.T) {
	b, _ := Builtin("chatml")
	got, err := b.Render(conversation[:2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range realCases {
		got, ok := Detect(readTestdata(t, tc.file))
		if got != tc.detect || ok != (tc.detect != "") {
			t.Errorf("Detect(%s) = %q, %v; want %q", tc.file, got, ok, tc.detect)
		}
	}
	for _, name := range BuiltinNames() {
		b, _ := Builtin(name)
		if got, _ := Detect(b.Source()); got != name {
			t.Errorf("Detect(built-in %s) = %q", name, got)
		}
	}
	if got, ok := Detect("{{ messages }}"); ok {
		t.Errorf("Detect of an unknown template = %q", got)
	}
}

func TestSelect(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "custom.jinja")
	if err := os.WriteFile(file, []byte("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.jinja")
	if err := os.WriteFile(broken, []byte("{% if %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	llama2 := readTestdata(t, "Llama-2-7b-chat-hf.jinja")
	// A Llama 3 template that uses a filter the engine lacks: unusable, but
	// recognisable.
	unrenderable := "{{ messages | format_messages_somehow }}<|start_header_id|><|end_header_id|>"

	cases := []struct {
		name, gguf, override string
		wantName             string // built-in expected, or "" for a parsed template
		want                 string // output on the fixed conversation, if checked
		wantErr              string
	}{
		{name: "gguf template", gguf: llama2, want: wantLlama2},
		{name: "built-in overrides gguf", gguf: llama2, override: "zephyr", wantName: "zephyr", want: wantZephyr},
		{name: "file overrides gguf", gguf: llama2, override: file,
			want: "[system]You are a helpful assistant.[user]Hello![assistant]Hi there! How can I help?[user]What is the capital of France?"},
		{name: "no template", wantName: DefaultName, want: wantChatML},
		{name: "unrenderable gguf falls back", gguf: unrenderable, wantName: "llama3"},
		{name: "unparsable gguf falls back", gguf: "{% if <|im_start|>", wantName: "chatml"},
		{name: "unusable unknown gguf", gguf: "{{ x | no_such_filter }}", wantErr: `unknown filter "no_such_filter"`},
		{name: "unknown override", gguf: llama2, override: filepath.Join(dir, "missing"), wantErr: "is neither a built-in"},
		{name: "broken file", override: broken, wantErr: "chat template file " + broken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Select(tc.gguf, tc.override)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.Name() != tc.wantName {
				t.Errorf("Name() = %q, want %q", tmpl.Name(), tc.wantName)
			}
			if tc.want == "" {
				return
			}
			opts := sentencePiece
			if tc.wantName == DefaultName {
				opts = chatmlTokens
			}
			got, err := tmpl.Render(conversation, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	_, err := Parse("Hello {% for m in messages %}")
	if err == nil || !strings.HasPrefix(err.Error(), "chat: parse template: ") {
		t.Errorf("unclosed for: error %v", err)
	}
	_, err = Parse("{{ 'unclosed' ")
	if err == nil {
		t.Error("unclosed tag: no error")
	}

	tmpl := parse(t, "{{ raise_exception('Only ' ~ messages | length ~ ' turns, please') }}")
	_, err = tmpl.Render(conversation, Options{})
	var re *RaiseError
	if !errors.As(err, &re) || re.Message != "Only 4 turns, please" {
		t.Fatalf("raise_exception: error %v (%T)", err, err)
	}
	if want := "chat: render template: template raised an exception: Only 4 turns, please"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}

	// From inside a macro, a loop and a filter block too.
	tmpl = parse(t, "{% macro check(m) %}{% if m.role == 'tool' %}{{ raise_exception('no tools') }}{% endif %}{% endmacro %}"+
		"{% for m in messages %}{% filter upper %}{{ check(m) }}{% endfilter %}{% endfor %}")
	_, err = tmpl.Render([]Message{{Role: "user"}, {Role: "tool"}}, Options{})
	if !errors.As(err, &re) || re.Message != "no tools" {
		t.Errorf("nested raise_exception: error %v", err)
	}

	tmpl = parse(t, "{{ 'x' | no_such_filter }}")
	_, err = tmpl.Render(nil, Options{})
	if err == nil || errors.As(err, &re) {
		t.Errorf("unknown filter: error %v", err)
	}
}

func TestNoPanic(t *testing.T) {
	// Inputs that make the engine panic; they must come back as errors.
	for _, src := range []string{
		"{{ 'a' * -1 }}",
		"{{ 'ab' * 9223372036854775807 }}",
	} {
		tmpl, err := Parse(src)
		if err != nil {
			continue
		}
		if _, err := tmpl.Render(conversation, Options{}); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
}

func TestRange(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{% for i in range(3) %}{{ i }}{% endfor %}", "012"},
		{"{% for i in range(1, 7, 2) %}{{ i }}{% endfor %}", "135"},
		{"{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}", "531"},
		{"{% for i in range(3, 1) %}{{ i }}{% endfor %}", ""},
		{"{{ range(messages | length) | list | length }}", "4"},
	}
	for _, tc := range cases {
		got, err := parse(t, tc.src).Render(conversation, Options{})
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
	for _, src := range []string{
		"{{ range(10 ** 12) | length }}",
		"{{ range(-9223372036854775807 - 1, 9223372036854775807) | length }}",
		"{{ range(0, 5, 0) }}",
		"{{ range('a') }}",
		"{{ range() }}",
	} {
		if _, err := parse(t, src).Render(nil, Options{}); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
}

// TestWhitespace checks templates against the output Jinja2 gives with
// trim_blocks and lstrip_blocks on (worked out by hand from Jinja2's rules).
func TestWhitespace(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"newline after an expression stays", "{% for m in messages %}{{ m.role }}\n{% endfor %}", "system\nuser\nassistant\nuser\n"},
		{"one newline trimmed after adjacent blocks", "{% if true %}{% endif %}\n\nX", "\nX"},
		{"minus trims only the text next to it", "Effort: {{ 'max' }}{%- if true %}!{% endif %}", "Effort: max!"},
		{"right minus trims only the text next to it", "{% if true -%}{{ 'b' }}  \n c{% endif %}", "b  \n c"},
		{"lstrip only at line start", "{{ 'a' }}   {% if true %}x{% endif %}", "a   x"},
		{"lstrip at line start", "a\n    {% if true %}x{% endif %}", "a\nx"},
		{"lstrip at template start", "  {% if true %}x{% endif %}", "x"},
		{"indented blocks", "{% for m in messages %}\n    {% if m.role == 'user' %}\n        U:{{ m.content }}\n    {% endif %}\n{% endfor %}", "        U:Hello!\n        U:What is the capital of France?\n"},
		{"trailing newline dropped", "a\n", "a"},
		{"only one trailing newline dropped", "a\n\n", "a\n"},
		{"CRLF normalised", "a\r\n{% if true %}\r\nb{% endif %}\r\n", "a\nb"},
		{"comment", "a\n  {# c #}\nb", "a\nb"},
		{"raw kept", "{% raw %}{{ x }}{% if %}{% endraw %}", "{{ x }}{% if %}"},
		{"quotes hide closers", "{{ '}}' }}{{ \"%}\" }}", "}}%}"},
		{"explicit minus", "  a  {{- ' b ' -}}  c  ", "  a b c  "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(t, tc.src).Render(conversation, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConcurrentRender(t *testing.T) {
	b, _ := Builtin("llama3")
	done := make(chan error)
	for range 8 {
		go func() {
			got, err := b.Render(conversation, llama3Tokens)
			if err == nil && got != wantLlama3 {
				err = errors.New("wrong output")
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
