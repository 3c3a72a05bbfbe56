package plugins

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tensor"
)

// benchCall returns a call of example.misbehave (identity) on a rows×cols
// tensor.
func benchCall(b *testing.B, h *Host, rows, cols int) (ops.HostFunc, *ops.HostCall) {
	def, _ := load(b, h, "misbehave").Lookup("example.misbehave")
	x := tensor.NewF32("x", rows, cols)
	xs := x.F32()
	for i := range xs {
		xs[i] = float32(i % 1000)
	}
	c := &ops.HostCall{Ctx: context.Background(), Name: "bench", In: []*tensor.Tensor{x},
		Out: []*tensor.Tensor{tensor.NewF32("out", rows, cols)}, Attrs: attrsFor(b, def, nil)}
	k := def.Host
	if err := k(c); err != nil { // warm up: start, map segments
		b.Fatal(err)
	}
	return k, c
}

// BenchmarkRoundTrip is the latency of one plugin call on a small tensor
// (one 64-feature row, sent inline), through the shared-memory channel and
// through gRPC alone.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name     string
		grpcOnly bool
	}{{"channel", false}, {"grpc", true}} {
		b.Run(bc.name, func(b *testing.B) {
			h, _ := newHost(b, Options{GRPCOnly: bc.grpcOnly})
			k, c := benchCall(b, h, 1, 64)
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := k(c); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "µs-median")
			b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds())/1e3, "µs-p99")
		})
	}
}

// BenchmarkThroughput64MB passes a 64 MiB f32 tensor to the plugin
// (example.misbehave, the identity) and back through shared memory: one
// copy into the call's shared memory, one out of it into the node's
// output. MB/s and GB/s-median are the tensor's bytes over the round-trip
// time (mean and median): the tensor is counted once, though it crosses
// both ways.
func BenchmarkThroughput64MB(b *testing.B) {
	h, _ := newHost(b, Options{})
	k, c := benchCall(b, h, 4096, 4096)
	size := len(c.In[0].Data)
	b.SetBytes(int64(size))
	clear(c.Out[0].Data) // written again by every call
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := k(c); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	if !slices.Equal(c.Out[0].F32(), c.In[0].F32()) {
		b.Fatal("the output differs from the input")
	}
	slices.Sort(times)
	med := times[len(times)/2]
	b.ReportMetric(float64(med.Microseconds())/1e3, "ms-median")
	b.ReportMetric(float64(size)/med.Seconds()/1e9, "GB/s-median")
}

// BenchmarkDecodeStories260K generates 64 greedy tokens from stories260K
// with the built-in norms and with every norm served by the rmsnorm
// plugin, and reports decode tokens per second.
func BenchmarkDecodeStories260K(b *testing.B) {
	modelPath := filepath.Join(sharedDir(b), "models", "stories260K", "stories260K.gguf")
	for _, bc := range []struct{ name, spec string }{
		{"builtin", ""},
		{"plugin", exampleSpec(b, "llama-plugin-norm.yaml")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, _ := newHost(b, Options{})
			m, err := model.Load(model.Options{Path: modelPath, Spec: bc.spec, Plugins: h})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 64})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			prompt := []int{1, 403, 407, 261, 378}
			var decode time.Duration
			tokens := 0
			b.ResetTimer()
			for range b.N {
				var first time.Time
				toks, err := eng.Generate(context.Background(), scheduler.Request{Prompt: prompt, MaxTokens: 64, Sampler: greedy{}},
					func(ev scheduler.TokenEvent) {
						if ev.Index == 0 {
							first = time.Now()
						}
					})
				if err != nil {
					b.Fatal(err)
				}
				decode += time.Since(first)
				tokens += len(toks) - 1
			}
			b.ReportMetric(float64(tokens)/decode.Seconds(), "decode-tok/s")
		})
	}
}
