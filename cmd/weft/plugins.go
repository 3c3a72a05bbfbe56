package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/weftrun/weft/plugins"
)

// pluginDirUsage documents the --plugin-dir flag.
var pluginDirUsage = fmt.Sprintf("directories holding op plugins, separated by %q (also $%s)", string(os.PathListSeparator), plugins.EnvPath)

// pluginHost returns a host for the op plugins a spec names. It finds a
// plugin named without a path in dir (--plugin-dir: a list separated like
// PATH) and then in $WEFT_PLUGIN_PATH, and writes the plugins' output to
// stderr, each line prefixed with the plugin's name. A directory given on
// the command line must exist; missing entries of the environment
// variable are skipped. Plugins start only when a spec names them; the
// caller must Close the host.
func pluginHost(dir string, stderr io.Writer) (*plugins.Host, error) {
	var dirs []string
	for _, d := range filepath.SplitList(dir) {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--plugin-dir %s: not a directory", d)
		}
		dirs = append(dirs, d)
	}
	for _, d := range filepath.SplitList(os.Getenv(plugins.EnvPath)) {
		if st, err := os.Stat(d); d != "" && err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return plugins.NewHost(plugins.Options{Dirs: dirs, Log: stderr}), nil
}

// specDir returns the directory a spec's relative plugin paths resolve
// against: the spec file's own, or "" for a built-in spec name.
func specDir(spec string) string {
	if spec == "" || !strings.ContainsAny(spec, `/.\`) {
		return ""
	}
	return filepath.Dir(spec)
}
