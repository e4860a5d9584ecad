package bm25

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Exact top-n search with dynamic pruning: MaxScore over windows of
// documents, with block-max bounds.
//
// The documents are taken in windows of window consecutive ids, in
// ascending order. For a window, each query term's bound is the largest
// block maximum of its blocks that overlap the window (w·termMax for a term
// of one block). With θ the score of the n-th best hit so far, the terms are
// sorted by that bound, and the longest prefix whose bounds sum to at most θ
// is non-essential: a document holding only those terms cannot enter the top
// n. A window whose bounds sum to at most θ is skipped without decoding.
//
//  1. The essential terms' postings in the window are scored term at a
//     time, in query order, into an accumulator. The documents they touch
//     whose partial score plus the non-essential bounds may exceed θ are
//     the candidates.
//  2. The non-essential terms are added, the largest bound first, each
//     either by looking the candidates up (skipping whole blocks) or by
//     walking the term's postings in the window, whichever decodes less;
//     after each, the candidates whose partial score plus the remaining
//     bounds cannot exceed θ are dropped.
//  3. The remaining candidates, in ascending id order, go to the heap.
//
// The result is identical to scoring every posting (searchAll): a document
// is dropped only when its score cannot exceed θ, and, coming after every
// hit kept so far, it would lose a tie on θ to them by its larger id. A kept
// document's score is the sum of its contributions in query order, exactly
// as searchAll's accumulator adds them: step 1 adds the essential terms in
// query order, which is that sum when no non-essential term matched (the
// others add zero); otherwise the sum is redone in query order from a log
// of the window's contributions. So the scores are equal to the bit. The
// bounds are compared with a relative slack far above the rounding error of
// a sum of a few thousand terms, so rounding never drops a document that
// belongs to the top n.
const (
	slack  = 1 + 1e-9
	window = 4096 // documents per window: a multiple of 64, at most 65536
)

// cursor walks one query term's postings.
type cursor struct {
	post []byte  // the term's postings
	blk  []byte  // its block table (empty: a single block)
	pos  int     // next undecoded byte of post
	doc  int     // current document; n once exhausted
	tf   uint32  // its term frequency
	b    int     // block holding documents ≥ the last shallow target
	w    float64 // w(t)·idf(t)·(k1+1)
	ub   float64 // w·termMax: bound on the term's contribution
	term int     // position of the term in the query: the summation order
}

// next decodes the following posting; a malformed or exhausted list sets
// doc to n.
func (c *cursor) next(n int) {
	p := c.post
	i := c.pos
	if i >= len(p) {
		c.doc = n
		return
	}
	var delta, tf uint64
	if i+1 < len(p) && p[i]|p[i+1] < 0x80 {
		delta, tf, i = uint64(p[i]), uint64(p[i+1]), i+2
	} else if delta, tf, i = postingSlow(p, i); i > len(p) {
		c.doc = n
		return
	}
	c.pos = i
	if !validPosting(delta, tf, uint64(n)) || c.doc+int(delta) >= n {
		c.doc = n
		return
	}
	c.doc += int(delta)
	c.tf = uint32(tf)
}

// shallow moves the block pointer to the first block whose last document is
// ≥ d, without decoding postings, and returns that block's bound on the
// term's contribution (0 when no posting is ≥ d).
func (c *cursor) shallow(d int) float64 {
	if len(c.blk) == 0 {
		return c.ub
	}
	nb := len(c.blk) / blockEntry
	for c.b < nb && int(binary.LittleEndian.Uint32(c.blk[blockEntry*c.b:])) < d {
		c.b++
	}
	if c.b == nb {
		return 0
	}
	return c.w * float64(math.Float32frombits(binary.LittleEndian.Uint32(c.blk[blockEntry*c.b+8:])))
}

// seek moves to the first posting with document ≥ d, skipping the blocks
// that end before d.
func (c *cursor) seek(d, n int) {
	if c.doc >= d {
		return
	}
	if len(c.blk) > 0 {
		c.shallow(d)
		if c.b == len(c.blk)/blockEntry {
			c.doc = n
			return
		}
		if c.b > 0 {
			e := c.blk[blockEntry*(c.b-1):]
			if last := int(binary.LittleEndian.Uint32(e)); c.doc < last {
				// Jump to block b's first byte; its first delta counts
				// from block b−1's last document.
				end := int(binary.LittleEndian.Uint32(e[4:]))
				if end > len(c.post) || last >= n {
					c.doc = n
					return
				}
				c.pos, c.doc = end, last
			}
		}
	}
	for c.doc < d {
		c.next(n)
	}
}

// windowBound returns the bound on the term's contribution to documents
// [w0, w1): the largest block maximum of its blocks that overlap the window,
// 0 when none does.
func (c *cursor) windowBound(w0, w1 int) float64 {
	if c.doc >= w1 {
		return 0
	}
	if len(c.blk) == 0 {
		return c.ub
	}
	nb := len(c.blk) / blockEntry
	for c.b < nb && int(binary.LittleEndian.Uint32(c.blk[blockEntry*c.b:])) < w0 {
		c.b++
	}
	var best float32
	for j := c.b; j < nb; j++ {
		e := c.blk[blockEntry*j:]
		best = max(best, math.Float32frombits(binary.LittleEndian.Uint32(e[8:])))
		if int(binary.LittleEndian.Uint32(e)) >= w1-1 {
			break
		}
	}
	return c.w * float64(best)
}

// accumulate adds the term's contributions to the documents of [w0, w1) to
// acc (indexed from w0) and marks them in seen; the cursor ends on its first
// document ≥ w1. It is next with the decoding inlined: the hot loop.
func (c *cursor) accumulate(w0, w1, n int, norm []float32, acc []float64, seen []uint64, lg *contribLog) {
	p := c.post
	i, doc := c.pos, c.doc
	w := c.w
	for doc < w1 {
		if doc >= w0 {
			k := doc - w0
			f := float64(c.tf)
			v := w * f / (f + float64(norm[doc]))
			acc[k] += v
			seen[k>>6] |= 1 << (k & 63)
			if lg != nil {
				lg.ks = append(lg.ks, uint16(k))
				lg.vs = append(lg.vs, v)
			}
		}
		if i >= len(p) {
			doc = n
			break
		}
		var delta, tf uint64
		if i+1 < len(p) && p[i]|p[i+1] < 0x80 {
			delta, tf, i = uint64(p[i]), uint64(p[i+1]), i+2
		} else if delta, tf, i = postingSlow(p, i); i > len(p) {
			doc = n
			break
		}
		if !validPosting(delta, tf, uint64(n)) || doc+int(delta) >= n {
			doc = n
			break
		}
		doc += int(delta)
		c.tf = uint32(tf)
	}
	c.pos, c.doc = i, doc
}

// searchPruned is the pruned search over resolved query terms (see the
// comment at the top of this file) with windows of win documents (window;
// tests use smaller ones), a multiple of 64 and at most 65536.
func (ix *Index) searchPruned(qs []queryTerm, n int, s *scratch, win int) hitHeap {
	nd := len(ix.docLen)
	m := len(qs)
	if cap(s.cur) < m {
		s.cur = make([]cursor, m)
		s.order = make([]int, m)
		s.bound = make([]float64, m)
		s.below = make([]float64, m)
		s.ess = make([]bool, m)
	}
	if len(s.wacc) != win {
		s.wacc = make([]float64, win)
		s.seen = make([]uint64, win/64)
		s.matched = make([]uint64, win/64)
	}
	cur, order, bound, below, ess := s.cur[:m], s.order[:m], s.bound[:m], s.below[:m], s.ess[:m]
	acc, seen, matched := s.wacc, s.seen, s.matched
	lg := &s.log
	if cap(lg.from) < m {
		lg.from, lg.to = make([]int, m), make([]int, m)
	}
	lg.from, lg.to = lg.from[:m], lg.to[:m]
	for i, q := range qs {
		w := q.w * ix.idf[q.id] * (ix.p.K1 + 1)
		cur[i] = cursor{
			post: ix.post[ix.poffs[q.id]:ix.poffs[q.id+1]],
			blk:  ix.termBlocks(q.id),
			doc:  -1,
			w:    w,
			ub:   w * ix.termMax(q.id),
			term: i,
		}
		cur[i].next(nd)
	}
	norm := ix.norm
	h := make(hitHeap, 0, n)
	theta := math.Inf(-1) // score of the n-th hit once there are n
	for w0 := 0; w0 < nd; w0 += win {
		w1 := min(w0+win, nd)
		// Window bounds, terms sorted by them (insertion sort: queries are
		// short; ties keep the query order).
		total := 0.0
		for i := range cur {
			bound[i] = cur[i].windowBound(w0, w1)
			total += bound[i]
			order[i] = i
			for j := i; j > 0 && bound[order[j]] < bound[order[j-1]]; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
		if total*slack <= theta {
			continue
		}
		// order[:ne] are the non-essential terms, their bounds summing to
		// rest; below[j] is the sum of order[:j]'s bounds.
		ne, rest := 0, 0.0
		for ne < m && (rest+bound[order[ne]])*slack <= theta {
			below[ne] = rest
			rest += bound[order[ne]]
			ne++
		}
		for j, t := range order {
			ess[t] = j >= ne
		}
		// Score the essential terms in query order.
		anyEss := false
		lg.ks, lg.vs = lg.ks[:0], lg.vs[:0]
		// The contributions are logged only when a sum may have to be
		// redone: when some terms are non-essential.
		elg := lg
		if ne == 0 {
			elg = nil
		}
		for i := range cur {
			c := &cur[i]
			lg.from[i] = len(lg.ks)
			if ess[i] {
				c.seek(w0, nd)
				if c.doc < w1 {
					anyEss = true
					c.accumulate(w0, w1, nd, norm, acc, seen, elg)
				}
			}
			lg.to[i] = len(lg.ks)
		}
		if !anyEss {
			continue
		}
		// The candidates: documents the essential terms touched whose
		// partial score plus the non-essential bounds may exceed θ.
		alive := s.alive[:0]
		for wi, word := range seen {
			for word != 0 {
				k := wi<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				if (acc[k]+rest)*slack <= theta {
					acc[k] = 0
					continue
				}
				alive = append(alive, uint16(k))
			}
			seen[wi] = 0
		}
		// Add the non-essential terms, the largest bound first, each by
		// looking the candidates up or by walking the term's postings in
		// the window, whichever decodes less; drop the candidates that can
		// no longer exceed θ.
		for j := ne - 1; j >= 0 && len(alive) > 0; j-- {
			c := &cur[order[j]]
			lg.from[c.term] = len(lg.ks)
			lg.to[c.term] = len(lg.ks)
			if c.doc >= w1 {
				continue
			}
			if est := int(ix.df[qs[c.term].id]) * (w1 - w0) / nd; len(alive)*lookupCost < est {
				for _, k := range alive {
					d := w0 + int(k)
					c.seek(d, nd)
					if c.doc == d {
						f := float64(c.tf)
						v := c.w * f / (f + float64(norm[d]))
						acc[k] += v
						matched[k>>6] |= 1 << (k & 63)
						lg.ks = append(lg.ks, k)
						lg.vs = append(lg.vs, v)
					}
				}
			} else {
				c.seek(w0, nd)
				c.accumulateAlive(w1, w0, nd, norm, acc, matched, lg)
			}
			lg.to[c.term] = len(lg.ks)
			live := alive[:0]
			for _, k := range alive {
				if (acc[k]+below[j])*slack <= theta {
					acc[k] = 0
					continue
				}
				live = append(live, k)
			}
			alive = live
		}
		for _, k := range alive {
			a := acc[k]
			acc[k] = 0
			d := w0 + int(k)
			if a*slack <= theta {
				continue
			}
			score := a
			if matched[k>>6]&(1<<(k&63)) != 0 {
				// Redo the sum in query order.
				score = 0
				for t := range m {
					score += lg.find(t, k)
				}
			}
			hit := Hit{Doc: d, Score: score}
			if len(h) < n {
				h.push(hit)
			} else if better(hit, h[0]) {
				h[0] = hit
				h.down(0)
			}
			if len(h) == n {
				theta = h[0].Score
			}
		}
		// acc is all zero again: every touched document was either
		// dropped (zeroed) or taken from alive (zeroed), and the
		// non-essential terms add only to live candidates.
		s.alive = alive
		clear(matched)
	}
	return h
}

// lookupCost is how many postings decoding one lookup of a candidate is
// worth: a non-essential term is looked up per candidate when the
// candidates times lookupCost are fewer than its postings in the window,
// else its postings in the window are walked.
const lookupCost = 16

// accumulateAlive walks the term's postings in [cursor, w1) and adds its
// contributions to the documents whose acc entry (indexed from w0) is not
// zero — the live candidates —, marking them in matched.
func (c *cursor) accumulateAlive(w1, w0, n int, norm []float32, acc []float64, matched []uint64, lg *contribLog) {
	p := c.post
	i, doc := c.pos, c.doc
	w := c.w
	for doc < w1 {
		if k := doc - w0; k >= 0 && acc[k] != 0 {
			f := float64(c.tf)
			v := w * f / (f + float64(norm[doc]))
			acc[k] += v
			matched[k>>6] |= 1 << (k & 63)
			lg.ks = append(lg.ks, uint16(k))
			lg.vs = append(lg.vs, v)
		}
		if i >= len(p) {
			doc = n
			break
		}
		var delta, tf uint64
		if i+1 < len(p) && p[i]|p[i+1] < 0x80 {
			delta, tf, i = uint64(p[i]), uint64(p[i+1]), i+2
		} else if delta, tf, i = postingSlow(p, i); i > len(p) {
			doc = n
			break
		}
		if !validPosting(delta, tf, uint64(n)) || doc+int(delta) >= n {
			doc = n
			break
		}
		doc += int(delta)
		c.tf = uint32(tf)
	}
	c.pos, c.doc = i, doc
}

// contribLog holds, for one window, every contribution added to the
// accumulator, term by term: term t's are ks/vs[from[t]:to[t]], in
// ascending document order. A sum redone in query order reads them back.
type contribLog struct {
	ks       []uint16 // document, from the window's start
	vs       []float64
	from, to []int
}

// find returns term t's contribution to window document k (0 if none), and
// moves the term's start past the entries before k: the documents whose
// sums are redone come in ascending order, so a window's finds walk each
// term's entries once.
func (lg *contribLog) find(t int, k uint16) float64 {
	i, end := lg.from[t], lg.to[t]
	for i < end && lg.ks[i] < k {
		i++
	}
	lg.from[t] = i
	if i < end && lg.ks[i] == k {
		return lg.vs[i]
	}
	return 0
}
