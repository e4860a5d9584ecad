package bm25

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Score bounds for dynamic pruning.
//
// A document's contribution from term t is w·tf/(tf + norm(d)) with
// w = w(t)·idf(t)·(k1+1) fixed per query (see the package comment). The
// ratio r = tf/(tf + norm(d)) depends only on the index, so the index keeps,
// computed once when it is built:
//
//   - per term, the largest r over its postings (termMax, float32 rounded
//     up): w·termMax bounds what the term can add to any document;
//   - per term with more than blockSize postings, one entry per block of
//     blockSize consecutive postings (blocks): the block's last document,
//     the end of its bytes in the term's postings, and the block's largest
//     r (float32 rounded up). The entries let a search skip whole blocks
//     without decoding them and bound a term's contribution over a stretch
//     of documents tightly.
//
// The postings themselves are unchanged: block j starts at the byte where
// block j−1 ends, and its first delta counts from block j−1's last document.
const (
	blockSize  = 64
	blockEntry = 12 // last doc uint32, end offset uint32, max ratio float32
)

// blocksOf reports how many block entries a term with df postings has.
func blocksOf(df uint32) int {
	if df <= blockSize {
		return 0
	}
	return int((df + blockSize - 1) / blockSize)
}

// roundUp32 returns the smallest float32 ≥ x.
func roundUp32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// computeBounds derives termMax, blocks and boffs from the postings and the
// document norms (finish must have run). It decodes every posting once.
func (ix *Index) computeBounds() {
	nb := 0
	ix.boffs = make([]uint32, len(ix.terms)+1)
	for i, df := range ix.df {
		nb += blocksOf(df)
		ix.boffs[i+1] = uint32(nb)
	}
	ix.tmax = make([]byte, 4*len(ix.terms))
	ix.blocks = make([]byte, blockEntry*nb)
	norm := ix.norm
	for id := range ix.terms {
		p := ix.post[ix.poffs[id]:ix.poffs[id+1]]
		blk := ix.blocks[blockEntry*int(ix.boffs[id]) : blockEntry*int(ix.boffs[id+1])]
		var tmax, bmax float64
		k, j := 0, 0 // postings in the current block, block index
		prev := uint32(0)
		postingsAt(p, uint32(len(norm)), func(doc, tf uint32, end int) {
			f := float64(tf)
			r := f / (f + float64(norm[doc]))
			bmax = max(bmax, r)
			tmax = max(tmax, r)
			prev = doc
			if k++; k == blockSize || end == len(p) {
				if blockEntry*j < len(blk) {
					e := blk[blockEntry*j:]
					binary.LittleEndian.PutUint32(e, prev)
					binary.LittleEndian.PutUint32(e[4:], uint32(end))
					binary.LittleEndian.PutUint32(e[8:], math.Float32bits(roundUp32(bmax)))
				}
				k, j, bmax = 0, j+1, 0
			}
		})
		binary.LittleEndian.PutUint32(ix.tmax[4*id:], math.Float32bits(roundUp32(tmax)))
	}
}

// termMax is the largest tf/(tf + norm) over the term's postings (rounded up).
func (ix *Index) termMax(id int32) float64 {
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(ix.tmax[4*int(id):])))
}

// termBlocks is the term's block table (empty for a term of one block).
func (ix *Index) termBlocks(id int32) []byte {
	return ix.blocks[blockEntry*int(ix.boffs[id]) : blockEntry*int(ix.boffs[id+1])]
}

// postingsAt is postings that also reports, per posting, the byte offset
// just past it.
func postingsAt(p []byte, n uint32, fn func(doc, tf uint32, end int)) {
	doc := int64(-1)
	for i := 0; i < len(p); {
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
		fn(uint32(doc), uint32(tf), i)
	}
}

// verifyBounds checks that termMax and the block table are what the
// postings give.
func (ix *Index) verifyBounds() error {
	want := &Index{terms: ix.terms, df: ix.df, poffs: ix.poffs, post: ix.post, norm: ix.norm}
	want.computeBounds()
	for i := range ix.terms {
		if ix.boffs[i+1] != want.boffs[i+1] {
			return errBounds(ix.terms[i])
		}
		a := ix.tmax[4*i : 4*i+4]
		b := want.tmax[4*i : 4*i+4]
		if string(a) != string(b) || string(ix.termBlocks(int32(i))) != string(want.termBlocks(int32(i))) {
			return errBounds(ix.terms[i])
		}
	}
	return nil
}

func errBounds(term string) error {
	return fmt.Errorf("%w: score bounds of term %q differ from its postings", ErrFormat, term)
}
