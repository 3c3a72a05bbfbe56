package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sentence pairs: BERT-style models take two texts in one input, each
// token tagged with its segment (the token type embedding's row).

// PairEncoder is implemented by the tokenizers that know a pair template:
// a BERT vocabulary (a GGUF of tokenizer model "bert", or a
// tokenizer.json whose post_processor is BertProcessing,
// RobertaProcessing or a TemplateProcessing with a `pair` template).
type PairEncoder interface {
	// EncodePair encodes texts a and b as one input, laid out as the
	// pair template says when opt.AddSpecial (BERT: [CLS] a [SEP] b
	// [SEP]), else a then b, and returns each token's type id (BERT: 0
	// for [CLS], a and its [SEP], 1 for b and the last [SEP]).
	EncodePair(a, b string, opt EncodeOptions) (ids, types []int, err error)
}

// EncodePair encodes the pair (a, b) with tok's pair template; a
// tokenizer with none is an error.
func EncodePair(tok Tokenizer, a, b string, opt EncodeOptions) (ids, types []int, err error) {
	pe, ok := tok.(PairEncoder)
	if !ok {
		return nil, nil, errors.New("this tokenizer has no sentence-pair template")
	}
	return pe.EncodePair(a, b, opt)
}

// pairItem is one item of a pair template: special tokens (seq 0) or
// the first (seq 1) or second (seq 2) text, all with one type id.
type pairItem struct {
	seq    int
	ids    []int
	typeID int
}

// bertPair is BERT's template: [CLS] A [SEP] B [SEP], types 0 0 0 1 1.
func bertPair(cls, sep int) []pairItem {
	return []pairItem{{ids: []int{cls}}, {seq: 1}, {ids: []int{sep}}, {seq: 2, typeID: 1}, {ids: []int{sep}, typeID: 1}}
}

// EncodePair implements PairEncoder.
func (m *model) EncodePair(a, b string, opt EncodeOptions) (ids, types []int, err error) {
	if m.pair == nil {
		return nil, nil, fmt.Errorf("%s tokenizer: no sentence-pair template (a BERT vocabulary, or a tokenizer.json post_processor with a pair template, has one)", m.family)
	}
	plain := opt
	plain.AddSpecial = false
	var seqs [2][]int
	for i, s := range []string{a, b} {
		if seqs[i], err = m.Encode(s, plain); err != nil {
			return nil, nil, err
		}
	}
	for _, it := range m.pair {
		var add []int
		switch {
		case it.seq > 0:
			add = seqs[it.seq-1]
		case opt.AddSpecial:
			add = it.ids
		}
		ids = append(ids, add...)
		for range add {
			types = append(types, it.typeID)
		}
	}
	return ids, types, nil
}

// parseHFPairTemplate returns the pair template of a tokenizer.json
// post_processor, or nil when it has none (no post-processor, ByteLevel).
func parseHFPairTemplate(raw json.RawMessage, v *vocab) ([]pairItem, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		var s struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		var pair []pairItem
		for i, p := range s.Processors {
			pp, err := parseHFPairTemplate(p, v)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			if pp != nil && pair != nil {
				return nil, fmt.Errorf("Sequence[%d]: a second pair template", i)
			}
			if pp != nil {
				pair = pp
			}
		}
		return pair, nil
	case "BertProcessing", "RobertaProcessing":
		// The ids were checked by parseHFPostProcessor.
		prefix, suffix, err := parseHFPostProcessor(raw, v)
		if err != nil {
			return nil, err
		}
		cls, sep := prefix[0], suffix[0]
		if typ == "BertProcessing" {
			return bertPair(cls, sep), nil
		}
		// RoBERTa: <s> A </s> </s> B </s>, every token of type 0.
		return []pairItem{{ids: []int{cls}}, {seq: 1}, {ids: []int{sep, sep}}, {seq: 2}, {ids: []int{sep}}}, nil
	case "TemplateProcessing":
		var s struct {
			Pair []struct {
				SpecialToken *struct {
					ID     string `json:"id"`
					TypeID int    `json:"type_id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID     string `json:"id"`
					TypeID int    `json:"type_id"`
				} `json:"Sequence"`
			} `json:"pair"`
			SpecialTokens map[string]struct {
				IDs []int `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if len(s.Pair) == 0 {
			return nil, nil
		}
		var pair []pairItem
		seen := [2]bool{}
		for _, it := range s.Pair {
			switch {
			case it.Sequence != nil:
				k := map[string]int{"A": 1, "B": 2}[it.Sequence.ID]
				if k == 0 || seen[k-1] {
					return nil, fmt.Errorf("template pair: sequence %q unknown or repeated", it.Sequence.ID)
				}
				seen[k-1] = true
				pair = append(pair, pairItem{seq: k, typeID: it.Sequence.TypeID})
			case it.SpecialToken != nil:
				st, ok := s.SpecialTokens[it.SpecialToken.ID]
				if !ok {
					return nil, fmt.Errorf("template special token %q has no entry in special_tokens", it.SpecialToken.ID)
				}
				for _, id := range st.IDs {
					if id < 0 || id >= len(v.pieces) {
						return nil, fmt.Errorf("template special token %q: id %d out of range", it.SpecialToken.ID, id)
					}
				}
				pair = append(pair, pairItem{ids: st.IDs, typeID: it.SpecialToken.TypeID})
			default:
				return nil, errors.New("template pair item is neither SpecialToken nor Sequence")
			}
		}
		if !seen[0] || !seen[1] {
			return nil, errors.New("template pair lacks sequence A or B")
		}
		return pair, nil
	}
	return nil, nil
}
