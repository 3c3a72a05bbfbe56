package gguf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/tensor"
)

// sharedDir returns ../shared beside the module root, skipping the test
// when it is absent (failing instead when CI=true).
func sharedDir(t testing.TB) string {
	t.Helper()
	return testdata.Shared(t) // the one locator of ../shared
}

// TestWriterExactBytes checks a small file against bytes written out by
// hand from the GGUF v3 specification.
func TestWriterExactBytes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.AddKV("a", uint32(7)))
	must(t, w.AddKV("bb", []string{"x", "yzw"}))
	must(t, w.AddTensor("t", tensor.F32, []int{3, 2}))
	must(t, w.AddTensor("u", tensor.I8, []int{5}))
	must(t, w.WriteHeader())
	must(t, w.WriteTensorData("t", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}))
	must(t, w.WriteTensorData("u", []byte{0xf1, 0xf2}))
	must(t, w.WriteTensorData("u", []byte{0xf3, 0xf4, 0xf5}))
	must(t, w.Close())

	le := func(v uint64, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return b
	}
	var want []byte
	add := func(b ...[]byte) {
		for _, x := range b {
			want = append(want, x...)
		}
	}
	add([]byte("GGUF"), le(3, 4), le(2, 8), le(2, 8)) // magic, version, tensors, kvs
	add(le(1, 8), []byte("a"), le(4, 4), le(7, 4))    // "a": uint32 7
	add(le(2, 8), []byte("bb"), le(9, 4), le(8, 4), le(2, 8), le(1, 8), []byte("x"), le(3, 8), []byte("yzw"))
	add(le(1, 8), []byte("t"), le(2, 4), le(2, 8), le(3, 8), le(0, 4), le(0, 8)) // ne = [2, 3], f32, offset 0
	add(le(1, 8), []byte("u"), le(1, 4), le(5, 8), le(24, 4), le(32, 8))         // i8 (24), offset 32
	if len(want) != 161 {
		t.Fatalf("hand-built header is %d bytes, want 161", len(want))
	}
	add(make([]byte, 192-161)) // pad the header to 32
	for i := range 24 {
		want = append(want, byte(i+1))
	}
	add(make([]byte, 8), []byte{0xf1, 0xf2, 0xf3, 0xf4, 0xf5}, make([]byte, 27))
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("file =\n% x\nwant\n% x", buf.Bytes(), want)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// allTypesMeta has one entry of every value type and every array type.
func allTypesMeta() (keys []string, values []any) {
	entries := []struct {
		k string
		v any
	}{
		{"u8", uint8(200)}, {"i8", int8(-100)}, {"u16", uint16(60000)}, {"i16", int16(-30000)},
		{"u32", uint32(4000000000)}, {"i32", int32(-2000000000)}, {"f32", float32(-1.5e-3)},
		{"bool.true", true}, {"bool.false", false}, {"str", "héllo, wörld"}, {"str.empty", ""},
		{"u64", uint64(1) << 63}, {"i64", int64(-1) << 62}, {"f64", math.Pi},
		{"f32.inf", float32(math.Inf(-1))},
		{"a.u8", []uint8{0, 1, 255}}, {"a.i8", []int8{-128, 0, 127}},
		{"a.u16", []uint16{0, 65535}}, {"a.i16", []int16{-32768, 32767}},
		{"a.u32", []uint32{1, 2, 3}}, {"a.i32", []int32{-1, 0, 1}}, {"a.f32", []float32{0.5, -2}},
		{"a.bool", []bool{true, false, true}}, {"a.str", []string{"", "a", "日本語"}},
		{"a.u64", []uint64{math.MaxUint64}}, {"a.i64", []int64{math.MinInt64}}, {"a.f64", []float64{1e300}},
		{"a.empty", []string{}}, {"a.empty.f32", []float32{}},
	}
	for _, e := range entries {
		keys = append(keys, e.k)
		values = append(values, e.v)
	}
	return keys, values
}

type testTensor struct {
	name  string
	dt    tensor.DType
	shape []int
}

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

func TestWriterRoundTrip(t *testing.T) {
	tensors := []testTensor{
		{"f32.1d", tensor.F32, []int{7}},
		{"f16.2d", tensor.F16, []int{3, 5}},
		{"q4_0", tensor.Q4_0, []int{2, 64}},
		{"q8_0.3d", tensor.Q8_0, []int{2, 3, 32}},
		{"q4_k.4d", tensor.Q4_K, []int{1, 2, 1, 256}},
		{"q6_k", tensor.Q6_K, []int{3, 512}},
		{"i32", tensor.I32, []int{1}},
		{"bf16", tensor.BF16, []int{9}},
	}
	for _, align := range []uint32{0, 1, 64, 4096} {
		keys, values := allTypesMeta()
		if align != 0 {
			keys = append(keys, "general.alignment")
			values = append(values, align)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for i, k := range keys {
			must(t, w.AddKV(k, values[i]))
		}
		data := map[string][]byte{}
		for i, tt := range tensors {
			must(t, w.AddTensor(tt.name, tt.dt, tt.shape))
			n, err := tt.dt.RowBytes(tensor.NumElems(tt.shape))
			must(t, err)
			data[tt.name] = fill(n, byte(i))
		}
		must(t, w.WriteHeader())
		for _, tt := range tensors {
			d := data[tt.name]
			// Write in uneven pieces.
			for len(d) > 0 {
				k := min(len(d), 13)
				must(t, w.WriteTensorData(tt.name, d[:k]))
				d = d[k:]
			}
		}
		must(t, w.Close())

		g, err := Parse("roundtrip", buf.Bytes())
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		wantAlign := uint64(align)
		if align == 0 {
			wantAlign = DefaultAlignment
		}
		if g.Version != 3 || g.Alignment != wantAlign {
			t.Errorf("align %d: version %d alignment %d", align, g.Version, g.Alignment)
		}
		if !reflect.DeepEqual(g.Keys, keys) {
			t.Errorf("keys = %v, want %v", g.Keys, keys)
		}
		for i, k := range keys {
			want := values[i]
			// The reader widens 16-bit arrays to []int64.
			switch v := want.(type) {
			case []uint16:
				want = []int64{int64(v[0]), int64(v[1])}
			case []int16:
				want = []int64{int64(v[0]), int64(v[1])}
			}
			if got := g.Meta[k]; !reflect.DeepEqual(got, want) {
				t.Errorf("meta %q = %#v, want %#v", k, got, want)
			}
		}
		if len(g.Tensors) != len(tensors) {
			t.Fatalf("%d tensors, want %d", len(g.Tensors), len(tensors))
		}
		var off uint64
		for i, tt := range tensors {
			ti := g.Tensors[i]
			if ti.Name != tt.name || ti.DType != tt.dt || !reflect.DeepEqual(ti.Shape, tt.shape) ||
				ti.Size != uint64(len(data[tt.name])) || ti.Offset != off {
				t.Errorf("tensor %d = %+v, want %s %s %v size %d offset %d", i, ti, tt.name, tt.dt, tt.shape, len(data[tt.name]), off)
			}
			off += (ti.Size + wantAlign - 1) / wantAlign * wantAlign
			x, err := g.Tensor(tt.name)
			must(t, err)
			if !bytes.Equal(x.Data, data[tt.name]) {
				t.Errorf("tensor %q data differs", tt.name)
			}
		}
		if int64(g.dataOff+off) != g.Size() || g.dataOff%wantAlign != 0 {
			t.Errorf("align %d: data at %d, %d bytes of it, file %d bytes", align, g.dataOff, off, g.Size())
		}
	}
}

// TestWriterRewritesSharedFiles rewrites shared GGUFs from what the reader
// parsed and expects the same metadata and tensor data. The originals were
// written by llama.cpp's tools, which lay files out by the same rules, so
// the whole file comes out byte for byte identical.
func TestWriterRewritesSharedFiles(t *testing.T) {
	shared := sharedDir(t)
	for _, name := range []string{
		"models/stories260K/stories260K.gguf",
		"models/mini-llama/mini-llama-Q4_0.gguf",
		"models/mini-llama/mini-llama-f16.gguf",
		"tokenizer-vectors/ggml-vocab-gpt-2.gguf",
		"tokenizer-vectors/ggml-vocab-llama-spm.gguf",
		"tokenizer-vectors/ggml-vocab-bert-bge.gguf",
	} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			rewriteAndCompare(t, filepath.Join(shared, name))
		})
	}
}

func rewriteAndCompare(t *testing.T, path string) {
	src, err := Open(path)
	must(t, err)
	defer src.Close()

	out := filepath.Join(t.TempDir(), "rewritten.gguf")
	f, err := os.Create(out)
	must(t, err)
	w := NewWriter(f)
	for _, k := range src.Keys {
		must(t, w.AddKV(k, src.Meta[k]))
	}
	for _, ti := range src.Tensors {
		must(t, w.AddTensor(ti.Name, ti.DType, ti.Shape))
	}
	must(t, w.WriteHeader())
	for _, ti := range src.Tensors {
		x, err := src.Tensor(ti.Name)
		must(t, err)
		must(t, w.WriteTensorData(ti.Name, x.Data))
	}
	must(t, w.Close())
	must(t, f.Close())

	got, err := Open(out)
	must(t, err)
	defer got.Close()
	if !reflect.DeepEqual(got.Keys, src.Keys) || !reflect.DeepEqual(got.Meta, src.Meta) {
		t.Error("metadata differs after the rewrite")
	}
	if !reflect.DeepEqual(got.Tensors, src.Tensors) {
		t.Error("tensor infos differ after the rewrite")
	}
	for _, ti := range src.Tensors {
		a, _ := src.Tensor(ti.Name)
		b, err := got.Tensor(ti.Name)
		must(t, err)
		if !bytes.Equal(a.Data, b.Data) {
			t.Errorf("tensor %q data differs", ti.Name)
		}
	}
	orig, err := os.ReadFile(path)
	must(t, err)
	re, err := os.ReadFile(out)
	must(t, err)
	if !bytes.Equal(orig, re) {
		i := 0
		for i < min(len(orig), len(re)) && orig[i] == re[i] {
			i++
		}
		t.Errorf("rewritten file (%d bytes) differs from the original (%d bytes) from byte %d", len(re), len(orig), i)
	}
}

func TestWriterErrors(t *testing.T) {
	declared := func(w *Writer) {
		must(t, w.AddTensor("a", tensor.F32, []int{4}))
		must(t, w.AddTensor("b", tensor.F32, []int{2}))
	}
	tests := []struct {
		name string
		run  func(w *Writer) error
		want string
	}{
		{"int value", func(w *Writer) error { return w.AddKV("k", 5) }, "unsupported value type int"},
		{"nested array", func(w *Writer) error { return w.AddKV("k", [][]string{{"a"}}) }, "unsupported value type [][]string"},
		{"any slice", func(w *Writer) error { return w.AddKV("k", []any{"a"}) }, "unsupported value type []interface {}"},
		{"nil value", func(w *Writer) error { return w.AddKV("k", nil) }, "unsupported value type <nil>"},
		{"empty key", func(w *Writer) error { return w.AddKV("", uint8(1)) }, "empty metadata key"},
		{"duplicate key", func(w *Writer) error { w.AddKV("k", true); return w.AddKV("k", false) }, `duplicate metadata key "k"`},
		{"alignment type", func(w *Writer) error { return w.AddKV("general.alignment", uint64(32)) }, "must be a uint32"},
		{"alignment value", func(w *Writer) error { return w.AddKV("general.alignment", uint32(48)) }, "not a power of two"},
		{"alignment zero", func(w *Writer) error { return w.AddKV("general.alignment", uint32(0)) }, "not a power of two"},
		{"empty name", func(w *Writer) error { return w.AddTensor("", tensor.F32, []int{1}) }, "empty tensor name"},
		{"long name", func(w *Writer) error { return w.AddTensor(strings.Repeat("x", 64), tensor.F32, []int{1}) }, "longer than 63"},
		{"duplicate tensor", func(w *Writer) error { declared(w); return w.AddTensor("a", tensor.F16, []int{2}) }, `duplicate tensor "a"`},
		{"unknown type", func(w *Writer) error { return w.AddTensor("t", tensor.DType(99), []int{1}) }, "unknown type 99"},
		{"no dims", func(w *Writer) error { return w.AddTensor("t", tensor.F32, nil) }, "0 dimensions"},
		{"five dims", func(w *Writer) error { return w.AddTensor("t", tensor.F32, []int{1, 1, 1, 1, 1}) }, "5 dimensions"},
		{"zero dim", func(w *Writer) error { return w.AddTensor("t", tensor.F32, []int{3, 0}) }, "bad shape [3 0]"},
		{"negative dim", func(w *Writer) error { return w.AddTensor("t", tensor.F32, []int{-1}) }, "bad shape [-1]"},
		{"huge", func(w *Writer) error { return w.AddTensor("t", tensor.F32, []int{1 << 30, 1 << 30}) }, "bad shape"},
		{"partial block", func(w *Writer) error { return w.AddTensor("t", tensor.Q4_0, []int{32, 48}) }, "not a multiple of the block size 32"},
		{"kv after header", func(w *Writer) error { w.WriteHeader(); return w.AddKV("k", "v") }, "after the header"},
		{"tensor after header", func(w *Writer) error { w.WriteHeader(); return w.AddTensor("t", tensor.F32, []int{1}) }, "after the header"},
		{"header twice", func(w *Writer) error { w.WriteHeader(); return w.WriteHeader() }, "header written twice"},
		{"undeclared", func(w *Writer) error { declared(w); return w.WriteTensorData("c", nil) }, `no tensor "c"`},
		{"out of order", func(w *Writer) error { declared(w); return w.WriteTensorData("b", make([]byte, 8)) }, `"b" written out of order: "a" comes next`},
		{"too much", func(w *Writer) error { declared(w); return w.WriteTensorData("a", make([]byte, 17)) }, "17 bytes written, more than its 16"},
		{"too much later", func(w *Writer) error {
			declared(w)
			w.WriteTensorData("a", make([]byte, 10))
			return w.WriteTensorData("a", make([]byte, 7))
		}, "17 bytes written, more than its 16"},
		{"after all", func(w *Writer) error {
			declared(w)
			w.WriteTensorData("a", make([]byte, 16))
			w.WriteTensorData("b", make([]byte, 8))
			return w.WriteTensorData("a", nil)
		}, "after all tensors were complete"},
		{"incomplete", func(w *Writer) error {
			declared(w)
			w.WriteTensorData("a", make([]byte, 16))
			w.WriteTensorData("b", make([]byte, 3))
			return w.Close()
		}, `tensor "b": 3 of its 8 bytes written (1 tensors incomplete)`},
		{"missing all", func(w *Writer) error { declared(w); return w.Close() }, `tensor "a": 0 of its 16 bytes written (2 tensors incomplete)`},
		{"closed", func(w *Writer) error { w.Close(); return w.AddKV("k", "v") }, "writer is closed"},
		{"sticky", func(w *Writer) error { w.AddKV("k", 1); return w.AddKV("other", "fine") }, "unsupported value type int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(NewWriter(&bytes.Buffer{}))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "gguf write output: ") {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

type failWriter struct{ left int }

var errDisk = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, errDisk
	}
	f.left -= len(p)
	return len(p), nil
}

// TestWriterWriteErrors checks that a failing destination is reported, at
// every point of the file, and named when it is a file.
func TestWriterWriteErrors(t *testing.T) {
	for _, left := range []int{0, 10, 100, 1 << 16, 70000, 70100} {
		w := NewWriter(&failWriter{left: left})
		must(t, w.AddKV("big", strings.Repeat("x", 70000)))
		must(t, w.AddTensor("t", tensor.F32, []int{8}))
		err := w.WriteHeader()
		if err == nil {
			err = w.WriteTensorData("t", make([]byte, 32))
		}
		if err == nil {
			err = w.Close()
		}
		if !errors.Is(err, errDisk) {
			t.Errorf("left %d: error %v, want %v", left, err, errDisk)
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "x.gguf"))
	must(t, err)
	f.Close() // writes now fail
	w := NewWriter(f)
	if err := w.WriteHeader(); err == nil || !strings.Contains(err.Error(), "x.gguf") {
		t.Errorf("error %v, want one naming x.gguf", err)
	}
}

// TestWriterMetadataOnly writes a file without tensors, as vocabulary-only
// GGUFs are, letting Close write the header.
func TestWriterMetadataOnly(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.AddKV("tokenizer.ggml.model", "llama"))
	must(t, w.Close())
	// 24 header bytes, then the key (8+20), type (4) and value (8+5),
	// with no padding since no data follows.
	if buf.Len() != 24+28+4+13 {
		t.Errorf("file is %d bytes, want %d", buf.Len(), 24+28+4+13)
	}
	g, err := Parse("meta-only", buf.Bytes())
	must(t, err)
	if s, _ := g.Meta.String("tokenizer.ggml.model"); s != "llama" || len(g.Tensors) != 0 {
		t.Errorf("got %v, %d tensors", g.Meta, len(g.Tensors))
	}
}
