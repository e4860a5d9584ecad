package chunk

import (
	"strings"
	"unicode"
)

// MinPageLetters is the fewest letters (kana, kanji, Latin; digits and
// marks do not count) a page of a multi-page document needs to be chunked
// on its own. A cover (「…ガイドライン / ２０２２年 10 月 / 総務省」, 38
// letters), a part title page (「Ⅲ. クラウドサービス利用側に求められる
// 対策」) or a navigation page (「参考情報 / ← 目次へ」) is one short chunk
// that holds a document's title words and nothing else: BM25 favours short
// texts, so such a chunk outranked the pages that answer, and its bare
// title was quoted as the answer.
const MinPageLetters = 40

// MergeNearEmpty returns the texts to chunk for the pages of one document,
// one per page in the same order. In a document of several pages, a page
// with fewer than MinPageLetters letters is not a chunk of its own: its
// text leads the next page that has text (blank pages in between are
// passed over), so its words stay searchable — the cover's date and
// publisher — in a chunk of substance, cited on that next page. A near-empty
// last page, with no page after it, stays as it is. The page database is
// not touched: this concerns what is indexed, not what a page file holds.
func MergeNearEmpty(texts []string) []string {
	out := make([]string, len(texts))
	copy(out, texts)
	if len(texts) < 2 {
		return out
	}
	carry := ""
	for i, t := range out {
		if strings.TrimSpace(t) == "" {
			out[i] = ""
			continue
		}
		if carry != "" {
			t = carry + "\n\n" + t
			out[i], carry = t, ""
		}
		if letters(t) < MinPageLetters && nextWithText(out, i) {
			carry, out[i] = strings.TrimRight(t, "\n"), ""
		}
	}
	return out
}

// nextWithText reports whether a page after i holds text.
func nextWithText(texts []string, i int) bool {
	for _, t := range texts[i+1:] {
		if strings.TrimSpace(t) != "" {
			return true
		}
	}
	return false
}

// letters counts the letters of s.
func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}
