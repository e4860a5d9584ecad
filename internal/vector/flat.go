// Package vector is shirube's exact vector store: a flat (brute-force) index
// of L2-normalised float32 vectors searched by cosine similarity.
//
// Exact search over every vector is reproducible — the same store and query
// always give the same hits in the same order — which an approximate graph
// index cannot promise. A search runs in two passes. The first scores every
// vector cheaply and keeps, beside an upper bound on each vector's exact
// score, a small candidate pool. The scan is split into parts of at least
// 8,192 vectors (16,384 for the int8 pass), at most GOMAXPROCS of them; a
// store with a single part is scanned by the calling goroutine alone, which
// then picks the candidates from a histogram of the estimates; otherwise
// each part runs in its own goroutine (the caller taking one) and keeps
// its best candidates above a rising threshold. The second re-scores the
// candidates exactly (float32 products summed in float64 in a fixed order,
// by an AVX2 kernel that reproduces the portable loop bit for bit), then
// re-scores every other vector whose bound still reaches the n-th exact
// score. The result is therefore always identical to exhaustive exact
// search, ties broken by ascending id. A search allocates only its result;
// its working memory is pooled.
//
// From quantMinRows vectors on, the first pass reads int8 codes — one byte
// per dimension instead of four, with an AVX-512 or AVX2 kernel on amd64
// and a portable one elsewhere — and bounds each estimate by the row's
// quantisation error (quant.go). Below that the first pass is a float32
// dot product per row (AVX-512 or AVX2 FMA kernels, gonum's elsewhere),
// bounded by float32 rounding: at most γ_d = d·u/(1−d·u) for unit vectors,
// u = 2⁻²⁴, in any summation order. The scan is memory-bound, so the int8
// pass is about four times lighter on memory bandwidth; its cost is 25 %
// more memory for the codes, computed as rows are added or, for a loaded
// store, in the background from its second large search on (the file
// format is unchanged). On the peers benchmark's 1,145 × 256 store the
// float32 pass is the faster one, on 5,183 × 256 the int8 one.
package vector

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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

	scratch sync.Pool // *scratch, reused across queries
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
	out := make([]float32, len(v))
	if err := normaliseInto(out, v); err != nil {
		return nil, err
	}
	return out, nil
}

// normaliseInto writes v scaled to unit length (or zeros if v is zero) into
// out, which has v's length.
func normaliseInto(out, v []float32) error {
	var ss float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("vector holds NaN or Inf")
		}
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		clear(out)
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return nil
}

// Search returns the n vectors most similar to q (cosine), best first, ties
// broken by ascending id. The result equals exhaustive float32 search. It
// returns fewer than n hits if the store holds fewer vectors, and an error if
// q has the wrong dimension or holds NaN or ±Inf.
func (f *Flat) Search(q []float32, n int) ([]Hit, error) {
	return f.searchStats(q, n, nil)
}

// searchStats describes how one search went, for tests and benchmarks.
type searchStats struct {
	quant    bool    // the int8 first pass ran
	pool     []int32 // the first pass's candidates (ids)
	rescored int     // rows re-scored exactly beyond the candidates
}

// search is Search with its statistics.
func (f *Flat) search(q []float32, n int) ([]Hit, searchStats, error) {
	var st searchStats
	hits, err := f.searchStats(q, n, &st)
	return hits, st, err
}

// scratch is the memory of one search, reused across searches (a query
// allocates only its result).
type scratch struct {
	q     []float32 // the normalised query
	q64   []float64 // q widened, for the exact kernel
	u     []int16   // q quantised, for the int8 kernel
	bound []float32 // per row: the first pass's estimate or upper bound
	est   []float32 // per row: the int8 pass's estimate (one worker)
	hist  [histBuckets]int32
	cands []entry     // the first pass's candidates (one worker)
	cols  []collector // per worker: the first pass's candidates
	ids   []int32     // candidates, then rows re-scored beyond them
	exact []float64   // their exact scores
	hits  []Hit
}

// grow returns s resliced to n elements, reallocated if too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// searchStats runs a search and, if st is not nil, records how it went.
func (f *Flat) searchStats(q []float32, n int, st *searchStats) ([]Hit, error) {
	if len(q) != f.dim {
		return nil, fmt.Errorf("vector: cannot search a %d-dimensional store with a %d-dimensional query", f.dim, len(q))
	}
	sc, _ := f.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer f.scratch.Put(sc)
	sc.q = grow(sc.q, f.dim)
	if err := normaliseInto(sc.q, q); err != nil {
		return nil, fmt.Errorf("vector: cannot search: %w", err)
	}
	qv := sc.q
	sc.q64 = grow(sc.q64, f.dim)
	for j, x := range qv {
		sc.q64[j] = float64(x)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	total := f.n
	n = min(n, total)
	if n <= 0 {
		return nil, nil
	}
	pool := n + 32
	if pool >= total {
		// Small store: exact scoring of everything is cheapest.
		sc.ids = grow(sc.ids, total)
		for i := range sc.ids {
			sc.ids[i] = int32(i)
		}
		return f.finish(sc, n, 0, nil, 0, st), nil
	}
	quant := false
	if total >= f.quantMin {
		if f.codes != nil {
			quant = true
		} else if f.largeSearches.Add(1) >= 2 {
			// The second large search starts the build: a one-shot search
			// (`shirube search`) exits before it would pay off.
			f.codesOnce.Do(func() { go f.buildCodes() })
		}
	}

	// Pass 1: an estimate of every row's score with a bound on its error.
	// A store small enough for one worker keeps every estimate and picks
	// its candidates afterwards (topByHistogram); a larger one is split
	// across goroutines (the calling one among them), each keeping its
	// best candidates as it goes (collector).
	sc.bound = grow(sc.bound, total)
	bound := sc.bound
	est := bound // the float32 pass's bound is its estimate plus a constant
	var scan func(lo, hi int, c *collector)
	var slack float64
	workers := min(runtime.GOMAXPROCS(0), max(1, total/8192))
	if quant {
		sc.u = grow(sc.u, f.codes.stride)
		t, resid := quantQuery(qv, sc.u, f.codes.maxNorm)
		workers = min(runtime.GOMAXPROCS(0), max(1, total/16384))
		if workers == 1 {
			sc.est = grow(sc.est, total)
			est = sc.est
		}
		scan = func(lo, hi int, c *collector) { f.scanQuant(sc.u, t, resid, lo, hi, est, bound, c) }
	} else {
		// Any row whose estimate is within the rounding bound of the n-th
		// exact score could still belong to the result (or tie into it).
		// The bound is tight, so few candidates beyond n are needed.
		slack = roundingBound(f.dim)
		pool = n + 8
		scan = func(lo, hi int, c *collector) { f.scan(qv, lo, hi, bound, c) }
	}
	var cands []entry
	if workers == 1 {
		scan(0, total, nil)
		cands = topByHistogram(est, pool, sc.cands[:0], &sc.hist)
		sc.cands = cands
	} else {
		sc.cols = grow(sc.cols, workers)
		for w := range sc.cols {
			sc.cols[w].reset(pool)
		}
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			lo, hi := total*w/workers, total*(w+1)/workers
			wg.Go(func() { scan(lo, hi, &sc.cols[w]) })
		}
		scan(0, total/workers, &sc.cols[0])
		wg.Wait()
		cands = sc.cols[0].buf
		for _, c := range sc.cols[1:] {
			cands = append(cands, c.buf...)
		}
		sc.cols[0].buf = cands[:0]
	}
	if len(cands) > pool {
		selectTop(cands, pool)
		cands = cands[:pool]
	}
	// The candidates are scored exactly; their bounds are no longer
	// needed and are set below any threshold, so the pass after them
	// skips them.
	sc.ids = grow(sc.ids, len(cands))
	for i, e := range cands {
		sc.ids[i] = e.id
		bound[e.id] = float32(math.Inf(-1))
	}
	if st != nil {
		st.quant = quant
	}
	return f.finish(sc, n, len(sc.ids), bound, slack, st), nil
}

// finish scores the candidates sc.ids exactly and returns the n best. If
// bound is not nil it then also re-scores every other row (the candidates'
// bounds are −∞) whose first-pass bound, bound[id] + slack, still reaches the
// n-th exact score, so the result equals exhaustive exact search: a row
// of the true top n scores at least that n-th score (the candidates hold n
// rows scoring at least that much), so its bound reaches it too.
func (f *Flat) finish(sc *scratch, n, npool int, bound []float32, slack float64, st *searchStats) []Hit {
	ids := sc.ids
	sc.exact = grow(sc.exact, len(ids))
	exactDots(sc.q64, f.data, ids, sc.exact)
	hits := sc.hits[:0]
	for i, id := range ids {
		hits = append(hits, Hit{ID: int(id), Score: sc.exact[i]})
	}
	sortHits(hits)
	if st != nil {
		st.pool = slices.Clone(ids[:npool])
	}
	if bound != nil {
		threshold := float32(hits[n-1].Score - slack)
		// float32 rounding of the threshold must not exclude a row: step
		// down one unit in the last place.
		threshold = math.Nextafter32(threshold, float32(math.Inf(-1)))
		for id, b := range bound {
			if b >= threshold {
				ids = append(ids, int32(id))
			}
		}
		if extra := ids[npool:]; len(extra) > 0 {
			sc.exact = grow(sc.exact, len(ids))
			exactDots(sc.q64, f.data, extra, sc.exact[npool:])
			for i, id := range extra {
				hits = append(hits, Hit{ID: int(id), Score: sc.exact[npool+i]})
			}
			sortHits(hits)
			if st != nil {
				st.rescored = len(extra)
			}
		}
		sc.ids = ids
	}
	sc.hits = hits
	return slices.Clone(hits[:n])
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

// scanBlock is how many rows a first-pass kernel scores per call: their
// estimates are still in L1 when the candidates are picked from them.
const scanBlock = 256

// scan scores rows [lo, hi) in float32 (one SIMD dot product per row),
// writes the estimates into approx and, if c is not nil, offers them to c.
func (f *Flat) scan(q []float32, lo, hi int, approx []float32, c *collector) {
	d := f.dim
	if c == nil {
		dotsF32(q, f.data[lo*d:hi*d], approx[lo:hi])
		return
	}
	for b := lo; b < hi; b += scanBlock {
		e := min(b+scanBlock, hi)
		out := approx[b:e]
		dotsF32(q, f.data[b*d:e*d], out)
		for r, s := range out {
			c.offer(s, int32(b+r))
		}
	}
}

// histBuckets is the resolution of topByHistogram.
const histBuckets = 1024

// topByHistogram appends to out the entries of the k highest estimates —
// and those close enough to tie with the k-th, at most a histogram
// bucket's worth more: it counts the estimates in histBuckets buckets
// between their minimum and maximum and keeps every estimate from the
// bucket holding the k-th highest up. 0 < k ≤ len(est).
func topByHistogram(est []float32, k int, out []entry, hist *[histBuckets]int32) []entry {
	lo, hi := est[0], est[0]
	for _, x := range est {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if !(hi > lo) {
		// All equal (a zero query): any k are the k highest.
		for id, x := range est[:k] {
			out = append(out, entry{x, int32(id)})
		}
		return out
	}
	// (x−lo)·scale lies in [0, histBuckets−1] up to rounding; the mask
	// keeps a rounded-up top value in range.
	scale := float32(histBuckets-1) / (hi - lo)
	clear(hist[:])
	for _, x := range est {
		hist[uint32((x-lo)*scale)&(histBuckets-1)]++
	}
	b, cum := histBuckets-1, int32(0)
	for ; b > 0; b-- {
		if cum += hist[b]; int(cum) >= k {
			break
		}
	}
	// The estimates in bucket b and above, by value: the edge is the
	// smallest estimate that lands in bucket b.
	for id, x := range est {
		if uint32((x-lo)*scale)&(histBuckets-1) >= uint32(b) {
			out = append(out, entry{x, int32(id)})
		}
	}
	return out
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

// sortHits sorts hits by score descending, id ascending (ids distinct):
// quicksort with a median-of-three pivot, insertion sort for short runs,
// the comparison inlined.
func sortHits(h []Hit) {
	for len(h) > 12 {
		m, last := len(h)/2, len(h)-1
		if hitBefore(h[m], h[0]) {
			h[m], h[0] = h[0], h[m]
		}
		if hitBefore(h[last], h[0]) {
			h[last], h[0] = h[0], h[last]
		}
		if hitBefore(h[last], h[m]) {
			h[last], h[m] = h[m], h[last]
		}
		p := h[m]
		i, j := 0, last
		for i <= j {
			for hitBefore(h[i], p) {
				i++
			}
			for hitBefore(p, h[j]) {
				j--
			}
			if i <= j {
				h[i], h[j] = h[j], h[i]
				i++
				j--
			}
		}
		// Recurse into the shorter part, loop on the longer.
		if j+1 < len(h)-i {
			sortHits(h[:j+1])
			h = h[i:]
		} else {
			sortHits(h[i:])
			h = h[:j+1]
		}
	}
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && hitBefore(h[j], h[j-1]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// hitBefore reports whether a ranks before b: higher score, then lower id.
func hitBefore(a, b Hit) bool {
	return a.Score > b.Score || a.Score == b.Score && a.ID < b.ID
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

// collector keeps the best entries offered to it, for the first pass: it
// appends every entry that beats its threshold and, when its buffer is
// full, keeps only the best keep and raises the threshold to the worst of
// them. Which of several equal scores it keeps is left open; the exact
// passes after it do not depend on it.
type collector struct {
	buf  []entry
	keep int
	tau  float32 // entries must score above it
}

// collectorSlack is how many entries the buffer holds beyond keep, as a
// multiple of keep: more means fewer compactions but more entries offered
// before the threshold rises.
const collectorSlack = 3

// reset empties c for collecting the best keep entries.
func (c *collector) reset(keep int) {
	if cap(c.buf) < keep*(1+collectorSlack) {
		c.buf = make([]entry, 0, keep*(1+collectorSlack))
	}
	c.buf = c.buf[:0]
	c.keep = keep
	c.tau = float32(math.Inf(-1))
}

// offer adds an entry if it scores above the threshold.
func (c *collector) offer(score float32, id int32) {
	if score > c.tau {
		c.buf = append(c.buf, entry{score, id})
		if len(c.buf) == cap(c.buf) {
			c.compact()
		}
	}
}

// compact keeps the best keep entries and raises the threshold to the
// lowest of them.
func (c *collector) compact() {
	selectTop(c.buf, c.keep)
	c.buf = c.buf[:c.keep]
	tau := c.buf[0].score
	for _, e := range c.buf[1:] {
		tau = min(tau, e.score)
	}
	c.tau = tau
}

// selectTop reorders es so that es[:k] hold k entries of the highest
// scores (in no particular order); 0 < k ≤ len(es). It is quickselect
// with a median-of-three pivot and insertion sort for short ranges.
func selectTop(es []entry, k int) {
	lo, hi := 0, len(es)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		if es[mid].score > es[lo].score {
			es[mid], es[lo] = es[lo], es[mid]
		}
		if es[hi].score > es[lo].score {
			es[hi], es[lo] = es[lo], es[hi]
		}
		if es[hi].score > es[mid].score {
			es[hi], es[mid] = es[mid], es[hi]
		}
		// es[lo] ≥ es[mid] ≥ es[hi]: es[lo] and es[hi] stop the scans.
		p := es[mid].score
		i, j := lo, hi
		for i <= j {
			for es[i].score > p {
				i++
			}
			for es[j].score < p {
				j--
			}
			if i <= j {
				es[i], es[j] = es[j], es[i]
				i++
				j--
			}
		}
		// es[lo..j] ≥ p ≥ es[i..hi], and everything between equals p.
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
	for i := lo + 1; i <= hi; i++ {
		for j := i; j > lo && es[j].score > es[j-1].score; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
