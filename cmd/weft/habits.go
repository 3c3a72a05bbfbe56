package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"

	"github.com/weftrun/weft/internal/progress"
	"github.com/weftrun/weft/model"
)

// errInterrupted ends a command stopped by Ctrl-C after it printed what it
// had: weft exits 130 (128 + SIGINT, as shells report it) and says nothing
// more.
var errInterrupted = errors.New("interrupted")

// version is weft's version, set at link time with
// -ldflags "-X main.version=v1.2.3"; "devel" otherwise.
var version = "devel"

// readPrompt returns the prompt of -p or -f: "-" for either reads standard
// input, -f reads a file. Giving both is a usage error.
func readPrompt(p string, pGiven bool, file string, stdin io.Reader) (string, error) {
	switch {
	case file != "" && pGiven:
		return "", fmt.Errorf("%w: give -p PROMPT or -f FILE, not both", errUsage)
	case file == "" && p == "-":
		file = "-"
	case file == "":
		return p, nil
	}
	data, err := readInput(file, stdin)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// readInput returns the contents of the file an -f flag names, or of
// standard input for "-".
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("-f -: read standard input: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-f: %w", err)
	}
	return data, nil
}

// inputName names an -f argument in messages: "standard input" for "-".
func inputName(file string) string {
	if file == "-" {
		return "standard input"
	}
	return file
}

// loadProgress returns a model.Options.Progress drawing "load NAME" with a
// byte bar on stderr when it is a terminal, and the function that ends the
// line.
func loadProgress(stderr io.Writer, path string) (func(total int64) model.Progress, func()) {
	start, done := progressTo(stderr, "load "+filepath.Base(path))
	return func(total int64) model.Progress { return start(total) }, done
}

// prefillProgress returns a scheduler.Request.Prefill that draws a bar of
// the prompt tokens fed on stderr when it is a terminal and the prompt is
// longer than minTokens, and the function that ends the line (call it when
// the first token arrives).
func prefillProgress(stderr io.Writer, promptLen, minTokens int) (func(done, total int), func()) {
	if promptLen <= minTokens {
		return nil, func() {}
	}
	bar := progress.New(stderr, "prefill", int64(promptLen))
	var mu sync.Mutex
	last := 0
	report := func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done > last {
			bar.Add(int64(done - last))
			last = done
		}
	}
	finish := func() {
		report(promptLen, promptLen)
		bar.Done()
	}
	return report, finish
}

// interruptible returns a context the first Ctrl-C (SIGINT) cancels, so a
// long command can stop quietly with what it has; a second Ctrl-C kills
// weft as usual. Call stop when the command ends.
func interruptible() (ctx context.Context, stop func()) {
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // back to the default: the next Ctrl-C kills
	}()
	return ctx, stop
}

// interrupted returns errInterrupted for an error that ctx's cancellation
// caused (Ctrl-C), and err otherwise.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// ctxWriter fails its writes once ctx is done: a file writer stops at the
// next write after Ctrl-C.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// countBar returns a bar counting steps of a long command on stderr when it
// is a terminal ("bench 3/12"), silent otherwise.
func countBar(stderr io.Writer, label string, total int) *progress.Bar {
	return progress.New(stderr, label, int64(total))
}
