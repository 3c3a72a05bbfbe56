package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/weftrun/weft/tokenizer"
)

func cmdTokenize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", stderr)
	path := fs.String("m", "", "model or vocabulary: GGUF, tokenizer.json, tokenizer.bin, vocab.txt or an HF folder")
	text := fs.String("p", "", "text to tokenize")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS")
	special := fs.Bool("special", false, "match special tokens written in the text (e.g. <s>)")
	jsonOut := fs.Bool("json", false, `print {"ids":[...],"pieces":[...]}`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("%w: -m MODEL_OR_VOCAB is required", errUsage)
	}
	p := *path
	tok, err := tokenizer.Load(p)
	if err != nil {
		return err
	}
	ids, err := tok.Encode(*text, tokenizer.EncodeOptions{AddSpecial: !*noBOS, ParseSpecial: *special})
	if err != nil {
		return err
	}
	pieces := make([]string, len(ids))
	for i, id := range ids {
		pieces[i] = tok.Piece(id)
	}
	if *jsonOut {
		return json.NewEncoder(stdout).Encode(struct {
			IDs    []int    `json:"ids"`
			Pieces []string `json:"pieces"`
		}{ids, pieces})
	}
	for i, id := range ids {
		fmt.Fprintf(stdout, "%6d -> %q\n", id, pieces[i])
	}
	return nil
}
