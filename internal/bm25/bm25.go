// Package bm25 is an in-memory Okapi BM25 inverted index over analyzed terms.
//
// # Scoring
//
// For a query q and a document d of length |d| (in terms), with avgdl the
// mean document length over the index,
//
//	score(q, d) = Σ_{t ∈ q} w(t) · idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//
// idf is Lucene's non-negative variant (since Lucene 8, also Anserini):
//
//	idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
//
// where N is the number of documents and n(t) the number containing t. Unlike
// the classic Robertson–Spärck Jones form (which rank-bm25 uses and which
// turns negative for terms in more than half the documents) it is always
// positive, so a matching term never lowers a score.
//
// w(t) is 1 for each distinct query term unless [Params.QueryTF] is set, in
// which case it is the number of times t occurs in the query (what rank-bm25
// and Lucene's BooleanQuery do with duplicated clauses). Distinct terms were
// measured to be at least as good on JSQuAD and SciFact (see the analysis
// package's evaluation) and are the default.
//
// # Absolute evidence
//
// Because tf/(tf + k1·norm) < 1, no document can score more than
// [Index.UpperBound] = Σ w(t)·idf(t)·(k1+1) over the query terms present in
// the vocabulary. score/UpperBound is therefore in [0, 1) and comparable
// across queries and index sizes, unlike max-normalisation over a result
// list (which always gives the top hit 1.0, however poor).
//
// # Concurrency and persistence
//
// A [Builder] is single-goroutine. [Builder.Build] returns an immutable
// [Index] that is safe for concurrent searches. [Index.WriteTo] and
// [ReadIndex] persist it in a compact checksummed binary format (see
// format.go).
package bm25

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Params are the BM25 free parameters.
type Params struct {
	K1 float64 // term-frequency saturation, ≥ 0 (default 1.2)
	B  float64 // length normalisation, in [0, 1] (default 0.75)
	// QueryTF weights each query term by its count in the query instead of
	// counting it once.
	QueryTF bool
}

// Default BM25 parameters (Robertson et al.; Lucene and Anserini defaults).
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// DefaultParams returns k1 = 1.2, b = 0.75, distinct query terms.
func DefaultParams() Params { return Params{K1: DefaultK1, B: DefaultB} }

// Validate reports whether p is usable.
func (p Params) Validate() error {
	if !(p.K1 >= 0) || math.IsInf(p.K1, 0) {
		return fmt.Errorf("bm25: k1 = %v, want a finite value ≥ 0", p.K1)
	}
	if !(p.B >= 0 && p.B <= 1) {
		return fmt.Errorf("bm25: b = %v, want 0 ≤ b ≤ 1", p.B)
	}
	return nil
}

// Hit is one search result: a document id as returned by [Builder.Add] and
// its BM25 score.
type Hit struct {
	Doc   int
	Score float64
}

// Builder accumulates documents for an [Index].
type Builder struct {
	p      Params
	vocab  map[string]int32
	terms  []string
	post   [][]byte // per term: its postings, encoded as the Index keeps them (appendPostings)
	df     []uint32 // per term: documents so far
	last   []uint32 // per term: the last document added
	docLen []uint32
	count  map[int32]int // scratch for Add
	order  []int32       // scratch for Add: term ids in first-seen order
}

// NewBuilder returns an empty Builder. Invalid parameters (see
// [Params.Validate]) are replaced by the defaults.
func NewBuilder(p Params) *Builder {
	if p.Validate() != nil {
		q := DefaultParams()
		q.QueryTF = p.QueryTF
		p = q
	}
	return &Builder{
		p:     p,
		vocab: make(map[string]int32),
		count: make(map[int32]int),
	}
}

// Add indexes one document given as its terms (with repetitions) and returns
// its id: 0 for the first document, then 1, 2, … Empty terms are ignored.
// Term frequencies saturate at 65535.
func (b *Builder) Add(terms []string) (docID int) {
	doc := uint32(len(b.docLen))
	clear(b.count)
	b.order = b.order[:0]
	n := 0
	for _, t := range terms {
		if t == "" {
			continue
		}
		n++
		id, ok := b.vocab[t]
		if !ok {
			id = int32(len(b.terms))
			b.vocab[t] = id
			b.terms = append(b.terms, t)
			b.post = append(b.post, nil)
			b.df = append(b.df, 0)
			b.last = append(b.last, 0)
		}
		if b.count[id] == 0 {
			b.order = append(b.order, id)
		}
		b.count[id]++
	}
	for _, id := range b.order {
		// The postings are encoded as they arrive (about 2 bytes per
		// posting instead of 6 plus slack): a builder holds the whole
		// corpus's postings until Build.
		delta := uint64(doc) + 1
		if b.df[id] > 0 {
			delta = uint64(doc - b.last[id])
		}
		b.post[id] = binary.AppendUvarint(b.post[id], delta)
		b.post[id] = binary.AppendUvarint(b.post[id], uint64(min(b.count[id], math.MaxUint16)))
		b.df[id]++
		b.last[id] = doc
	}
	b.docLen = append(b.docLen, uint32(min(n, math.MaxUint32)))
	return int(doc)
}

// Len reports the number of documents added so far.
func (b *Builder) Len() int { return len(b.docLen) }

// Build returns the immutable index of the documents added so far. The
// Builder may continue to be used; later additions do not affect the Index.
func (b *Builder) Build() *Index {
	ix := &Index{
		p:      b.p,
		terms:  slices.Clone(b.terms),
		vocab:  make(map[string]int32, len(b.terms)),
		df:     make([]uint32, len(b.terms)),
		poffs:  make([]int, len(b.terms)+1),
		docLen: slices.Clone(b.docLen),
	}
	size := 0
	for _, p := range b.post {
		size += len(p)
	}
	post := make([]byte, 0, size)
	for i, t := range b.terms {
		ix.vocab[t] = int32(i)
		ix.df[i] = b.df[i]
		post = append(post, b.post[i]...)
		ix.poffs[i+1] = len(post)
	}
	ix.post = post
	ix.finish()
	ix.computeBounds()
	return ix
}

// appendPostings encodes one term's postings: per document the doc-id delta
// (from -1 for the first, so always ≥ 1) and the term frequency, as varints.
func appendPostings(dst []byte, docs []uint32, tfs []uint16) []byte {
	prev := int64(-1)
	for i, d := range docs {
		dst = binary.AppendUvarint(dst, uint64(int64(d)-prev))
		dst = binary.AppendUvarint(dst, uint64(tfs[i]))
		prev = int64(d)
	}
	return dst
}

// postings iterates over the encoded postings of one term, calling fn for
// each (doc, tf). Postings are validated as they are decoded: a malformed
// varint, a doc id outside [0, n) or a zero tf ends the iteration, so even
// an index crafted to pass the checksum cannot cause a panic.
func postings(p []byte, n uint32, fn func(doc uint32, tf uint32)) {
	doc := int64(-1)
	for i := 0; i < len(p); {
		// Fast path: one-byte varints (small deltas, tf < 128) dominate.
		var delta, tf uint64
		if i+1 < len(p) && p[i]|p[i+1] < 0x80 {
			delta, tf, i = uint64(p[i]), uint64(p[i+1]), i+2
		} else if delta, tf, i = postingSlow(p, i); i > len(p) {
			return
		}
		if !validPosting(delta, tf, uint64(n)) {
			return
		}
		doc += int64(delta)
		if doc >= int64(n) {
			return
		}
		fn(uint32(doc), uint32(tf))
	}
}

// Index is an immutable BM25 index. Its methods are safe for concurrent use.
type Index struct {
	p      Params
	terms  []string         // term id → term
	vocab  map[string]int32 // term → term id
	df     []uint32         // term id → document frequency
	poffs  []int            // term id → encoded postings post[poffs[i]:poffs[i+1]]
	post   []byte           // varint postings (see appendPostings), shared with a loaded file's buffer
	docLen []uint32         // doc id → length in terms

	// Score bounds for pruning (bounds.go), computed by Build and Compose
	// and persisted; tmax and blocks are little-endian tables that a loaded
	// index uses in place.
	tmax   []byte   // term id → float32 max tf/(tf+norm)
	blocks []byte   // block entries of the terms with more than blockSize postings
	boffs  []uint32 // term id → its first block entry; boffs[V] = entries in all

	// Derived on construction.
	idf     []float64 // term id → idf
	norm    []float32 // doc id → k1·(1 − b + b·|d|/avgdl)
	avgdl   float64
	scratch sync.Pool // *scratch
}

// scratch is one search's working memory, pooled per Index.
type scratch struct {
	qs []queryTerm
	// searchAll
	acc     []float64 // doc → score so far (all zero between searches)
	touched []uint32  // documents with a score
	// searchPruned: per query term
	cur   []cursor
	order []int     // terms by ascending window bound
	bound []float64 // window bound
	below []float64 // sum of the smaller bounds of the non-essential terms
	ess   []bool
	// searchPruned: per document of a window
	wacc    []float64
	seen    []uint64 // bitset: touched by an essential term
	matched []uint64 // bitset: a non-essential term matched
	alive   []uint16 // candidates, ascending
	log     contribLog
}

// finish computes the derived fields.
func (ix *Index) finish() {
	n := len(ix.docLen)
	var sum float64
	for _, l := range ix.docLen {
		sum += float64(l)
	}
	ix.avgdl = 1
	if n > 0 && sum > 0 {
		ix.avgdl = sum / float64(n)
	}
	ix.norm = make([]float32, n)
	for d, l := range ix.docLen {
		ix.norm[d] = float32(ix.p.K1 * (1 - ix.p.B + ix.p.B*float64(l)/ix.avgdl))
	}
	ix.idf = make([]float64, len(ix.terms))
	for i := range ix.terms {
		df := float64(ix.df[i])
		ix.idf[i] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
	ix.scratch.New = func() any { return new(scratch) }
}

// Params returns the parameters the index scores with.
func (ix *Index) Params() Params { return ix.p }

// Len reports the number of documents.
func (ix *Index) Len() int { return len(ix.docLen) }

// VocabularySize reports the number of distinct terms.
func (ix *Index) VocabularySize() int { return len(ix.terms) }

// AvgDocLen reports the mean document length in terms (1 for an empty index).
func (ix *Index) AvgDocLen() float64 { return ix.avgdl }

// DocLen reports the length in terms of document doc, or 0 if out of range.
func (ix *Index) DocLen(doc int) int {
	if doc < 0 || doc >= len(ix.docLen) {
		return 0
	}
	return int(ix.docLen[doc])
}

// DocFreq reports the number of documents containing term.
func (ix *Index) DocFreq(term string) int {
	id, ok := ix.vocab[term]
	if !ok {
		return 0
	}
	return int(ix.df[id])
}

// IDF reports idf(term), or 0 for a term not in the vocabulary.
func (ix *Index) IDF(term string) float64 {
	id, ok := ix.vocab[term]
	if !ok {
		return 0
	}
	return ix.idf[id]
}

// queryTerm is a vocabulary term of a query with its weight w(t).
type queryTerm struct {
	id int32
	w  float64
}

// resolve maps a query to vocabulary term ids with weights; unknown and empty
// terms are dropped, duplicates merged.
func (ix *Index) resolve(query []string) []queryTerm {
	return ix.resolveTo(make([]queryTerm, 0, len(query)), query)
}

// resolveTo is resolve appending to qs.
func (ix *Index) resolveTo(qs []queryTerm, query []string) []queryTerm {
outer:
	for _, t := range query {
		id, ok := ix.vocab[t]
		if !ok {
			continue
		}
		for i := range qs {
			if qs[i].id == id {
				if ix.p.QueryTF {
					qs[i].w++
				}
				continue outer
			}
		}
		qs = append(qs, queryTerm{id: id, w: 1})
	}
	return qs
}

// UpperBound returns the score no document can reach for query:
// Σ w(t)·idf(t)·(k1+1) over the query's vocabulary terms. It is 0 when no
// query term is in the vocabulary. Search scores divided by it lie in [0, 1).
func (ix *Index) UpperBound(query []string) float64 {
	var ub float64
	for _, q := range ix.resolve(query) {
		ub += q.w * ix.idf[q.id] * (ix.p.K1 + 1)
	}
	return ub
}

// Search returns the n best-scoring documents that match at least one query
// term, best first; equal scores are ordered by ascending doc id. It returns
// nil when n ≤ 0 or nothing matches.
//
// Small searches score every posting of the query terms; larger ones skip
// the documents that cannot reach the top n (maxscore.go). Both give the
// same hits with the same scores, to the bit.
func (ix *Index) Search(query []string, n int) []Hit {
	return ix.search(query, n, auto)
}

// Search strategies; auto picks by the number of postings.
const (
	auto = iota
	exhaustive
	pruned
)

// Search prunes on indexes of at least pruneDocs documents when the query's
// terms have at least pruneFrom postings; below, scoring every posting was
// measured as fast or faster (JSQuAD's 1,145 and SciFact's 5,183 documents).
const (
	pruneDocs = 4 * window
	pruneFrom = 32 << 10
)

func (ix *Index) search(query []string, n, how int) []Hit {
	return ix.searchWin(query, n, how, window)
}

// searchWin is search with the pruned search's window size given.
func (ix *Index) searchWin(query []string, n, how, win int) []Hit {
	if n <= 0 || len(ix.docLen) == 0 {
		return nil
	}
	s := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(s)
	qs := ix.resolveTo(s.qs[:0], query)
	s.qs = qs
	if len(qs) == 0 {
		return nil
	}
	if how == auto {
		how = exhaustive
		if len(ix.docLen) >= pruneDocs {
			total := 0
			for _, q := range qs {
				total += int(ix.df[q.id])
			}
			if total >= pruneFrom {
				how = pruned
			}
		}
	}
	var h hitHeap
	if how == pruned {
		h = ix.searchPruned(qs, n, s, win)
	} else {
		h = ix.searchAll(qs, n, s)
	}
	if len(h) == 0 {
		return nil
	}
	// Pop the worst to the back: h ends sorted best first.
	for k := len(h) - 1; k > 0; k-- {
		h[0], h[k] = h[k], h[0]
		h[:k].down(0)
	}
	return h
}

// searchAll scores every posting of the query terms into an accumulator.
func (ix *Index) searchAll(qs []queryTerm, n int, s *scratch) hitHeap {
	if len(s.acc) != len(ix.docLen) {
		s.acc = make([]float64, len(ix.docLen))
	}
	acc, touched := s.acc, s.touched[:0]
	for _, q := range qs {
		touched = ix.accumulate(acc, touched, q)
	}
	h := make(hitHeap, 0, min(n, len(touched)))
	for _, d := range touched {
		hit := Hit{Doc: int(d), Score: acc[d]}
		acc[d] = 0
		if len(h) < n {
			h.push(hit)
		} else if better(hit, h[0]) {
			h[0] = hit
			h.down(0)
		}
	}
	s.touched = touched
	return h
}

// accumulate adds the contributions of one query term to acc and records
// newly matched documents in touched. It is postings with the decoding
// inlined: this loop is the whole cost of a search.
func (ix *Index) accumulate(acc []float64, touched []uint32, q queryTerm) []uint32 {
	w := q.w * ix.idf[q.id] * (ix.p.K1 + 1)
	p := ix.post[ix.poffs[q.id]:ix.poffs[q.id+1]]
	norm := ix.norm
	n := int64(len(norm))
	doc := int64(-1)
	for i := 0; i < len(p); {
		var delta, tf uint64
		if i+1 < len(p) && p[i]|p[i+1] < 0x80 {
			delta, tf, i = uint64(p[i]), uint64(p[i+1]), i+2
		} else if delta, tf, i = postingSlow(p, i); i > len(p) {
			break
		}
		if !validPosting(delta, tf, uint64(n)) {
			break
		}
		doc += int64(delta)
		if doc >= n {
			break
		}
		if acc[doc] == 0 {
			touched = append(touched, uint32(doc))
		}
		f := float64(tf)
		acc[doc] += w * f / (f + float64(norm[doc]))
	}
	return touched
}

// Score returns the BM25 score of one document for query (0 if it matches no
// term or doc is out of range). It is for explanations and tests; use Search
// for retrieval.
func (ix *Index) Score(query []string, doc int) float64 {
	if doc < 0 || doc >= len(ix.docLen) {
		return 0
	}
	var sc float64
	for _, q := range ix.resolve(query) {
		postings(ix.post[ix.poffs[q.id]:ix.poffs[q.id+1]], uint32(len(ix.docLen)), func(d, tf uint32) {
			if d == uint32(doc) {
				f := float64(tf)
				sc += q.w * ix.idf[q.id] * (ix.p.K1 + 1) * f / (f + float64(ix.norm[doc]))
			}
		})
	}
	return sc
}

// better reports whether a ranks before b.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

// hitHeap is a min-heap: the root is the worst hit kept so far.
type hitHeap []Hit

func (h *hitHeap) push(x Hit) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !better(s[p], s[i]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// down restores the heap order below i.
func (h hitHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && better(h[l], h[r]) {
			w = r
		}
		if !better(h[i], h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
