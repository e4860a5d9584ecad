package ocr

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
