// Package stats summarises benchmark measurements: latency percentiles and
// heap usage.
//
// Percentiles use the nearest-rank method: with n samples sorted ascending,
// the p-th percentile is the sample at 1-based rank ⌈p/100 · n⌉ (rank 1 for
// p ≤ 0). It is always an observed value, never an interpolation, so P(100)
// is the maximum and, with 20 samples, P(95) is the 19th smallest.
package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Latencies records durations. The zero value is ready to use and it is safe
// for concurrent use, so parallel benchmark workers may share one.
type Latencies struct {
	mu     sync.Mutex
	d      []time.Duration
	sorted bool
}

// Add records one duration.
func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.sorted = false
	l.mu.Unlock()
}

// Time runs fn, records how long it took and returns that duration.
func (l *Latencies) Time(fn func()) time.Duration {
	start := time.Now()
	fn()
	d := time.Since(start)
	l.Add(d)
	return d
}

// Len returns the number of recorded durations.
func (l *Latencies) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.d)
}

// P returns the nearest-rank p-th percentile (0 ≤ p ≤ 100; values outside
// are clamped) or 0 when nothing was recorded.
func (l *Latencies) P(p float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.percentile(p)
}

func (l *Latencies) percentile(p float64) time.Duration {
	n := len(l.d)
	if n == 0 {
		return 0
	}
	if !l.sorted {
		slices.Sort(l.d)
		l.sorted = true
	}
	if math.IsNaN(p) || p <= 0 {
		return l.d[0]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return l.d[min(max(rank, 1), n)-1]
}

// Mean returns the arithmetic mean, or 0 when nothing was recorded.
func (l *Latencies) Mean() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mean()
}

func (l *Latencies) mean() time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	// Summing in float64 cannot overflow, unlike int64 nanoseconds.
	var sum float64
	for _, d := range l.d {
		sum += float64(d)
	}
	return time.Duration(sum / float64(len(l.d)))
}

// Summary is a snapshot of a Latencies. It marshals to JSON in milliseconds:
// {"n":…, "mean_ms":…, "p50_ms":…, "p95_ms":…, "p99_ms":…, "max_ms":…}.
type Summary struct {
	N                        int
	Mean, P50, P95, P99, Max time.Duration
}

// Summary returns the count, mean, P50, P95, P99 and maximum.
func (l *Latencies) Summary() Summary {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Summary{
		N:    len(l.d),
		Mean: l.mean(),
		P50:  l.percentile(50),
		P95:  l.percentile(95),
		P99:  l.percentile(99),
		Max:  l.percentile(100),
	}
}

// Ms converts d to fractional milliseconds, the unit benchmark reports use.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MarshalJSON writes the summary with millisecond fields.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N      int     `json:"n"`
		MeanMs float64 `json:"mean_ms"`
		P50Ms  float64 `json:"p50_ms"`
		P95Ms  float64 `json:"p95_ms"`
		P99Ms  float64 `json:"p99_ms"`
		MaxMs  float64 `json:"max_ms"`
	}{s.N, Ms(s.Mean), Ms(s.P50), Ms(s.P95), Ms(s.P99), Ms(s.Max)})
}

// String formats the summary for humans, e.g.
// "n=300 mean=1.2ms p50=1.1ms p95=2ms p99=3.4ms max=5ms".
func (s Summary) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	return fmt.Sprintf("n=%d mean=%v p50=%v p95=%v p99=%v max=%v",
		s.N, r(s.Mean), r(s.P50), r(s.P95), r(s.P99), r(s.Max))
}

// Mem is a subset of runtime.MemStats relevant to benchmark reports, in
// bytes.
type Mem struct {
	// HeapInUse is bytes in in-use heap spans: live objects plus
	// fragmentation, the best single figure for "how big is the index".
	HeapInUse uint64 `json:"heap_inuse_bytes"`
	// HeapAlloc is bytes of allocated heap objects (live and not yet swept).
	HeapAlloc uint64 `json:"heap_alloc_bytes"`
	// TotalAlloc is cumulative bytes allocated, which only grows; the
	// difference of two readings is the allocation volume in between.
	TotalAlloc uint64 `json:"total_alloc_bytes"`
	// Sys is the memory obtained from the OS.
	Sys uint64 `json:"sys_bytes"`
}

// ReadMem reads the current memory statistics without forcing a GC.
func ReadMem() Mem {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Mem{HeapInUse: ms.HeapInuse, HeapAlloc: ms.HeapAlloc, TotalAlloc: ms.TotalAlloc, Sys: ms.Sys}
}

// SettledMem runs the garbage collector twice (the second pass frees what
// finalizers released) and then reads the statistics, so HeapInUse reflects
// live data. Call it before and after building a structure and subtract the
// HeapInUse figures to estimate the structure's size; keep the structure
// reachable (e.g. with runtime.KeepAlive) until the second reading.
func SettledMem() Mem {
	runtime.GC()
	runtime.GC()
	return ReadMem()
}

// HeapGrowth returns after.HeapInUse − before.HeapInUse, or 0 if the heap
// shrank.
func HeapGrowth(before, after Mem) uint64 {
	if after.HeapInUse < before.HeapInUse {
		return 0
	}
	return after.HeapInUse - before.HeapInUse
}

// MiB converts bytes to mebibytes.
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }
