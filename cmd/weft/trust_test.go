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
// user named or with --trust-spec-plugins, and never for weft graph.
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
	other := t.TempDir()
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"graph", []string{"graph", "-s", spec}, 1, "refusing to start " + filepath.Join(dir, "evil.sh") + ": no plugin directory was named"},
		{"graph html", []string{"graph", "-s", spec, "--format", "html"}, 1, "refusing to start"},
		{"graph offers no trust", []string{"graph", "-s", spec, "--trust-spec-plugins"}, 2, "flag provided but not defined: -trust-spec-plugins"},
		{"graph, other plugin dir", []string{"graph", "-s", spec, "--plugin-dir", other}, 1, "outside the plugin directories " + other},
		{"run", []string{"run", "-m", model, "-s", spec, "-p", "a", "-n", "1"}, 1, "--trust-spec-plugins"},
		{"bench", []string{"bench", "-m", model, "-s", spec, "-p", "4", "-n", "1", "-r", "1"}, 1, "refusing to start"},
		// Named by the user: the binary starts (and fails the handshake).
		{"run, trusted", []string{"run", "-m", model, "-s", spec, "-p", "a", "-n", "1", "--trust-spec-plugins"}, 1, "plugin \"evil\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("WEFT_PLUGIN_PATH", "")
			os.Remove(marker)
			code, _, errOut := weft(tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.wantCode, tc.wantErr)
			}
			_, err := os.Stat(marker)
			if ran := err == nil; ran != (tc.name == "run, trusted") {
				t.Errorf("the spec's program ran: %v", ran)
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
