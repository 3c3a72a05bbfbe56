package specs

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed *.yaml
var builtin embed.FS

// Builtin returns the names of the specs compiled into the binary.
func Builtin() []string {
	var out []string
	fs.WalkDir(builtin, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			out = append(out, strings.TrimSuffix(p, ".yaml"))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// LoadBuiltin compiles an embedded spec by name (e.g. "llama").
func LoadBuiltin(name string) (*Spec, error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in spec %q (have %s)", name, strings.Join(Builtin(), ", "))
	}
	return Parse(path.Base(name)+".yaml", data)
}

// ForArch returns the built-in spec that serves a checkpoint architecture
// (ForCheckpoint without metadata).
func ForArch(arch string) (*Spec, error) { return ForCheckpoint(arch, nil) }

// ForCheckpoint returns the built-in spec for a checkpoint: among the specs
// listing its architecture, one whose detect condition holds on the
// checkpoint's metadata, else the first without a detect condition.
func ForCheckpoint(arch string, meta map[string]any) (*Spec, error) {
	var fallback *Spec
	for _, n := range Builtin() {
		s, err := LoadBuiltin(n)
		if err != nil {
			return nil, err
		}
		if !contains(s.Architectures, arch) {
			continue
		}
		if s.Detect == nil {
			if fallback == nil {
				fallback = s
			}
			continue
		}
		ok, err := s.Detects(arch, meta)
		if err != nil {
			return nil, err
		}
		if ok {
			return s, nil
		}
	}
	if fallback != nil {
		return fallback, nil
	}
	return nil, fmt.Errorf("no built-in spec for architecture %q; pass one with -s", arch)
}

// Open loads a built-in spec when given a bare name (no '/' or '.', e.g.
// "llama"), else the spec file at that path.
func Open(nameOrPath string) (*Spec, error) {
	if !strings.ContainsAny(nameOrPath, "/.") {
		return LoadBuiltin(nameOrPath)
	}
	return Load(nameOrPath)
}

// Source returns the text of the spec Open(nameOrPath) compiles: a
// built-in's embedded file or the file at the path.
func Source(nameOrPath string) ([]byte, error) {
	if !strings.ContainsAny(nameOrPath, "/.") {
		data, err := builtin.ReadFile(nameOrPath + ".yaml")
		if err != nil {
			return nil, fmt.Errorf("no built-in spec %q (have %s)", nameOrPath, strings.Join(Builtin(), ", "))
		}
		return data, nil
	}
	return os.ReadFile(nameOrPath)
}
