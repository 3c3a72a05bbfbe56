package specs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftrun/weft/ops"
)

// FuzzSpec feeds arbitrary YAML to the spec parser, then resolves its
// params (CEL included) and builds its graph as `weft graph -s` does: bad
// input must give an error, never a panic or a hang.
func FuzzSpec(f *testing.F) {
	files, _ := filepath.Glob("*.yaml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("name: x\nparams:\n  a: 2 * 3\ngraph:\n  - y: relu(tokens)\n"))
	reg := ops.Builtins()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		stop := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("spec took over 5 s: %q", data)) })
		defer stop.Stop()
		sp, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		params, err := sp.ResolveParams(nil, nil)
		if err != nil {
			return
		}
		// Keep fuzzed sizes small enough to build quickly.
		for _, k := range []string{"layers", "hidden", "ffn", "vocab", "heads", "experts"} {
			if v := params.Int(k); v > 64 {
				return
			}
		}
		sp.Build(BuildOptions{Registry: reg, Params: params})
	})
}
