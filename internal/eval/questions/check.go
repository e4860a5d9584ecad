package questions

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
)

// Check is the verdict of CheckRow on one generated question.
type Check struct {
	OK  bool
	Why string // why the question fails; "" when it passes
}

// CheckRow checks a single-page question against the text of its page:
//
//   - the answer is on the page: the ground truth and every checklist
//     item occur in it (after NFKC, lower-casing and removing spaces, which
//     PDF extraction scatters);
//   - the question makes sense without the page: no checklist item and no
//     topic the question names is a fragment of a longer word. A phrase is
//     a fragment when it ends in one digit right after kana or kanji
//     (「抗ヒスタミン3」, a list number glued on; 「内線4110」 is whole), ends in a conjunction cut off its phrase
//     (「エストロン又」: 又は, 及び, 並びに, 若しくは), or is preceded by a
//     digit everywhere it occurs on the page (「日各府省情報化統括責任者」
//     is the tail of 「…12日各府省…」);
//   - a cloze question quotes a whole sentence (not one that starts with a
//     case particle, cut mid-way: 「はなく、【　】の中核を…」) and does not blank
//     out a bare list or page number at its start (「【　】 総務省が…」 → 19).
//
// Multi-page and negative questions are not checked (OK).
func CheckRow(r Row, page string) Check {
	if r.Kind != KindPage {
		return Check{OK: true}
	}
	p := squeeze(page)
	spaced := analysis.Normalize(page)
	if gt := squeeze(r.GroundTruth); gt == "" || !strings.Contains(p, gt) {
		return Check{Why: "the ground truth is not on the page"}
	}
	for _, it := range r.Checklist {
		if !strings.Contains(p, squeeze(it)) {
			return Check{Why: "checklist item 「" + it + "」 is not on the page"}
		}
		if why := fragment(it, p, spaced); why != "" {
			return Check{Why: "checklist item 「" + it + "」 " + why}
		}
	}
	if _, quoted, ok := strings.Cut(r.Question, "に入る語句は何ですか？「"); ok {
		quoted = strings.TrimSuffix(quoted, "」")
		if first, _ := utf8.DecodeRuneInString(quoted); strings.ContainsRune("はがをへや", first) {
			return Check{Why: "the quoted sentence starts mid-sentence (「" + quoted + "」)"}
		}
		if strings.HasPrefix(quoted, "【　】 ") && strings.TrimFunc(r.GroundTruth, unicode.IsDigit) == "" {
			return Check{Why: "the blank is a list or page number (" + r.GroundTruth + ")"}
		}
	}
	if t := namedTopic(r.Question); t != "" {
		if why := fragment(t, p, spaced); why != "" {
			return Check{Why: "the question's topic 「" + t + "」 " + why}
		}
	}
	return Check{OK: true}
}

// mdLink is a Markdown link's target, which the text of a page has and a
// sentence read from it does not.
var mdLink = regexp.MustCompile(`\]\([^)]*\)`)

// squeeze normalises text for containment: NFKC, lower case, Markdown
// markup (emphasis, code, link targets, brackets) and spaces removed.
func squeeze(s string) string {
	s = mdLink.ReplaceAllString(analysis.Normalize(s), "")
	s = strings.NewReplacer("*", "", "`", "", "[", "", "]", "", "#", "", ">", "", "|", "").Replace(s)
	return strings.Join(strings.Fields(s), "")
}

// namedTopic is the topic an offline question names: the phrase before
// 「について」 after the last 「では、」.
func namedTopic(q string) string {
	head, _, ok := strings.Cut(q, "について")
	if !ok {
		return ""
	}
	if i := strings.LastIndex(head, "では、"); i >= 0 {
		head = head[i+len("では、"):]
	}
	return strings.TrimSpace(head)
}

// cutConjunctions are the first characters of conjunctions a phrase cut
// short ends with.
var cutConjunctions = []string{"又", "及", "並", "若", "乃", "或"}

// fragment says why phrase (found in the squeezed page, the second
// argument) is a piece of a longer word, or "" when it is whole; spaced is
// the page normalised with its spaces kept.
func fragment(phrase, _, spaced string) string {
	ph := squeeze(phrase)
	if ph == "" {
		return ""
	}
	last, size := utf8.DecodeLastRuneInString(ph)
	if unicode.IsDigit(last) {
		// One digit right after kana or kanji: a list number glued on
		// (「抗ヒスタミン3」). 「内線4110」 and 「S1」 are whole.
		head := ph[:len(ph)-size]
		if r, _ := utf8.DecodeLastRuneInString(head); head != "" && (unicode.In(r, unicode.Han, unicode.Katakana, unicode.Hiragana) || r == 'ー') {
			return "ends in a number glued to a word (a list number?)"
		}
	}
	for _, c := range cutConjunctions {
		if strings.HasSuffix(ph, c) && utf8.RuneCountInString(ph) > 1 {
			return "ends in a conjunction cut off its phrase (" + c + ")"
		}
	}
	// The tail of a date or count starts with a kanji right after a digit
	// (「12日各府省…」, 「昭和36年厚生省令第…」), on the page as written:
	// spaces count, so 「Step2 Step3」 does not make Step3 a tail.
	first, _ := utf8.DecodeRuneInString(ph)
	if !unicode.Is(unicode.Han, first) {
		return ""
	}
	p := spaced
	seen, afterDigit := 0, 0
	for i := 0; ; {
		j := strings.Index(p[i:], ph)
		if j < 0 {
			break
		}
		at := i + j
		seen++
		if r, _ := utf8.DecodeLastRuneInString(p[:at]); at > 0 && unicode.IsDigit(r) {
			afterDigit++
		}
		i = at + len(ph)
	}
	if seen > 0 && afterDigit == seen {
		return "follows a number wherever it occurs (the tail of a date or count)"
	}
	return ""
}
