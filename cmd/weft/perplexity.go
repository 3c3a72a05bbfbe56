package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// pplResult is weft perplexity's --json output.
type pplResult struct {
	Model      string    `json:"model"`
	Tokens     int       `json:"tokens"`
	Context    int       `json:"ctx"`
	Chunks     int       `json:"chunks"`
	Scored     int       `json:"scored"`     // tokens whose log-likelihood counts
	Perplexity float64   `json:"perplexity"` // exp of their mean negative log-likelihood
	PerChunk   []float64 `json:"per_chunk"`  // the running estimate after each chunk
}

// cmdPerplexity computes perplexity as llama-perplexity does: the text,
// tokenized with BOS, is cut into windows of -c tokens (the first token of
// each replaced by BOS when the model adds one); each window is evaluated
// from an empty cache, and the tokens of its second half are scored (the
// first half only gives them context).
func cmdPerplexity(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("perplexity", stderr)
	modelPath := fs.String("m", "", "model checkpoint")
	specPath := fs.String("s", "", "spec (default: by architecture)")
	textPath := fs.String("f", "", "text file to score (-: standard input)")
	fs.StringVar(textPath, "file", "", "same as -f")
	ctxSize := fs.Int("c", 512, "window size in tokens")
	fs.IntVar(ctxSize, "ctx-size", 512, "same as -c")
	threads := fs.Int("t", 0, "threads (0: all cores)")
	fs.IntVar(threads, "threads", 0, "same as -t")
	kvType := fs.String("kv-type", "auto", kvTypeUsage)
	jsonOut := fs.Bool("json", false, "print one JSON object")
	kernels := addKernelsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kern, err := kernels()
	if err != nil {
		return err
	}
	if *modelPath == "" || *textPath == "" {
		return fmt.Errorf("%w: -m MODEL and -f TEXT are required", errUsage)
	}
	if *ctxSize < 4 || *ctxSize > 1<<20 {
		return fmt.Errorf("%w: -c %d (4 to %d)", errUsage, *ctxSize, 1<<20)
	}
	if err := checkKVType(*kvType); err != nil {
		return err
	}
	text, err := readInput(*textPath, os.Stdin)
	if err != nil {
		return err
	}
	loadProg, loadDone := loadProgress(stderr, *modelPath)
	m, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Progress: loadProg})
	loadDone()
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Tokenizer == nil {
		return fmt.Errorf("%s has no tokenizer", *modelPath)
	}
	ids, err := m.Tokenizer.Encode(string(text), tokenizer.EncodeOptions{AddSpecial: true})
	if err != nil {
		return fmt.Errorf("tokenize %s: %w", inputName(*textPath), err)
	}
	n := *ctxSize
	if len(ids) < 2*n {
		return fmt.Errorf("%s tokenizes to %d tokens; a window of %d (-c) needs at least %d", inputName(*textPath), len(ids), n, 2*n)
	}
	bos := -1
	if first, err := m.Tokenizer.Encode("", tokenizer.EncodeOptions{AddSpecial: true}); err == nil && len(first) == 1 {
		bos = first[0]
	}
	eng, err := m.NewEngine(model.EngineOptions{Threads: *threads, MaxTokens: n, Context: n, KVType: *kvType, Kernels: kern})
	if err != nil {
		return err
	}
	defer eng.Close()
	plan, kv := eng.Plan(), eng.KV()
	vocab := eng.Vocab()
	first := n / 2
	res := pplResult{Model: *modelPath, Tokens: len(ids), Context: n, Chunks: len(ids) / n}
	var nll float64
	st := &backend.Step{}
	// Like llama-perplexity, print each window's running estimate as it
	// comes; Ctrl-C stops after the windows done so far and reports them.
	ctx, stop := interruptible()
	defer stop()
	var runErr error
	for c := 0; c < res.Chunks; c++ {
		win := ids[c*n : (c+1)*n]
		st.Tokens, st.Pos, st.Seq, st.Keep = st.Tokens[:0], st.Pos[:0], st.Seq[:0], st.Keep[:0]
		for i, t := range win {
			if i == 0 && bos >= 0 {
				t = bos
			}
			st.Tokens = append(st.Tokens, int32(t))
			st.Pos = append(st.Pos, int32(i))
			st.Seq = append(st.Seq, 0)
			if i >= first && i < n-1 {
				st.Keep = append(st.Keep, int32(i))
			}
		}
		kv.Reset()
		if err := kv.AddressWhole(st); err != nil {
			return err
		}
		outs, err := plan.Run(ctx, st, kv, nil)
		if err != nil {
			runErr = interrupted(ctx, err)
			break
		}
		rows := tensor.BytesToF32(outs[0].Data)
		gathered := ops.Rows(outs[0]) == len(st.Keep)
		for k, j := range st.Keep {
			r := k
			if !gathered {
				r = int(j)
			}
			nll -= logSoftmaxAt(rows[r*vocab:(r+1)*vocab], win[j+1])
			res.Scored++
		}
		res.PerChunk = append(res.PerChunk, math.Exp(nll/float64(res.Scored)))
		if !*jsonOut {
			fmt.Fprintf(stdout, "[%d]%.4f,", c+1, res.PerChunk[c])
		}
	}
	kv.Reset()
	if runErr != nil && runErr != errInterrupted {
		return runErr
	}
	done := len(res.PerChunk)
	if done == 0 {
		if !*jsonOut {
			fmt.Fprintln(stdout)
		}
		return runErr
	}
	res.Perplexity = math.Exp(nll / float64(res.Scored))
	if *jsonOut {
		res.Chunks = done
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return err
		}
		return runErr
	}
	if done < res.Chunks {
		fmt.Fprintf(stdout, "\nperplexity %.4f over %d tokens (interrupted after %d of %d windows of %d, the second half of each scored)\n", res.Perplexity, res.Scored, done, res.Chunks, n)
		return runErr
	}
	fmt.Fprintf(stdout, "\nperplexity %.4f over %d tokens (%d windows of %d, the second half of each scored)\n", res.Perplexity, res.Scored, res.Chunks, n)
	return nil
}

// logSoftmaxAt returns log softmax(row)[tok] as llama-perplexity computes
// it: float32 differences from the maximum, exponentials summed in
// float64.
func logSoftmaxAt(row []float32, tok int) float64 {
	mx := row[0]
	for _, v := range row[1:] {
		mx = max(mx, v)
	}
	var sum float64
	for _, v := range row {
		sum += math.Exp(float64(v - mx))
	}
	return float64(row[tok]-mx) - math.Log(sum)
}
