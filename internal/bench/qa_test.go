package bench

import (
	"context"
	"os"
	"path/filepath"
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
