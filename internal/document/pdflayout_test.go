package document

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/golden"
)

func TestJoinLetterSpacing(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"katakana heading", "回 収 サ ン プ ル", "回収サンプル"},
		{"run before other text", "成 分 名 100g 中の最大配合量", "成分名 100g 中の最大配合量"},
		{"two letters alone", "目 次", "目次"},
		{"ideographic spaces", "概\u3000要\u3000説\u3000明", "概要説明"},
		{"leading indent kept", "  回 収 率", "  回収率"},
		{"two letters in a row of cells stay", "有 無 1 件", "有 無 1 件"},
		{"table marks stay", "データ 〇 〇 〇 〇", "データ 〇 〇 〇 〇"},
		{"wide gaps are cell borders", "甲  乙  丙", "甲  乙  丙"},
		{"words stay apart", "計 1,463 件 208,034 件", "計 1,463 件 208,034 件"},
		{"latin letters stay", "I P A", "I P A"},
		{"no spaces", "脆弱性対策情報", "脆弱性対策情報"},
		{"run in the middle", "表 A 回 収 サ ン プ ル 数", "表 A 回収サンプル数"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := joinLetterSpacing(tt.in); got != tt.want {
				t.Errorf("joinLetterSpacing(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestJoinVerticalLabels(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"row label", []string{"情報の収集元 登録件数", "日", "本", "語", "版", "JVN 87 件"}, []string{"情報の収集元 登録件数", "日本語版", "JVN 87 件"}},
		{"two labels", []string{"日", "本", "", "英", "語"}, []string{"日本", "", "英語"}},
		{"single letter line stays", []string{"本文の終わり", "表", "次の行"}, []string{"本文の終わり", "表", "次の行"}},
		{"punctuation lines stay", []string{"）", "」", "。"}, []string{"）", "」", "。"}},
		{"numbers stay", []string{"1", "2", "3"}, []string{"1", "2", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := joinVerticalLabels(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDropRepeatedBlocks(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"block drawn twice", []string{"本文", "コスト・条件等を総", "合的に検討して評価", "コスト・条件等を総", "合的に検討して評価", "次"}, []string{"本文", "コスト・条件等を総", "合的に検討して評価", "次"}},
		{"line drawn three times", []string{"重要なお知らせです", "重要なお知らせです", "重要なお知らせです"}, []string{"重要なお知らせです"}},
		{"repetition with lines between stays", []string{"【ベストプラクティス】", "対策の内容", "【ベストプラクティス】"}, []string{"【ベストプラクティス】", "対策の内容", "【ベストプラクティス】"}},
		{"equal table rows stay", []string{"〇 〇 〇", "〇 〇 〇", "3.0 3.0", "3.0 3.0"}, []string{"〇 〇 〇", "〇 〇 〇", "3.0 3.0", "3.0 3.0"}},
		{"blank lines are not a block", []string{"", "", "本文です"}, []string{"", "", "本文です"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dropRepeatedBlocks(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// body is a line of running text as wide as a full line of a report page.
const body = "本ガイドラインは、クラウドサービスの利用者と事業者が共通に認識しておくべき事項を整理したものであ"

func TestMarkHeadings(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string // the lines that must come out as headings, with their marks
	}{
		{"dotted levels", []string{"1. 2024 年第 2 四半期の登録状況", body, "1-1. 脆弱性対策情報の登録状況", body, "１.３ 位置づけ", body, "Ⅳ．３ 学習コンテンツの提供", body},
			[]string{"# 1. 2024 年第 2 四半期の登録状況", "## 1-1. 脆弱性対策情報の登録状況", "## １.３ 位置づけ", "## Ⅳ．３ 学習コンテンツの提供"}},
		{"third level stays body text", []string{"Ⅳ．３．２ 学習機会の提供", body, "第1款 総則", body, "（1）対象となる事業者", body, "1) 効率性の向上", body}, nil},
		{"chapters", []string{"第2章 基本方針", body, "第三節 適用範囲", body}, []string{"# 第2章 基本方針", "## 第三節 適用範囲"}},
		{"full-width number and space", []string{"１ はじめに", body}, []string{"# １ はじめに"}},
		{"Q&A question", []string{"問３．届出は必要ですか。", "（答）", body}, []string{"## 問３．届出は必要ですか。"}},
		{"comma inside a short heading", []string{"２ 防腐剤、紫外線吸収剤の配合の禁止", body, body}, []string{"# ２ 防腐剤、紫外線吸収剤の配合の禁止"}},
		{"half-width number and space is a wrapped line", []string{"30 日まで）に登録した脆弱性対策情報", body}, nil},
		{"values are not headings", []string{"7.0g", body, "1.5 倍に増加した", body, "2.1 万件", body}, nil},
		{"counter that opens a word", []string{"1.3 位置づけ", body}, []string{"## 1.3 位置づけ"}},
		{"latin title needs a space", []string{"6.2PaaS の設定", body}, nil},
		{"sentence end", []string{"2.1 設定を確認する。", body}, nil},
		{"clause goes on", []string{"１ データバックアップについては、", body}, nil},
		{"particle at the end goes on", []string{"Ⅳ クラウドサービスの提供を", body}, nil},
		{"open bracket goes on", []string{"3.1 調達を行う際は「政府情報システム", body}, nil},
		{"full-width line wraps", []string{"１ 本ガイドラインは、クラウドサービスの利用者と事業者が共通に認識しておくべき事項を整理したも", body}, nil},
		{"number alone", []string{"問５．", body}, nil},
		{"list items are not body", []string{"２.１ 必要なサービスレベル", "(1) サービス提供時間", "(2) 障害発生時の復旧許容時間", "(3) 災害対策の要否等"}, nil},
		{"short body", []string{"２.１ 取り扱う情報", "情報の格付", "２.２ 業務量", body}, []string{"## ２.２ 業務量"}},
		{"heading at the page end", []string{body, "２.１ クラウド・バイ・デフォルト原則"}, nil},
		{"table of contents", []string{"目次", "１ はじめに ........ 1", "１.１ 背景と目的 ....... 1", "１.２ 適用対象 ....... 1", "２ 基本方針", body}, nil},
		{"figure caption", []string{"表 1-1. 2024 年第 2 四半期の登録件数", body}, nil},
		{"parent keeps its child", []string{"３ 具体方針", "３.１ 利用検討プロセス", body, body}, []string{"# ３ 具体方針", "## ３.１ 利用検討プロセス"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := slices.Clone(tt.in)
			markHeadings(lines)
			var got []string
			for i, l := range lines {
				if strings.HasPrefix(l, "#") {
					got = append(got, l)
				} else if l != tt.in[i] {
					t.Errorf("body line %d changed: %q → %q", i, tt.in[i], l)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("headings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLayoutPDFPageChunks checks the whole step through the chunker: the
// heading path names the section, and every character of the page is kept.
func TestLayoutPDFPageChunks(t *testing.T) {
	raw := strings.Join([]string{
		"2",
		"表 1-1. 登録件数",
		"情報の収集元 登録件数",
		"日", "本", "語", "版",
		"JVN 87 件",
		"1-1. 脆弱性対策情報の登録状況",
		"～登録件数の累計は 208,034 件～",
		"2024 年第 2 四半期に日本語版へ登録した脆弱性対策情報は表 1-1 の通りです。",
		"回 収 サ ン プ ル",
		"回 収 サ ン プ ル",
		"",
	}, "\n")
	md := layoutPDFPage(raw)
	pieces, err := chunk.Split(md, chunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, p := range pieces {
		headings = append(headings, p.Heading)
	}
	if !slices.Contains(headings, "1-1. 脆弱性対策情報の登録状況") {
		t.Errorf("heading paths %q, want the section 1-1", headings)
	}
	for _, want := range []string{"日本語版", "累計は 208,034 件", "回収サンプル"} {
		if !strings.Contains(md, want) {
			t.Errorf("page lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "回収サンプル") != 1 {
		t.Errorf("repeated line kept twice:\n%s", md)
	}
	if got, want := strip(md, "#"), strip(raw, ""); got != strings.Replace(want, "回収サンプル", "", 1) {
		t.Errorf("characters changed:\n got %q\nwant %q", got, want)
	}
}

// strip removes whitespace and the characters in cut.
func strip(s, cut string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\t' || r == '\u3000' || strings.ContainsRune(cut, r) {
			return -1
		}
		return r
	}, s)
}

// TestPDFDatasetLayout runs the layout step on the five real PDFs: the
// first page of each matches its golden file, headings are found in every
// document with numbered sections, and every page keeps its characters in
// order (only marks, spaces and repeated blocks may differ).
func TestPDFDatasetLayout(t *testing.T) {
	needPDFToText(t)
	x := NewExtractor(Options{})
	for name := range pdfDatasetFiles(t) {
		t.Run(name, func(t *testing.T) {
			f := fileFor(t, filepath.Join(pdfDataset, name))
			doc, err := x.Extract(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "pdflayout", strings.TrimSuffix(name, ".pdf")+".page1.md"), []byte(doc.Pages[0].Text+"\n"))
			raw, err := runPDFToText(context.Background(), "pdftotext", f.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			headings := 0
			for i, p := range doc.Pages {
				headings += len(regexp.MustCompile(`(?m)^#{1,3} `).FindAllString(p.Text, -1))
				if p.Text == "" {
					continue
				}
				if got, want := utf8.RuneCountInString(strip(withoutTableMarkup(p.Text), "#")), utf8.RuneCountInString(strip(raw[i], "")); got > want || got < want*9/10 {
					t.Errorf("page %d: %d characters after layout, %d before", i+1, got, want)
				}
			}
			if headings == 0 {
				t.Errorf("no heading found in %d pages", len(doc.Pages))
			}
		})
	}
}

// FuzzLayoutPDFPage checks that the layout step never panics, keeps valid
// UTF-8 and never adds or reorders characters other than heading marks.
func FuzzLayoutPDFPage(f *testing.F) {
	for _, s := range []string{
		"1. はじめに\n" + body,
		"日\n本\n語\n版\nJVN 87 件",
		"回 収 サ ン プ ル\n回 収 サ ン プ ル",
		"問１．対象者は？\n（答）\n" + body,
		"１.１ 背景 ..... 1\n１.２ 目的 ..... 2\n１.３ 範囲 ..... 3",
		"\u3000\n 目 次 \n#",
		"(1\n（\n第一章",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !utf8.ValidString(raw) {
			return
		}
		got := layoutPDFPage(raw)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q", raw)
		}
		// Every character left, apart from the marks and spaces, comes
		// from the page, in the page's order.
		in, out := []rune(strip(raw, "")), strip(got, "#")
		for _, r := range out {
			for len(in) > 0 && in[0] != r {
				in = in[1:]
			}
			if len(in) == 0 {
				t.Fatalf("characters added or reordered: %q → %q", raw, got)
			}
			in = in[1:]
		}
	})
}

// BenchmarkLayoutPDFPage measures the layout step alone on every page of
// the five dataset PDFs (the pdftotext run is outside the timer).
func BenchmarkLayoutPDFPage(b *testing.B) {
	needPDFToText(b)
	var pages []string
	for name := range pdfDatasetFiles(b) {
		texts, err := runPDFToText(context.Background(), "pdftotext", filepath.Join(pdfDataset, name), 0)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, texts...)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, p := range pages {
			layoutPDFPage(p)
		}
	}
	b.ReportMetric(float64(len(pages)*b.N)/b.Elapsed().Seconds(), "pages/s")
}

func TestDemoteListItems(t *testing.T) {
	tests := []struct {
		name  string
		pages []string
		want  []string
	}{
		{
			name: "half-width items among full-width chapters stay list items",
			pages: []string{
				"# １ はじめに\n本文\n# ２ 要件\n## ２.３ 注意点\n以下の 4 点に注意する。\n# 1. 十分な通信帯域の確保\n本文",
				"# 3. 必要な通信プロトコルの利用許可\n本文\n# ３ 制御技術\n本文",
			},
			want: []string{
				"# １ はじめに\n本文\n# ２ 要件\n## ２.３ 注意点\n以下の 4 点に注意する。\n1. 十分な通信帯域の確保\n本文",
				"3. 必要な通信プロトコルの利用許可\n本文\n# ３ 制御技術\n本文",
			},
		},
		{
			name:  "one style: every chapter stays",
			pages: []string{"# 1. 概要\n本文\n# 2. 詳細\n本文", "# 3. まとめ\n本文"},
			want:  []string{"# 1. 概要\n本文\n# 2. 詳細\n本文", "# 3. まとめ\n本文"},
		},
		{
			name:  "a tie between styles keeps both",
			pages: []string{"# １ 概要\n本文\n# 2. 詳細\n本文"},
			want:  []string{"# １ 概要\n本文\n# 2. 詳細\n本文"},
		},
		{
			name:  "Roman and 第N章 chapters are not counted nor touched",
			pages: []string{"# Ⅰ．総論\n# １．目的\n本文\n# ２．範囲\n# 第3章 雑則\n# 5.断片"},
			want:  []string{"# Ⅰ．総論\n# １．目的\n本文\n# ２．範囲\n# 第3章 雑則\n5.断片"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages := make([]Page, len(tt.pages))
			for i, p := range tt.pages {
				pages[i] = Page{Number: i + 1, Text: p}
			}
			demoteListItems(pages)
			for i, p := range pages {
				if p.Text != tt.want[i] {
					t.Errorf("page %d:\n%s\nwant\n%s", i+1, p.Text, tt.want[i])
				}
			}
		})
	}
}
