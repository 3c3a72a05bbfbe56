package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftrun/weft/internal/testdata"
)

// startServe runs `weft serve` on stories260K as a subprocess on a free
// port and waits for /health to answer 200. It returns the process, its
// base URL, its stderr and a channel that receives its exit.
func startServe(t *testing.T, extra ...string) (*exec.Cmd, string, *lockedBuffer, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	model := filepath.Join(testdata.Shared(t), "models", "stories260K", "stories260K.gguf")
	args := append([]string{"serve", "-m", model, "--threads", "1", "--host", "127.0.0.1", "--port", fmt.Sprint(port)}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), beWeft+"=1")
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("weft serve ended before it was ready (%v): %s", err, errOut.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("weft serve not ready after a minute: %s", errOut.String())
		}
	}
	return cmd, url, &errOut, done
}

// streamTokens posts a streaming completion and sends each SSE data line
// on lines; it closes lines when the stream ends.
func streamTokens(ctx context.Context, url string, maxTokens int, lines chan<- string) error {
	defer close(lines)
	body := fmt.Sprintf(`{"prompt": "Once upon a time", "max_tokens": %d, "temperature": 0, "ignore_eos": true, "stream": true}`, maxTokens)
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines <- d
		}
	}
	return sc.Err()
}

// TestServeSIGTERM sends a real SIGTERM to `weft serve` while a request
// streams. With a drain deadline the request has time for, it finishes
// whole ([DONE] after all its tokens), a request made during the drain is
// refused, and the server exits 0. With a deadline it has no time for,
// the request is cut off and the server still exits 0, promptly.
func TestServeSIGTERM(t *testing.T) {
	cases := []struct {
		name      string
		drain     string
		maxTokens int
		whole     bool
	}{
		{"drains in time", "60s", 3000, true},
		// 16 000 tokens take seconds even for stories260K.
		{"deadline cancels", "200ms", 16000, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, url, errOut, done := startServe(t, "--drain-timeout", tc.drain, "--set", fmt.Sprintf("ctx=%d", tc.maxTokens+64))
			lines := make(chan string, 1024)
			streamErr := make(chan error, 1)
			go func() { streamErr <- streamTokens(context.Background(), url, tc.maxTokens, lines) }()
			if _, ok := <-lines; !ok { // the first token arrived: the request is in flight
				t.Fatalf("the stream ended before its first token: %v; %s", <-streamErr, errOut.String())
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			chunks, sawDone := 1, false
			for d := range lines {
				if d == "[DONE]" {
					sawDone = true
				} else {
					chunks++
				}
			}
			err := <-streamErr
			if tc.whole {
				if err != nil || !sawDone || chunks < tc.maxTokens/2 {
					t.Errorf("drained request: error %v, [DONE] %v, %d chunks of %d tokens", err, sawDone, chunks, tc.maxTokens)
				}
			} else if sawDone {
				t.Errorf("a request of %d tokens finished within a 200 ms drain (%d chunks)", tc.maxTokens, chunks)
			}
			// New requests are refused once the drain has begun.
			if resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "Once", "max_tokens": 2}`)); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("a request during shutdown got 200")
				}
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				if err != nil && !errors.As(err, &ee) {
					t.Fatal(err)
				}
				if err != nil {
					t.Errorf("weft serve exited with %v after SIGTERM: %s", err, errOut.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("weft serve did not exit within 30 s of SIGTERM: %s", errOut.String())
			}
			if !strings.Contains(errOut.String(), "shutting down") {
				t.Errorf("stderr does not say it is shutting down: %s", errOut.String())
			}
		})
	}
}
