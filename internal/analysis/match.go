package analysis

import (
	"strings"
	"unicode"
)

// Present reports whether an analysed term occurs in normalised text (see
// Normalize): as a substring, which also finds a word inside a compound
// (ロック in ロックアウト), or — for a term of three runes or more that ends
// in kana — by its stem without that last kana, which finds a verb or
// adjective in its base form (止める, 新しい) where the text conjugates it
// (止めて, 新しく) and a katakana word whose final long-vowel mark the text
// drops (サーバー, サーバ).
func Present(norm, term string) bool {
	if strings.Contains(norm, term) {
		return true
	}
	r := []rune(term)
	if n := len(r); n >= 3 && r[n-1] >= 0x3041 && r[n-1] <= 0x30ff {
		return strings.Contains(norm, string(r[:n-1]))
	}
	return false
}

// HasJapanese reports whether s contains kana or kanji: a question without
// any is answered and worded in English.
func HasJapanese(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			return true
		}
	}
	return false
}
