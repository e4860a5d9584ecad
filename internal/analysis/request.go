package analysis

import (
	"regexp"
	"strings"
)

// requestWords are the words of how a question is asked rather than what it
// asks about (「方法」「手順」「教える」…). Retrieval leaves them out of the
// evidence coverage and answers do not list them as unknowns:
// 「ログを削除する方法は？」 is answered by a passage on deleting logs whether
// or not it says 方法. Terms are in analysed form (base forms, lower case,
// English stemmed). The table is read-only.
var requestWords = map[string]bool{
	"方法": true, "手順": true, "やり方": true, "仕方": true, "対処": true, "対処法": true, "法": true,
	"対応": true, "教える": true, "知る": true, "する": true, "ある": true, "いる": true, "なる": true,
	"できる": true, "れる": true, "られる": true, "場合": true, "こと": true, "もの": true, "とき": true,
	"時": true, "何": true, "どう": true, "なぜ": true, "いつ": true, "どこ": true, "誰": true,
	"どれ": true, "どの": true, "いい": true, "よい": true, "良い": true, "必要": true, "について": true,
	"詳細": true, "説明": true, "存在": true, "具体": true, "的": true, "ください": true, "下さい": true,
	"how": true, "what": true, "why": true, "when": true, "where": true, "which": true, "who": true,
	"do": true, "doe": true, "can": true, "should": true, "procedur": true, "step": true, "way": true,
}

// IsRequestWord reports whether an analysed term is a word of how a question
// is asked (「方法」「手順」「教える」, "how") rather than of what it asks
// about.
func IsRequestWord(term string) bool { return requestWords[term] }

// requestPhraseRe matches how a question asks politely for an answer at the
// end of a clause: 「…を教えてください」「…について知りたいです」「…をお願いします」.
var requestPhraseRe = regexp.MustCompile(`(?:を|について|に関して|は)?(?:教えて(?:ください|下さい|くださいませんか|いただけますか|もらえますか|ほしい(?:です)?)?|知りたい(?:です)?|お願い(?:します|いたします))(?:[。．.!！?？\s]|$)`)

// SearchQuery returns the question without the phrases that only ask for
// an answer (「定義を教えてください」→「定義」): their words — and the
// character n-grams of 「教えてください」 — would match every passage that
// asks the same way (the questions of a Q&A document, a table of contents)
// rather than the passage that answers. A question that is nothing but such
// a phrase stays as it is.
func SearchQuery(q string) string {
	out := strings.TrimSpace(requestPhraseRe.ReplaceAllString(q, "。"))
	out = strings.TrimRight(out, "。")
	if strings.TrimSpace(out) == "" {
		return q
	}
	return out
}
