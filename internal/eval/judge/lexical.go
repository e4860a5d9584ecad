package judge

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/shirube/shirube/internal/analysis"
)

// Lexical is the offline judge: deterministic scores from word overlap, with
// no model call. It is a rough stand-in for the LLM judge — it cannot see
// paraphrase or contradiction — meant for dry runs, CI and machines without
// an API key. The rules:
//
//   - Text is NFKC-normalised and lower-cased, then cut into terms: runs of
//     kanji/kana give character bigrams (a lone character is its own term;
//     bigrams of hiragana only, mostly particles and endings such as "です",
//     are dropped unless nothing else is left), other runs of letters and
//     digits give words (English stop words and single letters dropped;
//     "3.5" stays one word).
//   - "No information" answers are recognised by phrases such as "I don't
//     know", "no information", 「わかりません」「情報が見つかりません」
//     (see NoInfo). Both texts no-info: all three metrics are 1. Only the
//     ground truth no-info: precision 0 (the answer invents content),
//     recall 1, accuracy 0. Only the answer no-info: precision 1, recall 0,
//     accuracy 0.
//   - Recall is 1 when at least half of the ground truth's distinct terms
//     occur in the answer.
//   - Precision is 1 when at least half of the answer's sentences (those
//     with at least one term) are supported: 30% or more of a sentence's
//     distinct terms occur in the ground truth. An answer with no terms
//     (e.g. empty) asserts nothing, so its precision is 1.
//   - Numbers must match: every number of the ground truth (a run of
//     digits after NFKC, "3.5" one number; citation markers such as [1]
//     left out) must occur in the answer, or recall is 0 whatever the
//     overlap — 「保管期間は5年間」 does not answer 「保管期間は1年間」 — and
//     an answer sentence stating a number the ground truth lacks is not
//     supported when the ground truth has numbers of its own.
//   - Accuracy is 1 when precision and recall are both 1.
//
// The reasoning states the counts behind the scores.
func Lexical(groundTruth, answer string) Verdict {
	gtNone, ansNone := NoInfo(groundTruth), NoInfo(answer)
	switch {
	case gtNone && ansNone:
		return Verdict{1, 1, 1, "lexical: both the answer and the ground truth say no information is available."}
	case gtNone:
		return Verdict{0, 1, 0, "lexical: the ground truth says no information is available but the answer gives some."}
	case ansNone:
		return Verdict{1, 0, 0, "lexical: the answer says no information is available but the ground truth has an answer."}
	}
	gt := termSet(groundTruth)
	ans := termSet(answer)
	covered := 0
	for t := range gt {
		if ans[t] {
			covered++
		}
	}
	recallCov := 1.0
	if len(gt) > 0 {
		recallCov = float64(covered) / float64(len(gt))
	}
	gtNums, ansNums := numberSet(groundTruth), numberSet(answer)
	var missingNums []string
	for n := range gtNums {
		if !ansNums[n] {
			missingNums = append(missingNums, n)
		}
	}
	sort.Strings(missingNums)
	sentences, supported := 0, 0
	for _, s := range analysis.SplitSentences(answer) {
		ts := termSet(s)
		if len(ts) == 0 {
			continue
		}
		sentences++
		if len(gtNums) > 0 && !subset(numberSet(s), gtNums) {
			continue // states a figure the ground truth does not have
		}
		hit := 0
		for t := range ts {
			if gt[t] {
				hit++
			}
		}
		if float64(hit) >= 0.3*float64(len(ts)) {
			supported++
		}
	}
	precShare := 1.0
	if sentences > 0 {
		precShare = float64(supported) / float64(sentences)
	}
	v := Verdict{}
	if precShare >= 0.5 {
		v.Precision = 1
	}
	if recallCov >= 0.5 && len(missingNums) == 0 {
		v.Recall = 1
	}
	if v.Precision == 1 && v.Recall == 1 {
		v.Accuracy = 1
	}
	v.Reasoning = fmt.Sprintf("lexical: %d/%d ground-truth terms found in the answer (%s); %d/%d answer sentences supported by the ground truth (%s).",
		covered, len(gt), pct(covered, len(gt)), supported, sentences, pct(supported, sentences))
	if len(missingNums) > 0 {
		v.Reasoning += " Ground-truth number(s) missing from the answer: " + strings.Join(missingNums, ", ") + "."
	}
	return v
}

// numberSet returns the numbers of text: runs of digits after NFKC, with a
// decimal point between digits kept ("3.5"), leading zeros dropped ("05"
// is "5"). Citation markers ([1], ［2］) are not numbers of the text.
func numberSet(text string) map[string]bool {
	t := []rune(norm.NFKC.String(text))
	set := map[string]bool{}
	for i := 0; i < len(t); {
		if !unicode.IsDigit(t[i]) {
			i++
			continue
		}
		j := i
		for j < len(t) && (unicode.IsDigit(t[j]) || (t[j] == '.' && j+1 < len(t) && unicode.IsDigit(t[j+1]))) {
			j++
		}
		citation := i > 0 && t[i-1] == '[' && j < len(t) && t[j] == ']'
		if !citation {
			n := strings.TrimLeft(string(t[i:j]), "0")
			if n == "" || n[0] == '.' {
				n = "0" + n
			}
			set[n] = true
		}
		i = j
	}
	return set
}

// subset reports whether every key of a is in b.
func subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// NoInfo reports whether text says that no information is available.
func NoInfo(text string) bool {
	t := strings.ToLower(norm.NFKC.String(text))
	t = strings.ReplaceAll(t, "’", "'")
	if strings.TrimSpace(t) == "" {
		return false
	}
	for _, p := range []string{
		"i don't know", "i do not know", "no information", "cannot find", "can't find",
		"could not find", "couldn't find", "not available", "no relevant", "unable to find", "not mentioned",
		"わかりません", "分かりません", "わからない", "分からない", "情報がありません", "情報が見つかりません", "見つかりませんでした",
		"記載がありません", "記載されていません", "回答できません", "情報はありません", "不明です",
	} {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

// pct formats a share as a whole percent; "-" when there is nothing to share.
func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー' || r == '々'
}

func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isCJK(r)
}

func isStopWord(w string) bool {
	switch w {
	case "a", "an", "the", "is", "are", "was", "were", "be", "been", "of", "to", "in", "on", "at", "for",
		"and", "or", "it", "its", "this", "that", "with", "as", "by", "from", "you", "your", "can", "do",
		"does", "will", "there", "their", "has", "have", "had", "which", "what", "how", "i", "we", "they":
		return true
	}
	return false
}

func allHiragana(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Hiragana, r) {
			return false
		}
	}
	return true
}

// termSet cuts text into distinct terms (see Lexical).
func termSet(text string) map[string]bool {
	t := []rune(strings.ToLower(norm.NFKC.String(text)))
	set := map[string]bool{}
	var kana []string // all-hiragana bigrams, kept in case nothing else is found
	for i := 0; i < len(t); {
		switch {
		case isCJK(t[i]):
			j := i
			for j < len(t) && isCJK(t[j]) {
				j++
			}
			if j-i == 1 {
				set[string(t[i])] = true
			}
			for k := i; k+1 < j; k++ {
				bg := string(t[k : k+2])
				if allHiragana(bg) {
					kana = append(kana, bg)
					continue
				}
				set[bg] = true
			}
			i = j
		case isWordRune(t[i]):
			j := i
			for j < len(t) && (isWordRune(t[j]) || (t[j] == '.' && j+1 < len(t) && j > i && unicode.IsDigit(t[j-1]) && unicode.IsDigit(t[j+1]))) {
				j++
			}
			w := string(t[i:j])
			if !isStopWord(w) && (j-i > 1 || unicode.IsDigit(t[i])) {
				set[w] = true
			}
			i = j
		default:
			i++
		}
	}
	if len(set) == 0 {
		for _, bg := range kana {
			set[bg] = true
		}
	}
	return set
}
