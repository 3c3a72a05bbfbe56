package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"testing"
)

// pickler emits pickle opcodes by hand, so that tests can build the files
// torch.save writes without Python. The opcodes and their encodings are
// those of CPython's pickletools documentation.
type pickler struct {
	bytes.Buffer
	memo int
}

func (p *pickler) proto(v byte) { p.Write([]byte{0x80, v}) }
func (p *pickler) stop()        { p.WriteByte('.') }
func (p *pickler) mark()        { p.WriteByte('(') }
func (p *pickler) tuple()       { p.WriteByte('t') }
func (p *pickler) tuple2()      { p.WriteByte(0x86) }
func (p *pickler) emptyTuple()  { p.WriteByte(')') }
func (p *pickler) emptyDict()   { p.WriteByte('}') }
func (p *pickler) emptyList()   { p.WriteByte(']') }
func (p *pickler) appends()     { p.WriteByte('e') }
func (p *pickler) setItems()    { p.WriteByte('u') }
func (p *pickler) setItem()     { p.WriteByte('s') }
func (p *pickler) reduce()      { p.WriteByte('R') }
func (p *pickler) build()       { p.WriteByte('b') }
func (p *pickler) binPersID()   { p.WriteByte('Q') }
func (p *pickler) none()        { p.WriteByte('N') }
func (p *pickler) boolean(b bool) {
	if b {
		p.WriteByte(0x88)
	} else {
		p.WriteByte(0x89)
	}
}

// global writes GLOBAL "module\nname\n".
func (p *pickler) global(module, name string) {
	p.WriteByte('c')
	p.WriteString(module + "\n" + name + "\n")
}

// stackGlobal writes the protocol 4 form: two strings and STACK_GLOBAL.
func (p *pickler) stackGlobal(module, name string) {
	p.str(module)
	p.str(name)
	p.WriteByte(0x93)
}

// str writes BINUNICODE.
func (p *pickler) str(s string) {
	p.WriteByte('X')
	p.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
	p.WriteString(s)
}

// int writes the shortest of BININT1, BININT2, BININT and LONG1, as pickle does.
func (p *pickler) int(v int64) {
	switch {
	case v >= 0 && v < 256:
		p.Write([]byte{'K', byte(v)})
	case v >= 0 && v < 65536:
		p.Write([]byte{'M', byte(v), byte(v >> 8)})
	case v >= -1<<31 && v < 1<<31:
		p.WriteByte('J')
		p.Write(binary.LittleEndian.AppendUint32(nil, uint32(v)))
	default:
		p.Write([]byte{0x8a, 8})
		p.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
	}
}

func (p *pickler) ints(v []int64) {
	p.mark()
	for _, x := range v {
		p.int(x)
	}
	p.tuple()
}

// put memoizes the top of the stack with BINPUT and returns its index.
func (p *pickler) put() int {
	p.Write([]byte{'q', byte(p.memo)})
	p.memo++
	return p.memo - 1
}

// get pushes a memoized value with BINGET.
func (p *pickler) get(i int) { p.Write([]byte{'h', byte(i)}) }

// ptSpec is one tensor of a test state dict.
type ptSpec struct {
	name      string
	storage   string // torch storage class, e.g. "FloatStorage"
	key       string
	numel     int64 // of the storage
	offset    int64
	size      []int64
	stride    []int64
	parameter bool // wrap in torch._utils._rebuild_parameter
}

// statePickle writes a state dict the way torch.save(model.state_dict())
// does with protocol 2: an OrderedDict built by REDUCE, its items set with
// SETITEMS, each value rebuilt by torch._utils._rebuild_tensor_v2 from a
// persistent storage ID, and the dict's _metadata attribute set by BUILD.
func statePickle(specs []ptSpec) []byte {
	var p pickler
	p.proto(2)
	p.global("collections", "OrderedDict")
	od := p.put()
	p.emptyTuple()
	p.reduce()
	p.put()
	p.mark()
	rebuild := -1
	storageTypes := map[string]int{}
	for _, s := range specs {
		p.str(s.name)
		p.put()
		if s.parameter {
			p.global("torch._utils", "_rebuild_parameter")
			p.put()
			p.mark()
		}
		if rebuild < 0 {
			p.global("torch._utils", "_rebuild_tensor_v2")
			rebuild = p.put()
		} else {
			p.get(rebuild)
		}
		p.mark()
		// Persistent ID: ('storage', torch.FloatStorage, key, 'cpu', numel).
		p.mark()
		p.str("storage")
		if i, ok := storageTypes[s.storage]; ok {
			p.get(i)
		} else {
			p.global("torch", s.storage)
			storageTypes[s.storage] = p.put()
		}
		p.str(s.key)
		p.str("cpu")
		p.int(s.numel)
		p.tuple()
		p.binPersID()
		p.int(s.offset)
		p.ints(s.size)
		p.ints(s.stride)
		p.boolean(false)
		p.get(od)
		p.emptyTuple()
		p.reduce() // backward hooks: OrderedDict()
		p.tuple()
		p.reduce()
		p.put()
		if s.parameter {
			p.boolean(true)
			p.get(od)
			p.emptyTuple()
			p.reduce()
			p.tuple()
			p.reduce()
			p.put()
		}
	}
	p.setItems()
	// state: {'_metadata': OrderedDict([('', {'version': 1})])}
	p.emptyDict()
	p.str("_metadata")
	p.get(od)
	p.emptyTuple()
	p.reduce()
	p.str("")
	p.emptyDict()
	p.str("version")
	p.int(1)
	p.setItem()
	p.setItem()
	p.setItem()
	p.build()
	p.stop()
	return p.Bytes()
}

// torchZip lays out a torch.save archive: <prefix>/data.pkl,
// <prefix>/data/<key>, <prefix>/version and <prefix>/byteorder.
func torchZip(t testing.TB, prefix string, pkl []byte, storages map[string][]byte, method uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte, m uint16) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: prefix + "/" + name, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	add("data.pkl", pkl, zip.Store)
	add("byteorder", []byte("little"), zip.Store)
	for _, k := range sortedKeys(storages) {
		add("data/"+k, storages[k], method)
	}
	add("version", []byte("3\n"), zip.Store)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}
