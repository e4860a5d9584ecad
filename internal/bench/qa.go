package bench

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/eval/metrics"
	"github.com/shirube/shirube/internal/eval/stats"
)

// QAQuestion is one question of a document-QA set in the qa-ja-docs layout
// (one JSON object per line): the question, the source file and page or
// article that answers it, the answering passage and the key facts a right
// answer must contain. Unanswerable questions have no key facts.
type QAQuestion struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"` // the source's format (pdf, law, md, html) or "unanswerable"
	Question string `json:"question"`
	// Source is the answering document: its path relative to the data
	// folder (pagerduty-ir/post_mortem_process.md), or its bare file name
	// (report.pdf), which then matches the document of that stem in any
	// folder.
	Source   string   `json:"source"`
	Page     *int     `json:"page"`    // 1-based physical page (PDFs)
	Article  *string  `json:"article"` // e.g. 第八十八条第四項 (laws)
	GoldSpan string   `json:"gold_span"`
	KeyFacts []string `json:"key_facts"`
	AltSpans []string `json:"alt_spans"`
	// QType is what the question asks for (definition, quantity, date,
	// who, procedure, yesno, comparison, where, unanswerable), when the set
	// says so.
	QType string `json:"qtype,omitempty"`
}

// Answerable reports whether the question has an answer in the documents.
func (q QAQuestion) Answerable() bool { return len(q.KeyFacts) > 0 }

// LoadQA reads a JSONL question file. Lines that do not parse are errors
// naming the line: a benchmark must not silently drop questions.
func LoadQA(file string) ([]QAQuestion, error) {
	return loadJSONL(file, "id, question, key_facts", func(q *QAQuestion) *string { return &q.ID }, func(q *QAQuestion) string { return q.Question })
}

// loadJSONL reads a JSONL file of questions: one JSON object a line (a BOM
// and blank lines allowed). A line that does not parse, or whose question
// is empty, is an error naming the line; a question without an id gets
// "Q" and its line number. fields names what a line must hold.
func loadJSONL[T any](file, fields string, id func(*T) *string, question func(*T) string) ([]T, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("question file: %w", err)
	}
	defer f.Close()
	var qs []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" {
			continue
		}
		var q T
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w — each line must be one JSON object with %s", file, n, err, fields)
		}
		if strings.TrimSpace(question(&q)) == "" {
			return nil, fmt.Errorf("%s:%d: empty question", file, n)
		}
		if id := id(&q); *id == "" {
			*id = "Q" + strconv.Itoa(n)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", file)
	}
	return qs, nil
}

// Asker answers one question the way `shirube ask` does.
type Asker interface {
	Ask(ctx context.Context, req assistant.Request) (assistant.Reply, error)
}

// QARecord is one question's outcome under one profile: the rows of
// `bench qa --out`, for reading the failures.
type QARecord struct {
	Profile  string `json:"profile"`
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	QType    string `json:"qtype,omitempty"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Verdict  string `json:"verdict"` // correct, partial, wrong, refused (answerable); refused, answered (unanswerable); error
	FactAny  bool   `json:"fact_any"`
	FactAll  bool   `json:"fact_all"`
	Refused  bool   `json:"refused"`
	CitedHit bool   `json:"cited_hit"`
	Hit1     bool   `json:"hit@1"`
	Hit5     bool   `json:"hit@5"`
	// FactRank is the rank (1-based) of the first search result whose
	// text holds a key fact, 0 when none does; Cause names why an
	// answerable question failed: retrieval (no result holds a key fact),
	// refusal (one does, and the gate refused) or sentence (one does, and
	// the answer quotes other sentences). Empty for a success.
	FactRank    int      `json:"fact_rank"`
	Cause       string   `json:"cause,omitempty"`
	Cited       []string `json:"cited"`
	AnswerRunes int      `json:"answer_runes"`
	// Decision is the reader's decision (answer, refuse, clarify), Evidence
	// the evidence score the gate compared with its threshold and
	// RefusalReason the check that refused (assistant.Decision).
	Decision      string  `json:"decision"`
	Evidence      float64 `json:"evidence_score"`
	RefusalReason string  `json:"refusal_reason,omitempty"`
	// ReaderScore is the learned reader's answerability of the evidence
	// (nil without a reader).
	ReaderScore *float64 `json:"reader_score,omitempty"`
	LatencyMs   float64  `json:"latency_ms"`
	Error       string   `json:"error,omitempty"`
}

// QAReport summarises one profile over a question set.
type QAReport struct {
	Profile      string `json:"profile"`
	Generator    string `json:"generator"`
	Questions    int    `json:"questions"`
	Answerable   int    `json:"answerable"`
	Unanswerable int    `json:"unanswerable"`
	Errors       int    `json:"errors"`
	// FactAny is the share of answerable questions whose answer contains
	// at least one key fact; FactAll, every key fact.
	FactAny float64 `json:"key_fact_any"`
	FactAll float64 `json:"key_fact_all"`
	// UnanswerableRefused is the share of unanswerable questions refused;
	// AnswerableRefused the share of answerable ones refused.
	UnanswerableRefused float64 `json:"unanswerable_refused"`
	AnswerableRefused   float64 `json:"answerable_refused"`
	// CitedHit is the share of answerable questions whose cited evidence
	// holds the gold page or article; Hit1 and Hit5 the same for the first
	// and the first five retrieved chunks.
	CitedHit float64 `json:"gold_cited"`
	Hit1     float64 `json:"hit@1"`
	Hit5     float64 `json:"hit@5"`
	// MeanAnswerRunes and P95AnswerRunes measure the answers that were
	// given (refusals excluded), in characters.
	MeanAnswerRunes float64 `json:"mean_answer_chars"`
	P95AnswerRunes  int     `json:"p95_answer_chars"`
	LatencyP50Ms    float64 `json:"latency_p50_ms"`
	LatencyP95Ms    float64 `json:"latency_p95_ms"`
	// ByKind is FactAny (answerable kinds) or the refused share
	// (unanswerable) per question kind.
	ByKind map[string]float64 `json:"by_kind"`
	// ByFormat breaks the scores down by the source's format (Kind), and
	// ByType by what the question asks for (QType; empty when the set
	// gives no question a type).
	ByFormat []QAGroup `json:"by_format"`
	ByType   []QAGroup `json:"by_type,omitempty"`
	// RefusedBy counts the refusals by the reason the gate gave
	// (QARecord.RefusalReason; "other" for a refusal without one).
	RefusedBy map[string]int `json:"refused_by"`
	Machine   Machine        `json:"machine"`
}

// QAGroup is the score of one group of questions (one format, one question
// type).
type QAGroup struct {
	Name       string `json:"name"`
	Questions  int    `json:"questions"`
	Answerable int    `json:"answerable"`
	// FactAny is the share of the group's answerable questions whose
	// answer holds a key fact (0 when none is answerable); Refused the
	// share of all its questions that were refused — a failure for
	// answerable ones, the right outcome for unanswerable ones.
	FactAny float64 `json:"key_fact_any"`
	Refused float64 `json:"refused"`
}

// groupQA scores recs grouped by key, in order of name. qs[i] is the
// question of recs[i].
func groupQA(qs []QAQuestion, recs []QARecord, key func(QAQuestion) string) []QAGroup {
	at := map[string]int{}
	var gs []QAGroup
	for i, q := range qs {
		k := key(q)
		j, ok := at[k]
		if !ok {
			j = len(gs)
			at[k] = j
			gs = append(gs, QAGroup{Name: k})
		}
		g := &gs[j]
		g.Questions++
		g.Refused += b2f(recs[i].Refused)
		if q.Answerable() {
			g.Answerable++
			g.FactAny += b2f(recs[i].FactAny)
		}
	}
	for i := range gs {
		g := &gs[i]
		if g.Answerable > 0 {
			g.FactAny = round(g.FactAny / float64(g.Answerable))
		}
		g.Refused = round(g.Refused / float64(g.Questions))
	}
	slices.SortFunc(gs, func(a, b QAGroup) int { return strings.Compare(a.Name, b.Name) })
	return gs
}

// QA runs every question through ask under one profile and scores the
// replies. Scoring follows qa-ja-docs: NFKC, whitespace removed, an answer
// is right when it contains any key fact, an unanswerable question must be
// refused. A question whose ask fails is recorded as an error and counted
// wrong; the run continues.
func QA(ctx context.Context, a Asker, profile string, qs []QAQuestion) (QAReport, []QARecord, error) {
	rep := QAReport{Profile: profile, Questions: len(qs), ByKind: map[string]float64{}, RefusedBy: map[string]int{}, Machine: ThisMachine()}
	var lat stats.Latencies
	var lengths []int
	kindN := map[string]int{}
	var recs []QARecord
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return rep, recs, err
		}
		start := time.Now()
		r, err := a.Ask(ctx, assistant.Request{Query: q.Question, SessionID: "bench_qa_" + q.ID})
		took := time.Since(start)
		lat.Add(took)
		rec := ScoreQA(q, r)
		rec.Profile = profile
		rec.LatencyMs = stats.Ms(took)
		if err != nil {
			rec.Verdict, rec.Error = "error", err.Error()
			rep.Errors++
		}
		if rep.Generator == "" && r.Generator != "guard" {
			rep.Generator = r.Generator
		}
		recs = append(recs, rec)
		if rec.Refused {
			rep.RefusedBy[cmp.Or(rec.RefusalReason, "other")]++
		}
		kindN[q.Kind]++
		if q.Answerable() {
			rep.Answerable++
			rep.FactAny += b2f(rec.FactAny)
			rep.FactAll += b2f(rec.FactAll)
			rep.AnswerableRefused += b2f(rec.Refused)
			rep.CitedHit += b2f(rec.CitedHit)
			rep.Hit1 += b2f(rec.Hit1)
			rep.Hit5 += b2f(rec.Hit5)
			rep.ByKind[q.Kind] += b2f(rec.FactAny)
		} else {
			rep.Unanswerable++
			rep.UnanswerableRefused += b2f(rec.Refused)
			rep.ByKind[q.Kind] += b2f(rec.Refused)
		}
		if !rec.Refused && rec.Error == "" {
			lengths = append(lengths, rec.AnswerRunes)
		}
	}
	div := func(v float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return round(v / float64(n))
	}
	for _, p := range []*float64{&rep.FactAny, &rep.FactAll, &rep.AnswerableRefused, &rep.CitedHit, &rep.Hit1, &rep.Hit5} {
		*p = div(*p, rep.Answerable)
	}
	rep.UnanswerableRefused = div(rep.UnanswerableRefused, rep.Unanswerable)
	for k, n := range kindN {
		rep.ByKind[k] = div(rep.ByKind[k], n)
	}
	if len(lengths) > 0 {
		sum := 0
		for _, l := range lengths {
			sum += l
		}
		rep.MeanAnswerRunes = round(float64(sum) / float64(len(lengths)))
		slices.Sort(lengths)
		rep.P95AnswerRunes = lengths[min(len(lengths)-1, (len(lengths)*95+99)/100-1)]
	}
	rep.ByFormat = groupQA(qs, recs, func(q QAQuestion) string { return q.Kind })
	if slices.ContainsFunc(qs, func(q QAQuestion) bool { return q.QType != "" }) {
		rep.ByType = groupQA(qs, recs, func(q QAQuestion) string { return cmp.Or(q.QType, "-") })
	}
	rep.LatencyP50Ms = round(stats.Ms(lat.P(50)))
	rep.LatencyP95Ms = round(stats.Ms(lat.P(95)))
	if rep.Generator == "" {
		rep.Generator = "guard"
	}
	return rep, recs, nil
}

// ScoreQA scores one reply against its question (without latency).
func ScoreQA(q QAQuestion, r assistant.Reply) QARecord {
	rec := QARecord{ID: q.ID, Kind: q.Kind, QType: q.QType, Question: q.Question, Answer: r.Answer, Cited: r.Cited()}
	rec.Refused = r.Refused() || metrics.IsRefusal(r.Answer) || strings.TrimSpace(r.Answer) == ""
	rec.AnswerRunes = len([]rune(strings.TrimSpace(r.Answer)))
	rec.Decision, rec.Evidence, rec.RefusalReason = r.Decision.Action, r.Decision.Evidence, r.Decision.Reason
	if r.Decision.Answerability > 0 {
		rec.ReaderScore = &r.Decision.Answerability
	}
	if rec.Decision == "" {
		// A reply made without the gate (a canned one): the best
		// evidence score of its results.
		for _, s := range r.SearchResults {
			rec.Evidence = max(rec.Evidence, s.EvidenceScore)
		}
	}
	if !q.Answerable() {
		rec.Verdict = "answered"
		if rec.Refused {
			rec.Verdict = "refused"
		}
		return rec
	}
	ans := NormalizeQA(r.Answer)
	n := 0
	for _, f := range q.KeyFacts {
		if strings.Contains(ans, NormalizeQA(f)) {
			n++
		}
	}
	rec.FactAny = n > 0 && !rec.Refused
	rec.FactAll = n == len(q.KeyFacts) && !rec.Refused
	switch {
	case rec.Refused:
		rec.Verdict = "refused"
	case rec.FactAll:
		rec.Verdict = "correct"
	case rec.FactAny:
		rec.Verdict = "partial"
	default:
		rec.Verdict = "wrong"
	}
	for i, s := range r.SearchResults {
		text := NormalizeQA(s.Text)
		if slices.ContainsFunc(q.KeyFacts, func(f string) bool { return strings.Contains(text, NormalizeQA(f)) }) {
			rec.FactRank = i + 1
			break
		}
	}
	switch {
	case rec.FactAll:
	case rec.FactRank == 0:
		rec.Cause = "retrieval"
	case rec.Refused:
		rec.Cause = "refusal"
	default:
		rec.Cause = "sentence"
	}
	g := newGold(q)
	for i, s := range r.SearchResults {
		if i >= 5 {
			break
		}
		if g.hit(s.File, s.Source, s.Heading, s.Text) {
			rec.Hit5 = true
			if i == 0 {
				rec.Hit1 = true
			}
		}
	}
	for _, e := range r.Evidence {
		text, source := e.Excerpt, ""
		for _, s := range r.SearchResults {
			if s.File == e.File && s.Heading == e.Heading {
				text, source = s.Text, s.Source
				break
			}
		}
		if g.hit(e.File, source, e.Heading, text) {
			rec.CitedHit = true
		}
	}
	return rec
}

// gold decides whether a chunk holds a question's answer: it comes from the
// source document, and it is the gold page (PDFs), names the gold article
// in its heading, or contains the gold passage, an alternative passage or
// every key fact.
type gold struct {
	doc     goldDoc
	page    int
	article string
	spans   []string
	facts   []string
}

func newGold(q QAQuestion) gold {
	g := gold{doc: newGoldDoc(q.Source)}
	if q.Page != nil {
		g.page = *q.Page
	}
	if q.Article != nil {
		g.article = articleOf(*q.Article)
	}
	for _, s := range append([]string{q.GoldSpan}, q.AltSpans...) {
		if s = NormalizeQA(strings.Trim(s, "～~…")); s != "" {
			g.spans = append(g.spans, s)
		}
	}
	for _, f := range q.KeyFacts {
		g.facts = append(g.facts, NormalizeQA(f))
	}
	return g
}

var pageFile = regexp.MustCompile(`page_0*(\d+)\.md$`)

// hit reports whether the chunk of page identity file, from the source
// path source ("" when unknown), with this heading and text, holds the
// answer.
func (g gold) hit(file, source, heading, text string) bool {
	if !g.doc.matches(file, source) {
		return false
	}
	if g.page > 0 {
		if m := pageFile.FindStringSubmatch(file); m != nil {
			return m[1] == strconv.Itoa(g.page)
		}
	}
	if g.article != "" && headingNamesArticle(heading, g.article) {
		return true
	}
	t := NormalizeQA(text)
	for _, s := range g.spans {
		if strings.Contains(t, s) {
			return true
		}
	}
	if len(g.facts) == 0 {
		return false
	}
	for _, f := range g.facts {
		if !strings.Contains(t, f) {
			return false
		}
	}
	return true
}

// goldDoc is the gold document of a question, as its Source names it.
type goldDoc struct {
	rel  string // slash-separated path relative to the data folder, NFC
	dir  string // its folder: "" for a bare file name
	stem string // its base name without extension
	ext  string // its extension, lower case, without the dot
}

func newGoldDoc(source string) goldDoc {
	rel := path.Clean(norm.NFC.String(strings.ReplaceAll(strings.TrimSpace(source), `\`, "/")))
	rel = strings.TrimPrefix(rel, "./")
	if rel == "." || rel == "/" {
		return goldDoc{}
	}
	base := path.Base(rel)
	ext := path.Ext(base)
	d := goldDoc{rel: rel, stem: strings.TrimSuffix(base, ext), ext: strings.ToLower(strings.TrimPrefix(ext, "."))}
	if dir := path.Dir(rel); dir != "." {
		d.dir = dir
	}
	return d
}

// matches reports whether a chunk comes from the gold document. The
// chunk's source path, when known, must equal the gold path (or, for a
// bare file name, end in it). Otherwise its page identity decides
// (document.Database: database/<folder>/<stem>/[<category>/]page_NNN.md):
// a bare file name matches its stem anywhere in the identity, as
// qa-ja-docs' flat data folders need; a path matches only the page folder
// of that folder and stem — or of the stem the walk gives a file that
// shares its stem with another of the folder (stem_ext, or the whole base
// name).
func (d goldDoc) matches(file, source string) bool {
	if d.stem == "" {
		return false
	}
	if source != "" {
		source = norm.NFC.String(source)
		if d.dir == "" {
			return path.Base(source) == d.rel
		}
		return source == d.rel
	}
	parts := strings.Split(norm.NFC.String(file), "/")
	if d.dir == "" {
		return slices.Contains(parts, d.stem)
	}
	if len(parts) < 3 {
		return false
	}
	inner := strings.Join(parts[1:], "/") // without the database folder's name
	for _, stem := range []string{d.stem, d.stem + "_" + d.ext, path.Base(d.rel)} {
		if strings.HasPrefix(inner, d.dir+"/"+stem+"/") {
			return true
		}
	}
	return false
}

// articleOf reduces an article reference such as 第八十八条第四項 to the
// article itself (第八十八条).
func articleOf(ref string) string {
	if as := analysis.Articles(ref); len(as) > 0 {
		return as[0]
	}
	return ""
}

// headingNamesArticle reports whether a heading path names article a as a
// whole reference: 第八条 matches 「第八条」 and 「第八条（目的）」, not
// 「第八条の二」 or 「第十八条」.
func headingNamesArticle(heading, a string) bool { return analysis.Refers(heading, a) }

// NormalizeQA is qa-ja-docs' comparison form: NFKC, then every white-space
// character removed.
func NormalizeQA(s string) string {
	s = norm.NFKC.String(s)
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// QAColumn is one column of the per-question results (`bench qa --out`):
// its header and how a record fills it. A new score — a learned reader's,
// say — is one more entry in QAColumns.
type QAColumn struct {
	Name  string
	Value func(QARecord) string
}

// QAColumns returns the columns of the per-question results, in order.
func QAColumns() []QAColumn {
	return []QAColumn{
		{"profile", func(r QARecord) string { return r.Profile }},
		{"id", func(r QARecord) string { return r.ID }},
		{"kind", func(r QARecord) string { return r.Kind }},
		{"qtype", func(r QARecord) string { return r.QType }},
		{"question", func(r QARecord) string { return r.Question }},
		{"verdict", func(r QARecord) string { return r.Verdict }},
		{"fact_any", func(r QARecord) string { return strconv.FormatBool(r.FactAny) }},
		{"fact_all", func(r QARecord) string { return strconv.FormatBool(r.FactAll) }},
		{"refused", func(r QARecord) string { return strconv.FormatBool(r.Refused) }},
		{"decision", func(r QARecord) string { return r.Decision }},
		{"evidence_score", func(r QARecord) string { return strconv.FormatFloat(r.Evidence, 'f', 3, 64) }},
		{"refusal_reason", func(r QARecord) string { return r.RefusalReason }},
		{"reader_score", func(r QARecord) string { return optionalScore(r.ReaderScore) }},
		{"gold_cited", func(r QARecord) string { return strconv.FormatBool(r.CitedHit) }},
		{"hit@1", func(r QARecord) string { return strconv.FormatBool(r.Hit1) }},
		{"hit@5", func(r QARecord) string { return strconv.FormatBool(r.Hit5) }},
		{"fact_rank", func(r QARecord) string { return strconv.Itoa(r.FactRank) }},
		{"cause", func(r QARecord) string { return r.Cause }},
		{"answer_chars", func(r QARecord) string { return strconv.Itoa(r.AnswerRunes) }},
		{"latency_ms", func(r QARecord) string { return strconv.FormatFloat(r.LatencyMs, 'f', 1, 64) }},
		{"cited", func(r QARecord) string { return strings.Join(r.Cited, " | ") }},
		{"answer", func(r QARecord) string { return r.Answer }},
		{"error", func(r QARecord) string { return r.Error }},
	}
}

// QATable returns the per-question results as rows of QAColumns, the
// header first.
func QATable(recs []QARecord) [][]string {
	cols := QAColumns()
	rows := make([][]string, 0, len(recs)+1)
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Name
	}
	rows = append(rows, header)
	for _, r := range recs {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.Value(r)
		}
		rows = append(rows, row)
	}
	return rows
}

// optionalScore formats a score that may be absent ("" then).
func optionalScore(s *float64) string {
	if s == nil {
		return ""
	}
	return strconv.FormatFloat(*s, 'f', 3, 64)
}
