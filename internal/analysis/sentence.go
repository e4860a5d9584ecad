package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits one line of text into sentences. It is the one splitter
// the evidence score, the extractive answer, claim verification, the lexical
// judge and question generation share, so that what refusal scores is what
// an answer quotes.
//
// A sentence ends after 。！？!?｡ (with any closing brackets or quotes that
// follow), and after "." or ";" followed by a space unless the word is a
// common abbreviation (e.g., i.e., Fig.). A full stop inside a bracket pair
// that closes on the same line — （…。…）「…。…」『…』【…】 — does not end the
// sentence: legal text puts whole sentences inside parentheses
// (「…をいう。以下同じ。）」) and quotations. An opening bracket that never
// closes on the line is ignored, so a stray 「 cannot swallow a paragraph.
// Fragments without a letter or digit are dropped; the rest are trimmed.
func Sentences(line string) []string {
	var out []string
	start := 0
	for _, end := range append(SentenceEnds(line), len(line)) {
		if seg := strings.TrimSpace(line[start:end]); hasLetterOrDigit(seg) {
			out = append(out, seg)
		}
		start = end
	}
	return out
}

// SentenceEnds returns the byte offsets in line just after each sentence end
// (closing brackets and quotes that follow the mark included), by the rules
// of Sentences. The text after the last offset, if any, is an unfinished
// sentence. Claim verification uses it to cut an answer where Sentences
// would, keeping each sentence's citation markers with it.
func SentenceEnds(line string) []int {
	closes := bracketClosers(line)
	var ends []int
	var open []int // byte offsets of the closers of the brackets we are inside
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		end := i + size
		cut := false
		switch {
		case closes[i] > 0:
			open = append(open, closes[i])
		case len(open) > 0 && open[len(open)-1] == i:
			open = open[:len(open)-1]
		case len(open) > 0:
		case (r == '．' || r == '.') && isMarker(line[:i]):
			// 「Q. …」「A. …」「1. …」「Ｑ．…」: the marker opens the sentence.
		case r == '。' || r == '！' || r == '？' || r == '!' || r == '?' || r == '｡' || r == '．':
			cut = true
		case r == '.' || r == ';':
			if end == len(line) || line[end] == ' ' {
				word := line[strings.LastIndexByte(line[:i], ' ')+1 : end]
				cut = r == ';' || !abbreviations[strings.ToLower(word)]
			}
		}
		if cut {
			for end < len(line) {
				c, n := utf8.DecodeRuneInString(line[end:])
				if !strings.ContainsRune("」』）)］]】\"'”’!?！？。", c) {
					break
				}
				end += n
			}
			ends = append(ends, end)
		}
		i = end
	}
	return ends
}

// isMarker reports whether s, the start of a line up to a full stop, is a
// list or FAQ marker: one Latin letter (Q, A, a) or a number.
func isMarker(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if n := utf8.RuneCountInString(s); n == 1 {
		r, _ := utf8.DecodeRuneInString(s)
		return unicode.IsLetter(r) && (r < utf8.RuneSelf || r >= 'Ａ' && r <= 'ｚ') || unicode.IsDigit(r)
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

func hasLetterOrDigit(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// SplitSentences splits text into sentences line by line (see Sentences).
func SplitSentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		out = append(out, Sentences(line)...)
	}
	return out
}

// brackets pairs each opening bracket with its closer.
var brackets = map[rune]rune{'（': '）', '(': ')', '「': '」', '『': '』', '【': '】', '［': '］', '〔': '〕', '《': '》', '〈': '〉'}

func isCloser(r rune) bool {
	switch r {
	case '）', ')', '」', '』', '】', '］', '〕', '》', '〉':
		return true
	}
	return false
}

// bracketClosers marks, by byte offset, the opening brackets of line that
// are closed later on the same line (properly nested). Only those count
// when Sentences decides whether a full stop ends a sentence.
func bracketClosers(line string) map[int]int {
	type open struct {
		at    int
		close rune
	}
	var stack []open
	var marks map[int]int
	for i, r := range line {
		if c, ok := brackets[r]; ok {
			stack = append(stack, open{i, c})
			continue
		}
		if !isCloser(r) {
			continue
		}
		// Close the innermost matching opener; openers above it never
		// closed and are dropped.
		for j := len(stack) - 1; j >= 0; j-- {
			if stack[j].close == r {
				if marks == nil {
					marks = map[int]int{}
				}
				marks[stack[j].at] = i
				stack = stack[:j]
				break
			}
		}
	}
	return marks
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g.": true, "i.e.": true, "etc.": true, "vs.": true, "mr.": true, "mrs.": true,
	"dr.": true, "fig.": true, "no.": true, "al.": true, "approx.": true, "cf.": true,
}
