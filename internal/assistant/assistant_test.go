package assistant_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
	"github.com/shirube/shirube/internal/synonym"
)

type extractive struct{ e *answer.Extractive }

func (g extractive) Generate(ctx context.Context, q string, rs []retrieve.Result, _ []llm.Message) (answer.Answer, error) {
	return g.e.Generate(ctx, q, rs)
}

var (
	demoOnce sync.Once
	demoIx   *index.Index
	demoErr  error
)

// demoIndex indexes the bundled corpus once for all tests.
func demoIndex(t *testing.T) *index.Index {
	t.Helper()
	demoOnce.Do(func() {
		root, err := os.MkdirTemp("", "shirube-assistant-")
		if err != nil {
			demoErr = err
			return
		}
		opt := index.BuildOptions{
			DataDir:     "../../examples/data",
			DatabaseDir: filepath.Join(root, "database"),
			Dir:         filepath.Join(root, "index"),
			Chunk:       chunk.Options{Size: 500, Overlap: 50},
			Analyzer:    analysis.DefaultOptions(),
		}
		if _, demoErr = index.Build(context.Background(), opt); demoErr != nil {
			return
		}
		demoIx, demoErr = index.Open(context.Background(), opt.Dir, index.OpenOptions{})
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoIx
}

func newAssistant(t *testing.T, logDir string) *assistant.Assistant {
	ix := demoIndex(t)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	logger := auditlog.Open(logDir, auditlog.Options{})
	return assistant.New(retrieve.New(ix), gen, logger, assistant.Options{
		Search: retrieve.Options{K: 4, BM25Weight: 0.6},
	})
}

func readLog(t *testing.T, dir string) []auditlog.Entry {
	t.Helper()
	es, err := auditlog.ReadAll(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestAskGuardrails(t *testing.T) {
	logs := t.TempDir()
	a := newAssistant(t, logs)
	ctx := context.Background()
	tests := []struct {
		name      string
		query     string
		flags     answer.Flags
		prefix    string
		cites     string // a cited page identity must contain this
		generator string
	}{
		{"answered with citations", "バックアップからの復旧手順は？", answer.Flags{}, "", "backup_restore", "extractive"},
		{"dangerous banner, still answered", "ログファイルを削除する方法は？", answer.Flags{DangerousOperation: true}, guard.Banner, "database/", "extractive"},
		{"insufficient evidence", "社員食堂の今週のランチメニューを教えて", answer.Flags{InsufficientEvidence: true}, "該当する手順が見つかりませんでした。", "", "guard"},
		{"ambiguous", "なぜ？", answer.Flags{AmbiguousQuery: true}, "質問が曖昧な可能性があります。", "", "guard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := a.Ask(ctx, assistant.Request{Query: tt.query, SessionID: "test_session"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Flags != tt.flags {
				t.Errorf("flags %+v, want %+v", rep.Flags, tt.flags)
			}
			if !strings.HasPrefix(rep.Answer, tt.prefix) {
				t.Errorf("answer %q does not start with %q", rep.Answer, tt.prefix)
			}
			if !strings.HasPrefix(rep.Generator, tt.generator) {
				t.Errorf("generator %q, want %q", rep.Generator, tt.generator)
			}
			if tt.cites != "" {
				found := false
				for _, e := range rep.Evidence {
					found = found || strings.Contains(e.File, tt.cites)
				}
				if !found {
					t.Errorf("no evidence from %s: %+v", tt.cites, rep.Evidence)
				}
				if !strings.Contains(rep.Answer, "[1]") {
					t.Errorf("answer has no [1] citation: %q", rep.Answer)
				}
			}
		})
	}
	lines := readLog(t, logs)
	if len(lines) != len(tests) {
		t.Fatalf("%d audit lines, want %d", len(lines), len(tests))
	}
	for i, l := range lines {
		if l.SessionID != "test_session" || l.Query != tests[i].query {
			t.Errorf("line %d: %+v", i, l)
		}
		if l.Flags.DangerousOperation != tests[i].flags.DangerousOperation {
			t.Errorf("line %d flags %+v", i, l.Flags)
		}
		if c := l.SearchConfig; c.K != 4 || c.BM25Weight != 0.6 || c.VectorWeight != 0.4 {
			t.Errorf("line %d search_config %+v", i, c)
		}
	}
}

func TestAskFollowUp(t *testing.T) {
	logs := t.TempDir()
	a := newAssistant(t, logs)
	ix := demoIndex(t)
	s := answer.NewSession(answer.SessionOptions{Tokenizer: ix.Analyzer()})
	ctx := context.Background()
	if _, err := a.Ask(ctx, assistant.Request{Query: "アカウントがロックされた場合の対処法は？", Conversation: s}); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Ask(ctx, assistant.Request{Query: "その手順の詳細を教えて", Conversation: s})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RewrittenQuery == "" || !strings.Contains(rep.RewrittenQuery, "ロック") {
		t.Fatalf("follow-up not rewritten: %q", rep.RewrittenQuery)
	}
	if rep.Flags.AmbiguousQuery {
		t.Errorf("rewritten follow-up judged ambiguous")
	}
	lines := readLog(t, logs)
	if got := lines[len(lines)-1].RewrittenQuery; got != rep.RewrittenQuery {
		t.Errorf("log rewritten_query %v, want %q", got, rep.RewrittenQuery)
	}
	if len(s.History()) != 4 {
		t.Errorf("history has %d messages, want 4", len(s.History()))
	}
}

func TestAskConcurrentAuditLog(t *testing.T) {
	logs := t.TempDir()
	a := newAssistant(t, logs)
	qs := []string{"バックアップからの復旧手順は？", "VPNに接続できない場合は？", "重大度の分類基準は？", "インシデント発生時の初動対応は？", "ログの保管期間は？"}
	var wg sync.WaitGroup
	for w := 0; w < 5; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				if _, err := a.Ask(context.Background(), assistant.Request{Query: qs[(w+i)%len(qs)], SessionID: "w"}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	if n := len(readLog(t, logs)); n != 40 {
		t.Fatalf("%d audit lines, want 40", n)
	}
}

func TestAskEmpty(t *testing.T) {
	a := newAssistant(t, t.TempDir())
	if _, err := a.Ask(context.Background(), assistant.Request{Query: "  "}); err == nil {
		t.Fatal("empty question accepted")
	}
}

// TestSeedGuardExamples: seed 002's own examples behave as the seed says.
func TestSeedGuardExamples(t *testing.T) {
	a := newAssistant(t, t.TempDir())
	for _, tt := range []struct {
		query string
		want  string
	}{
		{"存在しない手順について教えて", guard.InsufficientEvidenceResponse},
		{"エラーが出た", guard.AmbiguousQueryResponse},
		{"ログインできない", guard.AmbiguousQueryResponse},
	} {
		rep, err := a.Ask(context.Background(), assistant.Request{Query: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Answer != tt.want {
			t.Errorf("%s: answer %q, want the template %q", tt.query, rep.Answer, tt.want)
		}
	}
}

// TestGateInEveryStrategy: a Retriever's evidence passes the same gate as
// the plain search. A strategy that returns a chunk about something else
// with a high score of its own (as a facet search does) is refused, and a
// two-part question whose parts are each supported is answered.
func TestGateInEveryStrategy(t *testing.T) {
	ix := demoIndex(t)
	s := retrieve.New(ix)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	ctx := context.Background()
	opt := retrieve.Options{K: 4, BM25Weight: 0.6}
	find := func(q string) []retrieve.Result {
		rs, _, err := s.Search(ctx, q, opt)
		if err != nil || len(rs) == 0 {
			t.Fatalf("search %q: %v", q, err)
		}
		return rs
	}
	offTopic := find("VPN の接続設定")
	for i := range offTopic {
		offTopic[i].EvidenceScore = 0.99 // what the facet query gave it
	}
	tests := []struct {
		name    string
		query   string
		got     assistant.Retrieval
		refused bool
		missing string // a part a partial answer names in Unknowns
	}{
		{"another topic's evidence is refused", "社員食堂のランチメニューは何円ですか？", assistant.Retrieval{Results: offTopic}, true, ""},
		{"the question's own evidence is answered", "バックアップからの復旧手順は？", assistant.Retrieval{Results: find("バックアップからの復旧手順は？")}, false, ""},
		{"each part supported", "バックアップからの復旧手順と、ログの保管期間をそれぞれ教えて",
			assistant.Retrieval{Results: append(find("バックアップからの復旧手順"), find("ログの保管期間")...), Parts: []string{"バックアップからの復旧手順", "ログの保管期間"}}, false, ""},
		// The supported part is answered and the other named (a partial
		// answer), not the whole question refused.
		{"one part without evidence", "バックアップからの復旧手順と、社員食堂のランチメニューを教えて",
			assistant.Retrieval{Results: find("バックアップからの復旧手順"), Parts: []string{"バックアップからの復旧手順", "社員食堂のランチメニュー"}}, false, "社員食堂のランチメニュー"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := assistant.New(s, gen, nil, assistant.Options{Search: opt,
				Retrieve: func(context.Context, *retrieve.Searcher, string, retrieve.Options) (assistant.Retrieval, error) {
					return tt.got, nil
				}})
			rep, err := a.Ask(ctx, assistant.Request{Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Flags.InsufficientEvidence != tt.refused {
				t.Errorf("refused %v, want %v (answer %q)", rep.Flags.InsufficientEvidence, tt.refused, rep.Answer)
			}
			if tt.missing != "" {
				if rep.Decision.Action != assistant.ActionPartial || !slices.Contains(rep.Decision.Missing, tt.missing) {
					t.Errorf("decision %+v, want partial missing %q", rep.Decision, tt.missing)
				}
				if len(rep.Unknowns) == 0 || !strings.HasPrefix(rep.Unknowns[0], assistant.MissingPartsNote) || !strings.Contains(rep.Unknowns[0], tt.missing) {
					t.Errorf("unknowns %q do not name %q", rep.Unknowns, tt.missing)
				}
				if !strings.Contains(rep.Answer, "ハッシュ値") {
					t.Errorf("the supported part is not answered: %q", rep.Answer)
				}
			}
		})
	}
}

// TestDemoRunbookSteps: the two runbook questions of the demo are answered
// with their steps — the unlock commands and the EDR isolation steps —
// not with an overview or a user notice.
func TestDemoRunbookSteps(t *testing.T) {
	ix := demoIndex(t)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{
		Search:             retrieve.Options{K: 4, BM25Weight: 0.6, AutoWeight: true},
		ProcedureLookahead: 3,
	})
	for q, want := range map[string]string{
		"アカウントロックアウトの解除手順は？":  "Unlock-ADAccount -Identity",
		"マルウェアに感染した端末の隔離手順は？": "「ネットワーク封じ込め」を実行して端末をネットワークから隔離する",
	} {
		rep, err := a.Ask(context.Background(), assistant.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rep.Answer, want) {
			t.Errorf("%s: answer %q lacks %q", q, rep.Answer, want)
		}
		if len(rep.SearchResults) < 1 || len(rep.Evidence) < 1 {
			t.Errorf("%s: %d results, %d evidence", q, len(rep.SearchResults), len(rep.Evidence))
		}
	}
}

// TestDefinitionFollowUp: a question about what a term means is answered
// by the sentence that defines it, found by a follow-up search when the
// question's own results only use the term.
func TestDefinitionFollowUp(t *testing.T) {
	mk := func(i int, heading, text string) chunk.Chunk {
		return chunk.Chunk{ID: "c" + string(rune('a'+i)), File: "database/law/act/page_001.md", Source: "law/act.html", Page: 1, Heading: heading, Text: "# " + heading + "\n" + text}
	}
	var chunks []chunk.Chunk
	for i := range 6 {
		chunks = append(chunks, mk(i, "手続法 > 第三十条（行政指導の方式）", "行政指導に携わる者は、行政指導の趣旨及び内容を明確に示す。行政指導は口頭でもよい。行政指導。"))
	}
	chunks = append(chunks, mk(7, "手続法 > 第二条（定義）", "この法律において、次の各号に掲げる用語の意義は、当該各号に定めるところによる。\n一　法令　法律、法律に基づく命令、条例及び地方公共団体の執行機関の規則をいう。\n二　処分　行政庁の処分その他公権力の行使に当たる行為をいう。\n六　行政指導　行政機関が特定の者に一定の作為又は不作為を求める指導、勧告、助言その他の行為であって処分に該当しないものをいう。"))
	ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{
		Search: retrieve.Options{K: 1, BM25Weight: 0.6}, ProcedureLookahead: 3, EvidenceThreshold: 0.01,
	})
	rep, err := a.Ask(context.Background(), assistant.Request{Query: "「行政指導」とはどういうものですか？"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Answer, "処分に該当しないものをいう") {
		t.Errorf("answer %q: want the defining item of 第二条", rep.Answer)
	}
}

// TestSearchIgnoresRequestPhrase: 「…を教えてください」 says how the question
// asks, not what about; a Q&A document whose every question ends the same
// way must not outrank the passage that answers.
func TestSearchIgnoresRequestPhrase(t *testing.T) {
	chunks := []chunk.Chunk{{ID: "qa_0", File: "database/qa/page_001.md", Source: "qa.pdf", Page: 1,
		Text: "目次\n問１．適用対象者を教えてください。\n問２．適用できる期間について教えてください。\n問３．手続を教えてください。\n問４．判定の単位を教えてください。\n問５．対象の取引を教えてください。"}}
	for i := range 5 {
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("other_%d", i), File: fmt.Sprintf("database/other/page_%03d.md", i+1), Source: "other.pdf", Page: i + 1,
			Text: "登録申請書を提出した事業者は、適用対象期間の経過措置を受けることができる。"})
	}
	chunks = append(chunks, chunk.Chunk{ID: "law_0", File: "database/law/page_001.md", Source: "law.html", Page: 1, Heading: "個人情報保護法 > 第二条（定義）",
		Text: "この法律において「個人情報」とは、生存する個人に関する情報であって、特定の個人を識別することができるものをいう。"})
	ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{Search: retrieve.Options{K: 1, BM25Weight: 0.6}, EvidenceThreshold: 0.01})
	rep, err := a.Ask(context.Background(), assistant.Request{Query: "「個人情報」の定義を教えてください。"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.SearchResults) == 0 || rep.SearchResults[0].Source != "law.html" {
		t.Fatalf("results %+v: want the defining article first", rep.SearchResults)
	}
}

// TestNearMissLacksAskedKind: a question asking for a number of days is
// refused when no retrieved passage holds one — same topic, the asked
// detail absent — and answered when a passage does, whatever the evidence
// score.
func TestNearMissLacksAskedKind(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		refused    bool
	}{
		{"no number of days", "監査ログは、改ざんされないよう保存しなければならない。保存の期間は、別に定める。", true},
		{"a date is no count of days", "監査ログの保存は、令和5年10月1日から義務となる。", true},
		{"the days are there", "監査ログは、90日間保存しなければならない。", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			chunks := []chunk.Chunk{{ID: "log_0", File: "database/log/page_001.md", Source: "log.md", Page: 1, Heading: "ログ管理", Text: tt.text}}
			ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
			if err != nil {
				t.Fatal(err)
			}
			gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
			a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6}, EvidenceThreshold: 0.01})
			rep, err := a.Ask(context.Background(), assistant.Request{Query: "監査ログは最低何日間保存しますか？"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Flags.InsufficientEvidence != tt.refused {
				t.Errorf("refused %v, want %v (answer %q)", rep.Flags.InsufficientEvidence, tt.refused, rep.Answer)
			}
		})
	}
}

// TestNearMissDetails: evidence on the question's topic that lacks what the
// question pins down is refused — in the plain search and through a
// Retriever alike —, and the same question is answered when a passage holds
// it, whatever the evidence score.
func TestNearMissDetails(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		texts       []string
		refused     bool
	}{
		{"another quarter", "2025年第2四半期（4〜6月）の登録件数は何件ですか？",
			[]string{"2025 年第 1 四半期（1 月～3 月）の登録件数は 120 件でした。", "登録件数は毎四半期に集計する。"}, true},
		{"the asked quarter", "2025年第2四半期（4〜6月）の登録件数は何件ですか？",
			[]string{"2025 年第 2 四半期（4 月～6 月）の登録件数は 98 件でした。", "登録件数は毎四半期に集計する。"}, false},
		{"an era year is its common-era year", "2023年の登録件数は何件ですか？",
			[]string{"令和5年の登録件数は 300 件、令和4年は 250 件でした。"}, false},
		{"no field named", "申請書のどの欄に押印しますか？",
			[]string{"申請書には代表者が押印する。押印は原本に限る。"}, true},
		{"the field named", "申請書のどの欄に押印しますか？",
			[]string{"申請書の「代表者」欄に押印する。押印は原本に限る。"}, false},
		{"dates of another event", "会員規約はいつ改定されましたか？",
			[]string{"会員規約は2020年4月1日から施行する。会員は規約を守る。"}, true},
		{"the event dated", "会員規約はいつ改定されましたか？",
			[]string{"会員規約は2023年6月1日に改定された。会員は規約を守る。"}, false},
		{"what the class does is not stated", "部品はどういう順番で梱包する決まりですか？",
			[]string{"部品は検品のあと出荷する。部品は2種類ある。"}, true},
		{"what the class does is stated", "部品はどういう順番で梱包する決まりですか？",
			[]string{"部品は重いものから順に梱包する決まりである。"}, false},
		{"how a document says it is no event", "手引きではどんな認証制度が紹介されていますか？",
			[]string{"認証制度には、ISMAP と ISO/IEC 27017 がある。"}, false},
		{"a guideline without a penalty", "この指針に従わなかった事業者にはどんな罰則がありますか？",
			[]string{"事業者は、この指針に従い、年に一度点検を行うものとする。", "点検の結果は記録し、保存する。"}, true},
		{"a guideline that states a penalty", "この指針に従わなかった事業者にはどんな罰則がありますか？",
			[]string{"事業者は、この指針に従い、年に一度点検を行うものとする。", "指針に従わなかった事業者は、十万円以下の過料に処する。"}, false},
		{"a guideline that says it has no penalty", "この指針に従わなかった事業者にはどんな罰則がありますか？",
			[]string{"事業者は、この指針に従い、年に一度点検を行うものとする。", "この指針は法的拘束力を持たず、従わない場合の罰則もない。"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var chunks []chunk.Chunk
			for i, text := range tt.texts {
				chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("c%d", i), File: fmt.Sprintf("database/doc/page_%03d.md", i+1), Source: "doc.pdf", Page: i + 1, Text: text})
			}
			ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
			if err != nil {
				t.Fatal(err)
			}
			s := retrieve.New(ix)
			gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
			opt := retrieve.Options{K: 4, BM25Weight: 0.6}
			strategies := map[string]assistant.Retriever{
				"plain search": nil,
				"retriever": func(ctx context.Context, s *retrieve.Searcher, q string, opt retrieve.Options) (assistant.Retrieval, error) {
					rs, _, err := s.Search(ctx, q, opt)
					return assistant.Retrieval{Results: rs}, err
				},
			}
			for name, r := range strategies {
				a := assistant.New(s, gen, nil, assistant.Options{Search: opt, EvidenceThreshold: 0.01, Retrieve: r})
				rep, err := a.Ask(context.Background(), assistant.Request{Query: tt.query})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Flags.InsufficientEvidence != tt.refused {
					t.Errorf("%s: refused %v, want %v (answer %q)", name, rep.Flags.InsufficientEvidence, tt.refused, rep.Answer)
				}
			}
		})
	}
}

// TestPenaltyOfLegalText: a penalty question on legal text whose retrieved
// articles state no penalty is left to the evidence score — the law states
// it in a penalty article of its own, which retrieval may miss.
func TestPenaltyOfLegalText(t *testing.T) {
	chunks := []chunk.Chunk{{ID: "law_0", File: "database/law/act/page_001.md", Source: "law/act.html", Page: 1,
		Heading: "点検法 > 第二章 点検 > 第十条（定期点検）", Text: "# 第十条（定期点検）\n事業者は、年に一度、設備の点検を行わなければならない。"}}
	ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6}, EvidenceThreshold: 0.01})
	rep, err := a.Ask(context.Background(), assistant.Request{Query: "設備の点検を行わなかった事業者にはどんな罰則がありますか？"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Flags.InsufficientEvidence {
		t.Errorf("refused (answer %q): a law's penalty article is left to the evidence score", rep.Answer)
	}
}

// TestPeriodNamedElsewhere: a question naming a year its evidence does not
// name is refused only when the evidence's documents name it nowhere — a
// report whose year stands on its cover alone is still the one asked about.
func TestPeriodNamedElsewhere(t *testing.T) {
	for _, tt := range []struct {
		name, cover string
		refused     bool
	}{
		{"the year on the cover", "年次報告 2025年版 表紙", false},
		{"another year on the cover", "年次報告 2024年版 表紙", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			chunks := []chunk.Chunk{
				{ID: "cover", File: "database/report/page_001.md", Source: "report.pdf", Page: 1, Text: tt.cover},
				{ID: "body", File: "database/report/page_005.md", Source: "report.pdf", Page: 5, Text: "本年の脆弱性の登録件数は 98 件で、2023年の 120 件から減った。"},
			}
			ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
			if err != nil {
				t.Fatal(err)
			}
			gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
			a := assistant.New(retrieve.New(ix), gen, nil, assistant.Options{Search: retrieve.Options{K: 1, BM25Weight: 0.6}, EvidenceThreshold: 0.01})
			rep, err := a.Ask(context.Background(), assistant.Request{Query: "2025年の脆弱性の登録件数は何件ですか？"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.SearchResults) != 1 || rep.SearchResults[0].ChunkID != "body" {
				t.Fatalf("results %+v: want the body page alone", rep.SearchResults)
			}
			if rep.Flags.InsufficientEvidence != tt.refused {
				t.Errorf("refused %v, want %v (answer %q)", rep.Flags.InsufficientEvidence, tt.refused, rep.Answer)
			}
		})
	}
}

// orderedGen records, when the generator is called, what the request's
// OnDanger had been told by then.
type orderedGen struct {
	extractive
	seen *[]string
}

func (g orderedGen) Generate(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message) (answer.Answer, error) {
	*g.seen = append(*g.seen, "generate")
	return g.extractive.Generate(ctx, q, rs, h)
}

// TestDangerDecidedBeforeGeneration: the danger flag of a question that
// asks for a dangerous operation reaches OnDanger before the generator is
// called (a page can show the banner before the first token), and the
// reply carries it; a look-alike is told "not dangerous" just as early.
func TestDangerDecidedBeforeGeneration(t *testing.T) {
	ix := demoIndex(t)
	var seen []string
	gen := orderedGen{extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}, &seen}
	a := assistant.New(retrieve.New(ix), gen, auditlog.Open(t.TempDir(), auditlog.Options{}), assistant.Options{
		Search: retrieve.Options{K: 4, BM25Weight: 0.6},
	})
	tests := []struct {
		query     string
		dangerous bool
	}{
		{"ログファイルを削除する方法は？", true},
		{"アカウントロックアウトのしきい値は何回ですか？", false},
	}
	for _, tt := range tests {
		seen = nil
		var told guard.Danger
		rep, err := a.Ask(context.Background(), assistant.Request{Query: tt.query, OnDanger: func(d guard.Danger) {
			seen = append(seen, "danger")
			told = d
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0] != "danger" || seen[1] != "generate" {
			t.Errorf("%q: calls %v, want the danger decision before the generator", tt.query, seen)
		}
		if told.Dangerous != tt.dangerous || rep.Flags.DangerousOperation != tt.dangerous {
			t.Errorf("%q: told %+v, flags %+v, want dangerous %v", tt.query, told, rep.Flags, tt.dangerous)
		}
		if tt.dangerous && (rep.Danger == nil || rep.Danger.Kind != guard.OpDelete || !strings.HasPrefix(rep.Answer, guard.Banner)) {
			t.Errorf("%q: reply danger %+v, answer %.40q", tt.query, rep.Danger, rep.Answer)
		}
	}
}

// verdicts is a Reader whose answerability is given per call: the decision
// stage reads first, the verification of the cited evidence next.
type verdicts struct {
	p    []float64
	seen [][]retrieve.Result
}

func (v *verdicts) Read(_ string, rs []retrieve.Result) *answer.Reading {
	p := v.p[min(len(v.seen), len(v.p)-1)]
	v.seen = append(v.seen, rs)
	return &answer.Reading{Answerability: p, Threshold: 0.5}
}

// TestVerificationAsksTheReader: the check line's verdict on whether the
// answer answers comes from the reader reading only the cited evidence.
func TestVerificationAsksTheReader(t *testing.T) {
	ix := demoIndex(t)
	s := retrieve.New(ix)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	for _, tt := range []struct {
		name    string
		p       []float64
		answers bool
	}{
		{"cited evidence answers", []float64{0.9, 0.8}, true},
		{"cited evidence does not answer", []float64{0.9, 0.1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &verdicts{p: tt.p}
			a := assistant.New(s, gen, nil, assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6}, Reader: r})
			rep, err := a.Ask(context.Background(), assistant.Request{Query: "バックアップからの復旧手順は？"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verification == nil || rep.Verification.Answers == nil || *rep.Verification.Answers != tt.answers {
				t.Fatalf("verification %+v, want answers %v", rep.Verification, tt.answers)
			}
			if len(r.seen) != 2 || len(r.seen[1]) != len(rep.Evidence) {
				t.Errorf("the reader read %d times, last %d results for %d cited", len(r.seen), len(r.seen[len(r.seen)-1]), len(rep.Evidence))
			}
		})
	}
}

// fixedReader reads every evidence set with one answerability and
// threshold.
type fixedReader struct{ p, threshold float64 }

func (f fixedReader) Read(string, []retrieve.Result) *answer.Reading {
	return &answer.Reading{Answerability: f.p, Threshold: f.threshold}
}

// TestConfidentReaderLiftsTheThreshold: evidence scored below the evidence
// threshold is answered when the reader's answerability is at least 2.5
// times its own threshold, and refused below that.
func TestConfidentReaderLiftsTheThreshold(t *testing.T) {
	ix := demoIndex(t)
	s := retrieve.New(ix)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	for _, tt := range []struct {
		name   string
		reader fixedReader
		want   string
	}{
		{"confident reader", fixedReader{0.5, 0.2}, assistant.ActionAnswer},
		{"reader above its threshold, not confident", fixedReader{0.45, 0.2}, assistant.ActionRefuse},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := assistant.New(s, gen, nil, assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6}, EvidenceThreshold: 0.999, Reader: tt.reader})
			rep, err := a.Ask(context.Background(), assistant.Request{Query: "バックアップからの復旧手順は？"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Decision.Action != tt.want {
				t.Fatalf("decision %+v, want %s", rep.Decision, tt.want)
			}
			if tt.want == assistant.ActionRefuse && rep.Decision.Reason != assistant.ReasonThreshold {
				t.Errorf("refused for %q, want the evidence threshold", rep.Decision.Reason)
			}
		})
	}
	if !assistant.Confident(0.34, 0.133) || assistant.Confident(0.33, 0.133) || assistant.Confident(0.9, 0) {
		t.Error("Confident: want answerability ≥ 2.5 × threshold, and never without a threshold")
	}
}

// TestAskBack: a question that names one thing only (seed 002's
// 「ログインできない場合の対処法は？」), whose answer the reader finds not
// answered by the evidence it quotes, is asked back with the clarification
// template and the documents that name the thing or a synonym of it;
// nothing of the unsent answer reaches the stream. Answered by its quotes,
// or naming two things, it is answered and streamed once.
func TestAskBack(t *testing.T) {
	ix := demoIndex(t)
	syn, err := synonym.Default()
	if err != nil {
		t.Fatal(err)
	}
	s := retrieve.New(ix).WithSynonyms(syn)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	for _, tt := range []struct {
		name, query string
		p           []float64
		askedBack   bool
	}{
		{"one thing, quotes do not answer", "ログインできない場合の対処法は？", []float64{0.9, 0.1}, true},
		{"one thing, quotes answer", "ログインできない場合の対処法は？", []float64{0.9, 0.9}, false},
		{"two things, quotes do not answer", "バックアップからの復旧手順は？", []float64{0.9, 0.1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := assistant.New(s, gen, nil, assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6}, Reader: &verdicts{p: tt.p}})
			var streamed []string
			rep, err := a.Ask(context.Background(), assistant.Request{Query: tt.query, OnDelta: func(d string) { streamed = append(streamed, d) }})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.askedBack {
				if rep.Decision.Action != assistant.ActionAnswer || rep.Generator == "guard" || !slices.Equal(streamed, []string{rep.Answer}) {
					t.Errorf("decision %+v, streamed %q, want the answer streamed once", rep.Decision, streamed)
				}
				return
			}
			if rep.Decision.Action != assistant.ActionClarify || rep.Decision.Reason != assistant.ReasonVague || !rep.Flags.AmbiguousQuery || rep.Generator != "guard" {
				t.Errorf("decision %+v, flags %+v, generator %q", rep.Decision, rep.Flags, rep.Generator)
			}
			if len(streamed) != 0 {
				t.Errorf("streamed %q before asking back", streamed)
			}
			want := guard.AmbiguousQueryResponse + "\n\n" + guard.MentionsNote("ログイン")
			if !strings.HasPrefix(rep.Answer, want) || rep.Verification != nil || len(rep.Unknowns) != 0 {
				t.Errorf("answer %q, verification %+v, unknowns %q", rep.Answer, rep.Verification, rep.Unknowns)
			}
			var lockout bool
			for i, e := range rep.Evidence {
				if e.N != i+1 || !strings.Contains(rep.Answer, fmt.Sprintf("[%d]", e.N)) {
					t.Errorf("evidence %d is %+v, not cited in the answer", i, e)
				}
				lockout = lockout || strings.Contains(e.File, "account_lockout") && strings.Contains(e.Excerpt, "ログオン")
			}
			if !lockout {
				t.Errorf("evidence %+v: the lockout runbook, which says ログオン, is not listed", rep.Evidence)
			}
		})
	}
}
