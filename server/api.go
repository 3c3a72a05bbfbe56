package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The request and response bodies of the OpenAI API, as far as the server
// reads and writes them. Unknown request fields are ignored.

// stringList is a JSON string or list of strings (stop).
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*s = nil
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = stringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*s = many
	return nil
}

// contentText reads a message's content: a string, null, or a list of
// content parts, of which only text parts are accepted (their texts are
// joined).
func contentText(b json.RawMessage) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return "", nil
	}
	if b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return "", errors.New("want a string or a list of content parts")
	}
	var out []byte
	for i, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part %d has type %q: only text parts are supported", i, p.Type)
		}
		if p.Text == nil {
			return "", fmt.Errorf("content part %d is a text part without text", i)
		}
		out = append(out, *p.Text...)
	}
	return string(out), nil
}

// message is one chat message of a request.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // contentText reads it
}

// streamOptions is stream_options.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ResponseFormat is a request's response_format: {"type": "text"},
// {"type": "json_object"} or {"type": "json_schema", "json_schema":
// {"name", "schema", "strict"}}.
type ResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// samplingFields are the sampling fields common to chat and completions
// requests: OpenAI's and the extra samplers by their llama.cpp/vLLM names.
type samplingFields struct {
	Model               string             `json:"model"`
	MaxTokens           *int               `json:"max_tokens"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	Temperature         *float64           `json:"temperature"`
	TopP                *float64           `json:"top_p"`
	TopK                *int               `json:"top_k"`
	MinP                *float64           `json:"min_p"`
	TypicalP            *float64           `json:"typical_p"`
	RepetitionPenalty   *float64           `json:"repetition_penalty"` // vLLM's name
	RepeatPenalty       *float64           `json:"repeat_penalty"`     // llama.cpp's name
	RepeatLastN         *int               `json:"repeat_last_n"`
	PresencePenalty     *float64           `json:"presence_penalty"`
	FrequencyPenalty    *float64           `json:"frequency_penalty"`
	Seed                *int64             `json:"seed"`
	Stop                stringList         `json:"stop"`
	N                   *int               `json:"n"`
	Stream              bool               `json:"stream"`
	StreamOptions       *streamOptions     `json:"stream_options"`
	LogitBias           map[string]float64 `json:"logit_bias"`
	IgnoreEOS           bool               `json:"ignore_eos"`
	ResponseFormat      *ResponseFormat    `json:"response_format"`
}

// chatRequest is a POST /v1/chat/completions body.
type chatRequest struct {
	samplingFields
	Messages    []message `json:"messages"`
	Logprobs    bool      `json:"logprobs"`
	TopLogprobs *int      `json:"top_logprobs"`
}

// completionRequest is a POST /v1/completions body.
type completionRequest struct {
	samplingFields
	Prompt   json.RawMessage `json:"prompt"`
	Logprobs *int            `json:"logprobs"`
	Echo     bool            `json:"echo"`
}

// usage is a response's token counts.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// topLogprob is one of the most likely tokens at a position (chat).
type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// tokenLogprob is a chosen token with its log-probability (chat).
type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

// chatLogprobs is a chat choice's logprobs.
type chatLogprobs struct {
	Content []tokenLogprob `json:"content"`
	Refusal []tokenLogprob `json:"refusal"`
}

// completionLogprobs is a completions choice's logprobs (the legacy shape).
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// chatMessage is an assistant message in a response.
type chatMessage struct {
	Role    string  `json:"role"`
	Content string  `json:"content"`
	Refusal *string `json:"refusal"`
}

type chatChoice struct {
	Index        int           `json:"index"`
	Message      chatMessage   `json:"message"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             usage        `json:"usage"`
}

// delta is a streamed chat chunk's change to its message.
type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	Refusal *string `json:"refusal,omitempty"`
}

type chunkChoice struct {
	Index        int           `json:"index"`
	Delta        delta         `json:"delta"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

type chatChunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage"`
}

type completionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

type completionResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usage             `json:"usage"`
}

// embeddingRequest is a POST /v1/embeddings body.
type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
}

type embeddingData struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

type embeddingResponse struct {
	Object string          `json:"object"`
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// apiError is the body of every error answer.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// promptInput is a completions prompt or embeddings input: a string, a
// list of one string, a list of token ids, or (embeddings) several of
// these.
func promptInputs(raw json.RawMessage) (texts []string, tokens [][]int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil, errors.New("is missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, nil, nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		return ss, nil, nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		return nil, [][]int{ids}, nil
	}
	var idss [][]int
	if json.Unmarshal(raw, &idss) == nil {
		return nil, idss, nil
	}
	return nil, nil, errors.New("want a string, a list of strings or a list of token ids")
}
