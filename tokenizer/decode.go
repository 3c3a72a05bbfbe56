package tokenizer

import "unicode/utf8"

// StreamDecoder turns generated token ids into text piece by piece. Push
// returns only complete UTF-8: bytes of a character split across tokens
// are held back until the character is whole. It decodes a continuation,
// so unlike Decode it keeps the space in front of a first word.
type StreamDecoder struct {
	m       *model
	pending []byte
}

// Push adds the token id and returns the text that became complete.
// Invalid UTF-8 comes out as U+FFFD.
func (d *StreamDecoder) Push(id int) string {
	d.pending = d.m.appendToken(d.pending, id)
	return d.drain(false)
}

// Flush returns what is held back, with U+FFFD for an incomplete character,
// and resets the decoder.
func (d *StreamDecoder) Flush() string { return d.drain(true) }

func (d *StreamDecoder) drain(all bool) string {
	p := d.pending
	var out []byte
	i := 0
	for i < len(p) {
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			if !all && !utf8.FullRune(p[i:]) {
				break // wait for the rest of the character
			}
			out = append(out, "\uFFFD"...)
			i++
			if !all {
				continue
			}
			continue
		}
		out = append(out, p[i:i+n]...)
		i += n
	}
	if all {
		i = len(p)
	}
	d.pending = append(d.pending[:0], p[i:]...)
	return string(out)
}
