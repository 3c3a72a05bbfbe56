package server

import (
	"strings"

	"github.com/weftrun/weft/tokenizer"
)

// choiceText turns one sequence's tokens into text: whole UTF-8
// characters only, cut at the first stop string, with the text that could
// still become a stop string held back until it cannot.
type choiceText struct {
	dec    *tokenizer.StreamDecoder
	stops  []string
	held   string // text that may begin a stop string
	text   strings.Builder
	tokens int
	done   bool
	finish string
}

func newChoiceText(tok tokenizer.Tokenizer, stops []string) *choiceText {
	return &choiceText{dec: tok.NewStreamDecoder(), stops: stops}
}

// push adds a generated token; last says the engine ended the sequence
// with it (reason "stop" or "length"). It returns the text that can be
// sent now. Once a stop string is found, done is set and finish is
// "stop".
func (c *choiceText) push(token int, last bool, reason string) string {
	if c.done {
		return ""
	}
	c.tokens++
	buf := c.held + c.dec.Push(token)
	if last {
		buf += c.dec.Flush()
	}
	c.held = ""
	if cut, ok := c.findStop(buf); ok {
		buf = buf[:cut]
		c.done, c.finish = true, "stop"
	} else if last {
		c.done, c.finish = true, reason
	} else if k := c.partialStop(buf); k > 0 {
		c.held = buf[len(buf)-k:]
		buf = buf[:len(buf)-k]
	}
	c.text.WriteString(buf)
	return buf
}

// findStop returns where the earliest stop string begins in s.
func (c *choiceText) findStop(s string) (int, bool) {
	best := -1
	for _, st := range c.stops {
		if i := strings.Index(s, st); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best, best >= 0
}

// partialStop returns the length of the longest suffix of s that is a
// proper prefix of a stop string.
func (c *choiceText) partialStop(s string) int {
	best := 0
	for _, st := range c.stops {
		for k := min(len(st)-1, len(s)); k > best; k-- {
			if strings.HasSuffix(s, st[:k]) {
				best = k
				break
			}
		}
	}
	return best
}

// tokenText returns the text a token adds to a continuation (with the
// space a SentencePiece piece puts before a word), for logprobs.
func tokenText(tok tokenizer.Tokenizer, id int) string {
	d := tok.NewStreamDecoder()
	return d.Push(id) + d.Flush()
}

// byteList returns s's bytes as OpenAI's logprobs "bytes".
func byteList(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}
