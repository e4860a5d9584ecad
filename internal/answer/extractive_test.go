package answer

import (
	"context"
	"errors"
	"github.com/shirube/shirube/internal/analysis"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/retrieve"
)

// runbook is a small retrieved set shaped like the project's chunks: the
// heading path prefixed as Markdown headings, bullets, a table.
func runbook() []retrieve.Result {
	return []retrieve.Result{
		{
			ChunkID: "database/soc/runbook/page_003.md_0", File: "database/soc/runbook/page_003.md", Page: 3,
			Heading: "インシデント対応 > 初動対応", Score: 0.91,
			Text: "# インシデント対応\n## 初動対応\nインシデント発生時は、まず影響範囲を確認し、SOCリーダーへ報告する。\n" +
				"- 影響を受けた端末をネットワークから隔離する。\n- 証跡を保全し、ログを削除しないこと。\n\n" +
				"| 項目 | 担当 |\n|---|---|\n| 報告 | SOCリーダー |",
		},
		{
			ChunkID: "database/soc/runbook/page_007.md_1", File: "database/soc/runbook/page_007.md", Page: 7,
			Heading: "ログ管理 > 保管", Score: 0.74,
			Text: "## 保管\n監査ログは1年間保管する。保管期間を過ぎたログは承認を得て廃棄する。\n" +
				"Audit logs are retained for one year. Expired logs are disposed of after approval.",
		},
		{
			ChunkID: "database/soc/runbook/page_001.md_0", File: "database/soc/runbook/page_001.md", Page: 1,
			Heading: "はじめに", Score: 0.40,
			Text: "# はじめに\n本書はSOC運用の手順をまとめたものである。",
		},
	}
}

func TestExtractiveGenerate(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	tests := []struct {
		name     string
		query    string
		want     string
		files    []string
		unknowns []string
	}{
		{
			name:  "heading covers the section term",
			query: "インシデント発生時の初動対応は？",
			want: "インシデント発生時は、まず影響範囲を確認し、SOCリーダーへ報告する。 [1]\n" +
				"影響を受けた端末をネットワークから隔離する。 [1]",
			files: []string{"database/soc/runbook/page_003.md"},
		},
		{
			name:     "uncovered part goes to unknowns",
			query:    "監査ログの保管期間と暗号化方式は？",
			want:     "監査ログは1年間保管する。保管期間を過ぎたログは承認を得て廃棄する。 [1]",
			files:    []string{"database/soc/runbook/page_007.md"},
			unknowns: []string{"根拠文書に記載がない点: 暗号化方式"},
		},
		{
			name:  "english query",
			query: "How long are audit logs retained?",
			want:  "Audit logs are retained for one year. Expired logs are disposed of after approval. [1]",
			files: []string{"database/soc/runbook/page_007.md"},
		},
		{
			name:  "two chunks cited in order of first use",
			query: "証跡を保全し、監査ログは何年保管する？",
			want: "証跡を保全し、ログを削除しないこと。 [1]\n" +
				"監査ログは1年間保管する。保管期間を過ぎたログは承認を得て廃棄する。 [2]",
			files: []string{"database/soc/runbook/page_003.md", "database/soc/runbook/page_007.md"},
		},
		{
			name:     "nothing relevant",
			query:    "VPNの設定方法",
			want:     "",
			unknowns: []string{"根拠文書に記載がない点: VPNの設定方法"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := gen.Generate(context.Background(), tt.query, runbook())
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != tt.want {
				t.Errorf("Text\n got %q\nwant %q", a.Text, tt.want)
			}
			var files []string
			for i, e := range a.Evidence {
				files = append(files, e.File)
				if e.N != i+1 {
					t.Errorf("Evidence[%d].N = %d", i, e.N)
				}
				if e.Excerpt == "" || utf8.RuneCountInString(e.Excerpt) > MaxExcerptRunes {
					t.Errorf("Evidence[%d].Excerpt = %q", i, e.Excerpt)
				}
			}
			if !reflect.DeepEqual(files, tt.files) {
				t.Errorf("evidence files = %q, want %q", files, tt.files)
			}
			if !reflect.DeepEqual(a.Unknowns, tt.unknowns) {
				t.Errorf("Unknowns = %q, want %q", a.Unknowns, tt.unknowns)
			}
			if a.Generator != GeneratorExtractive {
				t.Errorf("Generator = %q", a.Generator)
			}
		})
	}
}

func TestExtractiveEvidenceMetadata(t *testing.T) {
	a, err := NewExtractive(bigrams{}, ExtractiveOptions{}).Generate(context.Background(), "監査ログの保管期間", runbook())
	if err != nil {
		t.Fatal(err)
	}
	want := []Evidence{{
		N: 1, File: "database/soc/runbook/page_007.md", Page: 7, Heading: "ログ管理 > 保管", Score: 0.74,
		Excerpt: "監査ログは1年間保管する。保管期間を過ぎたログは承認を得て廃棄する。",
	}}
	if !reflect.DeepEqual(a.Evidence, want) {
		t.Errorf("Evidence = %+v\nwant %+v", a.Evidence, want)
	}
}

func TestExtractiveOptions(t *testing.T) {
	tests := []struct {
		name      string
		opt       ExtractiveOptions
		maxSent   int
		maxRunes  int
		wantEmpty bool
	}{
		{"one sentence", ExtractiveOptions{MaxSentences: 1}, 1, 400, false},
		{"tight budget cuts the best sentence", ExtractiveOptions{MaxRunes: 20}, 1, 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewExtractive(bigrams{}, tt.opt).Generate(context.Background(), "インシデント発生時の初動対応と証跡の保全", runbook())
			if err != nil {
				t.Fatal(err)
			}
			body := citationMarker.ReplaceAllString(a.Text, "")
			if n := len(splitSentences(body)); n > tt.maxSent {
				t.Errorf("%d sentences, want ≤ %d: %q", n, tt.maxSent, a.Text)
			}
			if n := utf8.RuneCountInString(body); n > tt.maxRunes {
				t.Errorf("%d runes, want ≤ %d: %q", n, tt.maxRunes, a.Text)
			}
		})
	}
}

func TestExtractiveEdgeCases(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	t.Run("no results", func(t *testing.T) {
		a, err := gen.Generate(context.Background(), "監査ログの保管期間", nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.Text != "" || a.Evidence != nil || len(a.Unknowns) != 1 {
			t.Errorf("got %+v", a)
		}
	})
	t.Run("empty query", func(t *testing.T) {
		a, err := gen.Generate(context.Background(), "", runbook())
		if err != nil || a.Text != "" || a.Unknowns != nil {
			t.Errorf("got %+v, %v", a, err)
		}
	})
	t.Run("chunk of markup only", func(t *testing.T) {
		res := []retrieve.Result{{File: "f", Text: "# 見出し\n|---|---|\n- \n"}}
		a, err := gen.Generate(context.Background(), "見出し", res)
		if err != nil || a.Text != "" {
			t.Errorf("got %+v, %v", a, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := gen.Generate(ctx, "監査ログ", runbook()); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

var (
	citationMarker = regexp.MustCompile(` \[\d+\]`)
	lineCitation   = regexp.MustCompile(` \[(\d+)\]$`)
)

// TestExtractiveQuotesEvidence checks on real paragraphs that every
// sentence of an extractive answer is copied verbatim from a retrieved
// chunk: only citation markers and line breaks are added.
func TestExtractiveQuotesEvidence(t *testing.T) {
	qs, docs, qrels := loadJSQuAD(t)
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	var hit, total int
	for i, q := range qs {
		if i%5 != 0 {
			continue
		}
		// The gold paragraph and its two neighbours in the corpus, as a
		// retriever would return related paragraphs of one article; the
		// gold one is ranked second every other time.
		id := qrels[q.ID]
		order := []string{id, neighbourID(id, 1), neighbourID(id, -1)}
		if i%10 == 5 {
			order[0], order[1] = order[1], order[0]
		}
		var res []retrieve.Result
		for _, d := range order {
			if doc, ok := docs[d]; ok {
				res = append(res, retrieve.Result{ChunkID: d, File: d, Heading: doc.Title, Text: doc.Text})
			}
		}
		a, err := gen.Generate(context.Background(), q.Text, res)
		if err != nil {
			t.Fatal(err)
		}
		total++
		if containsAny(a.Text, q.Answers) {
			hit++
		}
		cited := map[string]bool{}
		for _, e := range a.Evidence {
			cited[e.File] = true
		}
		for _, line := range strings.Split(a.Text, "\n") {
			if a.Text == "" {
				break
			}
			m := lineCitation.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s: line without citation: %q", q.ID, line)
			}
			n, _ := strconv.Atoi(m[1])
			if n < 1 || n > len(a.Evidence) {
				t.Fatalf("%s: citation [%d] of %d evidence", q.ID, n, len(a.Evidence))
			}
			src := docs[a.Evidence[n-1].File].Text
			for _, s := range splitSentences(strings.TrimSuffix(line, m[0])) {
				s = strings.Trim(s, Ellipsis) // marks a cut, not a word
				if !strings.Contains(src, s) {
					t.Errorf("%s: sentence %q is not in cited chunk %s", q.ID, s, a.Evidence[n-1].File)
				}
			}
		}
		if len(cited) != len(a.Evidence) {
			t.Errorf("%s: duplicate evidence %+v", q.ID, a.Evidence)
		}
	}
	share := float64(hit) / float64(max(total, 1))
	t.Logf("containment with gold among 3 related paragraphs: %d/%d = %.4f", hit, total, share)
	const floor = 0.92 // measured 0.9415 (837/889)
	if share < floor {
		t.Errorf("containment %.4f below floor %.2f", share, floor)
	}
}

// neighbourID is the corpus id d<n+delta> next to d<n>.
func neighbourID(id string, delta int) string {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "d"))
	if err != nil {
		return ""
	}
	return "d" + strconv.Itoa(n+delta)
}

// TestBadInputNoPanic feeds malformed text through every entry point.
func TestBadInputNoPanic(t *testing.T) {
	bad := []string{"", "\xff\xfe\xfd", "。。。", "[[[1]]]", "# \n|\n- ", strings.Repeat("あ", 5000), "a\x00b. c", "\u2063\u2063"}
	ctx := context.Background()
	ext := NewExtractive(bigrams{}, ExtractiveOptions{})
	g := NewLLM(&fakeModel{reply: "[1][99]\n不明点:"}, nil, LLMOptions{Tokenizer: bigrams{}})
	s := NewSession(SessionOptions{Tokenizer: bigrams{}})
	for _, q := range bad {
		for _, text := range bad {
			res := []retrieve.Result{{File: "f", Text: text, Heading: text}}
			a, err := ext.Generate(ctx, q, res)
			if err != nil {
				t.Fatal(err)
			}
			_ = RenderText(a, Flags{true, true, true})
			if _, err := g.Generate(ctx, q, res); err != nil {
				t.Fatal(err)
			}
			s.Add(text, text)
			if _, err := s.Rewrite(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestIsProcedure(t *testing.T) {
	for q, want := range map[string]bool{
		"ログファイルを削除する方法は？":            true,
		"バックアップからの復旧手順は？":            true,
		"端末はどう隔離しますか？":               true,
		"どうすれば解除できますか":               true,
		"How do I restore a backup?": true,
		"ログの保管期間は？":                  false,
		"どうして隔離が必要なのですか？":            false,
		"What is the retention?":     false,
	} {
		if got := analysis.IsProcedure(q); got != want {
			t.Errorf("analysis.IsProcedure(%q) = %v; want %v", q, got, want)
		}
	}
}

// TestExtractiveProcedureSteps: a question about a procedure gets the
// steps that follow the best sentence, in order; a factoid question about
// the same chunk does not.
func TestExtractiveProcedureSteps(t *testing.T) {
	results := []retrieve.Result{{
		ChunkID: "database/soc/log/page_001.md_3", File: "database/soc/log/page_001.md", Page: 1,
		Heading: "ログ保管・管理規程 > 5.2 ログファイルを例外的に削除する手順", Score: 1,
		Text: "# ログ保管・管理規程\n### 5.2 ログファイルを例外的に削除する手順\n" +
			"保管期間内のログをやむを得ず削除する場合は、次の手順を必ず踏む。\n\n" +
			"1. 申請者は「ログ削除申請書」に対象、期間、理由を記入する。\n" +
			"2. 情報セキュリティ部長の承認を得る。\n" +
			"3. 削除作業は申請者以外の管理者が実施し、作業内容を記録する。\n\n" +
			"承認のない削除はインシデントとして扱う。",
	}}
	gen := NewExtractive(analyser(t), ExtractiveOptions{})
	a, err := gen.Generate(context.Background(), "ログファイルを削除する手順は？", results)
	if err != nil {
		t.Fatal(err)
	}
	// The steps keep their numbers.
	steps := []string{"\n1. 申請者は「ログ削除申請書」", "\n2. 情報セキュリティ部長の承認を得る。", "\n3. 削除作業は申請者以外の管理者が実施し"}
	last := -1
	for _, s := range steps {
		i := strings.Index(a.Text, s)
		if i <= last {
			t.Fatalf("procedure answer lacks step %q in order:\n%s", s, a.Text)
		}
		last = i
	}
	a, err = gen.Generate(context.Background(), "ログ削除申請書には何を記入する？", results)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.Text, "削除作業は申請者以外の管理者が実施し") {
		t.Errorf("a factoid question got every step:\n%s", a.Text)
	}
}

// TestProcedureSectionByBody: two sections whose headings name the
// question equally (only 「手順」, through their parent 「3. 隔離の手順」);
// the steps quoted are those of the section whose text holds what is
// asked (スイッチ, ポート, shutdown), not the first in the document
// (issue 22: eval test_010 answered with the EDR steps).
func TestProcedureSectionByBody(t *testing.T) {
	const title = "# マルウェア感染端末の隔離手順\n## 3. 隔離の手順\n"
	results := []retrieve.Result{
		{ChunkID: "database/runbooks/malware/page_001.md_4", File: "database/runbooks/malware/page_001.md", Source: "runbooks/malware.md", Page: 1,
			Heading: "マルウェア感染端末の隔離手順 > 3. 隔離の手順 > 3.2 EDR が使えない場合", Score: 1, EvidenceScore: 0.88,
			Text: title + "### 3.2 EDR が使えない場合\n- 有線接続の端末は、ネットワークスイッチの該当ポートを管理者が shutdown する。\n- 無線接続の端末は、無線 LAN コントローラーで MAC アドレスを遮断する。"},
		{ChunkID: "database/runbooks/malware/page_001.md_3", File: "database/runbooks/malware/page_001.md", Source: "runbooks/malware.md", Page: 1,
			Heading: "マルウェア感染端末の隔離手順 > 3. 隔離の手順 > 3.1 EDR によるネットワーク隔離（第一選択）", Score: 0.5, EvidenceScore: 0.12,
			Text: title + "### 3.1 EDR によるネットワーク隔離（第一選択）\n1. EDR 管理コンソールで感染端末を検索する。\n2. 「ネットワーク封じ込め」を実行して端末を隔離する。"},
	}
	gen := NewExtractive(analyser(t), ExtractiveOptions{})
	a, err := gen.Generate(context.Background(), "感染端末がつながっているスイッチのポートをshutdownする手順は？", results)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "shutdown") || strings.Contains(a.Text, "封じ込め") {
		t.Errorf("answer quotes the wrong section:\n%s", a.Text)
	}
	// The EDR question still gets the EDR steps.
	a, err = gen.Generate(context.Background(), "EDRで感染端末を隔離する手順は？", results)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "封じ込め") {
		t.Errorf("EDR question:\n%s", a.Text)
	}
}

// TestComposeNumberedSteps: numbered steps keep their numbers, and a blank
// line ends the list before a sentence that is not a step, so that Markdown
// does not fold the sentence into the last step.
func TestComposeNumberedSteps(t *testing.T) {
	results := runbook()
	picked := []*candidate{
		{chunk: 0, pos: 1, line: 1, text: "端末を隔離する。", number: "1."},
		{chunk: 0, pos: 2, line: 2, text: "証跡を保全する。", number: "2."},
		{chunk: 1, pos: 0, line: 0, text: "監査ログは1年間保管する。"},
	}
	text, _, _ := compose(picked, results)
	want := "1. 端末を隔離する。 [1]\n2. 証跡を保全する。 [1]\n\n監査ログは1年間保管する。 [2]"
	if text != want {
		t.Errorf("compose:\n got %q\nwant %q", text, want)
	}
}

// TestExtractiveSkipsQuestionsAndContents: an FAQ's own question line and a
// table-of-contents entry repeat the user's words but answer nothing; the
// statement that answers is quoted instead.
func TestExtractiveSkipsQuestionsAndContents(t *testing.T) {
	tok := analyser(t)
	results := []retrieve.Result{
		{File: "database/faq/page_001.md", Source: "faq.pdf", Page: 1, Text: "問 13．少額な返還インボイスの交付義務免除はいつまで適用できますか。___________ 11\n２.１ 少額な返還インボイスの交付義務免除 .............. 4"},
		{File: "database/faq/page_011.md", Source: "faq.pdf", Page: 11, Text: "問 13．少額な返還インボイスの交付義務免除はいつまで適用できますか。\n（答）少額な返還インボイスの交付義務免除は、適用期限のない恒久的な措置となります。"},
	}
	a, err := NewExtractive(tok, ExtractiveOptions{MaxSentences: 1}).Generate(context.Background(), "少額な返還インボイスの交付義務免除は、いつまで適用できますか？", results)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "恒久的な措置") || strings.Contains(a.Text, "___") || strings.Contains(a.Text, "....") {
		t.Errorf("answer %q: want the statement, not the question or the contents line", a.Text)
	}
}
