package answer

import (
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// stitchChunks returns the text of each result with the sentence its chunk
// cuts short completed from the next chunk of the same page, when that
// chunk was retrieved too. Chunks are windows that overlap (the next one
// repeats the last runes of this one), so a sentence that straddles two
// chunks appears as a cut tail in the first and as a headless fragment at
// the start of the second («…掲示することによって行うことができる» and
// «た書面を…できる。この場合においては、…みなす。»): neither can be quoted
// whole. When both chunks are in the results, the first chunk's text gets
// the whole sentence and the second one starts after it, so every sentence
// is quoted whole, once, from the chunk where it begins. Text is never
// invented: the completion is the next chunk's own text after the overlap.
// Results that are not consecutive chunks of one file keep their text.
//
// texts are the results' texts as the answer reads them (PDF text
// unwrapped); the stitched texts come back in their place.
//
// succ maps a result to the result stitched after it: the first sentence of
// the one follows the last sentence of the other. midLine holds the results
// whose first line goes on from the line their predecessor ends with.
func stitchChunks(results []retrieve.Result, texts []string) (_ []string, succ map[int]int, midLine map[int]bool) {
	texts = append([]string(nil), texts...)
	type key struct {
		file string
		idx  int
	}
	at := map[key]int{}
	for i, r := range results {
		if n := chunkIndex(r.ChunkID); n >= 0 {
			k := key{r.File, n}
			if _, dup := at[k]; !dup {
				at[k] = i
			}
		}
	}
	// Stitch in document order so that a run of three chunks chains.
	order := make([]int, 0, len(results))
	for i := range results {
		order = append(order, i)
	}
	sortByChunk(order, results)
	for _, i := range order {
		n := chunkIndex(results[i].ChunkID)
		if n < 0 {
			continue
		}
		j, found := at[key{results[i].File, n + 1}]
		if !found || j == i {
			continue
		}
		a, b, mid, ok := stitchPair(texts[i], texts[j])
		if !ok {
			continue
		}
		texts[i], texts[j] = a, b
		if succ == nil {
			succ, midLine = map[int]int{}, map[int]bool{}
		}
		succ[i] = j
		midLine[j] = mid
	}
	return texts, succ, midLine
}

// sortByChunk orders result indices by file, then chunk index.
func sortByChunk(order []int, results []retrieve.Result) {
	less := func(a, b int) bool {
		ra, rb := results[a], results[b]
		if ra.File != rb.File {
			return ra.File < rb.File
		}
		return chunkIndex(ra.ChunkID) < chunkIndex(rb.ChunkID)
	}
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && less(order[j], order[j-1]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}

// minOverlap is the shortest run of text two chunks must share before they
// are taken for neighbours whose overlap can be stitched.
const minOverlap = 12

// stitchPair joins chunk a with the chunk b that follows it: a gets the rest
// of its last sentence from b, b loses its head up to the end of that
// sentence. Both keep their heading lines. midLine reports that b now
// starts inside the line a ends on. ok is false, and both come back
// unchanged, when b does not start by repeating the end of a.
func stitchPair(a, b string) (_, _ string, midLine, ok bool) {
	headA, bodyA := splitHeadingLines(a)
	headB, bodyB := splitHeadingLines(b)
	bodyA = strings.TrimRight(bodyA, " \t\n")
	ov := overlapLen(bodyA, bodyB)
	if ov < minOverlap {
		return a, b, false, false
	}
	full := bodyA + bodyB[ov:]
	end := sentenceEndAfter(full, len(bodyA))
	if end <= len(bodyA) {
		// a ends exactly where a sentence ends: only drop b's repeat of it.
		end = len(bodyA)
	}
	restB := strings.TrimLeft(full[end:], " \t\n")
	return headA + full[:end], headB + restB, end < len(full) && full[end] != '\n', true

}

// splitHeadingLines splits off the leading Markdown heading lines (the
// heading path every chunk starts with).
func splitHeadingLines(text string) (head, body string) {
	rest := text
	for {
		line, after, found := strings.Cut(rest, "\n")
		if !headingLine.MatchString(strings.TrimSpace(line)) {
			break
		}
		if !found {
			return text, ""
		}
		rest = after
	}
	return text[:len(text)-len(rest)], rest
}

// overlapLen returns the length in bytes of the longest suffix of a that is
// also a prefix of b, when it is at least minOverlap bytes long; else 0.
func overlapLen(a, b string) int {
	probe := b
	if len(probe) > 4*minOverlap {
		probe = probe[:4*minOverlap]
		for len(probe) > 0 && !isRuneStart(b[len(probe)]) {
			probe = probe[:len(probe)-1]
		}
	}
	if len(probe) < minOverlap {
		return 0
	}
	from := max(0, len(a)-4096)
	for from < len(a) {
		k := strings.Index(a[from:], probe)
		if k < 0 {
			break
		}
		start := from + k
		if strings.HasPrefix(b, a[start:]) {
			return len(a) - start
		}
		from = start + 1
	}
	return 0
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

// sentenceEndAfter returns the byte offset in text of the end of the
// sentence that holds offset pos (analysis.SentenceEnds on its line), or
// the end of that line when the sentence does not end on it.
func sentenceEndAfter(text string, pos int) int {
	if pos >= len(text) {
		return len(text)
	}
	lineStart := strings.LastIndexByte(text[:pos], '\n') + 1
	lineEnd := len(text)
	if k := strings.IndexByte(text[pos:], '\n'); k >= 0 {
		lineEnd = pos + k
	}
	if pos == lineStart {
		return pos // the join falls on a line break
	}
	line := text[lineStart:lineEnd]
	for _, e := range analysis.SentenceEnds(line) {
		if lineStart+e >= pos {
			return lineStart + e
		}
	}
	return lineEnd
}
