package ocr

import "unicode"

// EditDistance is the Levenshtein distance between a and b: the fewest
// insertions, deletions and substitutions of characters that turn one into
// the other. The character error rate of an OCR reading is its distance to
// the reference over the reference's length.
func EditDistance(a, b []rune) int {
	prev := make([]int, len(a)+1)
	cur := make([]int, len(a)+1)
	for i := range prev {
		prev[i] = i
	}
	for j := 1; j <= len(b); j++ {
		cur[0] = j
		for i := 1; i <= len(a); i++ {
			c := prev[i-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(c, prev[i], cur[i-1])
			}
			cur[i] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(a)]
}

// LineAlignment is how an OCR reading matches a reference whose lines may
// stand in another order (see AlignLines).
type LineAlignment struct {
	Edits   int // Missing + Extra + Within: the line-move-free distance
	Missing int // characters of reference lines that match nothing read
	Extra   int // characters read that no reference line matched
	Within  int // edits inside the matched lines (misread characters)
	// WithinPunct is the share of Within that goes away when punctuation
	// and symbols are removed from both sides of each matched line.
	WithinPunct int
	Lines       int // reference lines
	Matched     int // reference lines matched to a span of the reading
}

// AlignLines compares an OCR reading with its reference when the order
// of the reference's lines does not count: each reference line (longest
// first, those that read with at most a quarter of their characters
// wrong before the others) is matched to the span of the reading, not yet
// taken by another line, that it is closest to (fewest edits, the span's
// ends free); a line no span brings closer than deleting it whole and
// counting the span's characters extra is missing, and the
// characters of the reading no line took are extra. Moving a whole line
// costs nothing, so a table read column by column where the reference
// has it row by row, or a caption the text layer prints last, is not
// counted as an error; every misread, missing or extra character still
// is. Lines are compared as given (the caller normalises them); the
// reading's lines are joined, so a reference line may match across a
// line break of the reading.
func AlignLines(ref, got [][]rune) LineAlignment {
	var a LineAlignment
	var s []rune
	for _, l := range got {
		s = append(s, l...)
	}
	taken := make([]bool, len(s))
	order := make([]int, 0, len(ref))
	for i, l := range ref {
		if len(l) > 0 {
			order = append(order, i)
		}
	}
	// Longest first: a long line's place is the least ambiguous.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && len(ref[order[j]]) > len(ref[order[j-1]]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	a.Lines = len(order)
	// Two passes: first the lines that read nearly as they are (at most
	// a quarter of their characters wrong), so that a badly read line
	// cannot take the span of a line that reads well; then the rest.
	done := make([]bool, len(ref))
	for pass := range 2 {
		for _, i := range order {
			if done[i] {
				continue
			}
			l := ref[i]
			d, from, to := bestSpan(l, s, taken)
			if pass == 0 && 4*d > len(l) {
				continue
			}
			done[i] = true
			// Unmatched, the line would cost its length and the span's
			// characters would be extra.
			if d >= len(l)+to-from {
				a.Missing += len(l)
				continue
			}
			a.Matched++
			a.Within += d
			a.WithinPunct += d - EditDistance(noPunct(l), noPunct(s[from:to]))
			for k := from; k < to; k++ {
				taken[k] = true
			}
		}
	}
	for _, t := range taken {
		if !t {
			a.Extra++
		}
	}
	a.Edits = a.Missing + a.Extra + a.Within
	return a
}

// bestSpan finds the span s[from:to] of characters not taken that is
// closest to l (semi-global alignment: the span's start and end are free)
// and returns its distance. A taken character matches nothing.
func bestSpan(l, s []rune, taken []bool) (d, from, to int) {
	n := len(l)
	// cost[i] and start[i]: the fewest edits aligning l[:i] with a span
	// ending at the current position of s, and where that span starts.
	cost := make([]int, n+1)
	start := make([]int, n+1)
	prevCost := make([]int, n+1)
	prevStart := make([]int, n+1)
	for i := range prevCost {
		prevCost[i] = i
	}
	d, from, to = n, 0, 0
	for j := 1; j <= len(s); j++ {
		cost[0], start[0] = 0, j
		for i := 1; i <= n; i++ {
			sub := 1
			if !taken[j-1] && l[i-1] == s[j-1] {
				sub = 0
			}
			c, st := prevCost[i-1]+sub, prevStart[i-1]
			if prevCost[i]+1 < c { // s[j-1] inserted
				c, st = prevCost[i]+1, prevStart[i]
			}
			if cost[i-1]+1 < c { // l[i-1] deleted
				c, st = cost[i-1]+1, start[i-1]
			}
			cost[i], start[i] = c, st
		}
		if cost[n] < d {
			d, from, to = cost[n], start[n], j
		}
		cost, prevCost = prevCost, cost
		start, prevStart = prevStart, start
	}
	if to == 0 {
		return n, 0, 0
	}
	return d, from, to
}

// noPunct is r without punctuation and symbols.
func noPunct(r []rune) []rune {
	out := make([]rune, 0, len(r))
	for _, c := range r {
		if !unicode.IsPunct(c) && !unicode.IsSymbol(c) {
			out = append(out, c)
		}
	}
	return out
}
