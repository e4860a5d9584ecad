package guard

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// MinQueryRunes is the shortest query, in characters not counting spaces
// and punctuation, that is not ambiguous by length alone (seed 002 §5.3:
// "質問が5文字未満").
const MinQueryRunes = 5

// minContentRunes is how many characters must remain after removing
// interrogatives, generic request words and particles for a query to name
// something specific.
const minContentRunes = 2

// japaneseFillers are removed from Japanese text before counting content:
// interrogatives (何, どう, なぜ…), generic request words (手順, 方法,
// 教えて…), demonstratives, auxiliaries and endings. They are removed as
// substrings, longest first, so "どうすればいいですか" disappears whole.
var japaneseFillers = sortedLongestFirst([]string{
	// interrogatives
	"どうやって", "どうして", "どうすれば", "どうしたら", "どのように", "どうやったら",
	"どうする", "どうなる", "どんな", "どちら", "どれ", "どの", "どこ", "いつ",
	"なぜ", "なんで", "なに", "なん", "何", "誰", "だれ", "いくつ", "いくら", "どう",
	// generic request words
	"手順書", "手順", "方法", "やり方", "仕方", "対処法", "対処方法", "対処", "対応方法",
	"対応", "対策", "解決策", "解決方法", "解決", "詳細", "詳しく", "内容", "情報",
	"説明", "教えてください", "教えて下さい", "教えて", "教える", "知りたい",
	"ください", "下さい", "お願いします", "お願い", "わからない", "分からない",
	"エラー", "問題", "障害", "トラブル", "不具合", "場合", "ケース",
	// demonstratives and formal nouns
	"これ", "それ", "あれ", "この", "その", "あの", "こと", "もの", "ため", "について",
	// auxiliaries and endings
	"でしょうか", "ですか", "ますか", "です", "ます", "すればいい", "すれば", "したら",
	"したい", "します", "して", "する", "できない", "できる", "いいですか", "いい",
	"よい", "良い", "ある", "あります", "ない", "でき",
})

// japaneseParticles are single-character particles removed after the
// fillers.
const japaneseParticles = "はがをにでともへのかやねよ"

// englishFillers are English words that carry no specifics: question
// words, request words and function words. They are removed as whole
// words only.
var englishFillers = map[string]bool{
	"what": true, "how": true, "why": true, "when": true, "where": true, "who": true,
	"which": true, "whom": true, "whose": true, "whats": true, "hows": true,
	"do": true, "does": true, "did": true, "i": true, "we": true, "you": true, "me": true,
	"my": true, "it": true, "this": true, "that": true, "these": true, "those": true,
	"is": true, "are": true, "was": true, "be": true, "a": true, "an": true, "the": true,
	"to": true, "of": true, "for": true, "about": true, "with": true, "on": true, "in": true,
	"can": true, "could": true, "should": true, "would": true, "will": true, "shall": true,
	"please": true, "tell": true, "show": true, "explain": true, "help": true, "know": true,
	"procedure": true, "procedures": true, "step": true, "steps": true, "way": true,
	"method": true, "fix": true, "solve": true, "handle": true, "issue": true,
	"problem": true, "error": true, "details": true, "detail": true, "s": true,
}

// DetectAmbiguous reports whether query is too vague to answer well and
// the user should be asked for details (seed 002 §5.3). After NFKC and
// lower-casing, a query is ambiguous when
//
//  1. it has fewer than MinQueryRunes characters, not counting white space,
//     punctuation and symbols ("なぜ？", "VPN", "help"); or
//  2. fewer than 2 characters remain once interrogatives, generic request
//     words (手順, 方法, 教えて, 対処法…), demonstratives, auxiliaries and
//     particles are removed — which covers both "interrogatives only"
//     ("どうすればいい？", "何をすればいいですか", "how do I fix it?") and
//     "missing specifics" ("手順を教えてください", "その詳細を教えて"); or
//  3. it asks nothing (no question mark, interrogative or request word)
//     and names at most one thing: a bare symptom ("ログインできない",
//     "エラーが出た").
//
// A query naming anything concrete ("VPNに接続できない",
// "ログファイルを削除する方法は？") is not ambiguous. Follow-up questions
// that lean on the conversation ("その手順の詳細を教えて") are ambiguous on
// their own: check the rewritten, self-contained query instead.
func DetectAmbiguous(query string) bool {
	q := normalize(query)
	if countRunes(q) < MinQueryRunes {
		return true
	}
	if contentRunes(q) < minContentRunes {
		return true
	}
	// 3. A bare statement of a symptom that names at most one thing and
	// asks nothing ("ログインできない", "エラーが出た") says neither which
	// system nor what is wanted; "VPNに接続できない" names two, and
	// "ログインできない場合の対処法は？" asks.
	return !asks(q) && contentWords(q) <= 1
}

// asks reports whether a normalised query asks something: a question mark,
// an interrogative or a request word (教えて, 方法, 手順 …).
func asks(q string) bool {
	if strings.ContainsAny(q, "?？") {
		return true
	}
	for _, f := range japaneseFillers {
		if isAskingFiller(f) && strings.Contains(q, f) {
			return true
		}
	}
	for _, w := range splitWords(q) {
		switch w {
		case "what", "how", "why", "when", "where", "who", "which", "please", "tell", "show", "explain", "help":
			return true
		}
	}
	return false
}

// isAskingFiller reports whether a filler asks for something (an
// interrogative or a request word) rather than describing a state:
// 「教えて」「方法」「どう」 ask, 「エラー」「できない」 do not.
func isAskingFiller(f string) bool {
	switch f {
	case "エラー", "問題", "障害", "トラブル", "不具合", "場合", "ケース", "これ", "それ", "あれ",
		"この", "その", "あの", "こと", "もの", "ため", "です", "ます", "して", "する", "できない",
		"できる", "ある", "あります", "ない", "でき", "わからない", "分からない", "内容", "情報", "対応", "対策", "解決":
		return false
	}
	return true
}

// contentWords counts the runs of characters left after removing fillers
// and particles: the things a query names.
func contentWords(s string) int { return len(named(s)) }

// Named returns the things a question names: the runs of characters left
// after removing interrogatives, request words, fillers and particles
// (「ログインできない場合の対処法は？」 → ログイン; 「VPNに接続できない」 →
// vpn, 接続), in order. A question that names at most one thing says
// neither which system nor which case it is about.
func Named(query string) []string { return named(normalize(query)) }

// named is Named of a normalised query.
func named(s string) []string {
	var out []string
	for _, word := range splitWords(s) {
		if word[0] < utf8.RuneSelf {
			if w := strings.ReplaceAll(word, "'", ""); !englishFillers[w] {
				out = append(out, w)
			}
			continue
		}
		for _, f := range japaneseFillers {
			word = strings.ReplaceAll(word, f, " ")
		}
		var run []rune
		for _, r := range word {
			if r != ' ' && !strings.ContainsRune(japaneseParticles, r) {
				run = append(run, r)
				continue
			}
			if len(run) > 0 {
				out = append(out, string(run))
				run = run[:0]
			}
		}
		if len(run) > 0 {
			out = append(out, string(run))
		}
	}
	return out
}

// countRunes counts the characters of s that are not separators.
func countRunes(s string) int {
	n := 0
	for _, r := range s {
		if !isSeparator(r) {
			n++
		}
	}
	return n
}

// contentRunes counts the characters of s (normalised) left after removing
// fillers and particles. s is split into words at separators and at
// boundaries between ASCII and other characters: ASCII words are checked
// against englishFillers, other text has japaneseFillers and
// japaneseParticles removed.
func contentRunes(s string) int {
	n := 0
	for _, word := range splitWords(s) {
		if word[0] < utf8.RuneSelf {
			if w := strings.ReplaceAll(word, "'", ""); !englishFillers[w] {
				n += len(w)
			}
			continue
		}
		for _, f := range japaneseFillers {
			word = strings.ReplaceAll(word, f, " ")
		}
		for _, r := range word {
			if r != ' ' && !strings.ContainsRune(japaneseParticles, r) {
				n++
			}
		}
	}
	return n
}

// splitWords splits s at separators (keeping apostrophes inside ASCII
// words) and where the text switches between ASCII and non-ASCII.
func splitWords(s string) []string {
	var words []string
	start, ascii := -1, false
	for i, r := range s {
		sep := isSeparator(r) && r != '\''
		isASCII := r < utf8.RuneSelf
		if start >= 0 && (sep || isASCII != ascii) {
			words = append(words, s[start:i])
			start = -1
		}
		if !sep && start < 0 {
			start, ascii = i, isASCII
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// sortedLongestFirst returns words sorted by decreasing length in bytes, so
// that longer fillers are removed before their parts.
func sortedLongestFirst(words []string) []string {
	out := slices.Clone(words)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}
