package cpu

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The AMX instructions in amx_amd64.s are written as bytes (the Go
// assembler has no mnemonics for them) by the generator (_gen/amxenc.go),
// each instruction's BYTE lines under a comment line with its mnemonic.
// This test encodes every such mnemonic again from the Intel SDM's
// definitions (VEX.128.0F38.W0; LDTILECFG/TILERELEASE NP 49, TILEZERO F2
// 49, TILELOADD F2 4B, TILESTORED F3 4B, TDPBF16PS F3 5C with the B tile
// in VEX.vvvv) and compares it with the bytes.

var amxRegs = map[string]int{"AX": 0, "CX": 1, "DX": 2, "BX": 3, "SI": 6, "DI": 7, "R8": 8, "R9": 9, "R10": 10, "R11": 11, "R12": 12, "R13": 13, "R14": 14}

func vex0F38(pp, vvvv byte, rexX, rexB bool, op byte, rest ...byte) []byte {
	b1 := byte(0xe2) // R̄=1, X̄=1, B̄=1, map 0F38
	if rexX {
		b1 &^= 0x40
	}
	if rexB {
		b1 &^= 0x20
	}
	return append([]byte{0xc4, b1, (^vvvv&15)<<3 | pp, op}, rest...)
}

// tileMem encodes disp(base)(index*1) with tile register t in ModRM.reg.
func tileMem(pp byte, op byte, t int, disp int, base, index string) ([]byte, error) {
	b, ok1 := amxRegs[base]
	x, ok2 := amxRegs[index]
	if !ok1 || !ok2 || b&7 == 4 || b&7 == 5 {
		return nil, fmt.Errorf("unsupported operand %d(%s)(%s*1)", disp, base, index)
	}
	var mod byte
	var d []byte
	switch {
	case disp == 0:
	case disp >= -128 && disp <= 127:
		mod, d = 1, []byte{byte(disp)}
	default:
		mod, d = 2, binary.LittleEndian.AppendUint32(nil, uint32(disp))
	}
	rest := append([]byte{mod<<6 | byte(t)<<3 | 4, byte(x&7)<<3 | byte(b&7)}, d...)
	return vex0F38(pp, 0, x >= 8, b >= 8, op, rest...), nil
}

var (
	reMem = regexp.MustCompile(`^(-?\d+)\((\w+)\)\((\w+)\*1\)$`)
	reTMM = regexp.MustCompile(`^TMM([0-7])$`)
)

func encodeAMX(mn string) ([]byte, error) {
	f := strings.Fields(strings.ReplaceAll(mn, ",", " "))
	tmm := func(s string) (int, error) {
		m := reTMM.FindStringSubmatch(s)
		if m == nil {
			return 0, fmt.Errorf("not a tile register: %s", s)
		}
		return int(m[1][0] - '0'), nil
	}
	mem := func(s string) (int, string, string, error) {
		m := reMem.FindStringSubmatch(s)
		if m == nil {
			return 0, "", "", fmt.Errorf("not a memory operand: %s", s)
		}
		d, _ := strconv.Atoi(m[1])
		return d, m[2], m[3], nil
	}
	switch {
	case f[0] == "TILERELEASE" && len(f) == 1:
		return vex0F38(0, 0, false, false, 0x49, 0xc0), nil
	case f[0] == "LDTILECFG" && len(f) == 2:
		r, ok := amxRegs[strings.Trim(f[1], "()")]
		if !ok || r >= 8 || r == 4 || r == 5 {
			return nil, fmt.Errorf("unsupported operand %s", f[1])
		}
		return vex0F38(0, 0, false, false, 0x49, byte(r)), nil
	case f[0] == "TILEZERO" && len(f) == 2:
		t, err := tmm(f[1])
		return vex0F38(3, 0, false, false, 0x49, 0xc0|byte(t)<<3), err
	case f[0] == "TILELOADD" && len(f) == 3:
		d, b, x, err := mem(f[1])
		if err != nil {
			return nil, err
		}
		t, err := tmm(f[2])
		if err != nil {
			return nil, err
		}
		return tileMem(3, 0x4b, t, d, b, x)
	case f[0] == "TILESTORED" && len(f) == 3:
		t, err := tmm(f[1])
		if err != nil {
			return nil, err
		}
		d, b, x, err := mem(f[2])
		if err != nil {
			return nil, err
		}
		return tileMem(2, 0x4b, t, d, b, x)
	case f[0] == "TDPBF16PS" && len(f) == 4: // Go order: B, A, C (C += A·B)
		var r [3]int
		for i := range r {
			var err error
			if r[i], err = tmm(f[1+i]); err != nil {
				return nil, err
			}
		}
		return vex0F38(2, byte(r[0]), false, false, 0x5c, 0xc0|byte(r[2])<<3|byte(r[1])), nil
	}
	return nil, fmt.Errorf("unknown instruction %q", mn)
}

func TestAMXEncodings(t *testing.T) {
	f, err := os.Open("amx_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reByte := regexp.MustCompile(`^\s*BYTE\s+\$0x([0-9a-f]{2})\s*$`)
	reMnemonic := regexp.MustCompile(`^\s*// ((LDTILECFG|TILERELEASE|TILEZERO|TILELOADD|TILESTORED|TDPBF16PS)\b.*)$`)
	n := 0
	var mn string // the mnemonic whose bytes follow
	var got []byte
	mnLine := 0
	check := func() {
		if mn == "" {
			return
		}
		want, err := encodeAMX(mn)
		switch {
		case err != nil:
			t.Errorf("line %d: %v", mnLine, err)
		case string(got) != string(want):
			t.Errorf("line %d: %s: bytes % x, want % x", mnLine, mn, got, want)
		}
		n++
		mn, got = "", nil
	}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := reByte.FindStringSubmatch(text); m != nil {
			if mn == "" {
				t.Errorf("line %d: bytes without a mnemonic", line)
				continue
			}
			v, _ := strconv.ParseUint(m[1], 16, 8)
			got = append(got, byte(v))
			continue
		}
		check()
		if m := reMnemonic.FindStringSubmatch(text); m != nil {
			mn, mnLine = strings.TrimSpace(m[1]), line
		}
	}
	check()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("checked only %d instructions", n)
	}
}
