package analysis

import "unicode"

// CharBigrams returns the distinct pairs of adjacent letters or digits of
// s, in order of first appearance; white space and punctuation break
// pairs. Normalise s first (Normalize) so that full-width and half-width
// forms give the same pairs.
func CharBigrams(s string) []string {
	var out []string
	seen := map[string]bool{}
	var prev rune = -1
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			prev = -1
			continue
		}
		if prev >= 0 {
			if g := string([]rune{prev, r}); !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
		prev = r
	}
	return out
}
