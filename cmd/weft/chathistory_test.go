package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

// loadChat loads stories260K with the chatml template for a chatter,
// with extra flags after the defaults.
func loadChat(t *testing.T, extra ...string) *loaded {
	t.Helper()
	fs := newFlags("chat", io.Discard)
	mf := addModelFlags(fs)
	model := filepath.Join(testdata.Shared(t), "models", "stories260K", "stories260K.gguf")
	if err := fs.Parse(append([]string{"-m", model, "--chat-template", "chatml", "--threads", "1"}, extra...)); err != nil {
		t.Fatal(err)
	}
	budget, err := mf.check()
	if err != nil {
		t.Fatal(err)
	}
	l, err := mf.load(budget, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l
}

// greedyReply generates a greedy reply to text (a rendered conversation)
// straight from the engine, without the chatter.
func greedyReply(t *testing.T, l *loaded, text string, maxTokens int) string {
	t.Helper()
	tok := l.m.Tokenizer
	ids, err := tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := sampling.New(sampling.Config{Temperature: 0})
	if err != nil {
		t.Fatal(err)
	}
	dec := tok.NewStreamDecoder()
	var b strings.Builder
	_, err = l.eng.Generate(context.Background(), scheduler.Request{Prompt: ids, MaxTokens: maxTokens, Sampler: smp, Stop: tok.IsEOG},
		func(ev scheduler.TokenEvent) { b.WriteString(dec.Push(ev.Token)) })
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString(dec.Flush())
	return b.String()
}

// TestChatKeepsHistory holds a two-turn conversation and checks that the
// second reply answers the whole conversation: it must equal a greedy
// reply, straight from the engine, to the chatml text of system, first
// message, first reply and second message, written out here from
// ChatML's published format.
func TestChatKeepsHistory(t *testing.T) {
	l := loadChat(t, "--set", "ctx=512") // a context as make demo's: two turns fit
	const system, first, second = "You are a storyteller.", "Tell me about a cat.", "What did the cat do next?"
	var out strings.Builder
	c := &chatter{l: l, cfg: sampling.Config{Temperature: 0}, maxTokens: 24, out: &out, errOut: io.Discard}
	c.history = append(c.history, chat.Message{Role: "system", Content: system})
	if err := c.run(strings.NewReader(first+"\n"+second+"\n"), make(chan struct{}), false); err != nil {
		t.Fatal(err)
	}
	turn := func(role, text string) string { return "<|im_start|>" + role + "\n" + text + "<|im_end|>\n" }
	conv := turn("system", system) + turn("user", first) + "<|im_start|>assistant\n"
	reply1 := greedyReply(t, l, conv, 24)
	conv = turn("system", system) + turn("user", first) + turn("assistant", reply1) + turn("user", second) + "<|im_start|>assistant\n"
	reply2 := greedyReply(t, l, conv, 24)
	if want := reply1 + "\n" + reply2 + "\n\n"; out.String() != want { // the last newline ends the input
		t.Errorf("chat wrote %q\nwant %q", out.String(), want)
	}
	if len(c.history) != 5 || c.history[2].Content != reply1 || c.history[4].Content != reply2 {
		t.Errorf("history %+v", c.history)
	}
	// Without the history the second reply differs: the check above can
	// tell a chat that forgets.
	alone := greedyReply(t, l, turn("system", system)+turn("user", second)+"<|im_start|>assistant\n", 24)
	if alone == reply2 {
		t.Fatalf("the second reply %q is the same with and without the history: pick other messages", reply2)
	}
}

// stopWriter calls stop (the chat's Ctrl-C handler) at its n-th write.
type stopWriter struct {
	mu     sync.Mutex
	b      strings.Builder
	writes int
	n      int
	stop   func() bool
}

func (w *stopWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.writes == w.n {
		w.stop()
	}
	return w.b.Write(p)
}

// TestChatCtrlCStopsAReply interrupts a reply as Ctrl-C does mid-stream:
// the reply ends early with what was written so far, which the history
// keeps, and the chat goes on to answer the next message.
func TestChatCtrlCStopsAReply(t *testing.T) {
	l := loadChat(t, "--set", "ctx=512") // a context as make demo's: two turns fit
	const first, second = "Tell me a long story.", "And then?"
	full := greedyReply(t, l, "<|im_start|>user\n"+first+"<|im_end|>\n<|im_start|>assistant\n", 48)
	var errOut strings.Builder
	w := &stopWriter{n: 4}
	c := &chatter{l: l, cfg: sampling.Config{Temperature: 0}, maxTokens: 48, out: w, errOut: &errOut}
	w.stop = c.interrupt
	if err := c.run(strings.NewReader(first+"\n"+second+"\n"), make(chan struct{}), false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "(stopped)") {
		t.Errorf("stderr %q: no (stopped)", errOut.String())
	}
	if len(c.history) != 4 {
		t.Fatalf("history %+v: want both turns", c.history)
	}
	partial := c.history[1].Content
	if partial == "" || len(partial) >= len(full) || !strings.HasPrefix(full, partial) {
		t.Errorf("interrupted reply %q: want a non-empty proper prefix of the whole reply %q", partial, full)
	}
	if !strings.HasPrefix(w.b.String(), partial+"\n") {
		t.Errorf("chat wrote %q, want the partial reply %q first", w.b.String(), partial)
	}
	if c.history[3].Role != "assistant" || c.history[3].Content == "" {
		t.Errorf("the message after Ctrl-C got no reply: %+v", c.history[3])
	}
}
