package answer

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/shirube/shirube/internal/analysis"
)

// Claim is one statement of an answer and what its evidence says of it.
type Claim struct {
	Text string `json:"text"` // the statement, citation markers removed
	// Cited lists the evidence numbers the statement cites.
	Cited []int `json:"cited"`
	// SupportedBy lists the evidence that supports it: the cited evidence
	// that does, or, for a statement that cites nothing, any evidence.
	SupportedBy []int `json:"supported_by,omitempty"`
	// Uncited is set when none of the cited evidence supports the claim but
	// other evidence given to the generator does (a citation mistake, not
	// an invented fact).
	Uncited   bool `json:"supported_by_uncited_evidence,omitempty"`
	Supported bool `json:"supported"`
	// CheckedBy says which check gave the verdict: "lexical", or "llm" when
	// the lexical check could not confirm the claim and the model was asked.
	CheckedBy string `json:"checked_by"`
	// Coverage is the best share of the statement's content words found in
	// one piece of evidence it was checked against.
	Coverage float64 `json:"coverage"`
	// MissingNumbers lists numbers the statement gives that none of that
	// evidence contains (a number not in the evidence is never supported).
	MissingNumbers []string `json:"missing_numbers,omitempty"`

	statement int // index into Verification.statements
}

// Verification is the claim check of one answer: seed 003's verification
// step ("CoVe-style claim checks") and its answer_supported_rate and
// citation_precision KPIs.
type Verification struct {
	Method string  `json:"method"` // "lexical", or "lexical+llm" when the model re-checked claims
	Claims []Claim `json:"claims"`
	// SupportedRate is the share of claims the evidence supports (1 when
	// the answer makes no claim).
	SupportedRate float64 `json:"answer_supported_rate"`
	// CitationPrecision is the share of citations (claim, evidence pairs)
	// whose evidence supports the claim that cites it (1 when nothing is
	// cited).
	CitationPrecision float64 `json:"citation_precision"`
	// RecheckError says why the model's re-check failed, if it did; the
	// lexical verdicts then stand.
	RecheckError string `json:"recheck_error,omitempty"`
	// Answers is the learned reader's verdict on the quoted evidence
	// itself: does what the answer cites answer the question (its
	// answerability over the cited chunks against its threshold)? nil
	// without a reader. A quote can exist word for word in its source
	// and still answer another question.
	Answers *bool `json:"answers_question,omitempty"`

	statements []Statement // the split text the claims came from
}

// WithoutUnsupported returns the verified text with the unsupported claims
// taken out (see removeStatements).
func (v Verification) WithoutUnsupported(text string) string {
	drop := map[int]bool{}
	for _, c := range v.Claims {
		if !c.Supported {
			drop[c.statement] = true
		}
	}
	if len(drop) == 0 {
		return text
	}
	return removeStatements(text, v.statements, func(i int) bool { return drop[i] })
}

// Unsupported returns the claims the evidence does not support.
func (v Verification) Unsupported() []Claim {
	var out []Claim
	for _, c := range v.Claims {
		if !c.Supported {
			out = append(out, c)
		}
	}
	return out
}

// DefaultClaimCoverage is the share of a claim's content words one piece of
// evidence must contain for the claim to count as supported. A faithful
// paraphrase keeps the nouns, names and numbers of its source; a statement
// that brings in words of its own falls below it.
const DefaultClaimCoverage = 0.6

// VerifyClaims checks every claim of text against the evidence it cites.
// evidence maps a citation number to the full text of that chunk. A
// statement (a sentence, or a list item) with fewer than two content words
// and no number — 「以下の手順です。」 — makes no claim and is skipped, and
// so is a refusal (IsRefusal: 「…の記載がありません。」), which must survive
// verification as a refusal.
//
// A claim is supported when one piece of evidence it cites contains at
// least minCoverage of its content words (found as analysed terms or, for
// words inside compounds and conjugated forms, in the evidence text) and
// every number it gives. A claim that cites nothing is checked against all
// the evidence. Coverage and MissingNumbers describe the best-covering
// evidence checked. The check is lexical and deterministic: it catches added
// facts, wrong numbers and citations to the wrong chunk; it cannot tell a
// negated statement from the original.
func VerifyClaims(text string, evidence map[int]string, tok Tokenizer, minCoverage float64) Verification {
	return verifyClaims(text, evidence, nil, tok, minCoverage)
}

// verifyClaims is VerifyClaims with the texts of evidence the answer could
// have cited but did not: a claim they support counts as supported (the
// model saw it; only its citation is wrong), without raising citation
// precision.
func verifyClaims(text string, evidence map[int]string, uncited []string, tok Tokenizer, minCoverage float64) Verification {
	if minCoverage <= 0 {
		minCoverage = DefaultClaimCoverage
	}
	type ev struct {
		norm  string
		terms map[string]bool
	}
	prep := func(t string) ev { return ev{norm: analysis.Normalize(t), terms: termSet(tok.Terms(t))} }
	evs := make(map[int]ev, len(evidence))
	all := make([]int, 0, len(evidence))
	for n, t := range evidence {
		evs[n] = prep(t)
		all = append(all, n)
	}
	slices.Sort(all)
	var others []ev // prepared lazily: most answers need none
	v := Verification{Method: "lexical", Claims: []Claim{}}
	v.statements = SplitClaims(text)
	for si, s := range v.statements {
		words := claimWords(tok.Terms(s.Text))
		nums := numbers(s.Text)
		if len(words) < 2 && len(nums) == 0 {
			continue
		}
		if IsRefusal(s.Text) {
			continue // "…の記載がありません" states an absence, not a fact to check
		}
		// A bracketed number that names no evidence is text (an index in a
		// quoted command: Properties[0]), not a citation.
		s.Cited = slices.DeleteFunc(slices.Clone(s.Cited), func(n int) bool { _, ok := evs[n]; return !ok })
		c := Claim{Text: s.Text, Cited: s.Cited, statement: si}
		// check scores one piece of evidence and reports whether it
		// supports the claim.
		check := func(e ev) (float64, []string, bool) {
			found := 0
			for _, w := range words {
				if e.terms[w] || analysis.Present(e.norm, w) {
					found++
				}
			}
			cov := 1.0
			if len(words) > 0 {
				cov = float64(found) / float64(len(words))
			}
			var missing []string
			for _, num := range nums {
				if !containsNumber(e.norm, num) {
					missing = append(missing, num)
				}
			}
			return cov, missing, cov >= minCoverage && len(missing) == 0
		}
		best := -1.0
		against := s.Cited
		if len(against) == 0 {
			against = all
		}
		for _, n := range against {
			e, ok := evs[n]
			if !ok {
				continue
			}
			cov, missing, ok := check(e)
			if ok {
				c.SupportedBy = append(c.SupportedBy, n)
			}
			if cov > best {
				best, c.Coverage, c.MissingNumbers = cov, cov, missing
			}
		}
		if len(c.SupportedBy) == 0 && len(uncited) > 0 {
			if others == nil {
				for _, t := range uncited {
					others = append(others, prep(t))
				}
			}
			for _, e := range others {
				if _, _, ok := check(e); ok {
					c.Uncited = true
					break
				}
			}
		}
		if len(c.SupportedBy) > 0 || c.Uncited {
			c.MissingNumbers = nil
		}
		c.Coverage = round2(max(c.Coverage, 0))
		c.Supported = len(c.SupportedBy) > 0 || c.Uncited
		c.CheckedBy = "lexical"
		v.Claims = append(v.Claims, c)
	}
	v.tally()
	return v
}

// tally computes SupportedRate and CitationPrecision from the claims.
func (v *Verification) tally() {
	var cites, good int
	for _, c := range v.Claims {
		cites += len(c.Cited)
		for _, n := range c.Cited {
			if slices.Contains(c.SupportedBy, n) {
				good++
			}
		}
	}
	v.SupportedRate, v.CitationPrecision = 1, 1
	if len(v.Claims) > 0 {
		v.SupportedRate = round2(float64(len(v.Claims)-len(v.Unsupported())) / float64(len(v.Claims)))
	}
	if cites > 0 {
		v.CitationPrecision = round2(float64(good) / float64(cites))
	}
}

// Statement is one sentence or list item of an answer with the citations
// that follow it.
type Statement struct {
	Text  string // without citation markers or list bullets
	Cited []int  // citation numbers, in order, without repeats
	Line  int    // 0-based line of the answer text it is on
	// Inherited is set when the statement carries no citation of its own
	// and took those of the next cited statement on its line (「A。B。[1]」:
	// [1] stands for both).
	Inherited bool

	raw   string // the statement as written, citations included
	start int    // byte offset of raw in its line
}

// SplitClaims splits answer text into statements: one per sentence
// (。！？!? and ". "), list items and lines kept apart, each with the
// citations written after it. Citations that open a sentence (「。[1]」 put
// after the full stop) belong to the sentence before. Empty statements and
// an answer's heading lines are dropped.
func SplitClaims(text string) []Statement {
	var out []Statement
	lines := strings.Split(text, "\n")
	fenced, inTable := false, false
	for li, orig := range lines {
		// line is orig without surrounding space and list bullet; off is
		// where it starts in orig.
		line := strings.TrimLeftFunc(orig, unicode.IsSpace)
		off := len(orig) - len(line)
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if codeFence.MatchString(line) {
			fenced = !fenced
			continue
		}
		// A table's header row names its columns; it claims nothing (and
		// must stay for the table to be one).
		if line == "" || headingLine.MatchString(line) || !fenced && li+1 < len(lines) && tableRow.MatchString(line) && tableDelimiter.MatchString(strings.TrimSpace(lines[li+1])) {
			inTable = false
			continue
		}
		if !fenced && tableDelimiter.MatchString(line) && strings.Contains(line, "|") {
			inTable = true
			continue
		}
		if inTable && tableRow.MatchString(line) {
			// A table row is one statement: its cells' words, without the
			// numbering cells (手順 1, 2 …) that no source spells out.
			if st, ok := rowStatement(line, off, li); ok {
				out = append(out, st)
			}
			continue
		}
		inTable = false
		if loc := bulletPrefix.FindStringIndex(line); loc != nil {
			line, off = line[loc[1]:], off+loc[1]
		}
		rest := strings.TrimLeftFunc(line, unicode.IsSpace)
		line, off = rest, off+len(line)-len(rest)
		first := len(out)
		for _, sp := range splitKeepingCitations(line) {
			sent, start := line[sp[0]:sp[1]], off+sp[0]
			// Leading citations close the previous statement of this line.
			for {
				loc := citation.FindStringSubmatchIndex(sent)
				if loc == nil || strings.TrimSpace(sent[:loc[0]]) != "" {
					break
				}
				if len(out) > first {
					out[len(out)-1].Cited = addCites(out[len(out)-1].Cited, sent[loc[2]:loc[3]])
				}
				sent, start = sent[loc[1]:], start+loc[1]
			}
			var cited []int
			for _, m := range citation.FindAllStringSubmatch(sent, -1) {
				cited = addCites(cited, m[1])
			}
			plain := strings.TrimSpace(stripCitations(sent))
			if !hasWordRune(plain) {
				continue
			}
			out = append(out, Statement{Text: plain, Cited: cited, Line: li, raw: sent, start: start})
		}
		// A run of sentences closed by one citation shares it.
		var carry []int
		for i := len(out) - 1; i >= first; i-- {
			if len(out[i].Cited) > 0 {
				carry = out[i].Cited
			} else if carry != nil {
				out[i].Cited, out[i].Inherited = slices.Clone(carry), true
			}
		}
	}
	return out
}

// rowStatement is the statement of a table row: the words of its cells
// but the cells that only number the rows, with the citations of the whole
// row; cutting it cuts the whole row. ok is false for a row without words.
func rowStatement(line string, off, li int) (Statement, bool) {
	var cited []int
	for _, m := range citation.FindAllStringSubmatch(line, -1) {
		cited = addCites(cited, m[1])
	}
	var words []string
	for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
		c = strings.TrimSpace(stripCitations(c))
		if c != "" && !rowNumber.MatchString(c) {
			words = append(words, c)
		}
	}
	plain := strings.Join(words, " ")
	if !hasWordRune(plain) {
		return Statement{}, false
	}
	return Statement{Text: plain, Cited: cited, Line: li, raw: line, start: off}, true
}

var rowNumber = regexp.MustCompile(`^(?:[（(]?\d{1,3}[.)）]?|手順\s*\d{1,3})$`)

// stripCitations removes citation markers from s, again until none is
// left: removing 「[0]」 from 「[[0]0]」 makes a new one. Every pass that
// changes s shortens it, so the loop ends.
func stripCitations(s string) string {
	for {
		t := citation.ReplaceAllString(s, "")
		if t == s {
			return t
		}
		s = t
	}
}

// Markdown structure that holds no words and must survive the removal of
// claims around it: code fences, table rows and delimiter rows.
var (
	codeFence      = regexp.MustCompile("^(```|~~~)")
	tableRow       = regexp.MustCompile(`^\|.*\|$`)
	tableDelimiter = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)
)

// removeStatements returns text without the statements drop selects, each
// cut out at its own place in its line. A dropped statement's citations
// stay when a kept statement before it on the same line shares them, so
// that statement keeps its support; a line left with nothing but a bullet
// (or a table row left with no words) goes, and so does a code block left
// empty. Lines no statement was cut from stay as they were: Markdown
// structure without words (a table's delimiter row, a code fence, a rule)
// keeps the table, the code block and the rule whole.
func removeStatements(text string, stmts []Statement, drop func(i int) bool) string {
	lines := strings.Split(text, "\n")
	gone := make([]bool, len(lines))
	cut := make([]bool, len(lines))
	// Right to left, so that the places of the statements still to cut
	// stay valid.
	for i := len(stmts) - 1; i >= 0; i-- {
		st := stmts[i]
		if !drop(i) || st.Line >= len(lines) {
			continue
		}
		l := lines[st.Line]
		end := st.start + len(st.raw)
		if st.start < 0 || end > len(l) || l[st.start:end] != st.raw {
			continue // not the text the statements were split from
		}
		keep := ""
		if i > 0 && stmts[i-1].Line == st.Line && stmts[i-1].Inherited && !drop(i-1) {
			for _, m := range citation.FindAllString(st.raw, -1) {
				keep += m
			}
		}
		lines[st.Line] = l[:st.start] + keep + l[end:]
		cut[st.Line] = true
	}
	for i, l := range lines {
		if cut[i] && !hasWordRune(bulletPrefix.ReplaceAllString(citation.ReplaceAllString(strings.TrimSpace(l), ""), "")) {
			gone[i] = true
		}
	}
	// A code block whose every line went goes whole.
	open := -1
	for i, l := range lines {
		if !codeFence.MatchString(strings.TrimSpace(l)) {
			continue
		}
		if open < 0 {
			open = i
			continue
		}
		empty := true
		for j := open + 1; j < i; j++ {
			empty = empty && (gone[j] || strings.TrimSpace(lines[j]) == "" && cut[j])
		}
		if empty && i > open+1 {
			gone[open], gone[i] = true, true
		}
		open = -1
	}
	var out []string
	for i, l := range lines {
		if !gone[i] {
			out = append(out, strings.TrimRight(l, " \t"))
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// splitKeepingCitations returns the byte spans of the sentences of line:
// it cuts after each sentence end (analysis.SentenceEnds, the splitter the
// answers and the evidence score use), keeping a citation group that
// directly follows the end with the sentence it closes.
func splitKeepingCitations(line string) [][2]int {
	var out [][2]int
	start := 0
	for _, i := range analysis.SentenceEnds(line) {
		if i < start {
			continue // the end fell inside citations already swallowed
		}
		// Swallow the citations right after the sentence end.
		for {
			loc := citation.FindStringIndex(line[i:])
			if loc == nil || strings.TrimSpace(line[i:i+loc[0]]) != "" {
				break
			}
			i += loc[1]
		}
		out = append(out, [2]int{start, i})
		start = i
	}
	if start < len(line) {
		out = append(out, [2]int{start, len(line)})
	}
	return out
}

func addCites(cited []int, group string) []int {
	for _, f := range digits.FindAllString(group, -1) {
		if n, err := strconv.Atoi(f); err == nil && !slices.Contains(cited, n) {
			cited = append(cited, n)
		}
	}
	return cited
}

func hasWordRune(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// claimWords returns the distinct content words of a claim's terms: word
// terms only (character n-grams that span a particle say nothing about
// support), or the n-grams when the claim has no word term at all.
func claimWords(terms []string) []string {
	var words, grams []string
	for _, t := range uniqueContent(terms) {
		if strings.HasPrefix(t, analysis.NGramPrefix) {
			grams = append(grams, strings.TrimPrefix(t, analysis.NGramPrefix))
		} else if !analysis.IsRequestWord(t) {
			words = append(words, t)
		}
	}
	if len(words) == 0 {
		return grams
	}
	return words
}

// numberRun matches a number as written in a claim (NFKC-normalised):
// digits with optional thousands separators and decimals.
var numberRun = regexp.MustCompile(`\d+(?:[,，]\d{3})*(?:\.\d+)?`)

// numbers returns the distinct numbers of s, separators removed. List
// numbering has been stripped by SplitClaims before.
func numbers(s string) []string {
	var out []string
	for _, m := range numberRun.FindAllString(analysis.Normalize(s), -1) {
		m = strings.NewReplacer(",", "", "，", "").Replace(m)
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// containsNumber reports whether normalised text contains num as a whole
// number (not as part of a longer one), with or without thousands
// separators.
func containsNumber(norm, num string) bool {
	for _, m := range numberRun.FindAllString(norm, -1) {
		if strings.NewReplacer(",", "", "，", "").Replace(m) == num {
			return true
		}
	}
	return false
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
