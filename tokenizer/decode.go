package tokenizer

import "unicode/utf8"

// StreamDecoder turns generated token ids into text piece by piece. Push
// returns only complete UTF-8: the bytes of a character split across tokens
// are held back until the character is whole, and bytes that cannot start
// or continue a character come out as U+FFFD. It decodes a continuation, so
// unlike Decode it keeps the space a SentencePiece piece puts before a word.
// A StreamDecoder is not safe for concurrent use.
type StreamDecoder struct {
	m       *model
	pending []byte
}

// Push adds token id and returns the text it completes (often "").
// Control tokens and ids out of range add nothing.
func (d *StreamDecoder) Push(id int) string {
	d.pending = d.m.appendToken(d.pending, id)
	return d.drain(false)
}

// Flush returns what is held back, U+FFFD for each byte of an unfinished
// character, and empties the decoder.
func (d *StreamDecoder) Flush() string { return d.drain(true) }

// drain returns the complete characters of pending; with all, the
// unfinished tail too.
func (d *StreamDecoder) drain(all bool) string {
	p := d.pending
	var out []byte
	i := 0
	for i < len(p) {
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			if !all && !utf8.FullRune(p[i:]) {
				break // the rest of the character may still come
			}
			out = append(out, "\uFFFD"...)
			i++
			continue
		}
		out = append(out, p[i:i+n]...)
		i += n
	}
	d.pending = append(d.pending[:0], p[i:]...)
	return string(out)
}
