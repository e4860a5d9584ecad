package bm25

import (
	"encoding/binary"
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
	return compose(base, added, from, true)
}

// compose is Compose; verbatim lets a monotone composition copy the
// encoded postings whose delta did not change as they are (the result is
// byte for byte the same as re-encoding them, which tests check).
func compose(base, added *Index, from []int, verbatim bool) (*Index, ComposeStats, error) {
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

	nterms := 0
	if base != nil {
		nterms += len(base.terms)
	}
	if added != nil {
		nterms += len(added.terms)
	}
	ix := &Index{p: p, vocab: make(map[string]int32, nterms), docLen: docLen,
		poffs: make([]int, 1, nterms+1), terms: make([]string, 0, nterms), df: make([]uint32, 0, nterms)}
	var post []byte
	if base != nil {
		// The postings rarely grow by more than the added ones.
		post = make([]byte, 0, len(base.post)+len(base.post)/64+addedLen(added))
	}
	var docs []uint32
	var tfs []uint16
	emitted := func(t string, df int) {
		if df == 0 {
			return
		}
		ix.vocab[t] = int32(len(ix.terms))
		ix.terms = append(ix.terms, t)
		ix.df = append(ix.df, uint32(df))
		ix.poffs = append(ix.poffs, len(post))
	}
	emit := func(t string) {
		if len(docs) > 0 {
			post = appendPostings(post, docs, tfs)
		}
		emitted(t, len(docs))
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
			if monotone && verbatim {
				var df int
				var removed int64
				post, df, removed = mergeVerbatim(post, base.post[base.poffs[id]:base.poffs[id+1]], uint32(baseN), newOf, addedPostings(t))
				st.Removed += removed
				emitted(t, df)
				continue
			}
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
	ix.computeBounds()
	return ix, st, nil
}

// pair is one posting in the new numbering.
type pair struct {
	doc uint32
	tf  uint16
}

func addedLen(added *Index) int {
	if added == nil {
		return 0
	}
	return len(added.post)
}

// mergeVerbatim appends to dst the encoded postings of one term: base's
// encoded postings p (over n documents), renumbered by the ascending map
// newOf (-1: dropped), merged with the ascending added postings add. A
// posting whose gap to the one before is the same in the new numbering
// encodes to the same bytes, so runs of those are copied as they are —
// in an incremental build nearly all of them. It returns the extended dst,
// the term's document frequency and the number of base postings dropped.
func mergeVerbatim(dst, p []byte, n uint32, newOf []int32, add []pair) ([]byte, int, int64) {
	var removed int64
	df := 0
	prevNew, prevOld := int64(-1), int64(-1)
	run := -1 // start in p of the run being copied
	start, end := 0, 0
	put := func(doc uint32, tf uint16) {
		dst = binary.AppendUvarint(dst, uint64(int64(doc)-prevNew))
		dst = binary.AppendUvarint(dst, uint64(tf))
		prevNew = int64(doc)
		df++
	}
	flush := func() {
		if run >= 0 {
			dst = append(dst, p[run:start]...)
			run = -1
		}
	}
	j := 0
	// The postings are decoded and validated as postings does (a malformed
	// one ends the list).
	for i := 0; i < len(p); {
		var delta, tf uint64
		k := i
		if k+1 < len(p) && p[k]|p[k+1] < 0x80 {
			delta, tf, k = uint64(p[k]), uint64(p[k+1]), k+2
		} else if delta, tf, k = postingSlow(p, k); k > len(p) {
			break
		}
		if !validPosting(delta, tf, uint64(n)) || prevOld+int64(delta) >= int64(n) {
			break
		}
		d := uint32(prevOld + int64(delta))
		start, end, i = end, k, k
		nd := newOf[d]
		if nd < 0 {
			removed++
			flush()
			prevOld = int64(d)
			continue
		}
		for j < len(add) && add[j].doc < uint32(nd) {
			flush()
			put(add[j].doc, add[j].tf)
			j++
		}
		if int64(nd)-prevNew == int64(d)-prevOld {
			if run < 0 {
				run = start
			}
			prevNew = int64(nd)
			df++
		} else {
			flush()
			put(uint32(nd), uint16(tf))
		}
		prevOld = int64(d)
	}
	start = end
	flush()
	for ; j < len(add); j++ {
		put(add[j].doc, add[j].tf)
	}
	return dst, df, removed
}

// Forward is the document → terms view of some documents of an Index,
// for callers that need their bags of terms again (the local embedder's
// features) without analysing their text a second time.
type Forward struct {
	terms []string
	slot  []int32  // document → its slot, or -1 when not included
	off   []int    // slot k's entries are ids[off[k]:off[k+1]]
	ids   []uint32 // term ids, ascending per document
	tfs   []uint16
}

// Forward inverts the postings of the given documents (nil: all of them):
// two passes over the postings, 6 bytes per posting of those documents. A
// caller that walks a large index a block of documents at a time holds one
// block's terms, not the corpus's.
func (ix *Index) Forward(docs []int) *Forward {
	n := len(ix.docLen)
	f := &Forward{terms: ix.terms, slot: make([]int32, n)}
	if docs == nil {
		for d := range f.slot {
			f.slot[d] = int32(d)
		}
	} else {
		for d := range f.slot {
			f.slot[d] = -1
		}
		for k, d := range docs {
			f.slot[d] = int32(k)
		}
	}
	slots := n
	if docs != nil {
		slots = len(docs)
	}
	f.off = make([]int, slots+1)
	for id := range ix.terms {
		postings(ix.post[ix.poffs[id]:ix.poffs[id+1]], uint32(n), func(d, _ uint32) {
			if k := f.slot[d]; k >= 0 {
				f.off[k+1]++
			}
		})
	}
	for k := range slots {
		f.off[k+1] += f.off[k]
	}
	f.ids = make([]uint32, f.off[slots])
	f.tfs = make([]uint16, f.off[slots])
	next := slices.Clone(f.off[:slots])
	for id := range ix.terms {
		postings(ix.post[ix.poffs[id]:ix.poffs[id+1]], uint32(n), func(d, tf uint32) {
			if k := f.slot[d]; k >= 0 {
				f.ids[next[k]], f.tfs[next[k]] = uint32(id), uint16(tf)
				next[k]++
			}
		})
	}
	return f
}

// Terms appends document doc's terms to dst, each as many times as it
// occurs (its term frequency), and returns the extended slice: the
// document's terms as they were added, up to order. A document the Forward
// does not include has none.
func (f *Forward) Terms(doc int, dst []string) []string {
	k := f.slot[doc]
	if k < 0 {
		return dst
	}
	for e := f.off[k]; e < f.off[k+1]; e++ {
		t := f.terms[f.ids[e]]
		for range f.tfs[e] {
			dst = append(dst, t)
		}
	}
	return dst
}
