package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// sameCode compares the machine code of two versions of an amd64 file of
// package cpu (a hand-written file and the generated one replacing it):
// each is assembled alone, as go build would, and every TEXT symbol's
// bytes and relocations and every data symbol's bytes must be equal. It
// checks a move to the generators without running the code (AMX, for one,
// cannot run on most machines). It reports the symbols compared.
func sameCode(dir, oldFile, newFile string) error {
	o, err := assemble(dir, oldFile)
	if err != nil {
		return err
	}
	n, err := assemble(dir, newFile)
	if err != nil {
		return err
	}
	var names []string
	for s := range o {
		names = append(names, s)
	}
	for s := range n {
		if _, ok := o[s]; !ok {
			names = append(names, s)
		}
	}
	sort.Strings(names)
	bad := 0
	for _, s := range names {
		a, b := o[s], n[s]
		switch {
		case a == "" || b == "":
			fmt.Printf("%s: only in %s\n", s, map[bool]string{true: newFile, false: oldFile}[a == ""])
			bad++
		case a != b:
			fmt.Printf("%s: differs\n", s)
			bad++
		default:
			fmt.Printf("%s: same (%d bytes of listing)\n", s, len(a))
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d symbols differ", bad, len(names))
	}
	return nil
}

var (
	reReloc = regexp.MustCompile(`\[(\d+):(\d+)\](\S+)`)
	reLocal = regexp.MustCompile(`<\d+>`)
	reData  = regexp.MustCompile(`(?m)^(\S+) SRODATA[^\n]*\n((?:\t[^\n]*\n)*)`)
)

// assemble assembles the file alone and returns, by symbol, a listing of
// its code (hex, with the relocations at offsets from the symbol's start)
// or data.
func assemble(dir, file string) (map[string]string, error) {
	tmp, err := os.MkdirTemp("", "gen-same")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	obj := filepath.Join(tmp, "x.o")
	asm := exec.Command("go", "tool", "asm", "-S", "-p", "github.com/weftrun/weft/kernels/cpu",
		"-I", dir, "-I", filepath.Join(strings.TrimSpace(string(goroot)), "pkg", "include"),
		"-D", "GOOS_linux", "-D", "GOARCH_amd64", "-D", "GOAMD64_v1", "-o", obj, abs)
	asm.Dir = dir
	var listing bytes.Buffer
	asm.Stdout, asm.Stderr = &listing, &listing
	if err := asm.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", file, err, listing.String())
	}
	dump, err := exec.Command("go", "tool", "objdump", obj).Output()
	if err != nil {
		return nil, err
	}
	syms := map[string]string{}
	var cur string
	var b strings.Builder
	start, off := -1, 0
	flush := func() {
		if cur != "" {
			syms[cur] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.Split(string(dump), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			flush()
			cur, start, off = strings.Fields(line)[1], -1, 0
			continue
		}
		var f []string
		for _, x := range strings.Split(line, "\t") {
			if x != "" {
				f = append(f, x)
			}
		}
		if cur == "" || len(f) < 3 || !strings.HasPrefix(f[1], "0x") {
			continue
		}
		var addr int
		fmt.Sscanf(f[1], "0x%x", &addr)
		code, err := hex.DecodeString(f[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", file, line, err)
		}
		if start < 0 {
			start = addr
		}
		if addr-start != off {
			return nil, fmt.Errorf("%s: %s: a gap in the listing at %#x", file, cur, addr)
		}
		fmt.Fprintf(&b, "%x", code)
		for _, m := range reReloc.FindAllStringSubmatch(line, -1) {
			var lo, hi int
			fmt.Sscan(m[1], &lo)
			fmt.Sscan(m[2], &hi)
			fmt.Fprintf(&b, " [%d:%d %s]", off+lo, off+hi, reLocal.ReplaceAllString(m[3], "<>"))
		}
		b.WriteByte('\n')
		off += len(code)
	}
	flush()
	for _, m := range reData.FindAllStringSubmatch(listing.String(), -1) {
		syms["DATA "+m[1]] = m[2]
	}
	return syms, nil
}
