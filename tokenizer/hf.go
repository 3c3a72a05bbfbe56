package tokenizer

import "errors"

// LoadHF reads a Hugging Face tokenizer.json.
func LoadHF(path string) (Tokenizer, error) { return nil, errors.New("not yet") }
