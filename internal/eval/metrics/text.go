package metrics

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	answerpkg "github.com/shirube/shirube/internal/answer"
)

// ParseChecklist splits a Checklist cell into items: one item per line,
// with list markers ("- ", "* ", "・", "•", "1.", "1)", "(1)", "①") and
// surrounding space removed. Blank lines are dropped.
func ParseChecklist(cell string) []string {
	cell = strings.ReplaceAll(cell, "\r\n", "\n")
	cell = strings.ReplaceAll(cell, "\r", "\n")
	var items []string
	for line := range strings.SplitSeq(cell, "\n") {
		if item := stripMarker(trimSpace(line)); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// stripMarker removes one leading list marker from a trimmed line.
func stripMarker(s string) string {
	for _, p := range []string{"- ", "* ", "+ ", "・", "•", "●", "○", "■", "□", "-", "*"} {
		if strings.HasPrefix(s, p) {
			return trimSpace(s[len(p):])
		}
	}
	// Circled digits ①–⑳.
	if r, size := utf8.DecodeRuneInString(s); r >= '①' && r <= '⑳' {
		return trimSpace(s[size:])
	}
	// Numbering: "1.", "1)", "1、", "(1)", "（1）", also with full-width digits.
	t := norm.NFKC.String(s)
	open := strings.HasPrefix(t, "(")
	if open {
		t = t[1:]
	}
	digits := 0
	for digits < len(t) && t[digits] >= '0' && t[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits > 3 || digits == len(t) {
		return s
	}
	rest := t[digits:]
	for _, closer := range []string{".", ")", "、", ":"} {
		if strings.HasPrefix(rest, closer) && (closer == ")" || !open) {
			return trimSpace(rest[len(closer):])
		}
	}
	return s
}

// trimSpace trims Unicode space, including the ideographic space U+3000.
func trimSpace(s string) string { return strings.TrimSpace(s) }

// normalize applies NFKC (full-width ASCII and half-width katakana become
// their usual forms) and lower-cases the text.
func normalize(s string) string { return strings.ToLower(norm.NFKC.String(s)) }

// script is the coarse script class used to cut text into runs.
type script int

const (
	scriptOther    script = iota // punctuation, space, symbols: a separator
	scriptHiragana               // particles and okurigana
	scriptHan                    // kanji, 々, ヶ
	scriptKatakana               // katakana and the long-vowel mark ー
	scriptWord                   // letters of other scripts and digits
)

func classify(r rune) script {
	switch {
	case r == 'ー' || r == 'ｰ' || unicode.Is(unicode.Katakana, r):
		return scriptKatakana
	case r == '々' || r == 'ヶ' || r == '〆' || unicode.Is(unicode.Han, r):
		return scriptHan
	case unicode.Is(unicode.Hiragana, r):
		return scriptHiragana
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return scriptWord
	}
	return scriptOther
}

// run is a maximal stretch of one script.
type run struct {
	text   string
	script script
}

func runs(s string) []run {
	var out []run
	start, cur := 0, scriptOther
	flush := func(end int) {
		if cur != scriptOther && end > start {
			out = append(out, run{s[start:end], cur})
		}
	}
	for i, r := range s {
		c := classify(r)
		if c != cur {
			flush(i)
			start, cur = i, c
		}
	}
	flush(len(s))
	return out
}

// englishStop are English function words that carry no content.
func englishStop(w string) bool {
	switch w {
	case "a", "an", "the", "of", "to", "in", "on", "at", "for", "and", "or",
		"is", "are", "be", "it", "this", "that", "with", "by", "as", "from",
		"do", "does", "please", "you", "your", "we", "our", "i", "if", "then":
		return true
	}
	return false
}

// feature is one unit of content: a kanji/katakana bigram, a lone kanji or
// katakana character, or a whole word of another script.
type feature struct {
	text string
	word bool // a whole word, matched against the answer's word set
}

// contentFeatures returns the content features of normalised text: bigrams
// of every kanji and katakana run (a one-character run is kept whole),
// and the words of other scripts minus English stop words. Hiragana runs —
// particles and verb endings, which paraphrases change freely
// (確認する / 確認を行います) — are left out.
func contentFeatures(s string) []feature {
	var fs []feature
	for _, r := range runs(s) {
		switch r.script {
		case scriptHan, scriptKatakana:
			fs = append(fs, bigrams(r.text)...)
		case scriptWord:
			if !englishStop(r.text) {
				fs = append(fs, feature{text: r.text, word: true})
			}
		}
	}
	return dedup(fs)
}

// allBigrams returns the character bigrams of every non-separator run,
// hiragana included. It is the fallback for items with almost no kanji or
// katakana, such as 「しっかりしめる」.
func allBigrams(s string) []feature {
	var fs []feature
	for _, r := range runs(s) {
		if r.script == scriptWord {
			if !englishStop(r.text) {
				fs = append(fs, feature{text: r.text, word: true})
			}
			continue
		}
		fs = append(fs, bigrams(r.text)...)
	}
	return dedup(fs)
}

func bigrams(s string) []feature {
	rs := []rune(s)
	if len(rs) == 1 {
		return []feature{{text: s}}
	}
	out := make([]feature, 0, len(rs)-1)
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, feature{text: string(rs[i : i+2])})
	}
	return out
}

func dedup(fs []feature) []feature {
	seen := make(map[feature]bool, len(fs))
	out := fs[:0]
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// Terms returns the key terms of s: its kanji, katakana and other-script
// word runs after NFKC normalisation and lower-casing, in order of first
// appearance, without duplicates, English stop words or one-character
// hiragana-bounded fragments. It is a dictionary-free stand-in for a
// morphological analyser: 「冷蔵庫の温度設定を変更したい」 gives
// [冷蔵庫 温度設定 変更].
func Terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range runs(normalize(s)) {
		if r.script == scriptHiragana {
			continue
		}
		if utf8.RuneCountInString(r.text) < 2 || (r.script == scriptWord && englishStop(r.text)) {
			continue
		}
		if !seen[r.text] {
			seen[r.text] = true
			out = append(out, r.text)
		}
	}
	return out
}

// IsRefusal reports whether a whole answer declines to answer, as opposed
// to an answer that names one unsupported part. The answer is a refusal when
// its first sentence declines — the insufficient-evidence template
// 「該当する手順が見つかりませんでした」 or a common refusal in Japanese or
// English (「…の記載がありません」「分かりません」「回答できません」, "I cannot
// answer", "no information", …; the phrase list is answer.IsRefusal, the one
// the generator's claim check also uses) — and no later sentence that does
// not decline cites evidence with a marker such as [1].
//
// So 「提供された資料には記載がありません。担当部署にお問い合わせください。」 is
// a refusal, but 「連続接続は最長12時間までとなる [1]。なお、料金については記載
// がありません。」 is an answer: models write such sentences often, and
// shirube's own prompt asks them to name what the evidence does not cover.
// Citation lines (出典/参照/根拠/source, or naming a ".md" file) are not
// sentences here.
func IsRefusal(answer string) bool {
	ss := sentences(answer)
	if len(ss) == 0 || !answerpkg.IsRefusal(ss[0]) {
		return false
	}
	for _, s := range ss[1:] {
		if !answerpkg.IsRefusal(s) && citesEvidence(s) {
			return false
		}
	}
	return true
}

// citesEvidence reports whether s carries a citation marker [n] or ［n］.
func citesEvidence(s string) bool {
	s = norm.NFKC.String(s)
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			return false
		}
		s = s[i+1:]
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > 0 && j < len(s) && (s[j] == ']' || s[j] == ',') {
			return true
		}
	}
}
