package bench

import (
	"bufio"
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
	ID       string   `json:"id"`
	Kind     string   `json:"kind"` // pdf, law, … or "unanswerable"
	Question string   `json:"question"`
	Source   string   `json:"source"`  // file name of the source document
	Page     *int     `json:"page"`    // 1-based physical page (PDFs)
	Article  *string  `json:"article"` // e.g. 第八十八条第四項 (laws)
	GoldSpan string   `json:"gold_span"`
	KeyFacts []string `json:"key_facts"`
	AltSpans []string `json:"alt_spans"`
}

// Answerable reports whether the question has an answer in the documents.
func (q QAQuestion) Answerable() bool { return len(q.KeyFacts) > 0 }

// LoadQA reads a JSONL question file. Lines that do not parse are errors
// naming the line: a benchmark must not silently drop questions.
func LoadQA(file string) ([]QAQuestion, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("question file: %w", err)
	}
	defer f.Close()
	var qs []QAQuestion
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" {
			continue
		}
		var q QAQuestion
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w — each line must be one JSON object with id, question, key_facts", file, n, err)
		}
		if strings.TrimSpace(q.Question) == "" {
			return nil, fmt.Errorf("%s:%d: empty question", file, n)
		}
		if q.ID == "" {
			q.ID = "Q" + strconv.Itoa(n)
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
	Profile     string   `json:"profile"`
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Question    string   `json:"question"`
	Answer      string   `json:"answer"`
	Verdict     string   `json:"verdict"` // correct, partial, wrong, refused (answerable); refused, answered (unanswerable); error
	FactAny     bool     `json:"fact_any"`
	FactAll     bool     `json:"fact_all"`
	Refused     bool     `json:"refused"`
	CitedHit    bool     `json:"cited_hit"`
	Hit1        bool     `json:"hit@1"`
	Hit5        bool     `json:"hit@5"`
	Cited       []string `json:"cited"`
	AnswerRunes int      `json:"answer_runes"`
	// Evidence is the best absolute evidence score among the retrieved
	// chunks: what the refusal gate compares with its threshold.
	Evidence float64 `json:"evidence_score"`
	// Answerability is the learned reader's probability that the
	// evidence answers (0 without a reader).
	Answerability float64 `json:"answerability"`
	LatencyMs     float64 `json:"latency_ms"`
	Error         string  `json:"error,omitempty"`
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
	ByKind  map[string]float64 `json:"by_kind"`
	Machine Machine            `json:"machine"`
}

// QA runs every question through ask under one profile and scores the
// replies. Scoring follows qa-ja-docs: NFKC, whitespace removed, an answer
// is right when it contains any key fact, an unanswerable question must be
// refused. A question whose ask fails is recorded as an error and counted
// wrong; the run continues.
func QA(ctx context.Context, a Asker, profile string, qs []QAQuestion) (QAReport, []QARecord, error) {
	rep := QAReport{Profile: profile, Questions: len(qs), ByKind: map[string]float64{}, Machine: ThisMachine()}
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
	rep.LatencyP50Ms = round(stats.Ms(lat.P(50)))
	rep.LatencyP95Ms = round(stats.Ms(lat.P(95)))
	if rep.Generator == "" {
		rep.Generator = "guard"
	}
	return rep, recs, nil
}

// ScoreQA scores one reply against its question (without latency).
func ScoreQA(q QAQuestion, r assistant.Reply) QARecord {
	rec := QARecord{ID: q.ID, Kind: q.Kind, Question: q.Question, Answer: r.Answer, Cited: r.Cited()}
	rec.Refused = r.Refused() || metrics.IsRefusal(r.Answer) || strings.TrimSpace(r.Answer) == ""
	rec.AnswerRunes = len([]rune(strings.TrimSpace(r.Answer)))
	rec.Answerability = r.Answerability
	for _, s := range r.SearchResults {
		rec.Evidence = max(rec.Evidence, s.EvidenceScore)
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
	g := newGold(q)
	for i, s := range r.SearchResults {
		if i >= 5 {
			break
		}
		if g.hit(s.File, s.Heading, s.Text) {
			rec.Hit5 = true
			if i == 0 {
				rec.Hit1 = true
			}
		}
	}
	for _, e := range r.Evidence {
		text := e.Excerpt
		for _, s := range r.SearchResults {
			if s.File == e.File && s.Heading == e.Heading {
				text = s.Text
				break
			}
		}
		if g.hit(e.File, e.Heading, text) {
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
	stem    string
	page    int
	article string
	spans   []string
	facts   []string
}

func newGold(q QAQuestion) gold {
	g := gold{stem: strings.TrimSuffix(q.Source, path.Ext(q.Source))}
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

func (g gold) hit(file, heading, text string) bool {
	if g.stem == "" || !slices.Contains(strings.Split(file, "/"), g.stem) {
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
