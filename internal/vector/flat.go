// Package vector is shirube's exact vector store: a flat (brute-force) index
// of L2-normalised float32 vectors searched by cosine similarity.
//
// Exact search over every vector is reproducible — the same store and query
// always give the same hits in the same order — which an approximate graph
// index cannot promise. A search runs in two passes. The first scores every
// vector cheaply, split across GOMAXPROCS goroutines, and keeps a small
// candidate pool together with an upper bound on each vector's exact score.
// The second re-scores the candidates exactly (float32 products summed in
// float64, in a fixed order), then re-scores every other vector whose bound
// still reaches the n-th exact score. The result is therefore always
// identical to exhaustive exact search, ties broken by ascending id.
//
// From quantMinRows vectors on, the first pass reads int8 codes — one byte
// per dimension instead of four, with an AVX-512 or AVX2 kernel on amd64
// and a portable one elsewhere — and bounds each estimate by the row's
// quantisation error (quant.go). Below that the first pass is a float32
// matrix–vector product (gonum's SIMD kernels), bounded by float32
// rounding: at most γ_d = d·u/(1−d·u) for unit vectors, u = 2⁻²⁴. The scan
// is memory-bound, so the int8 pass is about four times lighter on memory
// bandwidth; its cost is 25 % more memory for the codes, computed as rows
// are added or, for a loaded store, in the background from its second
// large search on (the file format is unchanged).
package vector

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// MaxDim is the largest dimension Flat accepts; it guards readers against
// corrupt headers and callers against accidental huge allocations.
const MaxDim = 1 << 16

// Hit is one search result: the id Add returned and the cosine similarity
// (the dot product of the normalised vectors), in [-1, 1].
type Hit struct {
	ID    int
	Score float64
}

// Flat is an exact vector store. Ids are dense: the i-th vector added has id
// i. Search may be called from many goroutines at once; Add takes a write
// lock, so adding while searching is safe but serialised.
type Flat struct {
	mu   sync.RWMutex
	dim  int
	n    int
	data []float32 // n×dim, row-major, each row L2-normalised (or all zero)

	// codes is the int8 form of data for the first pass of a search (see
	// quant.go), used from quantMin rows on. A store built with Add keeps
	// it up to date; a loaded store has none until its second large search
	// starts building it in the background (codesOnce), so loading stays as
	// cheap as before and a one-shot search never waits for it.
	codes      *codes
	codesOnce  sync.Once
	codesBuilt chan struct{} // closed when buildCodes has installed codes
	// largeSearches counts searches that wanted codes a loaded store did
	// not have yet.
	largeSearches atomic.Int32
	quantMin      int

	scratch  sync.Pool // *[]float32 of first-pass scores, reused across queries
	qscratch sync.Pool // *quantScratch, reused across queries
}

// NewFlat returns an empty store for vectors of dimension dim
// (1 ≤ dim ≤ MaxDim).
func NewFlat(dim int) (*Flat, error) {
	if dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("vector: dimension %d out of range: must be between 1 and %d", dim, MaxDim)
	}
	return newFlat(dim), nil
}

func newFlat(dim int) *Flat {
	return &Flat{dim: dim, quantMin: quantMinRows, codes: &codes{stride: codeStride(dim)}}
}

// Dim returns the vector dimension.
func (f *Flat) Dim() int { return f.dim }

// Len returns the number of vectors stored.
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.n
}

// Add stores a copy of vec, L2-normalised, and returns its id. A zero vector
// is stored as zero and scores 0 against every query. It fails if vec has the
// wrong dimension or holds NaN or ±Inf.
func (f *Flat) Add(vec []float32) (int, error) {
	if len(vec) != f.dim {
		return 0, fmt.Errorf("vector: cannot add a %d-dimensional vector to a %d-dimensional store", len(vec), f.dim)
	}
	row, err := normalised(vec)
	if err != nil {
		return 0, fmt.Errorf("vector: cannot add: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.n
	f.data = append(f.data, row...)
	if f.codes != nil {
		f.codes.appendRow(row)
	}
	f.n++
	return id, nil
}

// Vector returns a copy of the stored (normalised) vector with the given id,
// or nil if there is none.
func (f *Flat) Vector(id int) []float32 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if id < 0 || id >= f.n {
		return nil
	}
	return slices.Clone(f.data[id*f.dim : (id+1)*f.dim])
}

// normalised returns a unit-length copy of v (or a zero copy if v is zero).
func normalised(v []float32) ([]float32, error) {
	var ss float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errors.New("vector holds NaN or Inf")
		}
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out, nil
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, nil
}

// Search returns the n vectors most similar to q (cosine), best first, ties
// broken by ascending id. The result equals exhaustive float32 search. It
// returns fewer than n hits if the store holds fewer vectors, and an error if
// q has the wrong dimension or holds NaN or ±Inf.
func (f *Flat) Search(q []float32, n int) ([]Hit, error) {
	hits, _, err := f.search(q, n)
	return hits, err
}

// searchStats describes how one search went, for tests and benchmarks.
type searchStats struct {
	quant    bool    // the int8 first pass ran
	pool     []int32 // the first pass's candidates (ids, any order)
	rescored int     // rows re-scored exactly beyond the candidates
}

func (f *Flat) search(q []float32, n int) ([]Hit, searchStats, error) {
	if len(q) != f.dim {
		return nil, searchStats{}, fmt.Errorf("vector: cannot search a %d-dimensional store with a %d-dimensional query", f.dim, len(q))
	}
	qv, err := normalised(q)
	if err != nil {
		return nil, searchStats{}, fmt.Errorf("vector: cannot search: %w", err)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	total := f.n
	n = min(n, total)
	if n <= 0 {
		return nil, searchStats{}, nil
	}
	pool := n + 32
	if pool >= total {
		// Small store: exact scoring of everything is cheapest.
		hits := make([]Hit, total)
		for i := range total {
			hits[i] = Hit{ID: i, Score: f.exact(qv, i)}
		}
		return topN(hits, n), searchStats{}, nil
	}
	if total >= f.quantMin {
		if f.codes != nil {
			hits, st := f.searchQuant(qv, n, pool)
			return hits, st, nil
		}
		// The second large search starts the build: a one-shot search
		// (`shirube search`) exits before it would pay off.
		if f.largeSearches.Add(1) >= 2 {
			f.codesOnce.Do(func() { go f.buildCodes() })
		}
	}

	approxPtr, _ := f.scratch.Get().(*[]float32)
	if approxPtr == nil || cap(*approxPtr) < total {
		s := make([]float32, total)
		approxPtr = &s
	}
	approx := (*approxPtr)[:total]
	defer f.scratch.Put(approxPtr)

	// Pass 1: float32 scores of all vectors, split across goroutines; each
	// worker keeps its own top-pool heap.
	workers := min(runtime.GOMAXPROCS(0), max(1, total/8192))
	heaps := make([]minHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := total*w/workers, total*(w+1)/workers
		wg.Go(func() {
			heaps[w] = f.scan(qv, lo, hi, pool, approx)
		})
	}
	wg.Wait()
	// Any vector whose first-pass score is within the rounding bound of the
	// n-th exact score could still belong to the result (or tie into it).
	hits, st := f.rescore(qv, n, heaps, approx, roundingBound(f.dim))
	return hits, st, nil
}

// rescore finishes a two-pass search. Pass 2 re-scores the first pass's
// candidates (the workers' heaps) exactly; pass 3 re-scores every other row
// whose first-pass bound, bound[id] + slack, still reaches the n-th exact
// score, so the result equals exhaustive exact search.
func (f *Flat) rescore(qv []float32, n int, heaps []minHeap, bound []float32, slack float64) ([]Hit, searchStats) {
	size := 0
	for _, h := range heaps {
		size += len(h)
	}
	st := searchStats{pool: make([]int32, 0, size)}
	cand := make([]Hit, 0, size)
	for _, h := range heaps {
		for _, e := range h {
			cand = append(cand, Hit{ID: int(e.id)})
			st.pool = append(st.pool, e.id)
		}
	}
	slices.SortFunc(cand, func(a, b Hit) int { return a.ID - b.ID })
	for i := range cand {
		cand[i].Score = f.exact(qv, cand[i].ID)
	}
	best := topN(slices.Clone(cand), n)
	threshold := float32(best[len(best)-1].Score - slack)
	// float32 rounding of the threshold must not exclude a row: step down
	// one unit in the last place.
	threshold = math.Nextafter32(threshold, float32(math.Inf(-1)))

	extra := best
	c := 0
	for id, b := range bound[:f.n] {
		if c < len(cand) && cand[c].ID == id {
			c++
			continue
		}
		if b >= threshold {
			extra = append(extra, Hit{ID: id, Score: f.exact(qv, id)})
			st.rescored++
		}
	}
	return topN(extra, n), st
}

// roundingBound bounds |float32 dot − exact dot| for two vectors of norm at
// most 1 in dimension d, whatever the summation order: γ_d = d·u/(1−d·u)
// with u = 2⁻²⁴ (Higham, Accuracy and Stability, §3.1), doubled for the
// float32 rounding of the result and padded for the comparison itself.
func roundingBound(d int) float64 {
	const u = 1.0 / (1 << 24)
	du := float64(d+2) * u
	return 2*du/(1-du) + 1e-9
}

// scan scores vectors [lo, hi) in float32 with one matrix–vector product
// (one SIMD dot product per row, no per-row call overhead), writes the
// scores into approx and returns the pool best.
func (f *Flat) scan(q []float32, lo, hi, pool int, approx []float32) minHeap {
	d := f.dim
	rows := blas32.General{Rows: hi - lo, Cols: d, Stride: d, Data: f.data[lo*d : hi*d]}
	blas32.Gemv(blas.NoTrans, 1, rows, blas32.Vector{N: d, Inc: 1, Data: q}, 0, blas32.Vector{N: hi - lo, Inc: 1, Data: approx[lo:hi]})
	h := make(minHeap, 0, pool)
	for i := lo; i < hi; i++ {
		s := approx[i]
		if len(h) < pool {
			h.push(entry{s, int32(i)})
		} else if s > h[0].score {
			h.replaceTop(entry{s, int32(i)})
		}
	}
	return h
}

// exact is the float32 dot product of q and row id, accumulated in float64
// in index order so the score is reproducible.
func (f *Flat) exact(q []float32, id int) float64 {
	row := f.data[id*f.dim : (id+1)*f.dim]
	row = row[:len(q)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += float64(q[i]) * float64(row[i])
		s1 += float64(q[i+1]) * float64(row[i+1])
		s2 += float64(q[i+2]) * float64(row[i+2])
		s3 += float64(q[i+3]) * float64(row[i+3])
	}
	for ; i < len(q); i++ {
		s0 += float64(q[i]) * float64(row[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// topN sorts hits by score descending, id ascending, and keeps the first n.
func topN(hits []Hit, n int) []Hit {
	slices.SortFunc(hits, compareHits)
	hits = slices.CompactFunc(hits, func(a, b Hit) bool { return a.ID == b.ID })
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

func compareHits(a, b Hit) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return a.ID - b.ID
}

// entry is a candidate of the first pass.
type entry struct {
	score float32
	id    int32
}

// minHeap keeps the best entries seen so far with the worst at the root.
type minHeap []entry

func (h *minHeap) push(e entry) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(s[i], s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h minHeap) replaceTop(e entry) {
	h[0] = e
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// less orders the heap: lower score first; on equal score the higher id is
// worse, so lower ids survive.
func less(a, b entry) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}
