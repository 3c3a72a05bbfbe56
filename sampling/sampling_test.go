package sampling

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGreedy(t *testing.T) {
	for _, tc := range []struct {
		logits []float32
		want   int
	}{
		{[]float32{0, 1, 2}, 2},
		{[]float32{5, 1, 5}, 0},
		{[]float32{-3, -1, -2}, 1},
	} {
		if got := Greedy(tc.logits); got != tc.want {
			t.Errorf("Greedy(%v) = %d, want %d", tc.logits, got, tc.want)
		}
	}
}

// The empirical distribution must match the softmax written out here.
func TestTemperatureDistribution(t *testing.T) {
	logits := []float32{1, 2, 3, 0.5}
	temp := 0.7
	s, _ := New(Config{Temperature: temp, Seed: 1})
	counts := make([]int, len(logits))
	const n = 200000
	for i := 0; i < n; i++ {
		counts[s.Sample(logits)]++
	}
	var z float64
	for _, l := range logits {
		z += math.Exp(float64(l) / temp)
	}
	for i, l := range logits {
		want := math.Exp(float64(l)/temp) / z
		got := float64(counts[i]) / n
		if math.Abs(got-want) > 0.005 {
			t.Errorf("token %d: frequency %.4f, softmax %.4f", i, got, want)
		}
	}
}

func TestFilters(t *testing.T) {
	// probabilities at T=1: softmax of ln(p) = p
	probs := []float64{0.5, 0.25, 0.15, 0.1}
	logits := make([]float32, len(probs))
	for i, p := range probs {
		logits[i] = float32(math.Log(p))
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		allowed []bool
	}{
		{"top-k 2", Config{Temperature: 1, TopK: 2}, []bool{true, true, false, false}},
		{"top-p 0.7", Config{Temperature: 1, TopP: 0.7}, []bool{true, true, false, false}},
		{"top-p 0.8", Config{Temperature: 1, TopP: 0.8}, []bool{true, true, true, false}},
		{"min-p 0.4", Config{Temperature: 1, MinP: 0.4}, []bool{true, true, false, false}},
	} {
		s, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, len(probs))
		for i := 0; i < 5000; i++ {
			seen[s.Sample(logits)] = true
		}
		for i := range seen {
			if seen[i] != tc.allowed[i] {
				t.Errorf("%s: token %d sampled=%v, want %v", tc.name, i, seen[i], tc.allowed[i])
			}
		}
	}
}

func TestSeedReproducible(t *testing.T) {
	logits := []float32{1, 1.1, 0.9, 1.05, 0.3}
	draw := func(seed uint64) []int {
		s, _ := New(Config{Temperature: 1, Seed: seed})
		out := make([]int, 50)
		for i := range out {
			out[i] = s.Sample(logits)
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	same := func(x, y []int) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("same seed gave different draws")
	}
	if same(a, c) {
		t.Error("different seeds gave identical draws")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{{Temperature: -1}, {TopK: -1}, {TopP: 1.5}, {MinP: -0.1}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

// Temperature applies after the filters (llama.cpp's order): with top-p
// 0.7 the candidate set is decided on the T=1 distribution, so even a huge
// temperature cannot bring back the pruned tokens.
func TestTemperatureAfterFilters(t *testing.T) {
	probs := []float64{0.5, 0.25, 0.15, 0.1}
	logits := make([]float32, len(probs))
	for i, p := range probs {
		logits[i] = float32(math.Log(p))
	}
	s, _ := New(Config{Temperature: 100, TopP: 0.7, Seed: 3})
	for i := 0; i < 2000; i++ {
		if tok := s.Sample(logits); tok > 1 {
			t.Fatalf("token %d survived top-p 0.7", tok)
		}
	}
}

func vocabLogits(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	return l
}

func TestSampleAllocs(t *testing.T) {
	logits := vocabLogits(32000)
	for _, cfg := range []Config{
		{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1},
	} {
		s, _ := New(cfg)
		s.Sample(logits)
		if a := testing.AllocsPerRun(20, func() { s.Sample(logits) }); a != 0 {
			t.Errorf("%+v: %.0f allocations per token", cfg, a)
		}
	}
}

func BenchmarkSample32k(b *testing.B) {
	logits := vocabLogits(32000)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"llama.cpp-defaults", Config{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05}},
		{"top-p-only", Config{Temperature: 1, TopP: 0.9}},
		{"temperature-only", Config{Temperature: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := New(tc.cfg)
			for b.Loop() {
				s.Sample(logits)
			}
		})
	}
}
