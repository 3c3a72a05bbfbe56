package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/weftrun/weft/tokenizer"
)

// TestGaugesMidFlight holds requests running and waiting on a slow fake
// engine and checks that /metrics reports the true counts while they are
// in flight, then 0 after.
func TestGaugesMidFlight(t *testing.T) {
	f := newFake(time.Millisecond)
	_, ts := fakeServer(t, f, Options{Parallel: 2, Queue: 4})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gauges := func() (running, waiting float64) {
		return metricValue(t, ts.URL, "vllm:num_requests_running"), metricValue(t, ts.URL, "vllm:num_requests_waiting")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	start := func() {
		wg.Go(func() {
			if resp, err := post(t, ctx, ts.URL+"/v1/completions", `{"prompt": "Once", "max_tokens": 90000, "stream": true}`); err == nil {
				io.Copy(io.Discard, resp.Body) //nolint:errcheck
				resp.Body.Close()
			}
		})
	}
	// One request, then a second (both run), then three more (they wait
	// for the two slots).
	for _, want := range []struct{ running, waiting float64 }{{1, 0}, {2, 0}, {2, 1}, {2, 2}, {2, 3}} {
		start()
		var r, w float64
		waitFor(t, fmt.Sprintf("%v running and %v waiting", want.running, want.waiting), func() bool {
			r, w = gauges()
			return r == want.running && w == want.waiting
		})
		// Held for a while, the counts stay true.
		time.Sleep(20 * time.Millisecond)
		if r, w = gauges(); r != want.running || w != want.waiting {
			t.Fatalf("%v running and %v waiting, then %v and %v", want.running, want.waiting, r, w)
		}
	}
	if a, _, l := f.state(); a != 2 || l != 2 {
		t.Errorf("the engine got %d queries, runs %d; want 2 and 2", a, l)
	}
	cancel()
	wg.Wait()
	waitFor(t, "the gauges to return to 0", func() bool { r, w := gauges(); return r == 0 && w == 0 })
}

// TestStreamUTF8 streams, through real SSE, tokens whose bytes split
// characters across tokens (stories260K's byte tokens): every chunk's text
// is valid UTF-8 and the chunks concatenate to the non-streamed text, which
// is the tokens' decoded text, for chat and completions.
func TestStreamUTF8(t *testing.T) {
	tm := loadStories(t, 0)
	tok := tm.m.Tokenizer
	const text = "héllo ☃ wörld ✓ 日本 😀"
	ids, err := tok.Encode(text, tokenizer.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for _, id := range ids {
		if s := tokenText(tok, id); !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
			split++
		}
	}
	if split < 4 {
		t.Fatalf("%q is %d tokens, %d of them partial characters: the test wants characters split across tokens", text, len(ids), split)
	}
	f := newFake(0)
	f.tokens = ids
	_, ts := fakeServer(t, f, Options{Parallel: 2})
	want := " " + text // SentencePiece's leading space
	for _, tc := range []struct{ path, body string }{
		{"/v1/completions", fmt.Sprintf(`{"prompt": "Once", "max_tokens": %d`, len(ids))},
		{"/v1/chat/completions", fmt.Sprintf(`{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": %d`, len(ids))},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := post(t, context.Background(), ts.URL+tc.path, tc.body+"}")
			if err != nil {
				t.Fatal(err)
			}
			var whole struct {
				Choices []struct {
					Text    string
					Message struct{ Content string }
				}
			}
			err = json.NewDecoder(resp.Body).Decode(&whole)
			resp.Body.Close()
			if err != nil || len(whole.Choices) != 1 {
				t.Fatalf("non-streamed: %v %+v", err, whole)
			}
			wholeText := whole.Choices[0].Text + whole.Choices[0].Message.Content
			if wholeText != want {
				t.Errorf("non-streamed %q, want %q", wholeText, want)
			}

			resp, err = post(t, context.Background(), ts.URL+tc.path, tc.body+`, "stream": true}`)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got strings.Builder
			chunks := 0
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				line, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok || line == "[DONE]" {
					continue
				}
				if !utf8.ValidString(line) {
					t.Errorf("event %q is not valid UTF-8", line)
				}
				var ch struct {
					Choices []struct {
						Text  string
						Delta struct{ Content string }
					}
				}
				if err := json.Unmarshal([]byte(line), &ch); err != nil || len(ch.Choices) != 1 {
					t.Fatalf("event %q: %v", line, err)
				}
				piece := ch.Choices[0].Text + ch.Choices[0].Delta.Content
				if strings.ContainsRune(piece, utf8.RuneError) {
					t.Errorf("chunk %q holds U+FFFD: a character was split", piece)
				}
				if piece != "" {
					chunks++
				}
				got.WriteString(piece)
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if got.String() != wholeText || chunks < 8 {
				t.Errorf("streamed %q in %d chunks; non-streamed %q", got.String(), chunks, wholeText)
			}
		})
	}
}
