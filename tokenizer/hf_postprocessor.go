package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The post-processor stage of a tokenizer.json pipeline: the special
// tokens added around an encoded text.

// parseHFPostProcessor returns the tokens added before and after a single
// sequence.
func parseHFPostProcessor(raw json.RawMessage, v *vocab) (prefix, suffix []int, err error) {
	if isNull(raw) {
		return nil, nil, nil
	}
	typ, err := hfType(raw)
	if err != nil {
		return nil, nil, err
	}
	tokenPair := func(field json.RawMessage, what string) (int, error) {
		var pair []json.RawMessage
		if err := json.Unmarshal(field, &pair); err != nil || len(pair) != 2 {
			return 0, fmt.Errorf("%s: want [\"token\", id]", what)
		}
		var id int
		if err := json.Unmarshal(pair[1], &id); err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		if id < 0 || id >= len(v.pieces) {
			return 0, fmt.Errorf("%s: id %d out of range", what, id)
		}
		return id, nil
	}
	switch typ {
	case "Sequence":
		var s struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		for i, p := range s.Processors {
			pre, suf, err := parseHFPostProcessor(p, v)
			if err != nil {
				return nil, nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			prefix = append(pre, prefix...)
			suffix = append(suffix, suf...)
		}
		return prefix, suffix, nil
	case "ByteLevel":
		return nil, nil, nil
	case "BertProcessing", "RobertaProcessing":
		var s struct {
			Sep json.RawMessage `json:"sep"`
			Cls json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		cls, err := tokenPair(s.Cls, "cls")
		if err != nil {
			return nil, nil, err
		}
		sep, err := tokenPair(s.Sep, "sep")
		if err != nil {
			return nil, nil, err
		}
		return []int{cls}, []int{sep}, nil
	case "TemplateProcessing":
		var s struct {
			Single []struct {
				SpecialToken *struct {
					ID string `json:"id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID string `json:"id"`
				} `json:"Sequence"`
			} `json:"single"`
			SpecialTokens map[string]struct {
				IDs []int `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		seen := false
		for _, it := range s.Single {
			switch {
			case it.Sequence != nil:
				if seen {
					return nil, nil, errors.New("template has two sequences in single")
				}
				seen = true
			case it.SpecialToken != nil:
				st, ok := s.SpecialTokens[it.SpecialToken.ID]
				if !ok {
					return nil, nil, fmt.Errorf("template special token %q has no entry in special_tokens", it.SpecialToken.ID)
				}
				for _, id := range st.IDs {
					if id < 0 || id >= len(v.pieces) {
						return nil, nil, fmt.Errorf("template special token %q: id %d out of range", it.SpecialToken.ID, id)
					}
				}
				if seen {
					suffix = append(suffix, st.IDs...)
				} else {
					prefix = append(prefix, st.IDs...)
				}
			default:
				return nil, nil, errors.New("template item is neither SpecialToken nor Sequence")
			}
		}
		if !seen {
			return nil, nil, errors.New("template single has no Sequence")
		}
		return prefix, suffix, nil
	}
	return nil, nil, fmt.Errorf("post-processor type %q is not supported", typ)
}
