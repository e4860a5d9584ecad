package embed

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// CharNGrams returns the character n-grams of s, in order, for use as Local
// features. The text is NFKC-normalised (full-width letters and digits become
// ASCII, half-width katakana becomes full-width) and lower-cased, then split
// into runs at whitespace, punctuation and control characters; n-grams never
// span a run boundary. A run shorter than n is returned whole, so a lone
// kanji between punctuation still counts. n < 1 gives nil.
//
// Example: CharNGrams("東京都、ＡＢ", 2) = ["東京", "京都", "ab"].
func CharNGrams(s string, n int) []string {
	if n < 1 || s == "" {
		return nil
	}
	s = strings.ToLower(norm.NFKC.String(s))
	out := make([]string, 0, utf8.RuneCountInString(s))
	// starts holds the byte offset of each rune of the current run, plus one
	// sliding window of the last n offsets.
	starts := make([]int, 0, n+1)
	flush := func(end int) {
		if len(starts) > 0 && len(starts) < n {
			out = append(out, s[starts[0]:end])
		}
		starts = starts[:0]
	}
	total := 0 // runes seen in the current run
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if isSeparator(r) {
			if total < n {
				flush(i)
			}
			starts, total = starts[:0], 0
			i += w
			continue
		}
		if len(starts) == n {
			copy(starts, starts[1:])
			starts = starts[:n-1]
		}
		starts = append(starts, i)
		total++
		i += w
		if len(starts) == n {
			out = append(out, s[starts[0]:i])
		}
	}
	if total < n {
		flush(len(s))
	}
	return out
}

// isSeparator reports whether r breaks a run of n-gram characters.
func isSeparator(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsControl(r) || r == '\u3000'
}
