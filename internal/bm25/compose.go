package bm25

import (
	"fmt"
	"slices"
)

// Postings reports the number of (term, document) pairs in the index, the
// sum of every term's document frequency: the index's document-frequency
// mass. Incremental builds measure how much of it changed (see Compose).
func (ix *Index) Postings() int64 {
	var n int64
	for _, df := range ix.df {
		n += int64(df)
	}
	return n
}

// ComposeStats says how much of the document-frequency mass a Compose
// replaced.
type ComposeStats struct {
	Removed int64 // postings of base documents that were left out
	Added   int64 // postings of the added documents
}

// Compose returns the index of a new sequence of documents without
// analysing any text again: document i of the result is document from[i]
// of base when from[i] ≥ 0, else the next not yet used document of added
// (in added's order). Either index may be nil when nothing comes from it.
// Documents of base that from does not name are dropped, terms left
// without documents leave the vocabulary, and document frequencies, lengths
// and the mean length are those of the new sequence.
//
// The result scores exactly like an index built by adding the same
// documents' terms to a Builder in the same order: postings, document
// frequencies and lengths are equal, and scoring does not depend on term
// ids. The work is one pass over the postings, with no text analysis.
func Compose(base, added *Index, from []int) (*Index, ComposeStats, error) {
	var st ComposeStats
	p := DefaultParams()
	var baseN, addN int
	if base != nil {
		p, baseN = base.p, base.Len()
	}
	if added != nil {
		if base == nil {
			p = added.p
		}
		addN = added.Len()
	}
	// newOf maps a base document to its new id (-1: dropped); addOf the
	// added documents, in order.
	newOf := make([]int32, baseN)
	for i := range newOf {
		newOf[i] = -1
	}
	addOf := make([]uint32, 0, addN)
	docLen := make([]uint32, len(from))
	monotone := true
	last := int32(-1)
	for i, f := range from {
		switch {
		case f < 0:
			if len(addOf) == addN {
				return nil, st, fmt.Errorf("bm25: compose: %d added documents, more are named", addN)
			}
			docLen[i] = added.docLen[len(addOf)]
			addOf = append(addOf, uint32(i))
		case f >= baseN || newOf[f] >= 0:
			return nil, st, fmt.Errorf("bm25: compose: base document %d is out of range or named twice", f)
		default:
			newOf[f] = int32(i)
			docLen[i] = base.docLen[f]
			if int32(f) < last {
				monotone = false
			}
			last = int32(f)
		}
	}
	if len(addOf) != addN {
		return nil, st, fmt.Errorf("bm25: compose: %d of %d added documents are placed", len(addOf), addN)
	}

	ix := &Index{p: p, vocab: map[string]int32{}, docLen: docLen, poffs: []int{0}}
	var post []byte
	var docs []uint32
	var tfs []uint16
	emit := func(t string) {
		if len(docs) == 0 {
			return
		}
		ix.vocab[t] = int32(len(ix.terms))
		ix.terms = append(ix.terms, t)
		ix.df = append(ix.df, uint32(len(docs)))
		post = appendPostings(post, docs, tfs)
		ix.poffs = append(ix.poffs, len(post))
	}
	// pair is one posting in the new numbering.
	type pair struct {
		doc uint32
		tf  uint16
	}
	var fromAdded []pair
	addedPostings := func(t string) []pair {
		fromAdded = fromAdded[:0]
		if added == nil {
			return nil
		}
		id, ok := added.vocab[t]
		if !ok {
			return nil
		}
		postings(added.post[added.poffs[id]:added.poffs[id+1]], uint32(addN), func(d, tf uint32) {
			fromAdded = append(fromAdded, pair{addOf[d], uint16(tf)})
		})
		return fromAdded
	}
	var fromBase []pair
	if base != nil {
		for id, t := range base.terms {
			fromBase = fromBase[:0]
			postings(base.post[base.poffs[id]:base.poffs[id+1]], uint32(baseN), func(d, tf uint32) {
				if n := newOf[d]; n >= 0 {
					fromBase = append(fromBase, pair{uint32(n), uint16(tf)})
				} else {
					st.Removed++
				}
			})
			if !monotone {
				slices.SortFunc(fromBase, func(a, b pair) int { return int(a.doc) - int(b.doc) })
			}
			// Merge the two ascending lists.
			add := addedPostings(t)
			docs, tfs = docs[:0], tfs[:0]
			i, j := 0, 0
			for i < len(fromBase) || j < len(add) {
				var q pair
				if j == len(add) || i < len(fromBase) && fromBase[i].doc < add[j].doc {
					q, i = fromBase[i], i+1
				} else {
					q, j = add[j], j+1
				}
				docs, tfs = append(docs, q.doc), append(tfs, q.tf)
			}
			emit(t)
		}
	}
	if added != nil {
		for _, t := range added.terms {
			if base != nil {
				if _, ok := base.vocab[t]; ok {
					continue // merged above
				}
			}
			docs, tfs = docs[:0], tfs[:0]
			for _, q := range addedPostings(t) {
				docs, tfs = append(docs, q.doc), append(tfs, q.tf)
			}
			emit(t)
		}
		st.Added = added.Postings()
	}
	ix.post = post
	ix.finish()
	return ix, st, nil
}

// Forward is the document → terms view of an Index, for callers that need
// each document's bag of terms again (the local embedder's features)
// without analysing its text a second time.
type Forward struct {
	terms []string
	off   []int    // document d's entries are ids[off[d]:off[d+1]]
	ids   []uint32 // term ids, ascending per document
	tfs   []uint16
}

// Forward inverts the postings: one pass, 6 bytes per posting.
func (ix *Index) Forward() *Forward {
	n := len(ix.docLen)
	f := &Forward{terms: ix.terms, off: make([]int, n+1)}
	for id := range ix.terms {
		postings(ix.post[ix.poffs[id]:ix.poffs[id+1]], uint32(n), func(d, _ uint32) { f.off[d+1]++ })
	}
	for d := range n {
		f.off[d+1] += f.off[d]
	}
	f.ids = make([]uint32, f.off[n])
	f.tfs = make([]uint16, f.off[n])
	next := slices.Clone(f.off[:n])
	for id := range ix.terms {
		postings(ix.post[ix.poffs[id]:ix.poffs[id+1]], uint32(n), func(d, tf uint32) {
			f.ids[next[d]], f.tfs[next[d]] = uint32(id), uint16(tf)
			next[d]++
		})
	}
	return f
}

// Terms appends document doc's terms to dst, each as many times as it
// occurs (its term frequency), and returns the extended slice: the
// document's terms as they were added, up to order.
func (f *Forward) Terms(doc int, dst []string) []string {
	for k := f.off[doc]; k < f.off[doc+1]; k++ {
		t := f.terms[f.ids[k]]
		for range f.tfs[k] {
			dst = append(dst, t)
		}
	}
	return dst
}
