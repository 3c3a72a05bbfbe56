package grammar

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/tokenizer"
)

// englishVocab makes a synthetic vocabulary of size n shaped like a
// SentencePiece or BPE one: ids 0-2 are <unk>, <s> and </s> (special, nil;
// </s> ends generation), then the 256 bytes, then JSON and code
// punctuation, runs of spaces, numbers, a few accented and CJK
// characters, and words built from English-like syllables, with and without
// a leading space and capitalized.
func englishVocab(n int) (toks [][]byte, eog int) {
	r := rand.New(rand.NewSource(1))
	seen := map[string]bool{}
	toks = [][]byte{nil, nil, nil}
	add := func(s string) {
		if len(toks) < n && !seen[s] {
			seen[s] = true
			toks = append(toks, []byte(s))
		}
	}
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
		seen[string([]byte{byte(b)})] = true
	}
	for _, s := range []string{`":`, `": `, `",`, `", "`, `{"`, `"}`, `},`, `}`, `[{`, `}]`, `],`, `":"`, `","`,
		`"`, ` "`, `("`, `")`, `()`, `);`, `{}`, `[]`, `\n`, `\"`, `\\`, "\n", "\n\n", "\t", ", ", ". ", ".\n", ":", "://",
		" (", " -", " =", " ==", " {", " }", " [", " ]", "--", "...", " '", "'s", "n't"} {
		add(s)
	}
	for i := 1; i <= 16; i++ {
		add(strings.Repeat(" ", i))
		add("\n" + strings.Repeat(" ", i))
	}
	for i := range 1000 {
		add(strconv.Itoa(i))
		add(" " + strconv.Itoa(i))
	}
	for _, s := range []string{"é", "è", "à", "ü", "ö", "ñ", "ç", "ß", "–", "—", "’", "“", "”", "…", "€", "£", "°", "·"} {
		add(s)
		add(" " + s)
	}
	for i := range 500 {
		add(string(rune(0x4e00 + i*7)))
	}
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w y z th ch sh st tr pl gr br cl wh fr sp qu")
	onsets = append(onsets, "", "", "", "")
	vowels := strings.Fields("a e i o u ea ou ai ee oo y io ie")
	codas := strings.Fields("n r s t l d ng st nt rd ck m ll ss th ght x p ve se")
	codas = append(codas, "", "", "", "")
	for len(toks) < n {
		var w strings.Builder
		for range 1 + r.Intn(3) {
			w.WriteString(onsets[r.Intn(len(onsets))])
			w.WriteString(vowels[r.Intn(len(vowels))])
			w.WriteString(codas[r.Intn(len(codas))])
		}
		word := w.String()
		switch r.Intn(6) {
		case 0:
			add(word)
		case 1:
			add(strings.ToUpper(word[:1]) + word[1:])
		case 2:
			add(" " + strings.ToUpper(word[:1]) + word[1:])
		default:
			add(" " + word)
		}
	}
	return toks, 2
}

// tokenize splits text greedily into the longest vocabulary tokens.
func tokenize(toks [][]byte, text []byte) []int {
	byText := map[string]int{}
	longest := 0
	for id, t := range toks {
		if t != nil {
			if _, ok := byText[string(t)]; !ok {
				byText[string(t)] = id
			}
			longest = max(longest, len(t))
		}
	}
	var ids []int
	for len(text) > 0 {
		for n := min(longest, len(text)); n > 0; n-- {
			if id, ok := byText[string(text[:n])]; ok {
				ids = append(ids, id)
				text = text[n:]
				break
			}
		}
	}
	return ids
}

// benchDoc is a JSON document like one a model writes for a tool call.
const benchDoc = `{
  "name": "Ada Lovelace",
  "born": 1815,
  "tags": ["mathematician", "writer", "analyst"],
  "notes": "She wrote the first program for the Analytical Engine, an algorithm to compute Bernoulli numbers; Babbage called her \"the Enchantress of Number\".",
  "works": [{"title": "Sketch of the Analytical Engine", "year": 1843, "pages": 65}, {"title": "Notes", "year": 1843, "pages": null}],
  "score": -12.5e3,
  "alive": false
}`

const benchSchema = `{"type":"object","properties":{
  "name":{"type":"string"},"born":{"type":"integer"},
  "tags":{"type":"array","items":{"type":"string"},"maxItems":8},
  "notes":{"type":"string","maxLength":400},
  "works":{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"year":{"type":"integer"},"pages":{"type":["integer","null"]}},"required":["title","year"]}},
  "score":{"type":"number"},"alive":{"type":"boolean"}},
  "required":["name","born","tags","notes","works","score","alive"]}`

// benchMaskPerToken measures one mask and one Accept per token of benchDoc.
// warm reuses one matcher (its caches filled by earlier documents); cold
// starts a new matcher for each document.
func benchMaskPerToken(b *testing.B, g *Grammar, toks [][]byte, eog int, warm bool) {
	v := NewVocab(toks, []int{eog})
	ids := tokenize(toks, []byte(benchDoc))
	mask := make([]uint64, (len(toks)+63)/64)
	m := g.NewMatcher(v)
	run := func() {
		for _, id := range ids {
			if _, err := m.FillMask(mask); err != nil {
				b.Fatal(err)
			}
			if mask[id>>6]&(1<<(id&63)) == 0 {
				b.Fatalf("token %d %q masked out", id, toks[id])
			}
			if err := m.Accept(id); err != nil {
				b.Fatal(err)
			}
		}
		if !m.CanEnd() {
			b.Fatal("document incomplete")
		}
	}
	if warm {
		run()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if warm {
			m.Reset()
		} else {
			m = g.NewMatcher(v)
		}
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/token")
	b.ReportMetric(float64(len(ids)), "tokens/doc")
}

// BenchmarkMaskJSON: the any-JSON grammar over a 32000-token synthetic
// vocabulary, one mask per token of a 400-byte document.
func BenchmarkMaskJSON(b *testing.B) {
	toks, eog := englishVocab(32000)
	b.Run("warm", func(b *testing.B) { benchMaskPerToken(b, JSON(), toks, eog, true) })
	b.Run("cold", func(b *testing.B) { benchMaskPerToken(b, JSON(), toks, eog, false) })
}

// BenchmarkMaskJSON150k: the same over a 150000-token synthetic vocabulary
// (the size of Llama 3's or Qwen's).
func BenchmarkMaskJSON150k(b *testing.B) {
	toks, eog := englishVocab(150000)
	b.Run("warm", func(b *testing.B) { benchMaskPerToken(b, JSON(), toks, eog, true) })
	b.Run("cold", func(b *testing.B) { benchMaskPerToken(b, JSON(), toks, eog, false) })
}

// BenchmarkMaskSchema: the same document under a schema's grammar.
func BenchmarkMaskSchema(b *testing.B) {
	toks, eog := englishVocab(32000)
	g, err := FromJSONSchema([]byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) { benchMaskPerToken(b, g, toks, eog, true) })
	b.Run("cold", func(b *testing.B) { benchMaskPerToken(b, g, toks, eog, false) })
}

// BenchmarkMaskInString is the costliest position: inside a JSON string
// almost every token is allowed, so the walk visits most of the tree. The
// state's transitions are cached but not its mask.
func BenchmarkMaskInString(b *testing.B) {
	toks, eog := englishVocab(32000)
	v := NewVocab(toks, []int{eog})
	m := JSON().NewMatcher(v)
	if err := m.AcceptBytes([]byte(`{"notes": "She wrote`)); err != nil {
		b.Fatal(err)
	}
	mask := make([]uint64, (len(toks)+63)/64)
	n, _ := m.FillMask(mask)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.states[m.cur].mask, m.maskWords = nil, 0 // measure the walk, not the cache
		m.FillMask(mask)
	}
	b.ReportMetric(float64(n), "allowed")
	b.ReportMetric(float64(len(v.nodes)), "tree-nodes")
}

// BenchmarkNewVocab is the one-time cost of indexing a vocabulary.
func BenchmarkNewVocab(b *testing.B) {
	toks, eog := englishVocab(32000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		NewVocab(toks, []int{eog})
	}
}

// BenchmarkMaskLlamaVocab runs the JSON benchmark on the real 32000-token
// Llama SentencePiece vocabulary from ../shared, when present.
func BenchmarkMaskLlamaVocab(b *testing.B) {
	path := filepath.Join(testdata.Shared(b), "tokenizer-vectors", "ggml-vocab-llama-spm.gguf")
	tk, err := tokenizer.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	toks := make([][]byte, tk.VocabSize())
	for id := range toks {
		p := tk.Piece(id)
		switch {
		case id == tk.BOS() || id == tk.EOS() || id == 0:
			continue
		case len(p) == 6 && strings.HasPrefix(p, "<0x") && p[5] == '>':
			x, _ := strconv.ParseUint(p[3:5], 16, 8)
			toks[id] = []byte{byte(x)}
		default:
			toks[id] = bytes.ReplaceAll([]byte(p), []byte("▁"), []byte(" "))
		}
	}
	b.Run("warm", func(b *testing.B) { benchMaskPerToken(b, JSON(), toks, tk.EOS(), true) })
	b.Run("cold", func(b *testing.B) { benchMaskPerToken(b, JSON(), toks, tk.EOS(), false) })
}
