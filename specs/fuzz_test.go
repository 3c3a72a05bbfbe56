package specs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// Regressions: inputs of the kinds that hung the parser (TestExprLimits).
	f.Add([]byte(doublingSpec(28)))
	f.Add([]byte("name: x\nparams:\n  a: {value: \"[1,2,3,4,5,6,7,8,9].map(x, [1,2,3,4,5,6,7,8,9].map(y, [1,2,3].map(z, x+y+z))).size()\"}\ngraph:\n  - y: relu(tokens)\n"))
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

// TestExprLimits holds inputs that made the spec parser hang before
// expressions were bounded (FuzzSpec stalled on their kind): each now
// ends with an error that names the param and the limit.
func TestExprLimits(t *testing.T) {
	list := "[" + strings.Repeat("1,", 99) + "1]"
	cases := []struct {
		name, spec, want string
	}{
		{"params that double a list", doublingSpec(28), "params.p15 = p14 + p14: expression gives a list of 131072 elements; a spec's limit is 65536"},
		{"nested list macros", "name: x\nparams:\n  a: {value: \"" + list + ".map(x, " + list + ".map(y, " + list + ".map(z, x+y+z))).size()\"}\ngraph:\n  - y: relu(tokens)\n",
			"more than 1000000 units of work"},
		{"a long expression", "name: x\nparams:\n  a: {value: \"" + strings.Repeat("1+", 3000) + "1\"}\ngraph:\n  - y: relu(tokens)\n", "expression code point size exceeds limit"},
		{"a long string", "name: x\nparams:\n  a: {value: \"'" + strings.Repeat("ab", 1000) + "'\"}\n  b: {value: \"a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a\"}\ngraph:\n  - y: relu(tokens)\n",
			"expression gives a string of 76000 bytes; a spec's limit is 65536"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Parse("limits.yaml", []byte(tc.spec))
			if err == nil {
				_, err = sp.ResolveParams(nil, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// doublingSpec returns a spec whose params p1…p(n-1) each concatenate the
// previous one with itself, from a list of four.
func doublingSpec(n int) string {
	var b strings.Builder
	b.WriteString("name: x\nparams:\n  p0: {value: \"[1,2,3,4]\"}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  p%d: {value: \"p%d + p%d\"}\n", i, i-1, i-1)
	}
	b.WriteString("graph:\n  - y: relu(tokens)\n")
	return b.String()
}
