package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/weftrun/weft/chat"
)

// TestChatMatchesLlamaServer holds two conversations with stories260K
// (chatml, greedy) and compares the replies with llama-server's answers to
// the same messages (server/testdata/llama-server-chat.json).
func TestChatMatchesLlamaServer(t *testing.T) {
	data, err := os.ReadFile("../../server/testdata/llama-server-chat.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Request struct {
			Messages []struct{ Role, Content string }
		}
		Content string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	l := loadChat(t)
	var out, errOut strings.Builder
	c := &chatter{l: l, maxTokens: 32, out: &out, errOut: &errOut}
	c.history = append(c.history, chat.Message{Role: "system", Content: cases[0].Request.Messages[0].Content})
	// The second conversation starts afresh after /clear, which keeps the
	// system prompt.
	in := cases[0].Request.Messages[1].Content + "\n/clear\n" + cases[1].Request.Messages[1].Content + "\n"
	if err := c.run(strings.NewReader(in), make(chan struct{}), false); err != nil {
		t.Fatal(err)
	}
	want := cases[0].Content + "\n" + cases[1].Content + "\n\n"
	if out.String() != want {
		t.Errorf("chat wrote %q, want llama-server's %q", out.String(), want)
	}
	if len(c.history) != 3 || c.history[2].Content != cases[1].Content {
		t.Errorf("history %+v", c.history)
	}
}
