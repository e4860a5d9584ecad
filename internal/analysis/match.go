package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
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

// PredicateWeight is how much a predicate term (see IsPredicate) counts
// against a noun when a question's terms are matched with evidence.
const PredicateWeight = 0.35

// IsPredicate reports whether an analysed term is a predicate or a
// function-like word rather than a noun: a verb or adjective in its base
// form (使う, 選ぶ, 新しい — the term ends in hiragana) or a word written in
// hiragana alone (くらい, それぞれ). People paraphrase a document's
// predicates far more than its nouns (「使える」 for 「適用を受ける」), so a
// missing predicate says little about whether a passage answers the
// question, while a missing noun says much.
func IsPredicate(term string) bool {
	r, _ := utf8.DecodeLastRuneInString(term)
	return r >= 0x3041 && r <= 0x309f && utf8.RuneCountInString(term) >= 2
}
