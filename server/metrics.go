package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftrun/weft/scheduler"
)

// metrics are the server's Prometheus series, named as vLLM names them so
// that the Gateway API Inference Extension's endpoint picker (and llm-d)
// can read weft as a vLLM model server.
type metrics struct {
	waiting, running, kvUsage prometheus.Gauge
	cacheInfo                 *prometheus.GaugeVec
	ttft, itl, e2e, queue     prometheus.Observer
	promptTokens, genTokens   prometheus.Counter
	prefixQueries, prefixHits prometheus.Counter
	requests                  *prometheus.CounterVec
	// weft's own latency breakdown (not vLLM's): the handler's work
	// before a request is queued, each engine step by kind, and the time
	// from a token's step to its bytes being written to the client.
	prepare, delivery    prometheus.Observer
	stepTime, stepTokens *prometheus.HistogramVec
	// the engine's cumulative prefix counters at the last update
	lastLookups, lastHits int64
}

// latencyBuckets are vLLM's buckets for time to first token (seconds).
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}

// itlBuckets are vLLM's buckets for the inter-token latency (seconds).
var itlBuckets = []float64{0.001, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}

// requestBuckets are vLLM's buckets for end-to-end and queue time (seconds).
var requestBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}

func newMetrics(reg prometheus.Registerer, model string) *metrics {
	labels := prometheus.Labels{"model_name": model}
	f := func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c }
	gauge := func(name, help string) prometheus.Gauge {
		return f(prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})).(prometheus.Gauge)
	}
	counter := func(name, help string) prometheus.Counter {
		return f(prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})).(prometheus.Counter)
	}
	hist := func(name, help string, b []float64) prometheus.Observer {
		return f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: b, ConstLabels: labels})).(prometheus.Histogram)
	}
	m := &metrics{
		waiting:       gauge("vllm:num_requests_waiting", "Requests waiting to be processed."),
		running:       gauge("vllm:num_requests_running", "Requests in the engine (prefill or decode)."),
		kvUsage:       gauge("vllm:kv_cache_usage_perc", "KV cache usage: 1 means 100 percent of the budget."),
		ttft:          hist("vllm:time_to_first_token_seconds", "Time to first token, from the request's arrival.", latencyBuckets),
		itl:           hist("vllm:inter_token_latency_seconds", "Time between two generated tokens of a sequence.", itlBuckets),
		e2e:           hist("vllm:e2e_request_latency_seconds", "End-to-end request latency.", requestBuckets),
		queue:         hist("vllm:request_queue_time_seconds", "Time a request waited before entering the engine.", requestBuckets),
		promptTokens:  counter("vllm:prompt_tokens_total", "Prompt tokens processed."),
		genTokens:     counter("vllm:generation_tokens_total", "Tokens generated."),
		prefixQueries: counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache (whole blocks)."),
		prefixHits:    counter("vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache."),
	}
	m.cacheInfo = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "KV cache configuration.", ConstLabels: labels},
		[]string{"block_size", "num_gpu_blocks"})).(*prometheus.GaugeVec)
	m.prepare = hist("weft:request_prepare_seconds", "From a request's arrival to its submission: body parsing, chat template, tokenization.", latencyBuckets)
	m.delivery = hist("weft:token_delivery_seconds", "From the end of the engine step that made a token to its bytes being flushed to the client.", itlBuckets)
	m.stepTime = f(prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft:engine_step_seconds",
		Help: "Engine step time by kind: decode (generated tokens only), prefill (prompt tokens only) or mixed.", Buckets: itlBuckets, ConstLabels: labels},
		[]string{"kind"})).(*prometheus.HistogramVec)
	m.stepTokens = f(prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft:engine_step_tokens",
		Help: "Tokens in an engine step by kind (see weft:engine_step_seconds).", Buckets: prometheus.ExponentialBuckets(1, 2, 13), ConstLabels: labels},
		[]string{"kind"})).(*prometheus.HistogramVec)
	m.requests = f(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total", Help: "Finished requests by finish reason.", ConstLabels: labels},
		[]string{"finished_reason"})).(*prometheus.CounterVec)
	return m
}

// cacheConfig publishes the KV cache's block size (positions) and block
// count.
func (m *metrics) cacheConfig(blockSize, numBlocks int) {
	m.cacheInfo.WithLabelValues(strconv.Itoa(blockSize), strconv.Itoa(numBlocks)).Set(1)
}

// step records one engine step of decode generated and prompt prefilled
// tokens that took d.
func (m *metrics) step(decode, prompt int, d time.Duration) {
	kind := "mixed"
	switch {
	case prompt == 0:
		kind = "decode"
	case decode == 0:
		kind = "prefill"
	}
	m.stepTime.WithLabelValues(kind).Observe(d.Seconds())
	m.stepTokens.WithLabelValues(kind).Observe(float64(decode + prompt))
}

// update sets the gauges from the engine's counters; only the engine
// goroutine calls it.
func (m *metrics) update(st scheduler.Stats, waiting, running int) {
	m.waiting.Set(float64(waiting))
	m.running.Set(float64(running))
	if st.KVBudget > 0 {
		m.kvUsage.Set(float64(st.KVBytes) / float64(st.KVBudget))
	}
	// The engine counts whole prompt blocks; vLLM counts tokens.
	if d := st.PrefixLookups - m.lastLookups; d > 0 {
		m.prefixQueries.Add(float64(d * scheduler.BlockRows))
	}
	if d := st.PrefixHits - m.lastHits; d > 0 {
		m.prefixHits.Add(float64(d * scheduler.BlockRows))
	}
	m.lastLookups, m.lastHits = st.PrefixLookups, st.PrefixHits
}
