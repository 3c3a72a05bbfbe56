package tokenizer

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/weftrun/weft/gguf"
)

// benchText builds about n bytes of deterministic text: varied English
// sentences, or (mixed) English interleaved with Cyrillic, CJK, emoji,
// digits, code and whitespace runs.
func benchText(n int, mixed bool) string {
	rng := rand.New(rand.NewSource(42))
	words := strings.Fields(`the a of to and in that it was he for on are with as his they be at one have this from
		or had by hot word but what some we can out other were all there when up use your how said an each she which do
		their time if will way about many then them write would like so these her long make thing see him two has look
		more day could go come did number sound no most people my over know water than call first who may down side been
		now find any new work part take get place made live where after back little only round man year came show every
		good me give our under name very through just form sentence great think say help low line differ turn cause much
		mean before move right boy old too same tell does set three want air well also play small end put home read hand
		port large spell add even land here must big high such follow act why ask men change went light kind off need
		house picture try us again animal point mother world near build self earth father head stand own page should
		country found answer school grow study still learn plant cover food sun four between state keep eye never last
		let thought city tree cross farm hard start might story saw far sea draw left late run don't while press close
		night real life few north open seem together next white children begin got walk example ease paper group always
		music those both mark often letter until mile river car feet care second book carry took science eat room friend`)
	other := []string{
		"нещо", "на", "Български", "Москва", "привет", "我想在", "apple", "工作", "天气很好", "東京都", "こんにちは",
		"🦙", "😀", "🚀", "😶‍🌫️", "✅", "1314151", "3.14159", "2024-05-17", "x := f(y) + 42;", "Führer", "Cửa Việt",
		"កាន់តែពិសេស", "مرحبا", "שלום", "\t\t", "\n\n", "    ", "...", "!!!", "(normal)", "don't", "I'll",
	}
	var b strings.Builder
	for b.Len() < n {
		k := 5 + rng.Intn(15)
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			if mixed && rng.Intn(3) == 0 {
				b.WriteString(other[rng.Intn(len(other))])
			} else {
				w := words[rng.Intn(len(words))]
				if i == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				b.WriteString(w)
			}
			if rng.Intn(12) == 0 {
				b.WriteByte(',')
			}
		}
		b.WriteString([]string{". ", "? ", "! ", ".\n", ".\n\n"}[rng.Intn(5)])
	}
	return b.String()[:n]
}

// BenchmarkEncode encodes 1 MB of English and of mixed-script text with
// the GPT-2 byte-level BPE and the Llama SentencePiece vocabularies.
// "warm" reuses the per-word cache across iterations (repeated text);
// "cold" empties it before each one.
func BenchmarkEncode(b *testing.B) {
	const size = 1 << 20
	texts := []struct {
		name string
		text string
	}{{"english", benchText(size, false)}, {"mixed", benchText(size, true)}}
	for _, vocabName := range []string{"gpt-2", "llama-spm"} {
		g, err := gguf.Open(sharedFile(b, "tokenizer-vectors", "ggml-vocab-"+vocabName+".gguf"))
		if err != nil {
			b.Fatal(err)
		}
		tk, err := FromGGUF(g.Meta)
		g.Close()
		if err != nil {
			b.Fatal(err)
		}
		m := tk.(*model)
		for _, tx := range texts {
			for _, cold := range []bool{false, true} {
				if cold && m.family != "bpe" {
					continue // SentencePiece has no cache
				}
				name := vocabName + "/" + tx.name
				if m.family == "bpe" {
					name += map[bool]string{false: "/warm", true: "/cold"}[cold]
				}
				b.Run(name, func(b *testing.B) {
					b.SetBytes(int64(len(tx.text)))
					for i := 0; i < b.N; i++ {
						if cold {
							b.StopTimer()
							m.enc.(*byteBPEEncoder).cache = wordCache{}
							b.StartTimer()
						}
						if _, err := tk.Encode(tx.text, EncodeOptions{}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkDecode decodes the ids of 1 MB of English text.
func BenchmarkDecode(b *testing.B) {
	g, err := gguf.Open(sharedFile(b, "tokenizer-vectors", "ggml-vocab-gpt-2.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	tk, err := FromGGUF(g.Meta)
	g.Close()
	if err != nil {
		b.Fatal(err)
	}
	text := benchText(1<<20, false)
	ids, err := tk.Encode(text, EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		if tk.Decode(ids) != text {
			b.Fatal("round trip")
		}
	}
}
