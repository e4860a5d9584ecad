package convert

import (
	"strings"
	"unicode"

	"github.com/pmezard/go-difflib/difflib"
	"golang.org/x/text/unicode/norm"
)

// Threshold is the lowest similarity that counts as a match (the seed's 85%).
const Threshold = 0.85

// Confidence labels for a match score.
const (
	Perfect = "PERFECT" // score ≥ 0.99
	Good    = "GOOD"    // 0.95 ≤ score < 0.99
	Low     = "LOW"     // 0.85 ≤ score < 0.95
	Failed  = "FAILED"  // score < 0.85: not matched
	// ByID marks a flat-shape answer matched through its question id
	// ("Q3" → Question Number 3) instead of by text.
	ByID = "ID"
)

// Confidence returns the label of a similarity score.
func Confidence(score float64) string {
	switch {
	case score >= 0.99:
		return Perfect
	case score >= 0.95:
		return Good
	case score >= Threshold:
		return Low
	}
	return Failed
}

// Ratio is Python's difflib.SequenceMatcher(None, a, b).ratio() on the code
// points of a and b: 2·M / (len(a)+len(b)) where M is the number of runes in
// matching blocks, and 1 when both are empty. Like Python it applies the
// "autojunk" heuristic: when b has 200 runes or more, a rune that occurs more
// than len(b)/100 + 1 times in b is treated as junk and cannot start a
// match, which can lower the score of long, repetitive texts.
func Ratio(a, b string) float64 {
	return difflib.NewMatcher(runes(a), runes(b)).Ratio()
}

// runes splits s into one string per code point, the sequence unit of
// Python's SequenceMatcher on str.
func runes(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// normalizeQuestion prepares question text for matching: NFKC (full-width
// and half-width forms agree), lower case, and runs of white space collapsed
// to one space with the ends trimmed.
func normalizeQuestion(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
