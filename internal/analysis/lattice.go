package analysis

// The lattice: kagome's Viterbi search (tokenizer/lattice, search mode),
// rewritten for the analyser's one use so that a short query costs a few
// microseconds instead of tens.
//
// kagome's lattice takes every node from a sync.Pool one by one, keeps them
// as []*Node per end position, recomputes the search-mode length penalty of
// the left node (two rune counts and a Unicode table walk) on every edge,
// and builds a []Token with dictionary pointers that the analyser then
// reads one field of. Here the nodes live in one slice reused between calls,
// linked per end position in insertion order, the penalty is computed once
// per node, and the best path is handed back as (class, id, surface).
//
// The search is the same computation, step for step: the same nodes in the
// same order (known words by common-prefix search with their duplicates,
// then unknown words by character class — invoked when nothing is known or
// the class always invokes, grouped when the class groups, plus the group
// without its last rune), the same costs in the same integer widths, the
// same tie-breaking (the first left node of least cost wins), so the tokens
// are identical; TestLatticeMatchesKagome checks that on real text.

import (
	"unicode"
	"unicode/utf8"

	"github.com/ikawaha/kagome-dict/dict"
)

const (
	latMaxCost               = 1<<31 - 1
	maximumUnknownWordLength = 1024
	searchModeKanjiLength    = 2
	searchModeKanjiPenalty   = 3000
	searchModeOtherLength    = 7
	searchModeOtherPenalty   = 1700

	classDummy   = 0 // BOS and EOS (kagome lattice.DUMMY)
	classKnown   = 1 // lattice.KNOWN
	classUnknown = 2 // lattice.UNKNOWN
)

// latNode is one node of the lattice.
type latNode struct {
	id          int32 // morph id (known or unknown dictionary); -1 for BOS/EOS
	start       int32 // rune position where the node starts
	lo, hi      int32 // byte span of the surface in the input
	cost        int32 // least path cost from BOS to the end of this node
	extra       int32 // search-mode penalty of the node's length
	left, right int16 // connection ids
	weight      int16
	class       uint8
	prev, next  int32 // best left node; next node with the same end
}

// lattice is the reusable state of one analysis; it is not safe for
// concurrent use (the Analyzer pools them).
type lattice struct {
	nodes      []latNode
	head, tail []int32 // per end rune position: first and last node, -1 if none
	path       []int32
}

// bestPath returns the nodes of the least-cost segmentation of inp in
// search mode, BOS and EOS excluded, in order. The slice is valid until the
// next call.
func (la *lattice) bestPath(d *dict.Dict, inp string) []int32 {
	la.build(d, inp)
	la.forward(d)
	la.path = la.path[:0]
	for p := la.nodes[la.head[len(la.head)-1]].prev; p >= 0 && la.nodes[p].id != -1; p = la.nodes[p].prev {
		la.path = append(la.path, p)
	}
	for i, j := 0, len(la.path)-1; i < j; i, j = i+1, j-1 {
		la.path[i], la.path[j] = la.path[j], la.path[i]
	}
	return la.path
}

func (la *lattice) add(d *dict.Dict, inp string, end int, id int, class uint8, start, lo, hi int) {
	var m dict.Morph
	switch class {
	case classKnown:
		m = d.Morphs[id]
	case classUnknown:
		m = d.UnkDict.Morphs[id]
	}
	n := int32(len(la.nodes))
	la.nodes = append(la.nodes, latNode{
		id: int32(id), start: int32(start), lo: int32(lo), hi: int32(hi),
		left: m.LeftID, right: m.RightID, weight: m.Weight, class: class,
		extra: searchPenalty(inp[lo:hi], end-start), prev: -1, next: -1,
	})
	if t := la.tail[end]; t >= 0 {
		la.nodes[t].next = n
	} else {
		la.head[end] = n
	}
	la.tail[end] = n
}

// searchPenalty is kagome's additionalCost for a surface of l runes.
func searchPenalty(s string, l int) int32 {
	if l > searchModeKanjiLength && kanjiOnly(s) {
		return int32((l - searchModeKanjiLength) * searchModeKanjiPenalty)
	}
	if l > searchModeOtherLength {
		return int32((l - searchModeOtherLength) * searchModeOtherPenalty)
	}
	return 0
}

func kanjiOnly(s string) bool {
	for _, r := range s {
		if !unicode.In(r, unicode.Ideographic) {
			return false
		}
	}
	return s != ""
}

func (la *lattice) build(d *dict.Dict, inp string) {
	rc := utf8.RuneCountInString(inp)
	la.nodes = la.nodes[:0]
	if cap(la.head) < rc+2 {
		la.head = make([]int32, rc+2)
		la.tail = make([]int32, rc+2)
	}
	la.head, la.tail = la.head[:rc+2], la.tail[:rc+2]
	for i := range la.head {
		la.head[i], la.tail[i] = -1, -1
	}
	la.add(d, inp, 0, -1, classDummy, 0, 0, 0)
	la.add(d, inp, rc+1, -1, classDummy, rc, rc, rc) // kagome's EOS surface inp[rc:rc]

	da := d.Index.Da
	bufLen := len(da)
	runePos := -1
	for pos, ch := range inp {
		runePos++
		anyMatches := false
		// Known words: common-prefix search of the double array
		// (trie.DoubleArray.CommonPrefixSearchCallback), each match with
		// its duplicates (dict.IndexTable).
		var p, q int
		for i := pos; i < len(inp); i++ {
			c := inp[i]
			if c == 0 {
				break
			}
			p = q
			q = int(da[p].Base) + int(c)
			if q >= bufLen || int(da[q].Check) != p {
				break
			}
			ahead := int(da[q].Base)
			if ahead < bufLen && int(da[ahead].Check) == q && da[ahead].Base <= 0 {
				x := int(-da[ahead].Base)
				end := runePos + utf8.RuneCountInString(inp[pos:i+1])
				dup := int(d.Index.Dup[int32(x)])
				for id := x; id < x+dup+1; id++ {
					la.add(d, inp, end, id, classKnown, runePos, pos, i+1)
				}
				anyMatches = true
			}
		}
		class := d.CharacterCategory(ch)
		if anyMatches && !d.InvokeList[int(class)] {
			continue
		}
		// Unknown words by character class.
		endPos := pos + 1
		if ch != utf8.RuneError {
			endPos = pos + utf8.RuneLen(ch)
		}
		unkWordLen := 1
		if d.GroupList[int(class)] {
			for i, w := endPos, 0; i < len(inp); i += w {
				var c rune
				c, w = utf8.DecodeRuneInString(inp[i:])
				if d.CharacterCategory(c) != class {
					break
				}
				endPos += w
				unkWordLen++
				if unkWordLen >= maximumUnknownWordLength {
					break
				}
			}
		}
		prev := pos
		if c, size := utf8.DecodeLastRuneInString(inp[pos:endPos]); c != utf8.RuneError {
			prev = endPos - size
		}
		id := int(d.UnkDict.Index[int32(class)])
		dup := int(d.UnkDict.IndexDup[int32(class)])
		endShort := runePos + utf8.RuneCountInString(inp[pos:prev])
		endLong := runePos + utf8.RuneCountInString(inp[pos:endPos])
		for x := range dup + 1 {
			if pos < prev {
				la.add(d, inp, endShort, id+x, classUnknown, runePos, pos, prev)
			}
			la.add(d, inp, endLong, id+x, classUnknown, runePos, pos, endPos)
		}
	}
}

// forward computes every node's least cost and best left node (kagome's
// Lattice.Forward in search mode; no user dictionary).
func (la *lattice) forward(d *dict.Dict) {
	vec, rows := d.Connection.Vec, d.Connection.Row
	nodes := la.nodes
	for i := 1; i < len(la.head); i++ {
		for t := la.head[i]; t >= 0; t = nodes[t].next {
			target := &nodes[t]
			first := la.head[target.start]
			if first < 0 {
				target.cost = latMaxCost
				continue
			}
			col := rows * int64(target.left)
			for j := first; j >= 0; j = nodes[j].next {
				n := &nodes[j]
				c := vec[col+int64(n.right)]
				total := int64(c) + int64(target.weight) + int64(n.cost) + int64(n.extra)
				if total > latMaxCost {
					total = latMaxCost
				}
				if j == first || int32(total) < target.cost {
					target.cost = int32(total)
					target.prev = j
				}
			}
		}
	}
}
