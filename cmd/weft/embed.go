package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/weftrun/weft/model"
)

// cmdEmbed prints the embeddings of texts: weft embed -m M -p TEXT.
func cmdEmbed(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed", stderr)
	modelPath := fs.String("m", "", "model: an encoder (bert, nomic-bert) or a decoder (its final hidden states, pooled; the spec's `hidden` output)")
	specPath := fs.String("s", "", "spec file or built-in name (default: chosen by the checkpoint's architecture)")
	tokPath := fs.String("tokenizer", "", "tokenizer file (default: the checkpoint's own)")
	prompt := fs.String("p", "", "text to embed; each line is a separate text")
	file := fs.String("f", "", "file of texts to embed, one per line (- reads standard input)")
	pair := fs.String("pair", "", "a second text: embed each text and this one as a sentence pair ([CLS] TEXT [SEP] PAIR [SEP] for BERT, the second segment of token type 1; the tokenizer's pair template)")
	fs.StringVar(file, "file", "", "same as -f")
	pooling := fs.String("pooling", "", "cls, mean, last or none (one embedding per token); default: the model's pooling_type, else cls for an encoder and last for a decoder")
	norm := fs.Bool("normalize", false, "scale each embedding to unit Euclidean length")
	threads := fs.Int("threads", 0, "CPU threads (0: all cores)")
	fs.IntVar(threads, "t", 0, "same as --threads")
	jsonOut := fs.Bool("json", false, `print {"embedding": [...]} for one pooled text, else {"embeddings": [[...], ...]}`)
	set := setFlags{}
	fs.Var(set, "set", "override a spec param: key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" {
		return fmt.Errorf("%w: -m MODEL is required", errUsage)
	}
	var texts []string
	addLines := func(s string) {
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimRight(l, "\r"); l != "" {
				texts = append(texts, l)
			}
		}
	}
	addLines(*prompt)
	if *file != "" {
		data, err := readInput(*file, os.Stdin)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		addLines(string(data))
	}
	if len(texts) == 0 {
		return fmt.Errorf("%w: nothing to embed: give -p TEXT or -f FILE", errUsage)
	}
	var pool model.Pooling
	if *pooling != "" {
		var err error
		if pool, err = model.ParsePooling(*pooling); err != nil {
			return fmt.Errorf("%w: --pooling: %v", errUsage, err)
		}
	}
	loadProg, loadDone := loadProgress(stderr, *modelPath)
	// Only the hidden states: a decoder's LM head is left out.
	m, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Tokenizer: *tokPath, Set: overrides(set), Outputs: []string{"hidden"}, Progress: loadProg})
	loadDone()
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Tokenizer == nil {
		return fmt.Errorf("%s has no tokenizer; pass --tokenizer FILE", *modelPath)
	}
	if *pooling == "" {
		if pool, err = m.DefaultPooling(); err != nil {
			return err
		}
	}
	e, err := m.NewEmbedder(model.EngineOptions{Threads: *threads})
	if err != nil {
		return err
	}
	defer e.Close()
	// Text output streams one line per embedding; Ctrl-C stops after the
	// texts done so far (--json prints those).
	ctx, stop := interruptible()
	defer stop()
	all := [][]float32{}
	var b []byte
	var stopped error
	// A bar of the texts on a terminal, for --json (text output shows its
	// progress line by line).
	barTo := io.Discard
	if *jsonOut {
		barTo = stderr
	}
	bar := countBar(barTo, "embed", len(texts))
	defer bar.Done()
	for i, t := range texts {
		opt := model.EmbedOptions{Pooling: pool, Normalize: *norm}
		var v [][]float32
		var err error
		if *pair != "" {
			v, err = e.EmbedPair(ctx, t, *pair, opt)
		} else {
			v, err = e.EmbedText(ctx, t, opt)
		}
		bar.Add(1)
		if err != nil {
			if stopped = interrupted(ctx, err); stopped != errInterrupted {
				return fmt.Errorf("text %d: %w", i+1, err)
			}
			break
		}
		if *jsonOut {
			all = append(all, v...)
			continue
		}
		for _, row := range v {
			b = b[:0]
			for j, x := range row {
				if j > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
			}
			b = append(b, '\n')
			if _, err := stdout.Write(b); err != nil {
				return err
			}
		}
	}
	if !*jsonOut {
		return stopped
	}
	var err2 error
	if len(all) == 1 && pool != model.PoolNone && stopped == nil {
		err2 = json.NewEncoder(stdout).Encode(struct {
			Embedding []float32 `json:"embedding"`
		}{all[0]})
	} else {
		err2 = json.NewEncoder(stdout).Encode(struct {
			Embeddings [][]float32 `json:"embeddings"`
		}{all})
	}
	if err2 != nil {
		return err2
	}
	return stopped
}
