// Package chat turns a conversation into the prompt text a model was trained
// on, by rendering the model's chat template.
//
// A GGUF file carries its template as the metadata string
// tokenizer.chat_template: a Jinja2 template written for Hugging Face
// transformers' apply_chat_template. This package renders such templates with
// the same conventions transformers uses (trim_blocks and lstrip_blocks on, a
// single trailing newline dropped, raise_exception and strftime_now
// available, messages as a list of {role, content} mappings, bos_token,
// eos_token and add_generation_prompt as variables), using the pure-Go engine
// github.com/ardanlabs/jinja. It also ships built-in templates for the common
// model families (see Builtin), a guess of the family from a template's text
// for templates the engine cannot render (see Detect), and Select, which
// implements the --chat-template FILE|NAME choice.
//
// Templates come from model files, which are untrusted input: parsing and
// rendering never panic (an engine panic becomes an error), range() is
// bounded, and templates cannot read files. A template can still be written
// to run for a long time or build a huge string; callers that render
// templates from unknown sources should bound the work around Render.
package chat

import (
	"errors"
	"fmt"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is who speaks: "system", "user" or "assistant" (templates may
	// accept others, such as "tool").
	Role string
	// Content is the turn's text.
	Content string
}

// Options are the variables a chat template reads besides the messages.
type Options struct {
	// AddGenerationPrompt asks the template to end with the header that
	// opens an assistant turn, so the model's continuation is its reply.
	AddGenerationPrompt bool
	// BOS and EOS are the model's beginning- and end-of-sequence token
	// texts (bos_token, eos_token in the template). Many templates write
	// BOS themselves; a caller whose tokenizer also adds one should pass
	// BOS empty or not add it again when tokenizing.
	BOS, EOS string
}

// Template is a compiled chat template. It is immutable once made and safe
// for concurrent use.
type Template struct {
	name string // built-in name, or "" for a template parsed from text
	src  string // the source as given
	tmpl *jinja.Template
}

// RaiseError is the error a template reports through raise_exception, such
// as "Conversation roles must alternate user/assistant/user/assistant/...".
// It means the template rejects the conversation, not that it is broken.
type RaiseError struct {
	// Message is the template's own message.
	Message string
}

func (e *RaiseError) Error() string {
	return "template raised an exception: " + e.Message
}

// maxRange bounds the length of the list range() makes, so a template cannot
// exhaust memory with range(10**12). Chat templates iterate over messages,
// far below this.
const maxRange = 1 << 20

// Parse compiles a Jinja2 chat template, such as a GGUF file's
// tokenizer.chat_template. A syntax error is returned with the engine's
// message and line.
func Parse(src string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("chat: parse template: engine panic: %v", r)
		}
	}()
	jt, err := jinja.Compile(conformWhitespace(src))
	if err != nil {
		return nil, fmt.Errorf("chat: parse template: %w", err)
	}
	return &Template{src: src, tmpl: jt}, nil
}

// Name returns the built-in template's name (see Builtin), or "" for a
// template parsed from text.
func (t *Template) Name() string { return t.name }

// Source returns the template's Jinja2 source.
func (t *Template) Source() string { return t.src }

// Render formats msgs as the template prescribes. An error from the
// template's raise_exception is a *RaiseError (use errors.As); other errors
// report what the engine could not evaluate.
func (t *Template) Render(msgs []Message, opts Options) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chat: render template: engine panic: %v", r)
		}
	}()
	out, err = t.tmpl.RenderValues(variables(msgs, opts))
	if err != nil {
		return "", fmt.Errorf("chat: render template: %w", err)
	}
	return out, nil
}

// variables builds the template's global scope the way transformers'
// apply_chat_template does.
func variables(msgs []Message, opts Options) map[string]jinja.Value {
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(m.Content))
		list[i] = d
	}
	return map[string]jinja.Value{
		"messages":              jinja.NewList(list),
		"add_generation_prompt": jinja.NewBool(opts.AddGenerationPrompt),
		"bos_token":             jinja.NewString(opts.BOS),
		"eos_token":             jinja.NewString(opts.EOS),
		// These shadow the engine's own: raise_exception to return a
		// *RaiseError, range to bound the list it makes.
		"raise_exception": jinja.NewCallable("raise_exception", raiseException),
		"range":           jinja.NewCallable("range", boundedRange),
	}
}

func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), &RaiseError{Message: "raise_exception called without a message"}
	}
	msg := args[0].String()
	if args[0].IsString() {
		msg = args[0].AsString()
	}
	return jinja.Undefined(), &RaiseError{Message: msg}
}

// boundedRange is Python's range(stop) / range(start, stop[, step]) with the
// result's length limited to maxRange.
func boundedRange(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	ints := make([]int64, len(args))
	for i, a := range args {
		switch {
		case a.IsInt():
			ints[i] = a.AsInt()
		case a.IsBool():
			if a.AsBool() {
				ints[i] = 1
			}
		default:
			return jinja.Undefined(), fmt.Errorf("range: argument %d is %s, not an integer", i+1, a.String())
		}
	}
	var start, stop, step int64 = 0, 0, 1
	switch len(ints) {
	case 1:
		stop = ints[0]
	case 2:
		start, stop = ints[0], ints[1]
	case 3:
		start, stop, step = ints[0], ints[1], ints[2]
	default:
		return jinja.Undefined(), fmt.Errorf("range: expected 1 to 3 arguments, got %d", len(args))
	}
	if step == 0 {
		return jinja.Undefined(), errors.New("range: step must not be zero")
	}
	// The differences are computed in uint64, where they cannot overflow.
	var span, stride uint64
	switch {
	case step > 0 && stop > start:
		span, stride = uint64(stop)-uint64(start), uint64(step)
	case step < 0 && start > stop:
		span, stride = uint64(start)-uint64(stop), -uint64(step)
	}
	var n uint64
	if stride > 0 {
		n = span / stride
		if span%stride != 0 {
			n++
		}
	}
	if n > maxRange {
		return jinja.Undefined(), fmt.Errorf("range: %d items is more than the limit of %d", n, maxRange)
	}
	items := make([]jinja.Value, n)
	for i := range items {
		items[i] = jinja.NewInt(start + int64(i)*step)
	}
	return jinja.NewList(items), nil
}
