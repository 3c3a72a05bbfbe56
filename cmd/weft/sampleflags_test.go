package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftrun/weft/grammar"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/tokenizer"
)

type runOut struct {
	PromptTokens []int  `json:"prompt_tokens"`
	Tokens       []int  `json:"tokens"`
	Text         string `json:"text"`
	FinishReason string `json:"finish_reason"`
}

func runJSON(t *testing.T, args ...string) runOut {
	t.Helper()
	code, out, errOut := weft(append([]string{"run", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("weft run %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var r runOut
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	return r
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// readRows reads --logits-out: float32 rows of width vocab.
func readRows(t *testing.T, path string, vocab int) [][]float32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float32
	for off := 0; off+vocab*4 <= len(data); off += vocab * 4 {
		row := make([]float32, vocab)
		for j := range row {
			row[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*j:]))
		}
		rows = append(rows, row)
	}
	return rows
}

// fsdRef is FSD as docs/decoding.md defines it (Inferflow's
// FsdSamplingStrategy), written out again from the definition in float64:
// the 50 largest logits, their softmax at temperature temp, the k most
// probable; an n-gram anti-LM over the history with back-off weight beta
// (levels from n−1 down to 0, skipping those where the candidate does not
// follow the context, r decaying by β at the others; c/(t+1) above level
// 0, c/t at level 0); the score (1−α)p − α·penalty, or p when the history
// is shorter than n−1; the best score wins, ties to the lower id.
func fsdRef(logits []float32, hist []int, temp, alpha, beta float64, k, n int) int {
	ids := make([]int, len(logits))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return logits[ids[a]] > logits[ids[b]] })
	pool := ids[:min(50, len(ids))]
	p := map[int]float64{}
	var sum float64
	for _, id := range pool {
		p[id] = math.Exp(float64(logits[id]-logits[pool[0]]) / temp)
		sum += p[id]
	}
	for _, id := range pool {
		p[id] /= sum
	}
	top := slices.Clone(pool)
	sort.SliceStable(top, func(a, b int) bool { return p[top[a]] > p[top[b]] })
	top = top[:min(k, len(top))]
	L := len(hist)
	best, bestScore := -1, math.Inf(-1)
	for _, x := range top {
		score := p[x]
		if L >= n-1 {
			r, pen := 1.0, 0.0
			for i := n - 1; i >= 0; i-- {
				c, tot := 0, 0
				for j := i; j < L; j++ {
					if slices.Equal(hist[j-i:j], hist[L-i:]) {
						tot++
						if hist[j] == x {
							c++
						}
					}
				}
				if c == 0 {
					continue
				}
				if i == 0 {
					pen += r * float64(c) / float64(tot)
				} else {
					pen += r * beta * float64(c) / float64(tot+1)
				}
				r -= r * beta
			}
			score = (1-alpha)*p[x] - alpha*pen
		}
		if score > bestScore || (score == bestScore && x < best) {
			best, bestScore = x, score
		}
	}
	return best
}

// TestRunFSDReplay: the tokens of weft run --sampler fsd are, at every
// step, FSD's choice (fsdRef) from the logits of a teacher-forced run of
// the same tokens and the history so far.
func TestRunFSDReplay(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	for _, tc := range []struct {
		args              []string
		temp, alpha, beta float64
		k, n              int
	}{
		{[]string{"--temp", "1"}, 1, 0.5, 0.9, 6, 3},
		{[]string{"--temp", "0.7", "--fsd-alpha", "0.7", "--fsd-k", "10", "--fsd-n", "2", "--fsd-beta", "0.5"}, 0.7, 0.7, 0.5, 10, 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"-m", m, "-p", "Once upon a time, there was a", "-n", "48", "--sampler", "fsd"}, tc.args...)
			gen := runJSON(t, args...)
			if len(gen.Tokens) < 10 {
				t.Fatalf("only %d tokens generated", len(gen.Tokens))
			}
			logits := filepath.Join(t.TempDir(), "logits.f32")
			forced := runJSON(t, "-m", m, "-p", "Once upon a time, there was a", "--temp", "0", "--force-tokens", joinIDs(gen.Tokens), "--logits-out", logits)
			if !slices.Equal(forced.Tokens, gen.Tokens) {
				t.Fatalf("forced run fed %v, want %v", forced.Tokens, gen.Tokens)
			}
			rows := readRows(t, logits, 512)
			if len(rows) != len(gen.Tokens) {
				t.Fatalf("%d logits rows for %d tokens", len(rows), len(gen.Tokens))
			}
			hist := slices.Clone(gen.PromptTokens)
			differs := 0
			for i, tok := range gen.Tokens {
				if want := fsdRef(rows[i], hist, tc.temp, tc.alpha, tc.beta, tc.k, tc.n); tok != want {
					t.Fatalf("step %d: weft chose %d, the definition %d", i, tok, want)
				}
				if tok != slices.Index(rows[i], slices.Max(rows[i])) {
					differs++
				}
				hist = append(hist, tok)
			}
			if differs == 0 {
				t.Error("FSD chose the greedy token at every step: the test cannot tell them apart")
			}
		})
	}
}

// TestRunSeedThreads: a seed gives the same tokens at any thread count,
// with the whole chain on.
func TestRunSeedThreads(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	for _, extra := range [][]string{
		{"--temp", "1"},
		{"--temp", "0.9", "--repeat-penalty", "1.2", "--presence-penalty", "0.3", "--frequency-penalty", "0.2", "--typical", "0.9",
			"--tfs", "0.95", "--dry-multiplier", "0.8", "--xtc-probability", "0.5", "--top-nsigma", "2", "--logit-bias", "13+1"},
		{"--mirostat", "2", "--mirostat-ent", "4", "--mirostat-lr", "0.2"},
		{"--sampler", "random-fsd", "--temp", "1"},
		{"--samplers", "top_k;temperature;min_p", "--temp", "1.5"},
	} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			base := append([]string{"-m", m, "-p", "Lily had a", "-n", "40", "--seed", "7"}, extra...)
			a := runJSON(t, append(base, "--threads", "1")...)
			b := runJSON(t, append(base, "--threads", "2")...)
			if !slices.Equal(a.Tokens, b.Tokens) {
				t.Errorf("--threads 1: %v\n--threads 2: %v", a.Tokens, b.Tokens)
			}
			c := runJSON(t, append(base[:len(base):len(base)], "--seed", "8")...)
			if slices.Equal(a.Tokens, c.Tokens) && !slices.Contains(extra, "--mirostat") {
				t.Errorf("seeds 7 and 8 gave the same %d tokens", len(a.Tokens))
			}
		})
	}
}

// TestRunSampleFlagErrors: bad decoding flags exit with status 2 and a
// message naming the flag (and for a grammar its line and column).
func TestRunSampleFlagErrors(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	gfile := filepath.Join(t.TempDir(), "bad.gbnf")
	os.WriteFile(gfile, []byte("root ::= item+\nitem ::= \"a\" | [b-\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--top-p", "1.5"}, "--top-p 1.5"},
		{[]string{"--typical", "-1"}, "--typical"},
		{[]string{"--tfs", "2"}, "--tfs"},
		{[]string{"--mirostat", "3"}, "--mirostat 3"},
		{[]string{"--mirostat-lr", "NaN"}, "--mirostat-lr"},
		{[]string{"--xtc-probability", "1.2"}, "--xtc-probability"},
		{[]string{"--repeat-last-n", "-2"}, "--repeat-last-n"},
		{[]string{"--presence-penalty", "Inf"}, "--presence-penalty"},
		{[]string{"--dry-multiplier", "1", "--dry-base", "0.5"}, "--dry-base"},
		{[]string{"--logit-bias", "12"}, "--logit-bias"},
		{[]string{"--logit-bias", "100000+1"}, "--logit-bias 100000"},
		{[]string{"--samplers", "top_k;nope"}, `unknown sampler "nope"`},
		{[]string{"--samplers", "top_k", "--sampling-seq", "kt"}, "--sampling-seq"},
		{[]string{"--sampler", "beam"}, `unknown decoding algorithm "beam"`},
		{[]string{"--sampler", "fsd", "--fsd-k", "0"}, "--fsd-k 0"},
		{[]string{"--sampler", "fsd", "--fsd-n", "0"}, "--fsd-n 0"},
		{[]string{"--sampler", "fsd", "--fsd-alpha", "2"}, "--fsd-alpha"},
		{[]string{"--sampler", "fsd", "--fsd-beta", "-0.1"}, "--fsd-beta"},
		{[]string{"--grammar", "root ::= \"a\" x"}, `1:14: undefined rule "x"`},
		{[]string{"--grammar-file", gfile}, gfile + ": grammar: 2:"},
		{[]string{"--grammar-file", gfile + ".none"}, "--grammar-file"},
		{[]string{"--json-schema", `{"type":"object","patternProperties":{}}`}, "patternProperties"},
		{[]string{"--json-schema", `{"type":`}, "--json-schema"},
		{[]string{"--grammar", "root ::= \"a\"", "--json-schema", "{}"}, "exclusive"},
		{[]string{"--grammar", "root ::= \"a\"", "--beams", "2"}, "--beams cannot follow a grammar"},
		{[]string{"--sampler", "fsd", "--beams", "2"}, "--beams and --sampler fsd"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := weft(append([]string{"run", "-m", m, "-p", "Hi", "-n", "2"}, tc.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr %s", code, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
		})
	}
}

// compileSchema compiles a JSON Schema with santhosh-tekuri/jsonschema,
// the independent validator the tests check outputs against.
func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// TestRunJSONSchema: sampled outputs under --json-schema validate against
// the schema (checked by an independent validator,
// santhosh-tekuri/jsonschema) whenever they finish.
func TestRunJSONSchema(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	schemas := []string{
		`{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"]}`,
		`{"type":"array","items":{"enum":["red","green","blue"]},"minItems":1,"maxItems":4}`,
		`{"anyOf":[{"type":"boolean"},{"type":"null"},{"type":"number"}]}`,
		`{"$defs":{"pt":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"]}},"type":"object","properties":{"a":{"$ref":"#/$defs/pt"},"tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":2}},"required":["a"]}`,
	}
	finished := 0
	for i, s := range schemas {
		sch := compileSchema(t, s)
		for seed := range 3 {
			r := runJSON(t, "-m", m, "-p", "The answer is", "-n", "120", "--temp", "1.2", "--seed", strconv.Itoa(seed), "--json-schema", s)
			if r.FinishReason != "stop" {
				continue // cut at -n: a prefix, not a whole value
			}
			finished++
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Text))
			if err != nil {
				t.Fatalf("schema %d seed %d: output %q is not JSON: %v", i, seed, r.Text, err)
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("schema %d seed %d: output %q does not validate: %v", i, seed, r.Text, err)
			}
		}
	}
	if finished < len(schemas) {
		t.Errorf("only %d outputs finished: the test checks too little", finished)
	}
}

// TestRunGrammarDeadEnd: a grammar whose only continuation no token can
// give (a UTF-16 surrogate, which UTF-8 text never holds, and the
// vocabulary has byte tokens for everything else) ends with finish reason
// dead_end, not a hang.
func TestRunGrammarDeadEnd(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	r := runJSON(t, "-m", m, "-p", "Hi", "-n", "20", "--grammar", `root ::= "ab" [\uD800-\uDFFF]`, "--temp", "0")
	if r.FinishReason != "dead_end" {
		t.Errorf("finish reason %q, want dead_end (text %q)", r.FinishReason, r.Text)
	}
	if r.Text != "ab" {
		t.Errorf("text %q, want %q", r.Text, "ab")
	}
}

// TestRunJSONSchemaReplay: greedy decoding under --json-schema chooses, at
// every step, the token with the largest teacher-forced logit among those
// the grammar allows after the output so far (asked token by token with
// Matcher.Allows, not through the mask the engine uses), and its output
// validates.
func TestRunJSONSchemaReplay(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	schema := `{"type":"object","properties":{"id":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","maxLength":6},"maxItems":2}},"required":["id","ok","tags"]}`
	p := "Tom and Lily"
	gen := runJSON(t, "-m", m, "-p", p, "-n", "100", "--temp", "0", "--json-schema", schema)
	if gen.FinishReason != "stop" {
		t.Fatalf("finish reason %q (text %q): the output did not complete", gen.FinishReason, gen.Text)
	}
	logits := filepath.Join(t.TempDir(), "logits.f32")
	runJSON(t, "-m", m, "-p", p, "--temp", "0", "--force-tokens", joinIDs(gen.Tokens), "--logits-out", logits)
	rows := readRows(t, logits, 512)
	tk, err := tokenizer.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grammar.FromJSONSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	toks, eog := tokenizer.TokenBytes(tk)
	matcher := g.NewMatcher(grammar.NewVocab(toks, eog))
	for i, tok := range gen.Tokens {
		best := -1
		for id, v := range rows[i] {
			if matcher.Allows(id) && (best < 0 || v > rows[i][best]) {
				best = id
			}
		}
		if tok != best {
			t.Fatalf("step %d: weft chose %d, the best allowed token is %d", i, tok, best)
		}
		if err := matcher.Accept(tok); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	c.AddResource("mem://s.json", doc)
	sch, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(gen.Text))
	if err != nil {
		t.Fatalf("output %q is not JSON: %v", gen.Text, err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("output %q does not validate: %v", gen.Text, err)
	}
}
