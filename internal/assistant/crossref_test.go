package assistant_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// penaltyLaw is a small law in e-Gov's text shape whose penalty chapter
// refers back to the obligations by article number.
const penaltyLaw = `テスト安全衛生法
（令和元年法律第九十九号）

　　　第一章　総則

（目的）
第一条　この法律は、職場における労働者の安全と健康を確保することを目的とする。

　　　第二章　事業者の義務

（心理的な負担の程度を把握するための検査）
第十条の二　事業者は、労働者に対し、心理的な負担の程度を把握するための検査を行うよう努めなければならない。

（製造等の禁止）
第十一条　黄りんマッチその他の有害物は、製造し、輸入し、又は使用してはならない。

（作業主任者）
第十二条　事業者は、作業主任者を選任しなければならない。

　　　第三章　罰則

第百二十条　第十一条の規定に違反した者は、三年以下の懲役又は三百万円以下の罰金に処する。

第百二十一条　第十二条の規定に違反した者は、五十万円以下の罰金に処する。
`

// TestPenaltyCitesPenaltyArticle: a question about the penalty of an act
// is answered with the penalty provision that refers to the article the
// act is — on the plain path and on a retrieval strategy's path — and a
// question about an article no penalty refers to cites no penalty.
func TestPenaltyCitesPenaltyArticle(t *testing.T) {
	md, ok := document.StructureLegal(penaltyLaw)
	if !ok {
		t.Fatal("test law not recognised as legal text")
	}
	chunks, err := chunk.Page("database/law/page_001.md", "law.txt", 1, "2026-01-01T00:00:00", md, chunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	search := retrieve.Options{K: 1, BM25Weight: 0.6}
	// A strategy that finds only the obligation (an agent's facet search).
	only := func(ctx context.Context, s *retrieve.Searcher, q string, opt retrieve.Options) (assistant.Retrieval, error) {
		rs, _, err := s.Search(ctx, "黄りんマッチ 製造", opt)
		return assistant.Retrieval{Results: rs}, err
	}
	for _, tt := range []struct {
		name     string
		retrieve assistant.Retriever
	}{{"plain search", nil}, {"retrieval strategy", only}} {
		t.Run(tt.name, func(t *testing.T) {
			a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{Search: search, Retrieve: tt.retrieve, ProcedureLookahead: 3, EvidenceThreshold: 0.01})
			rep, err := a.Ask(context.Background(), assistant.Request{Query: "黄りんマッチを製造し、又は使用すると、どんな罰がありますか？"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(rep.Answer, "三年以下の懲役又は三百万円以下の罰金") {
				t.Errorf("answer %q: want the penalty of 第百二十条", rep.Answer)
			}
			cited := false
			for _, e := range rep.Evidence {
				cited = cited || strings.HasSuffix(e.Heading, "第百二十条")
			}
			if !cited {
				t.Errorf("evidence %+v: want 第百二十条 cited", rep.Evidence)
			}
		})
	}
	a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{Search: search, ProcedureLookahead: 3, EvidenceThreshold: 0.01})
	rep, err := a.Ask(context.Background(), assistant.Request{Query: "第十条の二の検査を行わなかった事業者の罰則は？"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.SearchResults {
		if strings.Contains(r.Heading, "罰則") {
			t.Errorf("result %s: no penalty refers to 第十条の二", r.Heading)
		}
	}
}
