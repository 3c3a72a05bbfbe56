// Command archref makes the llama.cpp references of model/testdata/arch:
// for each reference file it synthesizes the random-weight model its
// recipe names with `weft synth`, checks the file's sha256, runs the model
// through libllama (a llama.cpp or ik_llama.cpp build, never part of this
// repository) teacher-forced over the file's tokens, and writes the logits
// of every position back into the file. With -check it writes nothing and
// reports how far the fresh logits are from the file's.
//
//	go run ./tools/archref -llama ../ik_llama.cpp model/testdata/arch/qwen3.json
//
// A new reference starts as a file with only "synth" and "tokens" (and,
// when the reference is not plain f32, "tolerance" and "why"); archref
// fills in "about", "sha256" and "logits". See README.md.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// reference is one file of model/testdata/arch, fields in the order the
// files keep them. Synth stays as written: its numbers' spelling matters
// (4 is an int and 4.0 a float to `weft synth --set`).
type reference struct {
	About     string          `json:"about"`
	Synth     json.RawMessage `json:"synth"`
	SHA256    string          `json:"sha256"`
	Tokens    []int           `json:"tokens"`
	Logits    [][]float32     `json:"logits"`
	Tolerance float64         `json:"tolerance,omitempty"`
	Why       string          `json:"why,omitempty"`
}

// recipe is a reference's synth: the arguments of `weft synth` (as
// model/embed_test.go's synthRecipe reads them).
type recipe struct {
	Spec          string         `json:"spec"`
	Seed          json.Number    `json:"seed"`
	DType         string         `json:"dtype"`
	Vocab         string         `json:"vocab"`
	Set           map[string]any `json:"set"`
	RandomVectors bool           `json:"random_vectors"`
	Arch          string         `json:"arch"`
	VocabRepo     string         `json:"vocab_repo"`
}

func main() {
	llama := flag.String("llama", "", "llama.cpp or ik_llama.cpp source tree, built under build/ (libllama)")
	name := flag.String("name", "", `the engine's name in "about" (default: the -llama folder's name)`)
	weft := flag.String("weft", "", "weft binary (default: build ./cmd/weft)")
	shared := flag.String("shared", "../shared", `the shared folder a recipe's "vocab" is under`)
	cols := flag.Int("cols", 260, "logit columns kept per position (a large vocabulary's reference keeps the first)")
	check := flag.Bool("check", false, "write nothing: report the largest difference from each file's logits")
	verbose := flag.Bool("v", false, "show libllama's log")
	f16kv := flag.Bool("f16kv", false, "an f16 KV cache with flash attention (ik_llama.cpp has no plain-f32 attention: see README.md)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./tools/archref -llama DIR [-check] model/testdata/arch/NAME.json...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *llama == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fail(errors.New("run archref from the repository's root"))
	}
	tmp, err := os.MkdirTemp("", "archref")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	teacher, err := buildTeacher(*llama, tmp)
	if err != nil {
		fail(err)
	}
	if *weft == "" {
		*weft = filepath.Join(tmp, "weft")
		if err := run("go", "build", "-o", *weft, "./cmd/weft"); err != nil {
			fail(err)
		}
	}
	about := aboutLine(*llama, *name, *f16kv)
	bad := false
	for _, f := range flag.Args() {
		if err := one(f, teacher, *weft, *shared, tmp, about, *cols, *check, *verbose, *f16kv); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
}

// one makes (or with check, compares) the reference in file f.
func one(f, teacher, weft, shared, tmp, about string, cols int, check, verbose, f16kv bool) error {
	data, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		return err
	}
	if len(ref.Synth) == 0 || len(ref.Tokens) == 0 {
		return errors.New(`a reference needs "synth" and "tokens"`)
	}
	if ref.Tolerance > 0 && ref.Why == "" {
		return errors.New(`a reference with its own tolerance must say why`)
	}
	dec := json.NewDecoder(bytes.NewReader(ref.Synth))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var r recipe
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	gguf := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(f), ".json")+".gguf")
	args, err := synthArgs(r, shared, gguf)
	if err != nil {
		return err
	}
	if err := run(weft, args...); err != nil {
		return err
	}
	model, err := os.ReadFile(gguf)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(model)
	sha := hex.EncodeToString(sum[:])
	switch {
	case ref.SHA256 == "":
		ref.SHA256 = sha
	case ref.SHA256 != sha:
		return fmt.Errorf("weft synth %s made a file of sha256 %s, the reference's is %s", strings.Join(args, " "), sha, ref.SHA256)
	}
	var targs []string
	if verbose {
		targs = append(targs, "-v")
	}
	if f16kv {
		targs = append(targs, "-f16kv")
	}
	targs = append(targs, gguf)
	for _, t := range ref.Tokens {
		targs = append(targs, fmt.Sprint(t))
	}
	cmd := exec.Command(teacher, targs...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %w", teacher, err)
	}
	var got struct {
		NVocab int         `json:"n_vocab"`
		Logits [][]float32 `json:"logits"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return fmt.Errorf("teacher's output: %w", err)
	}
	if len(got.Logits) != len(ref.Tokens) {
		return fmt.Errorf("teacher gave %d rows for %d tokens", len(got.Logits), len(ref.Tokens))
	}
	for i, row := range got.Logits {
		if len(row) != got.NVocab {
			return fmt.Errorf("teacher's row %d has %d logits, the vocabulary %d", i, len(row), got.NVocab)
		}
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("teacher's row %d is not finite", i)
			}
		}
		if len(row) > cols {
			got.Logits[i] = row[:cols]
		}
	}
	if check {
		if len(ref.Logits) != len(got.Logits) {
			return fmt.Errorf("the file has %d rows of logits, the run %d", len(ref.Logits), len(got.Logits))
		}
		var abs, rel float64
		for i := range got.Logits {
			if len(ref.Logits[i]) != len(got.Logits[i]) {
				return fmt.Errorf("row %d: the file has %d logits, the run %d", i, len(ref.Logits[i]), len(got.Logits[i]))
			}
			for j, v := range got.Logits[i] {
				w := float64(ref.Logits[i][j])
				d := math.Abs(float64(v) - w)
				abs = max(abs, d)
				rel = max(rel, d/(1+math.Abs(w)))
			}
		}
		fmt.Printf("%s: max |Δ| %.3g, max |Δ|/(1+|ref|) %.3g\n", f, abs, rel)
		return nil
	}
	ref.About = about
	ref.Logits = got.Logits
	var buf bytes.Buffer
	if err := json.Compact(&buf, ref.Synth); err != nil {
		return err
	}
	ref.Synth = buf.Bytes()
	enc, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	if err := os.WriteFile(f, append(enc, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d positions × %d logits, sha256 %s\n", f, len(got.Logits), len(got.Logits[0]), sha)
	return nil
}

// synthArgs is the `weft synth` command line of a recipe.
func synthArgs(r recipe, shared, out string) ([]string, error) {
	if r.Spec == "" || r.DType == "" || r.Seed == "" {
		return nil, errors.New(`synth needs "spec", "seed" and "dtype"`)
	}
	args := []string{"synth", "-s", r.Spec, "--seed", r.Seed.String(), "--dtype", r.DType, "-o", out}
	switch {
	case r.VocabRepo != "":
		args = append(args, "--vocab", r.VocabRepo)
	case r.Vocab != "":
		args = append(args, "--vocab", filepath.Join(shared, r.Vocab))
	}
	if r.RandomVectors {
		args = append(args, "--random-vectors")
	}
	if r.Arch != "" {
		args = append(args, "--arch", r.Arch)
	}
	keys := make([]string, 0, len(r.Set))
	for k := range r.Set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var v string
		switch x := r.Set[k].(type) {
		case json.Number:
			v = x.String() // as written: 4.0 stays a float
		case bool:
			v = fmt.Sprint(x)
		case string:
			v = x
		default:
			return nil, fmt.Errorf("set %s: %v is not a number, bool or string", k, x)
		}
		if strings.Contains(v, ",") {
			return nil, fmt.Errorf("set %s: %q has a comma, which --set would split", k, v)
		}
		args = append(args, "--set", k+"="+v)
	}
	return args, nil
}

// buildTeacher compiles llama/teacher.c against the libllama built under
// dir/build and returns the program's path.
func buildTeacher(dir, tmp string) (string, error) {
	var libs []string // folders holding a libllama or libggml
	hasGGML := false
	err := filepath.WalkDir(filepath.Join(dir, "build"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch d.Name() {
		case "libllama.so", "libggml.so":
			if !slices.Contains(libs, filepath.Dir(p)) {
				libs = append(libs, filepath.Dir(p))
			}
			hasGGML = hasGGML || d.Name() == "libggml.so"
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("-llama %s: %w (build it first: see tools/archref/README.md)", dir, err)
	}
	if len(libs) == 0 {
		return "", fmt.Errorf("-llama %s: no libllama.so under build/ (build it with BUILD_SHARED_LIBS=ON: see tools/archref/README.md)", dir)
	}
	src, err := filepath.Abs(filepath.Join("tools", "archref", "llama", "teacher.c"))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(tmp, "teacher")
	args := []string{"-O2", "-std=c11", "-Wall", "-o", bin, src,
		"-I" + filepath.Join(dir, "include"), "-I" + filepath.Join(dir, "ggml", "include")}
	for _, l := range libs {
		abs, err := filepath.Abs(l)
		if err != nil {
			return "", err
		}
		args = append(args, "-L"+abs, "-Wl,-rpath,"+abs)
	}
	args = append(args, "-lllama")
	if hasGGML {
		args = append(args, "-lggml")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	return bin, run(cc, args...)
}

// aboutLine is a reference's "about": which engine, at which commit.
func aboutLine(dir, name string, f16kv bool) string {
	if name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		name = filepath.Base(abs)
	}
	commit := "unknown commit"
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--short=7", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	kv := "f32 KV cache"
	if f16kv {
		kv = "f16 KV cache, flash attention"
	}
	return fmt.Sprintf("%s (%s, CPU, %s) teacher-forced logits, all tokens in one batch, "+
		"on a random-weight model made by `weft synth`; regenerate with tools/archref", name, commit, kv)
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "archref:", err)
	os.Exit(1)
}
