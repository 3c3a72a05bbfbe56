package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is what one concurrency level measured.
type loadResult struct {
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Failed      int     `json:"failed"`
	FirstError  string  `json:"first_error,omitempty"`
	Tokens      int     `json:"tokens"`
	Seconds     float64 `json:"seconds"`
	TokS        float64 `json:"tok_s"` // generated tokens per second, all clients
	TTFTp50     float64 `json:"ttft_p50_ms"`
	TTFTp99     float64 `json:"ttft_p99_ms"`
	ITLp50      float64 `json:"itl_p50_ms"`
	ITLp99      float64 `json:"itl_p99_ms"`
}

func cmdLoadgen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("loadgen", stderr)
	url := fs.String("url", "http://127.0.0.1:8080", "server base URL (weft serve, llama-server, any OpenAI-compatible server)")
	levels := fs.String("c", "1,4,8,16", "concurrency levels, comma-separated")
	perClient := fs.Int("r", 4, "requests per client at each level")
	prompt := fs.String("p", "Once upon a time, in a small village at the edge of a great forest, there lived", "prompt")
	maxTokens := fs.Int("n", 64, "tokens to generate per request (EOS is ignored)")
	jsonOut := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var cs []int
	for _, f := range strings.Split(*levels, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > 4096 {
			return fmt.Errorf("%w: -c %q: want positive integers", errUsage, *levels)
		}
		cs = append(cs, c)
	}
	if *perClient < 1 || *maxTokens < 1 {
		return fmt.Errorf("%w: -r %d and -n %d must be ≥ 1", errUsage, *perClient, *maxTokens)
	}
	// Each request's prompt starts with this run's number and its own, so
	// that no server answers from a prompt cache, not even for a prompt an
	// earlier loadgen run (a warm-up) sent.
	run := time.Now().UnixNano() % 1000
	var seq atomic.Int64
	body := func() []byte {
		b, _ := json.Marshal(map[string]any{"prompt": fmt.Sprintf("%03d-%d. %s", run, seq.Add(1), *prompt), "max_tokens": *maxTokens,
			"temperature": 0, "stream": true, "ignore_eos": true})
		return b
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096}}
	target := strings.TrimSuffix(*url, "/") + "/v1/completions"
	if !*jsonOut {
		fmt.Fprintf(stdout, "%-11s %8s %6s %9s %10s %10s %9s %9s\n", "concurrency", "requests", "failed", "tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99")
	}
	for _, c := range cs {
		r := runLevel(client, target, body, c, *perClient)
		if *jsonOut {
			if err := json.NewEncoder(stdout).Encode(r); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stdout, "%-11d %8d %6d %9.1f %8.1fms %8.1fms %7.2fms %7.2fms\n", r.Concurrency, r.Requests, r.Failed, r.TokS, r.TTFTp50, r.TTFTp99, r.ITLp50, r.ITLp99)
		if r.FirstError != "" {
			fmt.Fprintf(stderr, "weft loadgen: concurrency %d: first failure: %s\n", c, r.FirstError)
		}
	}
	return nil
}

// runLevel runs c clients of n streaming requests each.
func runLevel(client *http.Client, url string, body func() []byte, c, n int) loadResult {
	var mu sync.Mutex
	var ttft, itl []float64
	res := loadResult{Concurrency: c}
	start := time.Now()
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for range n {
				t, gaps, toks, err := streamOnce(client, url, body())
				mu.Lock()
				res.Requests++
				if err != nil {
					if res.Failed == 0 {
						res.FirstError = err.Error()
					}
					res.Failed++
				} else {
					res.Tokens += toks
					ttft = append(ttft, t)
					itl = append(itl, gaps...)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.TokS = float64(res.Tokens) / res.Seconds
	res.TTFTp50, res.TTFTp99 = percentile(ttft, 50), percentile(ttft, 99)
	res.ITLp50, res.ITLp99 = percentile(itl, 50), percentile(itl, 99)
	return res
}

// streamOnce sends one streaming completion and returns its time to the
// first token and the gaps between tokens (ms), counting each chunk with
// text as one token.
func streamOnce(client *http.Client, url string, body []byte) (float64, []float64, int, error) {
	req, err := http.NewRequestWithContext(context.Background(), "POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, nil, 0, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var first float64
	var gaps []float64
	last := start
	toks := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			break
		}
		var ch struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &ch); err != nil {
			return 0, nil, 0, fmt.Errorf("chunk %q: %w", line, err)
		}
		if len(ch.Choices) == 0 || ch.Choices[0].Text == "" {
			continue
		}
		now := time.Now()
		if toks == 0 {
			first = ms(now.Sub(start))
		} else {
			gaps = append(gaps, ms(now.Sub(last)))
		}
		last = now
		toks++
	}
	if err := sc.Err(); err != nil {
		return 0, nil, 0, err
	}
	if toks == 0 {
		return 0, nil, 0, errors.New("no tokens")
	}
	return first, gaps, toks, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile returns the p-th percentile of xs (nearest rank).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(k, 0), len(s)-1)]
}
