package checkpoint

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// show renders an unpickled value in Python's notation.
func show(v any) string {
	switch v := v.(type) {
	case pyNone:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case string:
		return "'" + v + "'"
	case []byte:
		return fmt.Sprintf("b'%s'", v)
	case pyTuple:
		var s []string
		for _, x := range v {
			s = append(s, show(x))
		}
		if len(s) == 1 {
			return "(" + s[0] + ",)"
		}
		return "(" + strings.Join(s, ", ") + ")"
	case *pyList:
		var s []string
		for _, x := range v.items {
			s = append(s, show(x))
		}
		return "[" + strings.Join(s, ", ") + "]"
	case *pyDict:
		var s []string
		for i, k := range v.keys {
			s = append(s, show(k)+": "+show(v.vals[i]))
		}
		return "{" + strings.Join(s, ", ") + "}"
	case *big.Int:
		return v.String()
	case *pyGlobal:
		return v.String()
	}
	return fmt.Sprint(v)
}

// TestUnpickleOpcodes runs small programs written from the opcode table of
// CPython's pickletools and compares with the values they denote.
func TestUnpickleOpcodes(t *testing.T) {
	tests := []struct {
		prog, want string
	}{
		{"N.", "None"},
		{"\x88.", "True"},
		{"\x89.", "False"},
		{"I42\n.", "42"},
		{"I-7\n.", "-7"},
		{"I01\n.", "True"},
		{"I00\n.", "False"},
		{"L-5L\n.", "-5"},
		{"L123456789012345678901234567890L\n.", "123456789012345678901234567890"},
		{"F1.5\n.", "1.5"},
		{"G?\xf8\x00\x00\x00\x00\x00\x00.", "1.5"},
		{"K\xff.", "255"},
		{"M\x00\x01.", "256"},
		{"J\xff\xff\xff\xff.", "-1"},
		{"\x8a\x00.", "0"},
		{"\x8a\x01\xff.", "-1"},
		{"\x8a\x02\x00\x80.", "-32768"},
		{"\x8a\x02\xff\x7f.", "32767"},
		{"\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", "18446744073709551616"},
		{"\x8b\x01\x00\x00\x00\x05.", "5"},
		{"S'abc'\n.", "'abc'"},
		{"S\"abc\"\n.", "'abc'"},
		{"Vabc\n.", "'abc'"},
		{"U\x03abc.", "'abc'"},
		{"T\x03\x00\x00\x00abc.", "'abc'"},
		{"X\x03\x00\x00\x00abc.", "'abc'"},
		{"\x8c\x02hi.", "'hi'"},
		{"\x8d\x02\x00\x00\x00\x00\x00\x00\x00hi.", "'hi'"},
		{"C\x02hi.", "b'hi'"},
		{"B\x02\x00\x00\x00hi.", "b'hi'"},
		{"\x8e\x02\x00\x00\x00\x00\x00\x00\x00hi.", "b'hi'"},
		{").", "()"},
		{"K\x01\x85.", "(1,)"},
		{"K\x01K\x02\x86.", "(1, 2)"},
		{"K\x01K\x02K\x03\x87.", "(1, 2, 3)"},
		{"(K\x01K\x02t.", "(1, 2)"},
		{"(K\x012t.", "(1, 1)"},
		{"(K\x01K\x02l.", "[1, 2]"},
		{"](K\x01K\x02e.", "[1, 2]"},
		{"]K\x01a.", "[1]"},
		{"(K\x01K\x02d.", "{1: 2}"},
		{"}(X\x01\x00\x00\x00aK\x01X\x01\x00\x00\x00bK\x02u.", "{'a': 1, 'b': 2}"},
		{"}K\x01K\x02sK\x01K\x03s.", "{1: 3}"},
		{"\x8f(K\x01\x90.", "[1]"},
		{"(K\x01\x91.", "[1]"},
		{"K\x05p0\n0g0\n.", "5"},
		{"K\x05\x94h\x00.", "5"},
		{"K\x07r\x01\x00\x00\x00j\x01\x00\x00\x00.", "7"},
		{"(K\x01K\x021K\x03.", "3"},
		{"(K\x01K\x02\x30t.", "(1,)"},
		{"\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00K\x01.", "1"},
		{"ccollections\nOrderedDict\n)R.", "{}"},
		{"ccollections\nOrderedDict\n](K\x01K\x02\x86e\x85R.", "{1: 2}"},
		{"\x80\x04\x8c\x05torch\x8c\x07float16\x93.", "torch.float16"},
		{"ctorch\nHalfStorage\n.", "torch.HalfStorage"},
	}
	for _, tc := range tests {
		v, n, err := unpickle([]byte(tc.prog), nil)
		if err != nil {
			t.Errorf("%q: %v", tc.prog, err)
			continue
		}
		if got := show(v); got != tc.want {
			t.Errorf("%q = %s, want %s", tc.prog, got, tc.want)
		}
		if n != len(tc.prog) {
			t.Errorf("%q: consumed %d of %d bytes", tc.prog, n, len(tc.prog))
		}
	}
}

func TestUnpickleErrors(t *testing.T) {
	tests := []struct {
		prog, want string
	}{
		{"", "without STOP"},
		{".", "stack underflow"},
		{"0.", "stack underflow"},
		{"1.", "no MARK"},
		{"a.", "stack underflow"},
		{"K\x01K\x02a.", "APPEND to 1"},
		{"K\x01K\x02K\x03s.", "SETITEM on 1"},
		{"}(K\x01u.", "odd number"},
		{"I1x\n.", "INT"},
		{"Lx\n.", "not a number"},
		{"F1.x\n.", "FLOAT"},
		{"S'abc\n.", "not quoted"},
		{"S'a\\nb'\n.", "escaped"},
		{"T\xff\xff\xff\xffabc.", "negative string length"},
		{"X\xff\xff\xff\x7f.", "unexpected end"},
		{"Pabc\n.", "text persistent IDs"},
		{"K\x01Q.", "persistent IDs are not allowed"},
		{"K\x01)R.", "REDUCE calls 1"},
		{"ccollections\nOrderedDict\nK\x01R.", "want a tuple"},
		{"ccollections\nOrderedDict\n(K\x01K\x02tR.", "with 2 arguments"},
		{"ctorch._utils\n_rebuild_tensor_v2\n(K\x01K\x00)))tR.", "want a persistent storage"},
		{"ctorch._utils\n_rebuild_parameter\n(K\x01tR.", "want a tensor"},
		{"K\x01}b.", "BUILD on 1"},
		{"}K\x01b.", "BUILD with state 1"},
		{"\x82\x01.", "extension registry"},
		{"\x97.", "out-of-band"},
		{"K\x01K\x02\x93.", "STACK_GLOBAL of 1 and 2"},
		{"cos\nsystem", "no newline"},
		{"g9\n.", "memo entry 9"},
		{"p\n.", "PUT"},
	}
	for _, tc := range tests {
		_, _, err := unpickle([]byte(tc.prog), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.prog, err, tc.want)
		}
	}
}
