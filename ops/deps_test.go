package ops

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpsKnowsNoBackend: ops holds definitions only; no file of the
// package (tests included) imports a backend or a kernel package.
func TestOpsKnowsNoBackend(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, "github.com/weftrun/weft/") && p != "github.com/weftrun/weft/tensor" {
				t.Errorf("%s imports %s: ops may depend on tensor alone", f, p)
			}
		}
	}
}
