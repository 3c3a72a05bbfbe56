package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
)

// TestRunSpeculativeGolden: greedy decoding with a draft model (the model
// itself) or with prompt lookup gives exactly llama.cpp's golden greedy
// tokens on every stories260K case, and reports its drafts.
func TestRunSpeculativeGolden(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	for _, spec := range [][]string{
		{"--model-draft", m, "--draft-max", "5"},
		{"--spec-ngram", "3"},
		{"--spec-ngram", "2", "--draft-max", "3", "--draft-min", "2"},
	} {
		for i, c := range testdata.Golden(t, shared, "stories260K") {
			want := c.Tokens()
			args := append([]string{"-m", m, "-p", c.Prompt, "-n", "64", "--temp", "0"}, spec...)
			var r struct {
				runOut
				Spec *struct {
					Drafted, Accepted int
					AcceptRate        float64 `json:"accept_rate"`
				} `json:"speculative"`
			}
			code, stdout, errOut := weft(append([]string{"run", "--json"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Tokens, want) {
				t.Errorf("%s case %d: tokens %v\ngolden %v", strings.Join(spec, " "), i, r.Tokens, want)
			}
			if r.Spec == nil || r.Spec.Drafted == 0 {
				t.Errorf("%s case %d: no drafts reported: %+v", strings.Join(spec, " "), i, r.Spec)
			} else if spec[0] == "--model-draft" && r.Spec.Accepted != r.Spec.Drafted {
				t.Errorf("case %d: the model as its own draft kept %d of %d drafts", i, r.Spec.Accepted, r.Spec.Drafted)
			}
		}
	}
}

func TestRunSpeculativeErrors(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--spec-ngram", "-1"}, "--spec-ngram -1"},
		{[]string{"--spec-ngram", "3", "--model-draft", m}, "pick one"},
		{[]string{"--spec-ngram", "3", "--draft-max", "0"}, "--draft-max 0"},
		{[]string{"--spec-ngram", "3", "--draft-max", "4", "--draft-min", "5"}, "--draft-min 5"},
		{[]string{"--spec-ngram", "3", "--choices", "2"}, "single sequence"},
		{[]string{"--spec-ngram", "3", "--beams", "2"}, "single sequence"},
		{[]string{"--spec-ngram", "3", "--force-tokens", "5"}, "--force-tokens"},
		{[]string{"--spec-ngram", "3", "--keep", "4"}, "--keep"},
	} {
		code, _, errOut := weft(append([]string{"run", "-m", m, "-p", "Hi", "-n", "4"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	code, _, errOut := weft("run", "-m", m, "-p", "Hi", "-n", "4", "--model-draft", filepath.Join(t.TempDir(), "none.gguf"))
	if code == 0 || !strings.Contains(errOut, "--model-draft") {
		t.Errorf("missing draft model: exit %d, stderr %q", code, errOut)
	}
}
