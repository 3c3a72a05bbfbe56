package main

import (
	"os"
	"path/filepath"
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
