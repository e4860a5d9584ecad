package answer

import (
	"regexp"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// markNavigation marks the candidates that only name a section of their
// own document (candidate.nav): the entries of a table of contents (「6.
// FOSSologyの実行とシステム起動時に自動的に実行するための設定」 under 「目次」,
// which repeats the heading of section 6). Such a line points to where the
// answer is; it is not the answer, yet it holds the question's words as
// densely as the heading it repeats, and the value or place it may hold
// (「Docker CEのインストール」) is a section's title, not a fact stated. A
// candidate is navigation when its text, without an item number, equals a
// heading of the same file — one of the retrieved passages' heading paths
// or heading lines (texts are the passages as read) — other than the
// headings of its own passage, or when its passage's own section is a
// table of contents.
func markNavigation(cands []*candidate, results []retrieve.Result, texts []string) {
	headings := map[string]map[string]bool{} // file → navKeys of its headings
	add := func(file, k string) {
		if headings[file] == nil {
			headings[file] = map[string]bool{}
		}
		headings[file][k] = true
	}
	own := make([]map[string]bool, len(results))
	for i, r := range results {
		own[i] = map[string]bool{}
		for _, h := range strings.Split(r.Heading, " > ") {
			if k := navKey(h); k != "" {
				add(r.File, k)
				own[i][k] = true
			}
		}
		for _, line := range headingLines(texts[i]) {
			if k := navKey(line); k != "" {
				add(r.File, k)
			}
		}
	}
	for _, c := range cands {
		k := navKey(c.text)
		if tocHeading.MatchString(strings.TrimSpace(results[c.chunk].Section())) || k != "" && headings[results[c.chunk].File][k] && !own[c.chunk][k] {
			c.nav, c.typed, c.weakDate = true, false, false
		}
	}
}

// navigationFactor scales the relevance of a navigation line.
const navigationFactor = 0.3

// tocHeading matches the heading of a table of contents.
var tocHeading = regexp.MustCompile(`(?i)^(?:目\s*次|もくじ|contents|table of contents|index)$`)

// navKey is the form in which a heading and a contents entry are compared:
// the term it names (analysis.HeadingTerm: without its section number), without
// a bullet or spaces.
func navKey(s string) string {
	s = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "#"))
	s = bulletPrefix.ReplaceAllString(analysis.Normalize(s), "")
	s = strings.Join(strings.Fields(analysis.HeadingTerm(s)), "")
	if len([]rune(s)) < 4 {
		return "" // 「概要」「はじめに」 name too little to tell an entry from text
	}
	return s
}
