// Package guard implements the guardrails of seed 002 §5: it flags
// dangerous operations (danger.go: from the operation a question asks for,
// before retrieval, and the operation its answer quotes), decides when the
// search found too little evidence to answer, and spots questions too
// vague to answer well. Each check comes
// with the exact user-facing text the seed prescribes.
//
// The checks are pure functions of their input; they never fail.
package guard

import (
	"math"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Banner is shown at the top of an answer when DetectDangerous is true
// (seed 002 §5.1). The answer is still shown, below it.
const Banner = "⚠️ 承認・確認が必要"

// ConfidentialNotice is shown at the top of every page (seed 002 §2.2).
const ConfidentialNotice = "⚠️ 機密情報の入力は禁止されています"

// DangerousKeywords is seed 002's DANGEROUS_KEYWORDS, in its order. It is
// a fixed table: do not modify it.
var DangerousKeywords = []string{
	"削除", "delete", "rm -rf", "drop", "truncate",
	"証跡", "消去", "format", "reset", "purge",
	"disable", "shutdown", "kill", "停止", "無効化",
	"clear", "remove", "erase", "wipe",
}

// normalize folds s for matching: NFKC (so full-width ＤＥＬＥＴＥ and
// half-width katakana match), lower case, and runs of white space collapsed
// to one ASCII space (so "rm  -rf" matches "rm -rf").
func normalize(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	return strings.Join(strings.Fields(s), " ")
}

// MatchDangerous returns the DangerousKeywords found in query or answer, in
// list order, each once. Matching is case-insensitive and NFKC-normalised.
//
// Japanese keywords match anywhere. ASCII keywords must start a word — the
// character before them is not an ASCII letter or digit — so "information"
// does not match "format" and "skills" does not match "kill", while
// "deleted", "ログをdelete" and "DROP TABLE" still match. This is the one
// refinement of the seed's plain "contains" rule; it only removes
// false alarms inside longer English words.
func MatchDangerous(query, answer string) []string {
	text := normalize(query) + "\n" + normalize(answer)
	var found []string
	for _, kw := range DangerousKeywords {
		if containsKeyword(text, kw) {
			found = append(found, kw)
		}
	}
	return found
}

// DetectDangerous reports whether query or answer mentions a dangerous
// operation (seed 002 detect_dangerous_operations). See MatchDangerous.
//
// It is the seed's rule, kept as its stated vocabulary and as the baseline
// `shirube bench danger` compares with; the banner is decided by
// AssessQuestion and AssessAnswer, which read what the question asks to do
// rather than which words it contains.
func DetectDangerous(query, answer string) bool {
	return len(MatchDangerous(query, answer)) > 0
}

// containsKeyword reports whether text (normalised) contains kw under the
// rules of MatchDangerous.
func containsKeyword(text, kw string) bool {
	if !isASCII(kw) {
		return strings.Contains(text, kw)
	}
	for i := 0; ; {
		j := strings.Index(text[i:], kw)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || !isASCIIAlnum(text[at-1]) {
			return true
		}
		i = at + 1
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isASCIIAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// DefaultEvidenceThreshold is the best absolute evidence score below which
// the evidence counts as insufficient. Seed 002's DEFAULT_EVIDENCE_THRESHOLD
// is 0.5 on its own similarity scale; on shirube's evidence score it is
// calibrated by `shirube bench qa` and `bench refusal` (docs/BENCHMARKS.md):
// 0.40 refuses none of qa-ja-docs' answerable questions and, with the
// near-miss checks after it, 85 % of its unanswerable ones; on JSQuAD it
// refuses 82 % of the questions whose article is absent while answering
// 95.5 % of those whose paragraph is present.
const DefaultEvidenceThreshold = 0.40

// MentionsNote introduces, after AmbiguousQueryResponse, the documents
// that name what a question asked back names (or one of its synonyms).
func MentionsNote(thing string) string {
	return "「" + thing + "」（同じ意味の語を含む）が出てくる文書："
}

// InsufficientEvidenceResponse is the answer given instead of calling the
// model when InsufficientEvidence is true (seed 002 §5.2).
const InsufficientEvidenceResponse = `該当する手順が見つかりませんでした。

以下の点をご確認ください：
- 質問のキーワードを変えて再度お試しください
- 手順書に該当する内容が含まれているか確認してください`

// InsufficientEvidence reports whether n search results whose best score is
// best are too weak to answer from (seed 002 check_insufficient_evidence):
// true when there are no results or best < threshold. A negative or NaN
// threshold means DefaultEvidenceThreshold; a NaN best is insufficient.
// The score is the absolute fused score, not one normalised per query, so
// that a query matching nothing well is not rescued by normalisation.
func InsufficientEvidence(best float64, n int, threshold float64) bool {
	if threshold < 0 || math.IsNaN(threshold) {
		threshold = DefaultEvidenceThreshold
	}
	return n <= 0 || math.IsNaN(best) || best < threshold
}

// AmbiguousQueryResponse asks the user for details when DetectAmbiguous is
// true (seed 002 §5.3).
const AmbiguousQueryResponse = `質問が曖昧な可能性があります。以下の情報を追加していただけると、より正確な回答ができます：

- 対象システムや環境
- 具体的な操作や手順名
- エラーメッセージや状況

例：「ログインできない」→「Active Directoryへのログインができない。エラーコード: 0x80090308」`

// isSeparator reports whether r separates words for the ambiguity check.
func isSeparator(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}
