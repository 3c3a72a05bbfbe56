package chat

import "strings"

// conformWhitespace rewrites a template so that the engine's whitespace
// handling gives what Jinja2 gives under transformers' settings.
//
// Jinja2 normalises newlines to "\n" and drops one trailing newline before
// lexing; the engine (github.com/ardanlabs/jinja v1.8.0) does neither, so
// this does both.
//
// The engine applies trim_blocks, lstrip_blocks and the "-" markers of a
// tag to the nearest text segment on that side, skipping tags in between,
// where Jinja2 applies them only to text right next to the tag. So in
// "{% if x %}{{ y }}\n" the newline after {{ y }} is removed (Jinja2 keeps
// it), in "{% if %}{% endif %}\n\n" two newlines go instead of one, and in
// "Effort: {{ e }}{%- endif %}" the space after the colon goes. The engine
// also treats its first text segment as the start of the template even when
// a tag precedes it. Both are fixed without touching the engine: wherever a
// tag directly follows another tag or opens the template, a space is put
// before it and the tag gets a "-" marker, which removes that space and
// nothing else. Every tag then has a text segment on each side (possibly
// empty), which is what the engine's rules assume.
//
// Text inside {% raw %} ... {% endraw %} is left as it is. The tags are found
// with the engine's own lexical rules; a template with an unclosed tag is
// returned unchanged so that the engine reports the error.
func conformWhitespace(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	src = strings.TrimSuffix(src, "\n")

	tags, ok := scanTags(src)
	if !ok {
		return src
	}
	var b strings.Builder
	b.Grow(len(src) + 2*len(tags))
	last, prevEnd := 0, 0 // copied up to last; the previous tag ended at prevEnd
	inRaw := false
	for _, t := range tags {
		adjacent := t.start == prevEnd
		prevEnd = t.end
		if inRaw {
			if t.kind == '%' && t.keyword == "endraw" {
				inRaw = false
			}
			continue
		}
		if t.kind == '%' && t.keyword == "raw" {
			inRaw = true
		}
		if !adjacent {
			continue
		}
		b.WriteString(src[last:t.start])
		b.WriteByte(' ')
		if t.trimLeft {
			last = t.start
			continue
		}
		b.WriteString(src[t.start : t.start+2])
		b.WriteByte('-')
		last = t.start + 2
	}
	b.WriteString(src[last:])
	return b.String()
}

// tag is one {{ }}, {% %} or {# #} tag of a template.
type tag struct {
	start, end int    // byte offsets: src[start:end] is the whole tag
	kind       byte   // '{', '%' or '#'
	trimLeft   bool   // opened with "{{-", "{%-" or "{#-"
	keyword    string // a statement's first word, such as "raw"
}

// scanTags finds the tags of src by the rules of the engine's scanner: a tag
// opens at "{{", "{%" or "{#" and closes at the first "}}", "%}" or "#}"
// outside a quoted string (quotes are not special in comments). It reports
// false if a tag is not closed.
func scanTags(src string) ([]tag, bool) {
	var tags []tag
	for i := 0; i+1 < len(src); {
		if src[i] != '{' {
			i++
			continue
		}
		kind := src[i+1]
		var closer string
		switch kind {
		case '{':
			closer = "}}"
		case '%':
			closer = "%}"
		case '#':
			closer = "#}"
		default:
			i++
			continue
		}
		t := tag{start: i, kind: kind}
		i += 2
		if i < len(src) && src[i] == '-' {
			t.trimLeft = true
			i++
		}
		contentStart := i
		closed := false
		for i < len(src) {
			c := src[i]
			if kind != '#' && (c == '\'' || c == '"') {
				i++
				for i < len(src) && src[i] != c {
					if src[i] == '\\' && i+1 < len(src) {
						i++
					}
					i++
				}
				if i < len(src) {
					i++
				}
				continue
			}
			if c == '-' && i+2 < len(src) && src[i+1] == closer[0] && src[i+2] == closer[1] {
				if kind == '%' {
					t.keyword = keyword(src[contentStart:i])
				}
				i += 3
				closed = true
				break
			}
			if i+1 < len(src) && c == closer[0] && src[i+1] == closer[1] {
				if kind == '%' {
					t.keyword = keyword(src[contentStart:i])
				}
				i += 2
				closed = true
				break
			}
			i++
		}
		if !closed {
			return nil, false
		}
		t.end = i
		tags = append(tags, t)
	}
	return tags, true
}

// keyword returns a statement's leading word, as the engine's parser reads
// it.
func keyword(stmt string) string {
	stmt = strings.TrimSpace(stmt)
	for i, r := range stmt {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return stmt[:i]
		}
	}
	return stmt
}
