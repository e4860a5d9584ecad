package assistant

import (
	"context"
	"slices"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// Reasons nearMiss gives.
const (
	missOtherPeriod = "other period"      // the question's year, quarter or month is not the evidence's
	missLocator     = "no such field"     // どの欄: no passage names a 欄
	missPredicate   = "event not stated"  // いつ改正: no passage mentions 改正
	missKind        = "asked kind absent" // 何件: no passage holds a count
)

// Refuses reports why the evidence gate refuses a question whose evidence
// score passed — the asked kind of fact is in no retrieved chunk, or the
// question is a near miss (see nearMiss) — or "" when it does not. It is
// the gate the assistant applies after the score on every path, exported
// so that benchmarks measure refusals the way `ask` makes them. s is the
// searcher the results came from.
func Refuses(ctx context.Context, s *retrieve.Searcher, q string, results []retrieve.Result) string {
	if len(results) == 0 {
		return ""
	}
	// Each check reads the chunks normalised; they are normalised once.
	qt := analysis.QuestionType(q)
	norm := make([]string, len(results))
	for i, r := range results {
		norm[i] = analysis.Normalize(r.Heading + "\n" + r.Text)
	}
	if lacksAskedKind(qt, results, norm) {
		return missKind
	}
	return nearMiss(ctx, s, q, qt, results, norm)
}

// nearMiss reports why evidence that shares a question's topic still does
// not hold what the question asks — the near miss, which the evidence score
// cannot see because the passages hold most of the question's words — or ""
// when nothing says so. It looks at every retrieved chunk (follow-ups
// included), so a detail found anywhere in the evidence keeps the question
// answered:
//
//   - the question names a year, quarter or month (第3四半期, 7〜9月,
//     2023年 — era years compared in the common era) that no chunk names,
//     while the chunks name others of that unit, and that their documents
//     name nowhere: they are about another period (the second quarter's
//     report for a question on the third);
//   - it asks which field, form or document (どの欄, どの様式, どの届出書)
//     and no chunk names one of that class;
//   - it asks when something happened, or which member of a class does
//     something, and no chunk mentions any noun of what it says happened
//     (「いつ改正されましたか」 with no 改正; 「どういう順番で記載するルール」
//     with no ルール) — words that frame the question (記載, 紹介, 予定)
//     left out;
//
// s is the searcher the results came from.
//
// qt is q's question type and norm the results' normalised heading and text.
func nearMiss(ctx context.Context, s *retrieve.Searcher, q string, qt analysis.AnswerType, results []retrieve.Result, norm []string) string {
	if len(results) == 0 || s == nil {
		return ""
	}
	evidence := make([]string, len(results)) // compacted: analysis.Compact
	for i, n := range norm {
		evidence[i] = strings.Join(strings.Fields(n), "")
	}
	switch {
	case otherPeriod(ctx, s, q, results, evidence):
		return missOtherPeriod
	case noLocator(q, evidence):
		return missLocator
	case predicateAbsent(q, evidence, s.Index().Terms):
		return missPredicate
	}
	return ""
}

// otherPeriod reports whether the question names a year, quarter or month
// that no evidence names while the evidence names others of that unit, and
// that the documents the evidence comes from do not name anywhere either:
// a period a document names only on its cover (「2023年版」) still makes the
// question one about that document.
func otherPeriod(ctx context.Context, s *retrieve.Searcher, q string, results []retrieve.Result, evidence []string) bool {
	asked := analysis.CalendarRefs(q)
	if len(asked) == 0 {
		return false
	}
	has := map[analysis.CalendarRef]bool{}
	units := map[analysis.CalendarUnit]bool{}
	for _, e := range evidence {
		for _, r := range analysis.CalendarRefs(e) {
			has[r] = true
			units[r.Unit] = true
		}
	}
	var missing []analysis.CalendarRef
	for _, r := range asked {
		if !has[r] && units[r.Unit] {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return false
	}
	var sources []string
	for _, r := range results {
		if r.Source != "" && !slices.Contains(sources, r.Source) {
			sources = append(sources, r.Source)
		}
	}
	for _, r := range missing {
		if len(sources) == 0 || namedIn(ctx, s, r, sources) {
			continue
		}
		return true
	}
	return false
}

// namedIn reports whether a chunk of the given sources names r, found by a
// lexical search for its spellings within them. A failed search counts as
// named: the question is not refused on a guess.
func namedIn(ctx context.Context, s *retrieve.Searcher, r analysis.CalendarRef, sources []string) bool {
	found, _, err := s.Search(ctx, strings.Join(r.Spellings(), " "), retrieve.Options{K: 20, Mode: "bm25", Scope: sources, NoEvidence: true})
	if err != nil {
		return true
	}
	for _, f := range found {
		if slices.Contains(analysis.CalendarRefs(f.Heading+"\n"+f.Text), r) {
			return true
		}
	}
	return false
}

// noLocator reports whether the question asks which field, form or
// document and no evidence names one of that class.
func noLocator(q string, evidence []string) bool {
	for _, noun := range analysis.LocatorNouns(q) {
		if !anyContains(evidence, noun, strings.Contains) {
			return true
		}
	}
	return false
}

// predicateAbsent reports whether the nouns of what the question says
// happened (analysis.AskedPredicate) are all missing from the evidence.
// Verbs and adjectives are left out — people paraphrase a document's
// predicates far more than its nouns —, and so are the words with which a
// question frames what it asks (記載, 紹介, 予定; analysis.IsFramingWord).
func predicateAbsent(q string, evidence []string, terms func(string) []string) bool {
	p := analysis.AskedPredicate(q)
	if p == "" || terms == nil {
		return false
	}
	var nouns []string
	for _, t := range terms(p) {
		if strings.HasPrefix(t, analysis.NGramPrefix) || analysis.IsRequestWord(t) || analysis.IsFramingWord(t) || hasHiragana(t) {
			continue
		}
		nouns = append(nouns, t)
	}
	if len(nouns) == 0 {
		return false
	}
	for _, n := range nouns {
		if anyContains(evidence, n, analysis.Present) {
			return false
		}
	}
	return true
}

func anyContains(texts []string, s string, contains func(text, s string) bool) bool {
	for _, t := range texts {
		if contains(t, s) {
			return true
		}
	}
	return false
}

func hasHiragana(s string) bool {
	for _, r := range s {
		if r >= 0x3041 && r <= 0x309f {
			return true
		}
	}
	return false
}
