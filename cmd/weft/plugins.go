package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/weftrun/weft/plugins"
)

// pluginDirUsage documents the --plugin-dir flag.
var pluginDirUsage = fmt.Sprintf("directories holding op plugins, separated by %q (also $%s)", string(os.PathListSeparator), plugins.EnvPath)

// pluginFlags are the flags that say which plugins a command may start.
type pluginFlags struct {
	dir   *string
	trust *bool // nil where the command offers no --trust-spec-plugins
}

// addPluginFlags registers --plugin-dir and, when trust, also
// --trust-spec-plugins on fs. Commands that only draw or inspect a graph
// pass trust false: they never start a binary a spec names by path
// outside the directories the user named.
func addPluginFlags(fs *flag.FlagSet, trust bool) *pluginFlags {
	pf := &pluginFlags{dir: fs.String("plugin-dir", "", pluginDirUsage)}
	if trust {
		pf.trust = fs.Bool("trust-spec-plugins", false, "start a plugin binary the spec names by path even outside the plugin directories (a spec is data: trust it like a program)")
	}
	return pf
}

// host returns the plugin host the flags describe, for a spec at spec.
func (pf *pluginFlags) host(spec string, stderr io.Writer) (*plugins.Host, error) {
	trust := pf.trust != nil && *pf.trust
	h, err := pluginHost(*pf.dir, trust, stderr)
	if err != nil {
		return nil, err
	}
	h.SetSpecDir(specDir(spec))
	return h, nil
}

// pluginHost returns a host for the op plugins a spec names. It finds a
// plugin named without a path in dir (--plugin-dir: a list separated like
// PATH) and then in $WEFT_PLUGIN_PATH, and writes the plugins' output to
// stderr, each line prefixed with the plugin's name. A directory given on
// the command line must exist; missing entries of the environment
// variable are skipped. A plugin a spec names by path starts only from
// one of these directories, or anywhere when trust is set. Plugins start
// only when a spec names them; the caller must Close the host.
func pluginHost(dir string, trust bool, stderr io.Writer) (*plugins.Host, error) {
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
	return plugins.NewHost(plugins.Options{Dirs: dirs, TrustSpecPaths: trust, Log: stderr}), nil
}

// specDir returns the directory a spec's relative plugin paths resolve
// against: the spec file's own, or "" for a built-in spec name.
func specDir(spec string) string {
	if spec == "" || !strings.ContainsAny(spec, `/.\`) {
		return ""
	}
	return filepath.Dir(spec)
}
