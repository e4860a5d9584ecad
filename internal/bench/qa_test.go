package bench

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/retrieve"
)

// cannedAsker answers each question with a fixed reply.
type cannedAsker map[string]assistant.Reply

func (c cannedAsker) Ask(_ context.Context, req assistant.Request) (assistant.Reply, error) {
	return c[req.Query], nil
}

func TestQAScoring(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.jsonl")
	lines := `{"id":"A1","kind":"pdf","question":"累計は何件？","source":"report.pdf","page":3,"article":null,"gold_span":"累計は 208,034 件","key_facts":["208,034 件"],"alt_spans":[]}
{"id":"A2","kind":"law","question":"罰則は？","source":"abc.html","page":null,"article":"第十一条第二項","gold_span":"三年以下の懲役","key_facts":["三年以下の懲役","百万円以下の罰金"],"alt_spans":[]}
{"id":"U1","kind":"unanswerable","question":"来期の予定は？","source":"report.pdf","page":null,"article":null,"gold_span":"","key_facts":[],"alt_spans":[]}
`
	if err := os.WriteFile(file, []byte("\ufeff"+lines), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQA(file)
	if err != nil || len(qs) != 3 {
		t.Fatalf("LoadQA: %d questions, %v", len(qs), err)
	}
	page3 := retrieve.Result{File: "database/pdf/report/page_003.md", Heading: "報告", Text: "累計は 208,034 件になった"}
	article := retrieve.Result{File: "database/law/abc/page_001.md", Heading: "法 > 第三章 罰則 > 第十一条（罰則）", Text: "..."}
	asker := cannedAsker{
		// Full-width digits and spaces still match after NFKC.
		"累計は何件？":  {Answer: "累計は２０８，０３４　件です [1]", Evidence: []answer.Evidence{{N: 1, File: page3.File, Heading: page3.Heading}}, SearchResults: []retrieve.Result{page3}},
		"罰則は？":    {Answer: "三年以下の懲役に処する [1]", Evidence: []answer.Evidence{{N: 1, File: article.File, Heading: article.Heading}}, SearchResults: []retrieve.Result{page3, article}},
		"来期の予定は？": {Answer: "該当する手順が見つかりませんでした。", Flags: answer.Flags{InsufficientEvidence: true}},
	}
	rep, recs, err := QA(context.Background(), asker, "default", qs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FactAny != 1 || rep.FactAll != 0.5 || rep.UnanswerableRefused != 1 || rep.AnswerableRefused != 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.CitedHit != 1 || rep.Hit1 != 0.5 || rep.Hit5 != 1 {
		t.Errorf("gold evidence: cited %v hit@1 %v hit@5 %v", rep.CitedHit, rep.Hit1, rep.Hit5)
	}
	want := map[string]string{"A1": "correct", "A2": "partial", "U1": "refused"}
	for _, r := range recs {
		if r.Verdict != want[r.ID] {
			t.Errorf("%s: verdict %s, want %s", r.ID, r.Verdict, want[r.ID])
		}
	}
}

func TestHeadingNamesArticle(t *testing.T) {
	for _, tt := range []struct {
		heading, ref string
		want         bool
	}{
		{"法 > 第八条（目的）", "第八条第二項", true},
		{"法 > 第八条の二", "第八条", false},
		{"法 > 第十八条", "第八条", false},
	} {
		if got := headingNamesArticle(tt.heading, articleOf(tt.ref)); got != tt.want {
			t.Errorf("%q names %q = %v", tt.heading, tt.ref, got)
		}
	}
}

// TestGoldDocument: a source given as a path names one document of the
// data folder; a bare file name names its stem wherever it is.
func TestGoldDocument(t *testing.T) {
	for _, tt := range []struct {
		name, source, file, from string
		want                     bool
	}{
		{"path, by source", "ops/guide.md", "database/ops/guide/page_001.md", "ops/guide.md", true},
		{"path, other folder by source", "ops/guide.md", "database/dev/guide/page_001.md", "dev/guide.md", false},
		{"path, by identity", "ops/guide.md", "database/ops/guide/page_001.md", "", true},
		{"path, other folder by identity", "ops/guide.md", "database/dev/guide/page_001.md", "", false},
		{"path, stem in a deeper folder", "ops/guide.md", "database/ops/old/guide/page_001.md", "", false},
		{"path, categorised PDF page", "ops/report.pdf", "database/ops/report/概要/page_003.md", "", true},
		{"path, shared stem renamed", "ops/guide.md", "database/ops/guide_md/page_001.md", "", true},
		{"path, nested folders", "a/b/c.html", "db/a/b/c/page_002.md", "", true},
		{"path, Windows separators", `ops\guide.md`, "database/ops/guide/page_001.md", "ops/guide.md", true},
		{"bare, any folder", "report.pdf", "database/pdf/report/page_003.md", "", true},
		{"bare, by source", "report.pdf", "database/pdf/report/page_003.md", "pdf/report.pdf", true},
		{"bare, other stem", "report.pdf", "database/pdf/report2/page_003.md", "pdf/report2.pdf", false},
		{"bare, flat folder", "abc.html", "database/abc/page_001.md", "abc.html", true},
		{"no source", "", "database/abc/page_001.md", "abc.html", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := newGoldDoc(tt.source).matches(tt.file, tt.from); got != tt.want {
				t.Errorf("%q matches %q (source %q) = %v, want %v", tt.source, tt.file, tt.from, got, tt.want)
			}
		})
	}
}

// TestQABreakdown: the scores per format and per question type, the
// refusals per reason and the per-question table with the gate's decision.
func TestQABreakdown(t *testing.T) {
	page := func(n int) *int { return &n }
	qs := []QAQuestion{
		{ID: "M1", Kind: "md", QType: "date", Question: "m1", Source: "ops/a.md", KeyFacts: []string{"3日以内"}},
		{ID: "M2", Kind: "md", QType: "where", Question: "m2", Source: "ops/a.md", KeyFacts: []string{"values.yaml"}},
		{ID: "P1", Kind: "pdf", QType: "date", Question: "p1", Source: "dev/b.pdf", Page: page(2), KeyFacts: []string{"2024年"}},
		{ID: "U1", Kind: "unanswerable", QType: "unanswerable", Question: "u1", Source: "ops/a.md"},
		{ID: "U2", Kind: "unanswerable", QType: "unanswerable", Question: "u2", Source: "ops/a.md"},
	}
	a := retrieve.Result{File: "database/ops/a/page_001.md", Source: "ops/a.md", Text: "3日以内に開く"}
	b := retrieve.Result{File: "database/dev/b/page_002.md", Source: "dev/b.pdf", Text: "2023年に改正"}
	answer1 := func(text string, r retrieve.Result, ev float64) assistant.Reply {
		return assistant.Reply{Answer: text, SearchResults: []retrieve.Result{r},
			Evidence: []answer.Evidence{{N: 1, File: r.File}},
			Decision: assistant.Decision{Action: assistant.ActionAnswer, Evidence: ev}}
	}
	refuse := func(reason string, ev float64) assistant.Reply {
		return assistant.Reply{Answer: "該当する手順が見つかりませんでした。", Flags: answer.Flags{InsufficientEvidence: true},
			Decision: assistant.Decision{Action: assistant.ActionRefuse, Evidence: ev, Reason: reason}}
	}
	asker := cannedAsker{
		"m1": answer1("3日以内です [1]", a, 0.8),
		"m2": refuse("asked kind absent", 0.5),
		"p1": answer1("2023年です [1]", b, 0.6),
		"u1": refuse(assistant.ReasonThreshold, 0.2),
		"u2": answer1("3日以内 [1]", a, 0.45),
	}
	rep, recs, err := QA(context.Background(), asker, "default", qs)
	if err != nil {
		t.Fatal(err)
	}
	wantFormat := []QAGroup{
		{Name: "md", Questions: 2, Answerable: 2, FactAny: 0.5, Refused: 0.5},
		{Name: "pdf", Questions: 1, Answerable: 1, FactAny: 0, Refused: 0},
		{Name: "unanswerable", Questions: 2, Refused: 0.5},
	}
	wantType := []QAGroup{
		{Name: "date", Questions: 2, Answerable: 2, FactAny: 0.5, Refused: 0},
		{Name: "unanswerable", Questions: 2, Refused: 0.5},
		{Name: "where", Questions: 1, Answerable: 1, FactAny: 0, Refused: 1},
	}
	if !reflect.DeepEqual(rep.ByFormat, wantFormat) {
		t.Errorf("by format %+v, want %+v", rep.ByFormat, wantFormat)
	}
	if !reflect.DeepEqual(rep.ByType, wantType) {
		t.Errorf("by type %+v, want %+v", rep.ByType, wantType)
	}
	if want := map[string]int{"asked kind absent": 1, assistant.ReasonThreshold: 1}; !reflect.DeepEqual(rep.RefusedBy, want) {
		t.Errorf("refused by %v, want %v", rep.RefusedBy, want)
	}
	// Both gold documents are found by their path, cited and first (M2
	// was refused before any was cited).
	if want := round(2.0 / 3); rep.Hit1 != want || rep.CitedHit != want {
		t.Errorf("hit@1 %v, cited %v, want %v", rep.Hit1, rep.CitedHit, want)
	}

	rows := QATable(recs)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, tt := range []struct {
		row                                   int
		decision, evidence, reason, reader, q string
	}{
		{1, "answer", "0.800", "", "", "date"},
		{2, "refuse", "0.500", "asked kind absent", "", "where"},
		{4, "refuse", "0.200", "below threshold", "", "unanswerable"},
	} {
		r := rows[tt.row]
		got := []string{r[col["decision"]], r[col["evidence_score"]], r[col["refusal_reason"]], r[col["reader_score"]], r[col["qtype"]]}
		want := []string{tt.decision, tt.evidence, tt.reason, tt.reader, tt.q}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("row %d (%s): decision, evidence, reason, reader, qtype = %q, want %q", tt.row, r[col["id"]], got, want)
		}
	}
	// A set without question types has no type breakdown.
	for i := range qs {
		qs[i].QType = ""
	}
	if rep, _, _ := QA(context.Background(), asker, "default", qs); rep.ByType != nil {
		t.Errorf("by type without qtype: %+v", rep.ByType)
	}
}

// TestQAFailureCause checks that a failed answerable question is put down
// to retrieval, refusal or sentence choice by where its key fact is.
func TestQAFailureCause(t *testing.T) {
	q := QAQuestion{ID: "A1", Question: "累計は何件？", KeyFacts: []string{"208,034 件"}}
	other := retrieve.Result{File: "a.md", Text: "登録は増えた。"}
	holds := retrieve.Result{File: "b.md", Text: "累計は 208,034 件になった。"}
	refusal := "該当する手順が見つかりませんでした。"
	tests := []struct {
		name  string
		reply assistant.Reply
		rank  int
		cause string
	}{
		{"answered", assistant.Reply{Answer: "累計は 208,034 件 [1]", SearchResults: []retrieve.Result{other, holds}}, 2, ""},
		{"other sentence", assistant.Reply{Answer: "登録は増えた。 [1]", SearchResults: []retrieve.Result{other, holds}}, 2, "sentence"},
		{"refused", assistant.Reply{Answer: refusal, Flags: answer.Flags{InsufficientEvidence: true}, SearchResults: []retrieve.Result{holds}}, 1, "refusal"},
		{"not retrieved", assistant.Reply{Answer: "登録は増えた。 [1]", SearchResults: []retrieve.Result{other}}, 0, "retrieval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ScoreQA(q, tt.reply)
			if r.FactRank != tt.rank || r.Cause != tt.cause {
				t.Errorf("fact rank %d, cause %q; want %d, %q", r.FactRank, r.Cause, tt.rank, tt.cause)
			}
		})
	}
}
