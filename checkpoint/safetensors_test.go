package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/weftrun/weft/tensor"
)

// stEntry is a tensor to write into a test safetensors file.
type stEntry struct {
	name  string
	dtype string
	shape []int
	data  []byte
}

// makeSafetensors writes entries back to back in the given order, with the
// header padded with spaces to a multiple of 8 as the reference writer does.
func makeSafetensors(entries []stEntry, meta map[string]string) []byte {
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	if meta != nil {
		m, _ := json.Marshal(meta)
		fmt.Fprintf(&hdr, `"__metadata__":%s`, m)
	}
	off := 0
	for i, e := range entries {
		if i > 0 || meta != nil {
			hdr.WriteByte(',')
		}
		name, _ := json.Marshal(e.name)
		shape, _ := json.Marshal(e.shape)
		if e.shape == nil {
			shape = []byte("[]")
		}
		fmt.Fprintf(&hdr, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, e.dtype, shape, off, off+len(e.data))
		off += len(e.data)
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(hdr.Len()))
	out = append(out, hdr.Bytes()...)
	for _, e := range entries {
		out = append(out, e.data...)
	}
	return out
}

func f32Bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSafetensorsHandWritten reads a file spelled out byte by byte from the
// format description, not made by this package's test writer.
func TestSafetensorsHandWritten(t *testing.T) {
	hdr := `{"b":{"dtype":"F16","shape":[3],"data_offsets":[16,22]},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"}}`
	var file []byte
	file = binary.LittleEndian.AppendUint64(file, uint64(len(hdr)))
	file = append(file, hdr...)
	file = append(file, f32Bytes(1, -2, 0.5, 3)...)
	file = append(file, 0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38) // f16 1, -2, 0.5
	path := writeFile(t, filepath.Join(t.TempDir(), "hand.safetensors"), file)

	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Format() != FormatSafetensors || c.Arch() != "" || c.Meta()["format"] != "pt" {
		t.Errorf("Format %q Arch %q Meta %v", c.Format(), c.Arch(), c.Meta())
	}
	infos := c.Infos()
	if len(infos) != 2 || infos[0].Name != "a" || infos[1].Name != "b" {
		t.Fatalf("Infos = %v, want a then b (data order)", infos)
	}
	a, err := c.Tensor("a")
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != tensor.F32 || !equalInts(a.Shape, []int{2, 2}) || fmt.Sprint(a.F32()) != "[1 -2 0.5 3]" {
		t.Errorf("a = %v %v %v", a.DType, a.Shape, a.F32())
	}
	b, err := c.Tensor("b")
	if err != nil {
		t.Fatal(err)
	}
	if b.DType != tensor.F16 || !equalInts(b.Shape, []int{3}) || !bytes.Equal(b.Data, file[8+len(hdr)+16:]) {
		t.Errorf("b = %v %v % x", b.DType, b.Shape, b.Data)
	}
	// Zero copy: a's and b's data must be adjacent views of one mapping.
	if got := uintptrOf(b.Data) - uintptrOf(a.Data); got != 16 {
		t.Errorf("b's data starts %d bytes after a's, want 16 (views of one mapping)", got)
	}
}

func TestSafetensorsDTypes(t *testing.T) {
	entries := []stEntry{
		{"f64", "F64", []int{2}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5)), math.Float64bits(-1))},
		{"f32", "F32", []int{1, 3}, f32Bytes(1, 2, 3)},
		{"bf16", "BF16", []int{2}, []byte{0x80, 0x3f, 0x00, 0xc0}},
		{"i64", "I64", []int{1}, binary.LittleEndian.AppendUint64(nil, 1<<40)},
		{"i32", "I32", []int{2}, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}},
		{"i16", "I16", []int{1}, []byte{2, 0}},
		{"i8", "I8", []int{3}, []byte{1, 0xff, 7}},
		{"scalar", "F32", nil, f32Bytes(42)},
		{"empty", "F32", []int{0, 4}, nil},
	}
	path := writeFile(t, filepath.Join(t.TempDir(), "types.safetensors"), makeSafetensors(entries, nil))
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]tensor.DType{"f64": tensor.F64, "f32": tensor.F32, "bf16": tensor.BF16, "i64": tensor.I64,
		"i32": tensor.I32, "i16": tensor.I16, "i8": tensor.I8, "scalar": tensor.F32, "empty": tensor.F32}
	for _, e := range entries {
		tt, err := c.Tensor(e.name)
		if err != nil {
			t.Fatal(err)
		}
		shape := e.shape
		if shape == nil {
			shape = []int{}
		}
		if tt.DType != want[e.name] || !equalInts(tt.Shape, shape) || !bytes.Equal(tt.Data, e.data) {
			t.Errorf("%s: %v %v % x; want %v %v % x", e.name, tt.DType, tt.Shape, tt.Data, want[e.name], shape, e.data)
		}
	}
	if len(c.Meta()) != 0 {
		t.Errorf("Meta = %v, want empty", c.Meta())
	}
}

func TestSafetensorsBad(t *testing.T) {
	withHeader := func(h string, dataLen int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(b, h...), make([]byte, dataLen)...)
	}
	good := makeSafetensors([]stEntry{{"x", "F32", []int{2}, f32Bytes(1, 2)}, {"y", "F32", []int{1}, f32Bytes(3)}}, nil)
	hugeLen := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(hugeLen, 1<<40)
	pastEnd := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(pastEnd, uint64(len(good)))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "too short"},
		{"header length over the limit", hugeLen, "over the"},
		{"header length past end", pastEnd, "runs past the end"},
		{"not an object", withHeader(`["x"]`, 0), "does not start with '{'"},
		{"bad json", withHeader(`{"x":{"dtype":"F32",`, 0), "header"},
		{"bad dtype string", withHeader(`{"x":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}}`, 4), `unknown dtype "F31"`},
		{"unsupported dtype", withHeader(`{"x":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}`, 1), "BOOL is not supported"},
		{"shape size disagreement", withHeader(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), `tensor "x": shape [3] of F32 takes 12 bytes`},
		{"offset past end", withHeader(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 10), `tensor "y": data [8, 12) runs past the end`},
		{"truncated", good[:len(good)-2], `tensor "y"`},
		{"overlap", withHeader(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "overlaps"},
		{"gap", withHeader(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "gap"},
		{"trailing data bytes", withHeader(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8), "4 bytes after the last tensor"},
		{"negative dimension", withHeader(`{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4), "negative dimension"},
		{"huge shape", withHeader(`{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}`, 4), "too many elements"},
		{"fractional dimension", withHeader(`{"x":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, 4), `tensor "x"`},
		{"reversed offsets", withHeader(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`, 4), "bad data_offsets"},
		{"three offsets", withHeader(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, 4), "data_offsets has 3 numbers"},
		{"missing shape", withHeader(`{"x":{"dtype":"F32","data_offsets":[0,4]}}`, 4), "needs dtype, shape and data_offsets"},
		{"duplicate tensor", withHeader(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), `duplicate entry "x"`},
		{"metadata not strings", withHeader(`{"__metadata__":{"n":1}}`, 0), "__metadata__"},
		{"data after object", withHeader(`{} {}`, 0), "data after the JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "bad.safetensors"), tc.data)
			c, err := Open(path)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file and %q", err, tc.want)
			}
		})
	}
}

// writeSharded writes two shards and an index into dir and returns the
// index path. The index is written from weightMap.
func writeSharded(t *testing.T, dir string, weightMap map[string]string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), makeSafetensors([]stEntry{
		{"embed.weight", "F32", []int{2, 2}, f32Bytes(1, 2, 3, 4)},
		{"layers.0.w", "F16", []int{2}, []byte{0, 0x3c, 0, 0x40}},
	}, map[string]string{"format": "pt"}))
	writeFile(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), makeSafetensors([]stEntry{
		{"layers.1.w", "F16", []int{2}, []byte{0, 0x42, 0, 0x44}},
		{"norm.weight", "F32", []int{2}, f32Bytes(5, 6)},
	}, map[string]string{"format": "pt"}))
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 36}, "weight_map": weightMap})
	return writeFile(t, filepath.Join(dir, "model.safetensors.index.json"), idx)
}

func goodWeightMap() map[string]string {
	return map[string]string{
		"embed.weight": "model-00001-of-00002.safetensors",
		"layers.0.w":   "model-00001-of-00002.safetensors",
		"layers.1.w":   "model-00002-of-00002.safetensors",
		"norm.weight":  "model-00002-of-00002.safetensors",
	}
}

func TestSafetensorsSharded(t *testing.T) {
	dir := t.TempDir()
	idx := writeSharded(t, dir, goodWeightMap())
	c, err := Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var names []string
	for _, inf := range c.Infos() {
		names = append(names, inf.Name)
	}
	if got := strings.Join(names, " "); got != "embed.weight layers.0.w layers.1.w norm.weight" {
		t.Errorf("Infos = %s", got)
	}
	if c.Format() != FormatSafetensors || c.Meta()["total_size"] != int64(36) || c.Meta()["format"] != "pt" {
		t.Errorf("Format %q Meta %v", c.Format(), c.Meta())
	}
	n, err := c.Tensor("norm.weight")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(n.F32()) != "[5 6]" {
		t.Errorf("norm.weight = %v", n.F32())
	}
	w, err := c.Tensor("layers.1.w")
	if err != nil || !bytes.Equal(w.Data, []byte{0, 0x42, 0, 0x44}) {
		t.Errorf("layers.1.w = %v, %v", w, err)
	}
	if _, err := c.Tensor("nope"); err == nil {
		t.Error("no error for a missing tensor")
	}
}

func TestSafetensorsShardedBad(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m map[string]string)
		after func(t *testing.T, dir string)
		want  []string
	}{
		{"tensor missing from its shard", func(m map[string]string) { m["extra.weight"] = "model-00002-of-00002.safetensors" },
			nil, []string{`"extra.weight"`, "model-00002-of-00002.safetensors", "no such tensor"}},
		{"tensor missing from the index", func(m map[string]string) { delete(m, "layers.1.w") },
			nil, []string{`"layers.1.w"`, "model-00002-of-00002.safetensors", "no entry in the index"}},
		{"tensor mapped to the wrong shard", func(m map[string]string) { m["layers.1.w"] = "model-00001-of-00002.safetensors" },
			nil, []string{`"layers.1.w"`, "model-00001-of-00002.safetensors"}},
		{"missing shard", func(m map[string]string) { m["lm_head.weight"] = "model-00003-of-00003.safetensors" },
			nil, []string{`"lm_head.weight"`, "model-00003-of-00003.safetensors", "no such file"}},
		{"shard outside the folder", func(m map[string]string) { m["lm_head.weight"] = "../x.safetensors" },
			nil, []string{`"lm_head.weight"`, "not a file beside the index"}},
		{"truncated shard", nil, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model-00002-of-00002.safetensors")
			b, _ := os.ReadFile(p)
			writeFile(t, p, b[:len(b)-3])
		}, []string{"model-00002-of-00002.safetensors", `tensor "norm.weight"`, "truncated"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := goodWeightMap()
			if tc.edit != nil {
				tc.edit(m)
			}
			idx := writeSharded(t, dir, m)
			if tc.after != nil {
				tc.after(t, dir)
			}
			c, err := Open(idx)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestHFFolder(t *testing.T) {
	dir := t.TempDir()
	writeSharded(t, dir, goodWeightMap())
	writeFile(t, filepath.Join(dir, "config.json"), []byte(`{
  "model_type": "mistral", "hidden_size": 4096, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
  "vocab_size": 32000, "tie_word_embeddings": false, "architectures": ["MistralForCausalLM"],
  "rope_scaling": {"factor": 8.0, "type": "linear"}, "sliding_window": null, "big": 18446744073709551616
}`))
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Path() != dir || c.Arch() != "mistral" || c.Format() != FormatSafetensors {
		t.Errorf("Path %q Arch %q Format %q", c.Path(), c.Arch(), c.Format())
	}
	m := c.Meta()
	checks := []struct {
		key  string
		want any
	}{
		{"hidden_size", int64(4096)}, {"vocab_size", int64(32000)}, {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0},
		{"tie_word_embeddings", false}, {"sliding_window", nil}, {"big", 18446744073709551616.0},
	}
	for _, ck := range checks {
		if got := m[ck.key]; got != ck.want {
			t.Errorf("Meta[%q] = %v (%T), want %v (%T)", ck.key, got, got, ck.want, ck.want)
		}
	}
	if rs, _ := m["rope_scaling"].(map[string]any); rs["factor"] != 8.0 || rs["type"] != "linear" {
		t.Errorf("rope_scaling = %v", m["rope_scaling"])
	}
	if a, _ := m["architectures"].([]any); len(a) != 1 || a[0] != "MistralForCausalLM" {
		t.Errorf("architectures = %v", m["architectures"])
	}
	if len(c.Infos()) != 4 {
		t.Errorf("%d tensors", len(c.Infos()))
	}
	e, err := c.Tensor("embed.weight")
	if err != nil || fmt.Sprint(e.F32()) != "[1 2 3 4]" {
		t.Errorf("embed.weight: %v %v", e, err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if _, err := c.Tensor("embed.weight"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestHFFolderVariants(t *testing.T) {
	cfg := []byte(`{"model_type": "gpt2", "n_embd": 8}`)
	one := makeSafetensors([]stEntry{{"wte.weight", "F32", []int{1}, f32Bytes(7)}}, nil)
	two := makeSafetensors([]stEntry{{"wpe.weight", "F32", []int{1}, f32Bytes(8)}}, nil)

	t.Run("single model.safetensors", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), cfg)
		writeFile(t, filepath.Join(dir, "model.safetensors"), one)
		c, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.Arch() != "gpt2" || c.Meta()["n_embd"] != int64(8) || len(c.Infos()) != 1 {
			t.Errorf("Arch %q Meta %v Infos %v", c.Arch(), c.Meta(), c.Infos())
		}
	})
	t.Run("several files without an index", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), cfg)
		writeFile(t, filepath.Join(dir, "a.safetensors"), one)
		writeFile(t, filepath.Join(dir, "b.safetensors"), two)
		c, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		w, err := c.Tensor("wpe.weight")
		if err != nil || w.F32()[0] != 8 {
			t.Errorf("wpe.weight: %v %v", w, err)
		}
	})
	t.Run("duplicate tensor without an index", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), cfg)
		writeFile(t, filepath.Join(dir, "a.safetensors"), one)
		writeFile(t, filepath.Join(dir, "b.safetensors"), one)
		if c, err := Open(dir); err == nil || !strings.Contains(err.Error(), `"wte.weight" is in both a.safetensors and b.safetensors`) {
			t.Errorf("err = %v", err)
			if c != nil {
				c.Close()
			}
		}
	})
	t.Run("no config", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "model.safetensors"), one)
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "no config.json") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no weights", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), cfg)
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "no weights found") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("bad config", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), []byte(`{"model_type": `))
		writeFile(t, filepath.Join(dir, "model.safetensors"), one)
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "config.json") {
			t.Errorf("err = %v", err)
		}
	})
}

// FuzzSafetensorsHeader feeds arbitrary headers and data lengths to the
// parser. It must never panic, and whatever it accepts must tile the data.
func FuzzSafetensorsHeader(f *testing.F) {
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"}}`), int64(16))
	f.Add([]byte(`{"b":{"dtype":"F16","shape":[3],"data_offsets":[16,22]},"a":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}}`), int64(22))
	f.Add([]byte(`{"x":{"dtype":"I8","shape":[0],"data_offsets":[0,0]}}  `), int64(0))
	f.Add([]byte(`{"x":{"dtype":"F64","shape":[1e3],"data_offsets":[0,-8]}}`), int64(8))
	f.Add([]byte(`{}`), int64(0))
	f.Fuzz(func(t *testing.T, hdr []byte, dataLen int64) {
		if dataLen < 0 || dataLen > 1<<40 {
			return
		}
		ts, _, err := parseSafetensorsHeader(hdr, dataLen)
		if err != nil {
			return
		}
		var pos int64
		for _, x := range ts {
			n, err := x.dtype.RowBytes(tensor.NumElems(x.shape))
			if err != nil || int64(n) != x.end-x.begin || x.begin != pos {
				t.Fatalf("accepted inconsistent tensor %+v (pos %d)", x, pos)
			}
			pos = x.end
		}
		if pos != dataLen {
			t.Fatalf("accepted header covering %d of %d bytes", pos, dataLen)
		}
		// A whole file around the header parses the same way.
		if dataLen <= 1<<16 {
			file := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
			file = append(append(file, hdr...), make([]byte, dataLen)...)
			c, err := parseSafetensors("fuzz", file)
			if err != nil {
				if len(hdr) > 0 && hdr[0] == '{' {
					t.Fatalf("header accepted alone but file rejected: %v", err)
				}
				return
			}
			for _, inf := range c.Infos() {
				if _, err := c.Tensor(inf.Name); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
