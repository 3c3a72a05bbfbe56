// Command _gen generates the amd64 assembly of package cpu that is built from
// repeated runs (tiles of several widths, the same kernel for Q4_0 and Q8_0)
// with avo (github.com/mmcloughlin/avo). It lives in its own module so that
// weft itself does not depend on avo.
//
// Run from this directory:
//
//	go run .          # rewrites the generated ../*_amd64.s files
//	go run . -check   # fails if any differs from what it would write
//	go run . -same OLD.s NEW.s  # fails unless both assemble to the same code
//
// The generators use physical registers only, so each generated kernel is
// the instruction sequence its hand-written predecessor had.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
)

// A file is one generated assembly file of package cpu.
type file struct {
	name string       // file name in the package directory
	gen  func(a *asm) // emits the file's globals and functions
}

var files = []file{
	{"q8ilv_amd64.s", q8ilv},
	{"q8unpack_amd64.s", q8unpack},
	{"floatz_amd64.s", floatz},
	{"floaty_amd64.s", floaty},
	{"widenz_amd64.s", widenz},
	{"peak_amd64.s", peak},
	{"attentiongy_amd64.s", attentiongy},
	{"rowsew_amd64.s", rowsew},
	{"q8avx2_amd64.s", q8avx2},
	{"q8vnni_amd64.s", q8vnni},
	{"amx_amd64.s", amx},
	{"convz_amd64.s", convz},
	{"rowsz_amd64.s", rowsz},
	{"rowsy_amd64.s", rowsy},
	{"attentionz_amd64.s", attentionz},
	{"attentiony_amd64.s", attentiony},
	{"attentiongg_amd64.s", attentiongg},
	{"kquanty_amd64.s", kquanty},
	{"ifavx2_amd64.s", ifavx2},
	{"gemmz_amd64.s", gemmz},
	{"kqgemm_amd64.s", kqgemm},
	{"iq4nl_amd64.s", iq4nl},
	{"kquantz_amd64.s", kquantz},
	{"q8quantz_amd64.s", q8quantz},
	{"q8quanty_amd64.s", q8quanty},
	{"kquantif_amd64.s", kquantif},
	{"ifgemm_amd64.s", ifgemm},
	{"ifmore_amd64.s", ifmore},
	{"ifgemmy_amd64.s", ifgemmy},
	{"iq4tile_amd64.s", iq4tile},
	{"bf16dp_amd64.s", bf16dp},
	{"q8tiley_amd64.s", q8tiley},
	{"legacyy_amd64.s", legacyy},
}

func main() {
	check := flag.Bool("check", false, "compare the generated files with those on disk instead of writing them")
	dir := flag.String("dir", "..", "the package directory")
	same := flag.Bool("same", false, "compare the machine code of the two files given (old, new) instead")
	flag.Parse()
	if *same {
		if flag.NArg() != 2 {
			fmt.Fprintln(os.Stderr, "usage: go run . -same OLD.s NEW.s")
			os.Exit(2)
		}
		if err := sameCode(*dir, flag.Arg(0), flag.Arg(1)); err != nil {
			fmt.Fprintf(os.Stderr, "_gen: %v\n", err)
			os.Exit(1)
		}
		return
	}
	stale := 0
	for _, f := range files {
		src, err := generate(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "_gen: %s: %v\n", f.name, err)
			os.Exit(1)
		}
		path := filepath.Join(*dir, f.name)
		if *check {
			old, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(os.Stderr, "_gen: %v\n", err)
				os.Exit(1)
			}
			if !bytes.Equal(old, src) {
				fmt.Fprintf(os.Stderr, "_gen: %s is not what the generator writes: run `go run .` in kernels/cpu/_gen\n", path)
				stale++
			}
			continue
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "_gen: %v\n", err)
			os.Exit(1)
		}
	}
	if stale > 0 {
		os.Exit(1)
	}
}

// generate runs f's generator in a fresh avo context and returns the
// assembly text.
func generate(f file) ([]byte, error) {
	c := build.NewContext()
	c.ConstraintExpr("amd64,!noasm")
	f.gen(&asm{Context: c, pkg: cpuPackage()})
	ir, err := c.Result()
	if err != nil {
		return nil, err
	}
	if err := pass.Compile.Execute(ir); err != nil {
		return nil, err
	}
	cfg := printer.Config{Argv: []string{"go", "run", ".", "(kernels/cpu/_gen)"}, Pkg: "cpu"}
	return printer.NewGoAsm(cfg).Print(ir)
}

// cpuPackage stands for package cpu in the functions' signatures: a package
// that sees unsafe, for the unsafe.Pointer arguments.
func cpuPackage() *types.Package {
	p := types.NewPackage("github.com/weftrun/weft/kernels/cpu", "cpu")
	p.Scope().Insert(types.NewPkgName(token.NoPos, p, "unsafe", types.Unsafe))
	return p
}
