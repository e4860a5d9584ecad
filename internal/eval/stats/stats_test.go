package stats

import (
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestPercentilesNearestRank(t *testing.T) {
	// 1..20 ms, added in reverse so sorting is exercised.
	var l Latencies
	for i := 20; i >= 1; i-- {
		l.Add(ms(i))
	}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{-5, ms(1)},  // clamped to the minimum
		{0, ms(1)},   // minimum
		{5, ms(1)},   // ⌈0.05·20⌉ = 1
		{5.1, ms(2)}, // ⌈1.02⌉ = 2
		{50, ms(10)}, // ⌈10⌉ = 10
		{51, ms(11)}, // ⌈10.2⌉ = 11
		{95, ms(19)}, // ⌈19⌉ = 19
		{99, ms(20)}, // ⌈19.8⌉ = 20
		{100, ms(20)},
		{250, ms(20)}, // clamped to the maximum
	}
	for _, tt := range tests {
		if got := l.P(tt.p); got != tt.want {
			t.Errorf("P(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	// mean of 1..20 = 10.5 ms
	if got := l.Mean(); got != 10500*time.Microsecond {
		t.Errorf("Mean = %v, want 10.5ms", got)
	}
	// Adding after a percentile read must re-sort.
	l.Add(0)
	if got := l.P(0); got != 0 {
		t.Errorf("P(0) after Add(0) = %v, want 0", got)
	}
}

func TestSmallSamples(t *testing.T) {
	var empty Latencies
	if empty.P(50) != 0 || empty.Mean() != 0 || empty.Len() != 0 {
		t.Error("empty Latencies must report zeros")
	}
	var one Latencies
	one.Add(ms(7))
	for _, p := range []float64{0, 50, 99, 100} {
		if got := one.P(p); got != ms(7) {
			t.Errorf("single sample P(%v) = %v, want 7ms", p, got)
		}
	}
	// Three samples 1, 2, 100: P50 = ⌈1.5⌉ = 2nd, P95/P99 = ⌈2.85⌉/⌈2.97⌉ = 3rd.
	var three Latencies
	for _, n := range []int{100, 1, 2} {
		three.Add(ms(n))
	}
	s := three.Summary()
	want := Summary{N: 3, Mean: ms(103) / 3, P50: ms(2), P95: ms(100), P99: ms(100), Max: ms(100)}
	if s != want {
		t.Errorf("Summary = %+v, want %+v", s, want)
	}
}

func TestSummaryJSONAndString(t *testing.T) {
	s := Summary{N: 2, Mean: 1500 * time.Microsecond, P50: ms(1), P95: ms(2), P99: ms(2), Max: ms(2)}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"n":2,"mean_ms":1.5,"p50_ms":1,"p95_ms":2,"p99_ms":2,"max_ms":2}`
	if string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	if got, want := s.String(), "n=2 mean=1.5ms p50=1ms p95=2ms p99=2ms max=2ms"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestConcurrentAdd(t *testing.T) {
	var l Latencies
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 250; i++ {
				l.Add(ms(i))
				_ = l.P(50)
			}
		}()
	}
	wg.Wait()
	if l.Len() != 1000 {
		t.Fatalf("Len = %d, want 1000", l.Len())
	}
	// Each of 1..250 appears 4 times: rank 500 is value 125.
	if got := l.P(50); got != ms(125) {
		t.Errorf("P50 = %v, want 125ms", got)
	}
}

func TestTimeRecords(t *testing.T) {
	var l Latencies
	d := l.Time(func() {})
	if l.Len() != 1 || l.P(100) != d || d < 0 {
		t.Errorf("Time recorded %v, Len %d", d, l.Len())
	}
}

func TestMem(t *testing.T) {
	before := SettledMem()
	buf := make([]byte, 8<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after := SettledMem()
	runtime.KeepAlive(buf)
	if g := HeapGrowth(before, after); g < 8<<20 {
		t.Errorf("heap growth %d after keeping 8 MiB alive, want ≥ %d", g, 8<<20)
	}
	if HeapGrowth(after, before) != 0 {
		t.Error("HeapGrowth must clamp a shrink to 0")
	}
	if after.TotalAlloc < before.TotalAlloc || after.Sys == 0 {
		t.Errorf("implausible stats: before %+v after %+v", before, after)
	}
	if MiB(3<<20) != 3 {
		t.Errorf("MiB(3 MiB) = %v", MiB(3<<20))
	}
	if Ms(1500*time.Microsecond) != 1.5 {
		t.Error("Ms(1.5ms) != 1.5")
	}
}
