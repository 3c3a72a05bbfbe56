package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fuzzFunc matches a fuzz target's declaration.
var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)

// TestEveryFuzzerInMakeFuzz checks that make fuzz runs every fuzz target
// in the repository, each with a count of inputs (-fuzztime Nx: a duration
// can trip Go 1.26's fuzzing coordinator) and in its own package.
func TestEveryFuzzerInMakeFuzz(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(makefile), "\nfuzz:\n")
	if !ok {
		t.Fatal("the Makefile has no fuzz target")
	}
	var recipe []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "\t") {
			break
		}
		recipe = append(recipe, line)
	}
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "out" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(data), -1) {
			found++
			name := m[1]
			// -fuzz NAME or -fuzz '^NAME$$', then the package.
			target := regexp.MustCompile(`-fuzz '?\^?` + name + `(\$\$)?'? -fuzztime \d+x .*\./` + regexp.QuoteMeta(filepath.ToSlash(pkg)) + `$`)
			ok := false
			for _, line := range recipe {
				ok = ok || target.MatchString(line)
			}
			if !ok {
				t.Errorf("%s (%s) is not in make fuzz with a count of inputs (-fuzztime Nx)", name, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no fuzz targets found")
	}
}
