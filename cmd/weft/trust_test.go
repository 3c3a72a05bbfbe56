package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSpecPluginsNeedTrust checks that a spec cannot make weft run a
// program: a plugin it names by path starts only from a directory the
// user named (--plugin-dir or $WEFT_PLUGIN_PATH) or with
// --trust-spec-plugins, and never for weft graph.
func TestSpecPluginsNeedTrust(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := "#!/bin/sh\ntouch " + marker + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "evil.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	llama, err := os.ReadFile(filepath.Join("..", "..", "specs", "llama.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "downloaded.yaml")
	if err := os.WriteFile(spec, append(llama, "\nplugins:\n  - name: evil\n    path: ./evil.sh\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "tiny.gguf")
	if code, _, errOut := weft("synth", "-s", "llama", "--set", "hidden=32,layers=1,heads=2,ffn=64,vocab=64,ctx=32", "--dtype", "f32", "--seed", "1", "-o", model); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	other := t.TempDir() // a plugin directory that does not hold evil.sh
	run := []string{"run", "-m", model, "-s", spec, "-p", "a", "-n", "1"}
	cases := []struct {
		name     string
		args     []string
		env      string // $WEFT_PLUGIN_PATH
		wantCode int
		wantErr  string
		wantRan  bool
	}{
		{"graph offers no trust", []string{"graph", "-s", spec, "--trust-spec-plugins"}, "", 2, "flag provided but not defined: -trust-spec-plugins", false},
		{"run", run, "", 1, "--trust-spec-plugins", false},
		{"bench", []string{"bench", "-m", model, "-s", spec, "-p", "4", "-n", "1", "-r", "1"}, "", 1, "refusing to start", false},
		{"run, another plugin path", run, other, 1, "--trust-spec-plugins", false},
		// Named by the user: the binary starts (and fails the handshake).
		{"run, trusted", append(run, "--trust-spec-plugins"), "", 1, "plugin \"evil\"", true},
		{"run, plugin path", run, dir, 1, "plugin \"evil\"", true},
		{"run, plugin path list", run, other + string(os.PathListSeparator) + dir, 1, "plugin \"evil\"", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("WEFT_PLUGIN_PATH", tc.env)
			os.Remove(marker)
			code, _, errOut := weft(tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.wantCode, tc.wantErr)
			}
			_, err := os.Stat(marker)
			if ran := err == nil; ran != tc.wantRan {
				t.Errorf("the spec's program ran: %v, want %v", ran, tc.wantRan)
			}
		})
	}
}

// TestGraphStartsNoPlugin checks that weft graph draws a spec's plugin ops
// in every format without starting the plugin, even when the binary lies
// in a plugin directory named on the command line: the ops appear with
// their inputs, marked as not started, with the note saying their shapes
// are assumed.
func TestGraphStartsNoPlugin(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := "#!/bin/sh\ntouch " + marker + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "dyt"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "specs", "examples", "llama-dyt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "path: ../../bin/plugins/dyt", "path: ./dyt", 1)
	if text == string(data) {
		t.Fatal("llama-dyt.yaml no longer names ../../bin/plugins/dyt")
	}
	spec := filepath.Join(dir, "llama-dyt.yaml")
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	set := "hidden=32,layers=2,heads=2,kv_heads=2,ffn=64,vocab=64,ctx=32"
	cases := []struct {
		format string
		extra  []string
		want   []string
	}{
		{"dot", nil, []string{`example.dyt [dyt, not started]`, `not started`, `[T 32]?`}},
		{"dot", []string{"--plugin-dir", dir}, []string{`example.dyt [dyt, not started]`}},
		{"dot", []string{"--no-passes", "--devices", "cpu:0;cpu:1"}, []string{`example.dyt [dyt, not started] @cpu:`}},
		{"mermaid", nil, []string{`example.dyt [dyt, not started]`, `note[/`}},
		{"json", []string{"--plugin-dir", dir}, []string{`"op": "example.dyt"`, `"plugin": "dyt"`, `"not_started": true`}},
		{"html", []string{"--plugin-dir", dir}, []string{`"op":"example.dyt"`, `"not_started":true`}},
	}
	for _, tc := range cases {
		t.Run(tc.format+strings.Join(tc.extra, ""), func(t *testing.T) {
			t.Setenv("WEFT_PLUGIN_PATH", dir)
			args := append([]string{"graph", "-s", spec, "--set", set, "--format", tc.format}, tc.extra...)
			code, out, errOut := weft(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("weft graph started the plugin")
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			// 2 layers × 2 norms + the final one.
			if n := strings.Count(out, "example.dyt"); n < 5 {
				t.Errorf("%d mentions of example.dyt, want at least 5 (one per DyT node)", n)
			}
		})
	}
}

// TestSynthAndConvertWithPlugin makes and runs the DyT example from the
// command line: synth, convert and run load the spec's plugin ops.
func TestSynthAndConvertWithPlugin(t *testing.T) {
	root := t.TempDir()
	specDir := filepath.Join(root, "specs", "examples")
	binDir := filepath.Join(root, "bin", "plugins")
	for _, d := range []string{specDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(gobin, "build", "-o", filepath.Join(binDir, "dyt"), "../../plugins/examples/dyt").CombinedOutput(); err != nil {
		t.Fatalf("build the dyt plugin: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "specs", "examples", "llama-dyt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(specDir, "llama-dyt.yaml")
	if err := os.WriteFile(spec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(root, "dyt.gguf")
	code, _, errOut := weft("synth", "-s", spec, "--plugin-dir", binDir, "--set", "hidden=64,layers=2,heads=4,kv_heads=2,ffn=96,vocab=512,ctx=64",
		"--dtype", "f32", "--seed", "1", "-o", model)
	if code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	converted := filepath.Join(root, "dyt-q8.gguf")
	if code, _, errOut := weft("convert", "-s", spec, "--plugin-dir", binDir, "--dtype", "q8_0", model, converted); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errOut)
	}
	for _, m := range []string{model, converted} {
		code, out, errOut := weft("run", "-s", spec, "--plugin-dir", binDir, "-m", m, "-p", "hello", "-n", "4", "--temp", "0", "--json")
		if code != 0 || !strings.Contains(out, `"tokens":[`) {
			t.Fatalf("run %s: exit %d: %s%s", filepath.Base(m), code, out, errOut)
		}
	}
	// Without a plugin directory, synth refuses the spec's binary.
	if code, _, errOut := weft("synth", "-s", spec, "--dtype", "f32", "-o", filepath.Join(root, "x.gguf")); code == 0 || !strings.Contains(errOut, "refusing to start") {
		t.Fatalf("synth without --plugin-dir: exit %d: %s", code, errOut)
	}
}
