package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/weftrun/weft/tensor"
)

// This file is a small, restricted unpickler: enough of the pickle machine
// (protocols 0 to 5) to read what torch.save writes, and nothing that could
// run code. A GLOBAL is resolved only against an allow-list of names the
// unpickler implements itself in Go; every other global is refused with an
// error that names it. REDUCE calls only those Go implementations.
//
// Every length in the input is checked against the bytes that remain, so a
// hostile pickle cannot make it allocate more than a small multiple of its
// own size, and the machine is iterative, so it cannot overflow the stack.

// Values produced by the unpickler.
type (
	pyNone   struct{}
	pyTuple  []any
	pyList   struct{ items []any }
	pyGlobal struct {
		module, name string
		kind         globalKind
		dtype        tensor.DType // for storage types
		dtypeOK      bool         // dtype has a tensor.DType
	}
	// pyDict keeps insertion order, like Python's dict.
	pyDict struct {
		keys  []any
		vals  []any
		index map[any]int
	}
	// pyStorage is a storage named by a persistent ID.
	pyStorage struct {
		typ      *pyGlobal
		key      string
		location string
		numel    int64
	}
	// pyTensor is a tensor rebuilt by torch._utils._rebuild_tensor(_v2).
	pyTensor struct {
		storage *pyStorage
		offset  int64
		size    []int64
		stride  []int64
	}
)

func (g *pyGlobal) String() string { return g.module + "." + g.name }

type globalKind int

const (
	gOrderedDict globalKind = iota + 1
	gRebuildTensor
	gRebuildTensorV2
	gRebuildParameter
	gStorage
	gDType
)

// storageTypes maps torch's typed storage classes to element types; the
// bool is false where weft has no such type.
var storageTypes = map[string]struct {
	dt tensor.DType
	ok bool
}{
	"FloatStorage": {tensor.F32, true}, "DoubleStorage": {tensor.F64, true},
	"HalfStorage": {tensor.F16, true}, "BFloat16Storage": {tensor.BF16, true},
	"LongStorage": {tensor.I64, true}, "IntStorage": {tensor.I32, true},
	"ShortStorage": {tensor.I16, true}, "CharStorage": {tensor.I8, true},
	"ByteStorage": {}, "BoolStorage": {},
}

// torchDTypes are the torch.<dtype> names allowed as inert values.
var torchDTypes = map[string]bool{
	"float32": true, "float": true, "float64": true, "double": true, "float16": true, "half": true,
	"bfloat16": true, "int64": true, "long": true, "int32": true, "int": true, "int16": true,
	"short": true, "int8": true, "uint8": true, "bool": true,
}

// lookupGlobal resolves module.name against the allow-list.
func lookupGlobal(module, name string) (*pyGlobal, error) {
	g := &pyGlobal{module: module, name: name}
	switch module + "." + name {
	case "collections.OrderedDict":
		g.kind = gOrderedDict
	case "torch._utils._rebuild_tensor":
		g.kind = gRebuildTensor
	case "torch._utils._rebuild_tensor_v2":
		g.kind = gRebuildTensorV2
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		g.kind = gRebuildParameter
	default:
		if module == "torch" {
			if st, ok := storageTypes[name]; ok {
				g.kind, g.dtype, g.dtypeOK = gStorage, st.dt, st.ok
				return g, nil
			}
			if torchDTypes[name] {
				g.kind = gDType
				return g, nil
			}
		}
		return nil, fmt.Errorf("refused global %s (not in the allow-list of torch checkpoint types; nothing was run)", g)
	}
	return g, nil
}

// pickle opcodes.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opPersID         = 'P'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opUnicode        = 'V'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opInst           = 'i'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opObj            = 'o'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opExt1           = 0x82
	opExt2           = 0x83
	opExt4           = 0x84
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opEmptySet       = 0x8f
	opAddItems       = 0x90
	opFrozenSet      = 0x91
	opNewObjEx       = 0x92
	opStackGlobal    = 0x93
	opMemoize        = 0x94
	opFrame          = 0x95
	opByteArray8     = 0x96
	opNextBuffer     = 0x97
	opReadOnlyBuffer = 0x98
)

// unpickler runs one pickle program held in memory.
type unpickler struct {
	b     []byte
	pos   int
	stack []any
	marks [][]any
	memo  map[uint64]any
	// persistentLoad resolves BINPERSID; nil refuses persistent IDs.
	persistentLoad func(pid any) (any, error)
}

var errPickleEOF = errors.New("unexpected end of pickle data")

// unpickle runs the pickle starting at b[0] and returns its value and the
// number of bytes it took (up to and including STOP).
func unpickle(b []byte, persistentLoad func(any) (any, error)) (any, int, error) {
	u := &unpickler{b: b, memo: map[uint64]any{}, persistentLoad: persistentLoad}
	v, err := u.run()
	if err != nil {
		return nil, u.pos, fmt.Errorf("at byte %d: %w", u.pos, err)
	}
	return v, u.pos, nil
}

func (u *unpickler) take(n uint64) ([]byte, error) {
	if n > uint64(len(u.b)-u.pos) {
		return nil, fmt.Errorf("%w (need %d bytes, %d remain)", errPickleEOF, n, len(u.b)-u.pos)
	}
	s := u.b[u.pos : u.pos+int(n)]
	u.pos += int(n)
	return s, nil
}

func (u *unpickler) u8() (uint64, error) {
	s, err := u.take(1)
	if err != nil {
		return 0, err
	}
	return uint64(s[0]), nil
}

func (u *unpickler) u16() (uint64, error) {
	s, err := u.take(2)
	if err != nil {
		return 0, err
	}
	return uint64(binary.LittleEndian.Uint16(s)), nil
}

func (u *unpickler) u32() (uint64, error) {
	s, err := u.take(4)
	if err != nil {
		return 0, err
	}
	return uint64(binary.LittleEndian.Uint32(s)), nil
}

func (u *unpickler) u64() (uint64, error) {
	s, err := u.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

// line reads up to and excluding the next newline.
func (u *unpickler) line() (string, error) {
	for i := u.pos; i < len(u.b); i++ {
		if u.b[i] == '\n' {
			s := string(u.b[u.pos:i])
			u.pos = i + 1
			return s, nil
		}
	}
	return "", fmt.Errorf("%w (no newline)", errPickleEOF)
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() (any, error) {
	if len(u.stack) == 0 {
		return nil, errors.New("stack underflow")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *unpickler) top() (any, error) {
	if len(u.stack) == 0 {
		return nil, errors.New("stack underflow")
	}
	return u.stack[len(u.stack)-1], nil
}

// popMark returns the items pushed since the last MARK and restores the
// stack below it.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, errors.New("no MARK on the stack")
	}
	items := u.stack
	u.stack = u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	return items, nil
}

func (u *unpickler) memoGet(i uint64) error {
	v, ok := u.memo[i]
	if !ok {
		return fmt.Errorf("memo entry %d is not defined", i)
	}
	u.push(v)
	return nil
}

func (u *unpickler) memoPut(i uint64) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	u.memo[i] = v
	return nil
}

func (u *unpickler) run() (any, error) {
	for {
		op, err := u.u8()
		if err != nil {
			return nil, errors.New("pickle ends without STOP")
		}
		if err := u.step(byte(op)); err != nil {
			if err == errStop {
				return u.pop()
			}
			return nil, fmt.Errorf("opcode 0x%02x: %w", op, err)
		}
	}
}

var errStop = errors.New("stop")

func (u *unpickler) step(op byte) error {
	switch op {
	case opStop:
		return errStop
	case opProto:
		v, err := u.u8()
		if err != nil {
			return err
		}
		if v > 5 {
			return fmt.Errorf("unsupported pickle protocol %d", v)
		}
	case opFrame:
		if _, err := u.u64(); err != nil {
			return err
		}
	case opMark:
		u.marks = append(u.marks, u.stack)
		u.stack = nil
	case opPop:
		if len(u.stack) == 0 && len(u.marks) > 0 {
			_, err := u.popMark() // CPython pops a MARK here
			return err
		}
		_, err := u.pop()
		return err
	case opPopMark:
		_, err := u.popMark()
		return err
	case opDup:
		v, err := u.top()
		if err != nil {
			return err
		}
		u.push(v)
	case opNone:
		u.push(pyNone{})
	case opNewTrue:
		u.push(true)
	case opNewFalse:
		u.push(false)
	case opBinInt:
		v, err := u.u32()
		u.push(int64(int32(v)))
		return err
	case opBinInt1:
		v, err := u.u8()
		u.push(int64(v))
		return err
	case opBinInt2:
		v, err := u.u16()
		u.push(int64(v))
		return err
	case opInt:
		s, err := u.line()
		if err != nil {
			return err
		}
		switch s {
		case "00":
			u.push(false)
		case "01":
			u.push(true)
		default:
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("INT %q: %w", s, err)
			}
			u.push(v)
		}
	case opLong:
		s, err := u.line()
		if err != nil {
			return err
		}
		if len(s) > 160 {
			return fmt.Errorf("LONG of %d digits is too long", len(s))
		}
		v, ok := new(big.Int).SetString(strings.TrimSuffix(s, "L"), 10)
		if !ok {
			return fmt.Errorf("LONG %q is not a number", s)
		}
		u.push(intValue(v))
	case opLong1, opLong4:
		var n uint64
		var err error
		if op == opLong1 {
			n, err = u.u8()
		} else {
			n, err = u.u32()
		}
		if err != nil {
			return err
		}
		if n > 64 {
			return fmt.Errorf("integer of %d bytes is too long", n)
		}
		s, err := u.take(n)
		if err != nil {
			return err
		}
		u.push(decodeLong(s))
	case opFloat:
		s, err := u.line()
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("FLOAT %q: %w", s, err)
		}
		u.push(v)
	case opBinFloat:
		s, err := u.take(8)
		if err != nil {
			return err
		}
		u.push(math.Float64frombits(binary.BigEndian.Uint64(s)))
	case opBinUnicode, opShortBinUni, opBinUnicode8, opBinString, opShortBinString:
		n, err := u.length(op)
		if err != nil {
			return err
		}
		s, err := u.take(n)
		if err != nil {
			return err
		}
		u.push(string(s))
	case opBinBytes, opShortBinBytes, opBinBytes8, opByteArray8:
		n, err := u.length(op)
		if err != nil {
			return err
		}
		s, err := u.take(n)
		if err != nil {
			return err
		}
		u.push(append([]byte(nil), s...))
	case opString, opUnicode:
		s, err := u.line()
		if err != nil {
			return err
		}
		if op == opString {
			if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
				return fmt.Errorf("STRING %q is not quoted", s)
			}
			s = s[1 : len(s)-1]
		}
		if strings.ContainsRune(s, '\\') {
			return errors.New("escaped text strings are not supported")
		}
		u.push(s)
	case opEmptyTuple:
		u.push(pyTuple{})
	case opTuple:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		u.push(pyTuple(items))
	case opTuple1, opTuple2, opTuple3:
		n := int(op-opTuple1) + 1
		if len(u.stack) < n {
			return errors.New("stack underflow")
		}
		t := append(pyTuple(nil), u.stack[len(u.stack)-n:]...)
		u.stack = u.stack[:len(u.stack)-n]
		u.push(t)
	case opEmptyList, opEmptySet:
		u.push(&pyList{})
	case opList, opFrozenSet:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		u.push(&pyList{items: items})
	case opAppend:
		v, err := u.pop()
		if err != nil {
			return err
		}
		return u.appendTo([]any{v})
	case opAppends, opAddItems:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		return u.appendTo(items)
	case opEmptyDict:
		u.push(&pyDict{})
	case opDict:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		d := &pyDict{}
		if err := d.setPairs(items); err != nil {
			return err
		}
		u.push(d)
	case opSetItem:
		if len(u.stack) < 3 {
			return errors.New("stack underflow")
		}
		items := u.stack[len(u.stack)-2:]
		u.stack = u.stack[:len(u.stack)-2]
		return u.setItems(items)
	case opSetItems:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		return u.setItems(items)
	case opPut:
		s, err := u.line()
		if err != nil {
			return err
		}
		i, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return fmt.Errorf("PUT %q: %w", s, err)
		}
		return u.memoPut(i)
	case opBinPut:
		i, err := u.u8()
		if err != nil {
			return err
		}
		return u.memoPut(i)
	case opLongBinPut:
		i, err := u.u32()
		if err != nil {
			return err
		}
		return u.memoPut(i)
	case opMemoize:
		return u.memoPut(uint64(len(u.memo)))
	case opGet:
		s, err := u.line()
		if err != nil {
			return err
		}
		i, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return fmt.Errorf("GET %q: %w", s, err)
		}
		return u.memoGet(i)
	case opBinGet:
		i, err := u.u8()
		if err != nil {
			return err
		}
		return u.memoGet(i)
	case opLongBinGet:
		i, err := u.u32()
		if err != nil {
			return err
		}
		return u.memoGet(i)
	case opGlobal:
		module, err := u.line()
		if err != nil {
			return err
		}
		name, err := u.line()
		if err != nil {
			return err
		}
		g, err := lookupGlobal(module, name)
		if err != nil {
			return err
		}
		u.push(g)
	case opStackGlobal:
		nv, err := u.pop()
		if err != nil {
			return err
		}
		mv, err := u.pop()
		if err != nil {
			return err
		}
		module, ok1 := mv.(string)
		name, ok2 := nv.(string)
		if !ok1 || !ok2 {
			return fmt.Errorf("STACK_GLOBAL of %s and %s, want two strings", describe(mv), describe(nv))
		}
		g, err := lookupGlobal(module, name)
		if err != nil {
			return err
		}
		u.push(g)
	case opInst:
		module, err := u.line()
		if err != nil {
			return err
		}
		name, err := u.line()
		if err != nil {
			return err
		}
		g, err := lookupGlobal(module, name)
		if err != nil {
			return err
		}
		return fmt.Errorf("INST of %s is not supported", g)
	case opObj, opNewObj, opNewObjEx:
		return errors.New("object construction (OBJ/NEWOBJ) is not supported")
	case opExt1, opExt2, opExt4:
		return errors.New("extension registry codes are not supported")
	case opNextBuffer, opReadOnlyBuffer:
		return errors.New("out-of-band buffers are not supported")
	case opPersID:
		return errors.New("text persistent IDs are not supported")
	case opBinPersID:
		pid, err := u.pop()
		if err != nil {
			return err
		}
		if u.persistentLoad == nil {
			return errors.New("persistent IDs are not allowed here")
		}
		v, err := u.persistentLoad(pid)
		if err != nil {
			return err
		}
		u.push(v)
	case opReduce:
		args, err := u.pop()
		if err != nil {
			return err
		}
		fn, err := u.pop()
		if err != nil {
			return err
		}
		v, err := reduce(fn, args)
		if err != nil {
			return err
		}
		u.push(v)
	case opBuild:
		state, err := u.pop()
		if err != nil {
			return err
		}
		obj, err := u.top()
		if err != nil {
			return err
		}
		// torch pickles a state dict's _metadata attribute this way; it
		// carries nothing weft needs.
		if _, ok := obj.(*pyDict); !ok {
			return fmt.Errorf("BUILD on %s is not supported", describe(obj))
		}
		if _, ok := state.(*pyDict); !ok {
			return fmt.Errorf("BUILD with state %s is not supported", describe(state))
		}
	default:
		return fmt.Errorf("unknown opcode")
	}
	return nil
}

// length reads the length prefix of a string or bytes opcode.
func (u *unpickler) length(op byte) (uint64, error) {
	switch op {
	case opShortBinUni, opShortBinString, opShortBinBytes:
		return u.u8()
	case opBinUnicode8, opBinBytes8, opByteArray8:
		return u.u64()
	case opBinString:
		n, err := u.u32()
		if err == nil && int32(n) < 0 {
			return 0, fmt.Errorf("negative string length %d", int32(n))
		}
		return n, err
	}
	return u.u32()
}

func (u *unpickler) appendTo(items []any) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	l, ok := v.(*pyList)
	if !ok {
		return fmt.Errorf("APPEND to %s", describe(v))
	}
	l.items = append(l.items, items...)
	return nil
}

func (u *unpickler) setItems(items []any) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	d, ok := v.(*pyDict)
	if !ok {
		return fmt.Errorf("SETITEM on %s", describe(v))
	}
	return d.setPairs(items)
}

func (d *pyDict) setPairs(items []any) error {
	if len(items)%2 != 0 {
		return fmt.Errorf("odd number (%d) of dict items", len(items))
	}
	for i := 0; i < len(items); i += 2 {
		if err := d.set(items[i], items[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (d *pyDict) set(k, v any) error {
	switch k.(type) {
	case string, int64, bool, float64, pyNone:
	default:
		return fmt.Errorf("unsupported dict key %s", describe(k))
	}
	if d.index == nil {
		d.index = map[any]int{}
	}
	if i, ok := d.index[k]; ok {
		d.vals[i] = v
		return nil
	}
	d.index[k] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return nil
}

// reduce applies an allowed callable to its arguments.
func reduce(fn, args any) (any, error) {
	g, ok := fn.(*pyGlobal)
	if !ok {
		return nil, fmt.Errorf("REDUCE calls %s", describe(fn))
	}
	a, ok := args.(pyTuple)
	if !ok {
		return nil, fmt.Errorf("REDUCE %s with arguments %s, want a tuple", g, describe(args))
	}
	switch g.kind {
	case gOrderedDict:
		d := &pyDict{}
		if len(a) == 0 {
			return d, nil
		}
		if len(a) == 1 {
			if l, ok := a[0].(*pyList); ok {
				for _, it := range l.items {
					p, ok := it.(pyTuple)
					if !ok || len(p) != 2 {
						return nil, fmt.Errorf("%s: item %s is not a pair", g, describe(it))
					}
					if err := d.set(p[0], p[1]); err != nil {
						return nil, err
					}
				}
				return d, nil
			}
		}
		return nil, fmt.Errorf("%s with %d arguments is not supported", g, len(a))
	case gRebuildTensor, gRebuildTensorV2:
		if len(a) < 4 {
			return nil, fmt.Errorf("%s takes at least 4 arguments, got %d", g, len(a))
		}
		return rebuildTensor(a[0], a[1], a[2], a[3])
	case gRebuildParameter:
		if len(a) < 1 {
			return nil, fmt.Errorf("%s without arguments", g)
		}
		t, ok := a[0].(*pyTensor)
		if !ok {
			return nil, fmt.Errorf("%s of %s, want a tensor", g, describe(a[0]))
		}
		return t, nil
	}
	return nil, fmt.Errorf("%s is not callable", g)
}

func rebuildTensor(storage, offset, size, stride any) (*pyTensor, error) {
	s, ok := storage.(*pyStorage)
	if !ok {
		return nil, fmt.Errorf("tensor storage is %s, want a persistent storage", describe(storage))
	}
	off, ok := offset.(int64)
	if !ok || off < 0 {
		return nil, fmt.Errorf("bad storage offset %s", describe(offset))
	}
	sz, err := intTuple(size)
	if err != nil {
		return nil, fmt.Errorf("tensor size: %w", err)
	}
	st, err := intTuple(stride)
	if err != nil {
		return nil, fmt.Errorf("tensor stride: %w", err)
	}
	if len(sz) != len(st) {
		return nil, fmt.Errorf("tensor size %v and stride %v differ in length", sz, st)
	}
	return &pyTensor{storage: s, offset: off, size: sz, stride: st}, nil
}

func intTuple(v any) ([]int64, error) {
	t, ok := v.(pyTuple)
	if !ok {
		return nil, fmt.Errorf("%s is not a tuple", describe(v))
	}
	if len(t) > 16 {
		return nil, fmt.Errorf("%d dimensions", len(t))
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok || n < 0 {
			return nil, fmt.Errorf("element %d is %s, want a non-negative int", i, describe(x))
		}
		out[i] = n
	}
	return out, nil
}

// decodeLong decodes a little-endian two's complement integer, returning an
// int64 when it fits and a *big.Int otherwise.
func decodeLong(s []byte) any {
	if len(s) == 0 {
		return int64(0)
	}
	be := make([]byte, len(s))
	for i, c := range s {
		be[len(s)-1-i] = c
	}
	v := new(big.Int).SetBytes(be)
	if s[len(s)-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(s))))
	}
	return intValue(v)
}

func intValue(v *big.Int) any {
	if v.IsInt64() {
		return v.Int64()
	}
	return v
}

// describe names a value's kind for error messages without printing it
// (values can be cyclic).
func describe(v any) string {
	switch v := v.(type) {
	case *pyGlobal:
		return v.String()
	case string:
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case pyNone:
		return "None"
	case pyTuple:
		return fmt.Sprintf("a tuple of %d", len(v))
	case *pyList:
		return fmt.Sprintf("a list of %d", len(v.items))
	case *pyDict:
		return fmt.Sprintf("a dict of %d", len(v.keys))
	case *pyTensor:
		return "a tensor"
	case *pyStorage:
		return "a storage"
	case *big.Int:
		return "a big integer"
	}
	return fmt.Sprintf("a %T", v)
}
