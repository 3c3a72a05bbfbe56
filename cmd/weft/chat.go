package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/weftrun/weft/chat"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

func cmdChat(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chat", stderr)
	mf := addModelFlags(fs)
	system := fs.String("system", "", "system prompt (the conversation's first message)")
	n := fs.Int("n", 512, "most tokens per reply (-1: until the end of the turn or of the context)")
	temp := fs.Float64("temp", 0.8, "temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "top-k (0: off)")
	topP := fs.Float64("top-p", 0.95, "top-p (1: off)")
	minP := fs.Float64("min-p", 0.05, "min-p (0: off)")
	seed := fs.Int64("seed", -1, "sampling seed (-1: random)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	budget, err := mf.check()
	if err != nil {
		return err
	}
	switch {
	case *n == -1:
		*n = math.MaxInt // each reply is bounded by the context left
	case *n < 1:
		return fmt.Errorf("%w: -n %d (≥ 1, or -1 for no limit)", errUsage, *n)
	}
	s := uint64(*seed)
	if *seed < 0 {
		s = uint64(time.Now().UnixNano())
	}
	cfg := sampling.Config{Temperature: *temp, TopK: *topK, TopP: *topP, MinP: *minP, Seed: s}
	if _, err := sampling.New(cfg); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	l, err := mf.load(budget, stderr)
	if err != nil {
		return err
	}
	defer l.close()

	// Ctrl-C stops the reply being written; at the prompt it ends the chat.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	c := &chatter{l: l, cfg: cfg, maxTokens: *n, out: stdout, errOut: stderr}
	if *system != "" {
		c.history = append(c.history, chat.Message{Role: "system", Content: *system})
	}
	quit := make(chan struct{})
	go func() {
		for range sig {
			if !c.interrupt() {
				close(quit)
				return
			}
		}
	}()
	fmt.Fprintf(stderr, "weft chat: %s, template %s. Type a message; /clear forgets the conversation, /exit or Ctrl-D ends it; Ctrl-C stops a reply or, at the prompt, ends the chat.\n",
		*mf.model, templateName(l.tmpl))
	return c.run(os.Stdin, quit, true)
}

func templateName(t *chat.Template) string {
	if t.Name() == "" {
		return "from the model"
	}
	return t.Name()
}

// chatter holds a conversation with a loaded model.
type chatter struct {
	l         *loaded
	cfg       sampling.Config
	maxTokens int
	out       io.Writer
	errOut    io.Writer
	history   []chat.Message

	mu     sync.Mutex
	cancel context.CancelFunc // of the reply being written, nil at the prompt
}

// interrupt stops the reply being written; it reports false at the prompt.
func (c *chatter) interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		return false
	}
	c.cancel()
	return true
}

// run reads user lines from in until EOF, /exit or quit, answering each.
func (c *chatter) run(in io.Reader, quit <-chan struct{}, prompt bool) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-quit:
				return
			}
		}
		readErr <- sc.Err()
	}()
	for {
		if prompt {
			fmt.Fprint(c.out, "\n> ")
		}
		var line string
		select {
		case line = <-lines:
		case err := <-readErr:
			fmt.Fprintln(c.out)
			return err
		case <-quit:
			fmt.Fprintln(c.out)
			return nil
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		case "/clear":
			keep := 0
			if len(c.history) > 0 && c.history[0].Role == "system" {
				keep = 1
			}
			c.history = c.history[:keep]
			fmt.Fprintln(c.errOut, "(conversation cleared)")
			continue
		}
		if err := c.reply(line); err != nil {
			return err
		}
	}
}

// reply answers one user message, streaming the reply to out.
func (c *chatter) reply(user string) error {
	msgs := append(c.history, chat.Message{Role: "user", Content: user})
	text, err := c.l.tmpl.Render(msgs, chat.Options{AddGenerationPrompt: true, BOS: c.l.bos, EOS: c.l.eos})
	if err != nil {
		var re *chat.RaiseError
		if errors.As(err, &re) {
			fmt.Fprintf(c.errOut, "the chat template rejects this conversation: %s\n", re.Message)
			return nil
		}
		return err
	}
	tok := c.l.m.Tokenizer
	ids, err := tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
	if err != nil {
		return fmt.Errorf("tokenize the conversation: %w", err)
	}
	if b := tok.BOS(); b >= 0 && len(ids) >= 2 && ids[0] == b && ids[1] == b {
		ids = ids[1:]
	}
	room := c.l.ctx - len(ids)
	if room < 1 {
		fmt.Fprintf(c.errOut, "the conversation's %d tokens fill the context of %d: /clear to start again\n", len(ids), c.l.ctx)
		return nil
	}
	smp, err := sampling.New(c.cfg)
	if err != nil {
		return err
	}
	c.cfg.Seed++ // the next reply draws differently
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
		cancel()
	}()
	dec := tok.NewStreamDecoder()
	var answer strings.Builder
	req := scheduler.Request{Prompt: ids, MaxTokens: min(c.maxTokens, room), Sampler: smp, Stop: tok.IsEOG}
	_, err = c.l.eng.Generate(ctx, req, func(ev scheduler.TokenEvent) {
		if ev.Reason == "error" {
			return
		}
		piece := dec.Push(ev.Token)
		answer.WriteString(piece)
		fmt.Fprint(c.out, piece)
	})
	rest := dec.Flush()
	answer.WriteString(rest)
	fmt.Fprintln(c.out, rest)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(c.errOut, "(stopped)")
	} else if err != nil {
		return err
	}
	c.history = append(msgs, chat.Message{Role: "assistant", Content: answer.String()})
	return nil
}
