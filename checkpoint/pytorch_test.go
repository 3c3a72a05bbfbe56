package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// stateFixture is a state dict exercising what torch writes: shared storages
// with offsets, several dtypes, a parameter, a scalar, an empty tensor and a
// transposed (non-contiguous) view.
func stateFixture() ([]ptSpec, map[string][]byte) {
	specs := []ptSpec{
		{name: "emb.weight", storage: "FloatStorage", key: "0", numel: 10, offset: 0, size: []int64{2, 3}, stride: []int64{3, 1}},
		{name: "emb.tail", storage: "FloatStorage", key: "0", numel: 10, offset: 6, size: []int64{4}, stride: []int64{1}},
		{name: "emb.t", storage: "FloatStorage", key: "0", numel: 10, offset: 0, size: []int64{3, 2}, stride: []int64{1, 3}},
		{name: "half", storage: "HalfStorage", key: "1", numel: 3, offset: 0, size: []int64{3}, stride: []int64{1}, parameter: true},
		{name: "bf", storage: "BFloat16Storage", key: "2", numel: 2, offset: 0, size: []int64{1, 2}, stride: []int64{7, 1}},
		{name: "steps", storage: "LongStorage", key: "3", numel: 1, offset: 0, size: []int64{}, stride: []int64{}},
		{name: "empty", storage: "FloatStorage", key: "4", numel: 0, offset: 0, size: []int64{0, 5}, stride: []int64{5, 1}},
		{name: "i8", storage: "CharStorage", key: "5", numel: 4, offset: 1, size: []int64{3}, stride: []int64{1}},
	}
	storages := map[string][]byte{
		"0": f32Bytes(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
		"1": {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38}, // f16 1, -2, 0.5
		"2": {0x80, 0x3f, 0x40, 0x40},             // bf16 1, 3
		"3": binary.LittleEndian.AppendUint64(nil, 1234567),
		"4": {},
		"5": {9, 0xff, 2, 3},
	}
	return specs, storages
}

// want holds each fixture tensor's dtype, shape and bytes, written out by hand.
var stateWant = []struct {
	name  string
	dt    tensor.DType
	shape []int
	data  []byte
}{
	{"emb.weight", tensor.F32, []int{2, 3}, f32Bytes(0, 1, 2, 3, 4, 5)},
	{"emb.tail", tensor.F32, []int{4}, f32Bytes(6, 7, 8, 9)},
	// The transpose of [[0 1 2] [3 4 5]].
	{"emb.t", tensor.F32, []int{3, 2}, f32Bytes(0, 3, 1, 4, 2, 5)},
	{"half", tensor.F16, []int{3}, []byte{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38}},
	{"bf", tensor.BF16, []int{1, 2}, []byte{0x80, 0x3f, 0x40, 0x40}},
	{"steps", tensor.I64, []int{}, binary.LittleEndian.AppendUint64(nil, 1234567)},
	{"empty", tensor.F32, []int{0, 5}, nil},
	{"i8", tensor.I8, []int{3}, []byte{0xff, 2, 3}},
}

func checkState(t *testing.T, c Checkpoint) {
	t.Helper()
	infos := c.Infos()
	if len(infos) != len(stateWant) {
		t.Fatalf("%d tensors, want %d", len(infos), len(stateWant))
	}
	for i, w := range stateWant {
		if infos[i].Name != w.name {
			t.Errorf("Infos[%d] = %s, want %s (dict order)", i, infos[i].Name, w.name)
		}
		tt, err := c.Tensor(w.name)
		if err != nil {
			t.Errorf("%s: %v", w.name, err)
			continue
		}
		if tt.DType != w.dt || !equalInts(tt.Shape, w.shape) || !bytes.Equal(tt.Data, w.data) {
			t.Errorf("%s: %v %v % x; want %v %v % x", w.name, tt.DType, tt.Shape, tt.Data, w.dt, w.shape, w.data)
		}
	}
}

func TestPyTorchZip(t *testing.T) {
	specs, storages := stateFixture()
	pkl := statePickle(specs)
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		t.Run(fmt.Sprintf("method %d", method), func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "pytorch_model.bin"), torchZip(t, "pytorch_model", pkl, storages, method))
			c, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Format() != FormatPyTorch || c.Arch() != "" || len(c.Meta()) != 0 {
				t.Errorf("Format %q Arch %q Meta %v", c.Format(), c.Arch(), c.Meta())
			}
			checkState(t, c)
			if method == zip.Store {
				// Views of one mapping: emb.tail starts 6 floats after emb.weight.
				a, _ := c.Tensor("emb.weight")
				b, _ := c.Tensor("emb.tail")
				if d := uintptrOf(b.Data) - uintptrOf(a.Data); d != 24 {
					t.Errorf("emb.tail is %d bytes after emb.weight, want 24 (views of one storage)", d)
				}
			}
		})
	}
}

// TestPyTorchNested checks dotted names for nested dicts and int keys, as
// in training checkpoints ({"model": state_dict, "step": 3}).
func TestPyTorchNested(t *testing.T) {
	var p pickler
	p.proto(2)
	p.emptyDict()
	p.mark()
	p.str("step")
	p.int(3)
	p.str("model")
	p.emptyDict()
	p.int(7)
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.mark()
	p.mark()
	p.str("storage")
	p.global("torch", "FloatStorage")
	p.str("0")
	p.str("cpu")
	p.int(2)
	p.tuple()
	p.binPersID()
	p.int(0)
	p.ints([]int64{2})
	p.ints([]int64{1})
	p.boolean(false)
	p.global("collections", "OrderedDict")
	p.emptyTuple()
	p.reduce()
	p.tuple()
	p.reduce()
	p.setItem()
	p.setItems()
	p.stop()
	path := writeFile(t, filepath.Join(t.TempDir(), "ckpt.pt"), torchZip(t, "archive", p.Bytes(), map[string][]byte{"0": f32Bytes(1, 2)}, zip.Store))
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tt, err := c.Tensor("model.7")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tt.F32()) != "[1 2]" || len(c.Infos()) != 1 {
		t.Errorf("model.7 = %v, Infos %v", tt.F32(), c.Infos())
	}
}

// TestPyTorchMalicious feeds pickles that would run code under Python's
// pickle. Each must be refused with the global named, and nothing may run.
func TestPyTorchMalicious(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	payload := "touch " + marker
	reduceCall := func(global func(p *pickler)) []byte {
		var p pickler
		p.proto(2)
		global(&p)
		p.mark()
		p.str(payload)
		p.tuple()
		p.reduce()
		p.stop()
		return p.Bytes()
	}
	tests := []struct {
		name string
		pkl  []byte
		want string
	}{
		{"os.system", reduceCall(func(p *pickler) { p.global("os", "system") }), "refused global os.system"},
		{"posix.system", reduceCall(func(p *pickler) { p.global("posix", "system") }), "refused global posix.system"},
		{"builtins.eval", reduceCall(func(p *pickler) { p.global("builtins", "eval") }), "refused global builtins.eval"},
		{"__builtin__.eval", reduceCall(func(p *pickler) { p.global("__builtin__", "eval") }), "refused global __builtin__.eval"},
		{"subprocess.Popen stack global", reduceCall(func(p *pickler) {
			p.proto(4)
			p.stackGlobal("subprocess", "Popen")
		}), "refused global subprocess.Popen"},
		{"builtins.getattr", reduceCall(func(p *pickler) { p.global("builtins", "getattr") }), "refused global builtins.getattr"},
		{"torch not allow-listed", reduceCall(func(p *pickler) { p.global("torch", "load") }), "refused global torch.load"},
		{"INST", []byte("(S'" + payload + "'\nios\nsystem\n."), "refused global os.system"},
		{"hidden inside a state dict", func() []byte {
			specs, _ := stateFixture()
			b := statePickle(specs[:1])
			// Replace the final BUILD's state with a call to os.system.
			var p pickler
			p.global("os", "system")
			p.mark()
			p.str(payload)
			p.tuple()
			p.reduce()
			p.WriteString("0") // POP
			return append(append(b[:len(b)-1:len(b)-1], p.Bytes()...), '.')
		}(), "refused global os.system"},
		{"calling an allowed non-callable", func() []byte {
			var p pickler
			p.proto(2)
			p.global("torch", "float16")
			p.emptyTuple()
			p.reduce()
			p.stop()
			return p.Bytes()
		}(), "torch.float16 is not callable"},
		{"NEWOBJ", func() []byte {
			var p pickler
			p.proto(2)
			p.global("collections", "OrderedDict")
			p.emptyTuple()
			p.WriteByte(0x81)
			p.stop()
			return p.Bytes()
		}(), "NEWOBJ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "pytorch_model.bin"), torchZip(t, "archive", tc.pkl, map[string][]byte{"0": f32Bytes(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)}, zip.Store))
			c, err := Open(path)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "pytorch_model.bin") || !strings.Contains(err.Error(), "data.pkl") {
				t.Errorf("error %q does not name the file, data.pkl and %q", err, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the payload ran")
			}
		})
	}
}

func TestPyTorchBad(t *testing.T) {
	specs, storages := stateFixture()
	good := statePickle(specs)
	with := func(pkl []byte, st map[string][]byte) []byte {
		return torchZip(t, "archive", pkl, st, zip.Store)
	}
	drop := func(key string) map[string][]byte {
		m := map[string][]byte{}
		for k, v := range storages {
			if k != key {
				m[k] = v
			}
		}
		return m
	}
	short := drop("1")
	short["1"] = storages["1"][:4]
	past := append([]ptSpec(nil), specs...)
	past[1].size = []int64{5} // 6 + 5 > 10 elements
	badStride := append([]ptSpec(nil), specs...)
	badStride[2].stride = []int64{1, 4} // reaches element 2*1 + 1*4 = 6, fine; make it 9
	badStride[2].stride = []int64{1, 9}
	boolSpec := []ptSpec{{name: "mask", storage: "BoolStorage", key: "0", numel: 2, size: []int64{2}, stride: []int64{1}}}
	seq := func(ops ...any) []byte {
		var p pickler
		for _, o := range ops {
			switch o := o.(type) {
			case string:
				p.WriteString(o)
			case []byte:
				p.Write(o)
			}
		}
		return p.Bytes()
	}
	bigOrder := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, data := range map[string][]byte{"archive/data.pkl": good, "archive/byteorder": []byte("big")} {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
			w.Write(data)
		}
		zw.Close()
		return buf.Bytes()
	}()
	noPkl := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("archive/other.txt")
		w.Write([]byte("hi"))
		zw.Close()
		return buf.Bytes()
	}()
	tests := []struct {
		name string
		file []byte
		want []string
	}{
		{"missing storage entry", with(good, drop("1")), []string{`tensor "half"`, "archive/data/1 is missing"}},
		{"truncated storage entry", with(good, short), []string{`tensor "half"`, "archive/data/1 holds 4 bytes", "truncated"}},
		{"tensor past its storage", with(statePickle(past), storages), []string{`tensor "emb.tail"`, "past the end"}},
		{"stride past its storage", with(statePickle(badStride), storages), []string{`tensor "emb.t"`, "past the end"}},
		{"unsupported storage type", with(statePickle(boolSpec), map[string][]byte{"0": {1, 0}}), []string{`tensor "mask"`, "torch.BoolStorage is not supported"}},
		{"truncated pickle", with(good[:len(good)/2], storages), []string{"data.pkl", "unexpected end of pickle data"}},
		{"no STOP", with(good[:len(good)-1], storages), []string{"without STOP"}},
		{"not a dict", with(seq("\x80\x02K\x05."), nil), []string{"not a state dict"}},
		{"unknown opcode", with(seq("\x80\x02\xff."), nil), []string{"opcode 0xff", "unknown opcode"}},
		{"stack underflow", with(seq("\x80\x02t."), nil), []string{"no MARK"}},
		{"undefined memo", with(seq("\x80\x02h\x07."), nil), []string{"memo entry 7 is not defined"}},
		{"huge bytes length", with(seq("\x80\x02\x8e", string(binary.LittleEndian.AppendUint64(nil, 1<<62)), "."), nil), []string{"need 4611686018427387904 bytes"}},
		{"huge long", with(seq("\x80\x02\x8b", string(binary.LittleEndian.AppendUint32(nil, 1<<30)), "."), nil), []string{"too long"}},
		{"protocol 9", with(seq("\x80\x09}."), nil), []string{"unsupported pickle protocol 9"}},
		{"self-containing dict", with(seq("\x80\x02}q\x00X\x01\x00\x00\x00ah\x00s."), nil), []string{`dict "a" is reached twice`}},
		{"list as dict key", with(seq("\x80\x02}]K\x01s."), nil), []string{"unsupported dict key"}},
		{"bad persistent id", with(seq("\x80\x02X\x03\x00\x00\x00abcQ."), nil), []string{"persistent ID"}},
		{"big endian", bigOrder, []string{`byte order "big"`}},
		{"no data.pkl", noPkl, []string{"without a data.pkl"}},
		{"truncated zip", with(good, storages)[:200], []string{"zip"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "model.pt"), tc.file)
			c, err := OpenPyTorch(path)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range append(tc.want, "model.pt") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// legacyFile writes torch's pre-1.6 format: magic, protocol version, system
// info, the object and the sorted storage keys as five pickles, then each
// storage as an int64 element count and its bytes.
func legacyFile(specs []ptSpec, storages map[string][]byte, elem map[string]int) []byte {
	var out bytes.Buffer
	out.Write([]byte{0x80, 0x02})
	out.Write(legacyTorchMagic)
	out.WriteByte('.')
	var p pickler
	p.proto(2)
	p.int(1001)
	p.stop()
	out.Write(p.Bytes())
	p.Reset()
	p.proto(2)
	p.emptyDict()
	p.mark()
	p.str("protocol_version")
	p.int(1001)
	p.str("little_endian")
	p.boolean(true)
	p.setItems()
	p.stop()
	out.Write(p.Bytes())
	// The object: statePickle's persistent IDs have 5 fields; legacy ones
	// carry a sixth, view_metadata = None. Rewrite by building anew.
	out.Write(legacyState(specs))
	keys := sortedKeys(storages)
	p.Reset()
	p.proto(2)
	p.emptyList()
	p.mark()
	for _, k := range keys {
		p.str(k)
	}
	p.appends()
	p.stop()
	out.Write(p.Bytes())
	for _, k := range keys {
		out.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(storages[k])/elem[k])))
		out.Write(storages[k])
	}
	return out.Bytes()
}

func legacyState(specs []ptSpec) []byte {
	var p pickler
	p.proto(2)
	p.global("collections", "OrderedDict")
	od := p.put()
	p.emptyTuple()
	p.reduce()
	p.mark()
	for _, s := range specs {
		p.str(s.name)
		p.global("torch._utils", "_rebuild_tensor_v2")
		p.mark()
		p.mark()
		p.str("storage")
		p.global("torch", s.storage)
		p.str(s.key)
		p.str("cpu")
		p.int(s.numel)
		p.none()
		p.tuple()
		p.binPersID()
		p.int(s.offset)
		p.ints(s.size)
		p.ints(s.stride)
		p.boolean(false)
		p.get(od)
		p.emptyTuple()
		p.reduce()
		p.tuple()
		p.reduce()
	}
	p.setItems()
	p.stop()
	return p.Bytes()
}

func TestPyTorchLegacy(t *testing.T) {
	specs, storages := stateFixture()
	elem := map[string]int{"0": 4, "1": 2, "2": 2, "3": 8, "4": 4, "5": 1}
	data := legacyFile(specs, storages, elem)
	path := writeFile(t, filepath.Join(t.TempDir(), "old.pth"), data)
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkState(t, c)

	for _, cut := range []int{len(data) - 1, len(data) - 20, 40} {
		p := writeFile(t, filepath.Join(t.TempDir(), "old.pth"), data[:cut])
		if c, err := Open(p); err == nil {
			c.Close()
			t.Errorf("truncated to %d bytes: no error", cut)
		} else if !strings.Contains(err.Error(), "old.pth") {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

func TestPyTorchShardedHF(t *testing.T) {
	specs, storages := stateFixture()
	dir := t.TempDir()
	// Shard 1 holds the first three tensors (storage 0), shard 2 the rest.
	st1 := map[string][]byte{"0": storages["0"]}
	st2 := map[string][]byte{}
	for k, v := range storages {
		if k != "0" {
			st2[k] = v
		}
	}
	writeFile(t, filepath.Join(dir, "pytorch_model-00001-of-00002.bin"), torchZip(t, "archive", statePickle(specs[:3]), st1, zip.Store))
	writeFile(t, filepath.Join(dir, "pytorch_model-00002-of-00002.bin"), torchZip(t, "archive", statePickle(specs[3:]), st2, zip.Deflate))
	wm := map[string]string{}
	for i, s := range specs {
		wm[s.name] = fmt.Sprintf("pytorch_model-0000%d-of-00002.bin", 1+min(i/3, 1))
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 100}, "weight_map": wm})
	writeFile(t, filepath.Join(dir, "pytorch_model.bin.index.json"), idx)
	writeFile(t, filepath.Join(dir, "config.json"), []byte(`{"model_type": "llama", "num_hidden_layers": 2}`))
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Format() != FormatPyTorch || c.Arch() != "llama" || c.Meta()["num_hidden_layers"] != int64(2) {
		t.Errorf("Format %q Arch %q Meta %v", c.Format(), c.Arch(), c.Meta())
	}
	checkState(t, c)
}

// FuzzUnpickle runs the restricted unpickler on arbitrary bytes: it must
// return, without panicking, for any input.
func FuzzUnpickle(f *testing.F) {
	specs, _ := stateFixture()
	f.Add(statePickle(specs))
	f.Add(legacyState(specs))
	f.Add([]byte("(S'x'\nios\nsystem\n."))
	f.Add([]byte("\x80\x02}q\x00X\x01\x00\x00\x00ah\x00s."))
	f.Fuzz(func(t *testing.T, b []byte) {
		st := map[string]*ptStorage{}
		load := func(pid any) (any, error) {
			key, typ, numel, err := parsePersistentID(pid, true)
			if err != nil {
				return nil, err
			}
			st[key] = &ptStorage{typ: typ, numel: numel, name: key}
			return &pyStorage{typ: typ, key: key, numel: numel}, nil
		}
		v, n, err := unpickle(b, load)
		if n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		if err == nil {
			// Walking the result must terminate too (cycles, nesting).
			c := &pytorch{path: "fuzz", meta: map[string]any{}}
			_ = c.addTensors(v, st)
		}
	})
}

func TestShardsOfMixedFormats(t *testing.T) {
	specs, storages := stateFixture()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.bin"), torchZip(t, "archive", statePickle(specs[:1]), map[string][]byte{"0": storages["0"]}, zip.Store))
	writeFile(t, filepath.Join(dir, "b.safetensors"), makeSafetensors([]stEntry{{"x", "F32", []int{1}, f32Bytes(1)}}, nil))
	idx, _ := json.Marshal(map[string]any{"weight_map": map[string]string{"emb.weight": "a.bin", "x": "b.safetensors"}})
	path := writeFile(t, filepath.Join(dir, "model.index.json"), idx)
	if c, err := Open(path); err == nil {
		c.Close()
		t.Fatal("no error")
	} else if !strings.Contains(err.Error(), "shard b.safetensors is safetensors but the shards before it are pytorch") {
		t.Errorf("err = %v", err)
	}
}

func TestHFPyTorchWithoutIndex(t *testing.T) {
	specs, storages := stateFixture()
	dir := t.TempDir()
	st2 := map[string][]byte{}
	for k, v := range storages {
		if k != "0" {
			st2[k] = v
		}
	}
	writeFile(t, filepath.Join(dir, "pytorch_model-00001-of-00002.bin"), torchZip(t, "archive", statePickle(specs[:3]), map[string][]byte{"0": storages["0"]}, zip.Store))
	writeFile(t, filepath.Join(dir, "pytorch_model-00002-of-00002.bin"), torchZip(t, "archive", statePickle(specs[3:]), st2, zip.Store))
	writeFile(t, filepath.Join(dir, "config.json"), []byte(`{"model_type": "gpt2"}`))
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Format() != FormatPyTorch || c.Arch() != "gpt2" {
		t.Errorf("Format %q Arch %q", c.Format(), c.Arch())
	}
	checkState(t, c)
}
