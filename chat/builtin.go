package chat

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// builtinFS holds the built-in templates, one file NAME.jinja each, written
// from each family's documented prompt format.
//
//go:embed templates/*.jinja
var builtinFS embed.FS

// Builtin returns the built-in template called name (see BuiltinNames), and
// false if there is none.
func Builtin(name string) (*Template, bool) {
	if name == "" || strings.ContainsAny(name, "/.") {
		return nil, false
	}
	src, err := fs.ReadFile(builtinFS, "templates/"+name+".jinja")
	if err != nil {
		return nil, false
	}
	t, err := Parse(string(src))
	if err != nil {
		// The built-ins are parsed by the tests; this cannot happen.
		return nil, false
	}
	t.name = name
	return t, true
}

// BuiltinNames returns the names of the built-in templates, sorted.
func BuiltinNames() []string {
	entries, err := fs.ReadDir(builtinFS, "templates")
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
	}
	slices.Sort(names)
	return names
}

// Detect guesses which built-in template renders the same prompt format as
// a model's own template, from marker strings in the template's text (the
// way llama.cpp recognises templates). It is the fallback for a template the
// engine cannot render; ok is false if no family is recognised.
func Detect(src string) (name string, ok bool) {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if !strings.Contains(src, s) {
				return false
			}
		}
		return true
	}
	switch {
	case has("<|im_start|>") && !has("<|im_sep|>"):
		return "chatml", true
	case has("<|start_header_id|>", "<|end_header_id|>"):
		return "llama3", true
	case has("<start_of_turn>"):
		return "gemma", true
	case has("<|START_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>"):
		return "command-r", true
	case has("<｜User｜>", "<｜Assistant｜>"):
		return "deepseek3", true
	case has("[INST]") && !has("[SYSTEM_PROMPT]"):
		return detectMistral(src), true
	case has("<|assistant|>", "<|end|>"):
		return "phi3", true
	case has("<|user|>", "<|assistant|>", "eos_token"):
		return "zephyr", true
	case has("USER: ", "ASSISTANT:"):
		return "vicuna", true
	case has("User: ", "Assistant:"):
		return "deepseek", true
	}
	return "", false
}

// detectMistral tells the [INST] formats apart: Llama 2 wraps the system
// prompt in <<SYS>>; Mistral's v3 Tekken format has no spaces inside the
// [INST] tags, v3 none before [/INST], and v1 spaces on both sides.
func detectMistral(src string) string {
	switch {
	case strings.Contains(src, "<<SYS>>"):
		return "llama2"
	case strings.Contains(src, `"[INST]" +`) || strings.Contains(src, `'[INST]' +`):
		return "mistral-v3-tekken"
	case strings.Contains(src, `+ "[/INST]"`) || strings.Contains(src, `+ '[/INST]'`):
		return "mistral-v3"
	}
	return "mistral"
}

// DefaultName is the built-in template Select uses when the model has no
// template and none is named.
const DefaultName = "chatml"

// Select picks the chat template for a model, as --chat-template FILE|NAME
// does.
//
// A non-empty override wins: a built-in name (see BuiltinNames) selects that
// template, anything else is a file whose contents are the template. Without
// an override the model's own template, ggufTemplate, is used; if the engine
// cannot parse it or cannot render a plain user/assistant/user conversation
// with it, the built-in that Detect recognises in its text is used instead,
// and the error is returned if none is. A model with no template gets the
// DefaultName built-in.
func Select(ggufTemplate, override string) (*Template, error) {
	if override != "" {
		if t, ok := Builtin(override); ok {
			return t, nil
		}
		src, err := os.ReadFile(override)
		if err != nil {
			return nil, fmt.Errorf("chat: chat template %q is neither a built-in (%s) nor a readable file: %w",
				override, strings.Join(BuiltinNames(), ", "), err)
		}
		t, err := Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("chat: chat template file %s: %w", override, err)
		}
		return t, nil
	}
	if ggufTemplate == "" {
		t, _ := Builtin(DefaultName)
		return t, nil
	}
	t, err := Parse(ggufTemplate)
	if err == nil {
		probe := []Message{
			{Role: "user", Content: "Hello"},
			{Role: "assistant", Content: "Hi"},
			{Role: "user", Content: "Bye"},
		}
		_, err = t.Render(probe, Options{AddGenerationPrompt: true})
	}
	if err == nil {
		return t, nil
	}
	if name, ok := Detect(ggufTemplate); ok {
		if b, ok := Builtin(name); ok {
			return b, nil
		}
	}
	return nil, fmt.Errorf("chat: the model's chat template cannot be used and matches no built-in (use --chat-template FILE|NAME): %w", err)
}
