package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
)

// seq2seqRun is what `weft run` needs to generate with an encoder-decoder
// model (a spec with an encoder: graph, such as T5).
type seq2seqRun struct {
	prompt    string
	ids       []int
	n         int // tokens to generate; -1: until end of text or the context is full
	ctx       int // positions (the prompt's and the output's each)
	threads   int
	kvType    string
	picker    scheduler.Picker
	forced    []int
	logitsOut string
	json      bool
	seed      uint64
}

// runSeq2Seq encodes the prompt once and decodes from the model's decoder
// start token, one token a step, until end of text or r.n tokens.
func runSeq2Seq(m *model.Model, r seq2seqRun, stdout, stderr io.Writer) error {
	s, err := m.NewSeq2Seq(model.EngineOptions{Threads: r.threads, Context: r.ctx, KVType: r.kvType})
	if err != nil {
		return err
	}
	defer s.Close()
	var logitsFile *os.File
	if r.logitsOut != "" {
		if logitsFile, err = os.Create(r.logitsOut); err != nil {
			return err
		}
		defer logitsFile.Close()
	}
	n := r.n
	if n < 0 || n > r.ctx {
		n = r.ctx
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res := runResult{PromptTokens: r.ids, Tokens: []int{}, Seed: r.seed, FinishReason: "length"}
	if !r.json {
		fmt.Fprint(stdout, r.prompt)
	}
	start := time.Now()
	if err := s.Encode(ctx, r.ids); err != nil {
		return err
	}
	encoded := time.Now()
	tok, err := s.DecoderStart()
	if err != nil {
		return err
	}
	dec := m.Tokenizer.NewStreamDecoder()
	var text strings.Builder
	for len(res.Tokens) < n {
		rows, err := s.Decode(ctx, []int{tok})
		if err != nil {
			if ctx.Err() != nil {
				break // Ctrl-C: end quietly with the text so far
			}
			return err
		}
		if logitsFile != nil {
			if err := binary.Write(logitsFile, binary.LittleEndian, rows[0]); err != nil {
				return fmt.Errorf("write %s: %w", r.logitsOut, err)
			}
		}
		if i := len(res.Tokens); i < len(r.forced) {
			tok = r.forced[i]
		} else {
			tok = r.picker.Sample(rows[0])
		}
		res.Tokens = append(res.Tokens, tok)
		if len(r.forced) == 0 && m.Tokenizer.IsEOG(tok) {
			res.FinishReason = "stop"
			break
		}
		piece := dec.Push(tok)
		text.WriteString(piece)
		if !r.json {
			fmt.Fprint(stdout, piece)
		}
	}
	if rest := dec.Flush(); rest != "" {
		text.WriteString(rest)
		if !r.json {
			fmt.Fprint(stdout, rest)
		}
	}
	end := time.Now()
	res.Text = text.String()
	res.PrefillTokS = rate(len(r.ids), encoded.Sub(start))
	res.DecodeTokS = rate(len(res.Tokens), end.Sub(encoded))
	if r.json {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stderr, "prompt %d tokens encoded, %.1f tok/s; generated %d tokens, %.1f tok/s\n", len(r.ids), res.PrefillTokS, len(res.Tokens), res.DecodeTokS)
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}
