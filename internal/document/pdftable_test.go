package document

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/golden"
)

// withoutTableMarkup undoes what rowLines adds to a table's words: the
// cell bars and, in the rows below a header row, each cell's copy of its
// column header (「header: 」).
func withoutTableMarkup(text string) string {
	var out []string
	var header []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") {
			header = nil
			out = append(out, line)
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		if header == nil {
			header = cells
		} else {
			for i, c := range cells {
				for _, h := range header {
					if rest, ok := strings.CutPrefix(c, h+": "); ok {
						cells[i] = rest
						break
					}
				}
			}
		}
		out = append(out, strings.Join(cells, " "))
	}
	return strings.Join(out, "\n")
}

// TestPDFTables rebuilds the tables of real pages from their word boxes:
// the rows of a table with wrapped header cells (化粧品基準 p. 7, where a
// value's column is otherwise lost) and a glossary whose terms wrap
// (cloud policy p. 6) match their golden files, and the page keeps exactly
// its characters once the bars and header copies are taken out.
func TestPDFTables(t *testing.T) {
	needPDFToText(t)
	for _, tt := range []struct {
		file string
		page int
		row  string // a row the table must have
	}{
		{"keshouhin-standard.pdf", 7, "| 塩化セチルピリジニウム | 粘膜に使用されることがない化粧品のうち洗い流すもの: 5.0 | 粘膜に使用されることがない化粧品のうち洗い流さないもの: 1.0 | 粘膜に使用されることがある化粧品: 0.010 |"},
		{"cloud_policy_20210910.pdf", 6, "| プライベート・クラウド | 意味: サービス提供元の組織でのみ利用可能なクラウドサービスであり、リソースも自らによって制御する。政府内においては、各府省独自の共通基盤、共通プラットフォーム等が該当する。なお、組織でリソースを確保し、運用を民間に委託する形態等も含まれる。 |"},
		{"JVNiPedia2024q2.pdf", 8, "| 3 | カテゴリ: CMS | 製品名（ベンダ名）: Adobe Experience Manager (アドビ) | 登録件数: 143 |"},
	} {
		t.Run(fmt.Sprintf("%s p%d", tt.file, tt.page), func(t *testing.T) {
			path := filepath.Join(pdfDataset, tt.file)
			fileFor(t, path) // skips when the dataset is missing
			raw, err := runPDFToText(context.Background(), "pdftotext", path, 0)
			if err != nil {
				t.Fatal(err)
			}
			boxes, err := runPDFBoxes(context.Background(), "pdftotext", path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(boxes) != len(raw) {
				t.Fatalf("%d pages of boxes, %d of text", len(boxes), len(raw))
			}
			got := applyTables(raw[tt.page-1], boxes[tt.page-1])
			golden.Check(t, filepath.Join("testdata", "pdftable", fmt.Sprintf("%s.page%d.md", strings.TrimSuffix(tt.file, ".pdf"), tt.page)), []byte(got+"\n"))
			if !slices.Contains(strings.Split(got, "\n"), tt.row) {
				t.Errorf("row %q missing from\n%s", tt.row, got)
			}
			if a, b := sortedRunes(withoutTableMarkup(got)), sortedRunes(raw[tt.page-1]); a != b {
				t.Errorf("characters differ from pdftotext -raw:\n got %q\nwant %q", a, b)
			}
		})
	}
}

// TestApplyTablesKeepsUnexplainedText: a table whose characters the raw
// lines do not hold exactly (another extraction, a missing cell) leaves the
// raw text as it is.
func TestApplyTablesKeepsUnexplainedText(t *testing.T) {
	words := gridWords([][]string{{"成分名", "上限"}, {"チモール", "0.050"}, {"クレゾール", "0.010"}, {"ホウ砂", "0.76"}})
	raw := "成分名 上限\nチモール 0.050\nクレゾール 0.010\nホウ砂 0.76"
	want := "| 成分名 | 上限 |\n| チモール | 上限: 0.050 |\n| クレゾール | 上限: 0.010 |\n| ホウ砂 | 上限: 0.76 |"
	if got := applyTables(raw, words); got != want {
		t.Errorf("table:\n%s\nwant\n%s", got, want)
	}
	other := "成分名 上限\nチモール 0.050\nクレゾール 0.020\nホウ砂 0.76"
	if got := applyTables(other, words); got != other {
		t.Errorf("text that differs from the boxes was changed:\n%s", got)
	}
	list := gridWords([][]string{{"1.", "はじめに"}, {"2.", "背景と目的"}, {"3.", "適用対象"}})
	if got := applyTables("1. はじめに\n2. 背景と目的\n3. 適用対象", list); strings.Contains(got, "|") {
		t.Errorf("a numbered list became a table:\n%s", got)
	}
}

// gridWords lays cells out as words on a grid: rows 20 pt apart, columns
// 100 pt apart, 12 pt high, 12 pt per character.
func gridWords(rows [][]string) []pdfWord {
	var ws []pdfWord
	for r, row := range rows {
		for c, cell := range row {
			x := 50 + 150*float64(c)
			y := 100 + 20*float64(r)
			ws = append(ws, pdfWord{x0: x, y0: y, x1: x + 12*float64(utf8.RuneCountInString(cell)), y1: y + 12, text: cell})
		}
	}
	return ws
}

// FuzzParseBBoxLayout checks that reading pdftotext's boxes, moving titles
// first and rebuilding tables never panics, and that a rebuilt page keeps exactly the raw
// page's characters once the table markup is taken out.
func FuzzParseBBoxLayout(f *testing.F) {
	f.Add(`<doc><page width="595" height="842"><flow><block><line><word xMin="70" yMin="100" xMax="130" yMax="112">成分名</word><word xMin="300" yMin="100" xMax="330" yMax="112">上限</word></line></block></flow></page></doc>`, "成分名 上限")
	f.Add(`<html><body><doc><page><word xMin="a" yMin="1" xMax="2" yMax="3">x</word></page><page></doc>`, "x")
	f.Add(`<doc><page><word xMin="10" yMin="10" xMax="20" yMax="22">&amp;</word></page></doc>`, "&")
	f.Fuzz(func(t *testing.T, xhtml, raw string) {
		pages, _ := parseBBoxLayout(strings.NewReader(xhtml))
		for _, words := range pages {
			got := applyTables(titleFirst(raw, words), words)
			if !utf8.ValidString(raw) {
				continue
			}
			if got != raw && sortedRunes(withoutTableMarkup(got)) != sortedRunes(raw) {
				t.Fatalf("characters changed: %q → %q", raw, got)
			}
		}
	})
}

// TestTitleFirst: a title set in large type and drawn above the body, but
// printed after it by pdftotext -raw, moves before the body; the lines
// themselves stay as they are, and a page in drawing order is unchanged.
func TestTitleFirst(t *testing.T) {
	words := []pdfWord{
		{x0: 80, y0: 100, x1: 400, y1: 130, text: "活動報告レポート"},
		{x0: 70, y0: 300, x1: 500, y1: 312, text: "本レポートでは、登録した情報を紹介しています。"},
		{x0: 70, y0: 320, x1: 300, y1: 332, text: "2024 年 7 月 17 日"},
	}
	raw := "本レポートでは、登録した情報を紹介しています。\n活動報告レポート\n2024 年 7 月 17 日"
	want := "活動報告レポート\n本レポートでは、登録した情報を紹介しています。\n2024 年 7 月 17 日"
	if got := titleFirst(raw, words); got != want {
		t.Errorf("titleFirst:\n%s\nwant\n%s", got, want)
	}
	if got := titleFirst(want, words); got != want {
		t.Errorf("a page in order changed:\n%s", got)
	}
	if got := titleFirst("別の文\n活動報告レポート", words[:1]); got != "別の文\n活動報告レポート" {
		t.Errorf("unmatched lines moved: %q", got)
	}
}

// TestPDFTablesInflatedBoxes rebuilds the error-code table of the demo's
// VPN manual (examples/src/vpn_manual.html printed by Chromium), whose word
// boxes are 2.6 em tall: each row keeps its own cause and remedy, so
// 「E-310」 is never read next to the lockout text of E-101.
func TestPDFTablesInflatedBoxes(t *testing.T) {
	needPDFToText(t)
	path := "../../examples/data/manuals/vpn_manual.pdf"
	fileFor(t, path)
	raw, err := runPDFToText(context.Background(), "pdftotext", path, 0)
	must(t, err)
	boxes, err := runPDFBoxes(context.Background(), "pdftotext", path, 0)
	must(t, err)
	var got []string
	for i := range raw {
		got = append(got, strings.Split(applyTables(raw[i], boxes[i]), "\n")...)
	}
	for _, row := range []string{
		"| エラーコード | 主な原因 | 対処 |",
		"| E-101 | 主な原因: パスワードの誤り | 対処: 5回連続で失敗するとロックされる。ITサービスデスクへ連絡する |",
		"| E-310 | 主な原因: 証明書の期限切れ | 対処: 社内で証明書更新ツールを実行する |",
	} {
		if !slices.Contains(got, row) {
			t.Errorf("row %q missing from\n%s", row, strings.Join(got, "\n"))
		}
	}
}

func TestTightenBoxes(t *testing.T) {
	// Two lines 18 pt apart, 11 pt type: boxes 28.6 pt tall overlap.
	line := func(y float64, words ...string) []pdfWord {
		var out []pdfWord
		x := 70.0
		for _, w := range words {
			n := float64(utf8.RuneCountInString(w))
			out = append(out, pdfWord{x0: x, x1: x + 11*n, y0: y, y1: y + 28.6, text: w})
			x += 11*n + 30
		}
		return out
	}
	inflated := append(line(100, "エラー", "主な原因", "対処方法"), line(118, "パスワード", "誤り", "連絡する")...)
	tightenBoxes(inflated)
	if rows := visualRows(inflated); len(rows) != 2 {
		t.Errorf("inflated boxes: %d bands, want 2", len(rows))
	}
	for _, w := range inflated {
		if h := w.height(); h < 13.1 || h > 13.3 {
			t.Errorf("%s: height %.2f, want 1.2 em = 13.2", w.text, h)
		}
	}
	// Ordinary boxes (1.2 em) stay as they are.
	plain := []pdfWord{}
	for i, w := range []string{"第一条", "目的", "定義", "適用", "範囲"} {
		plain = append(plain, pdfWord{x0: float64(i) * 50, x1: float64(i)*50 + 11*float64(utf8.RuneCountInString(w)), y0: 100, y1: 113.2, text: w})
	}
	before := slices.Clone(plain)
	tightenBoxes(plain)
	if !slices.Equal(before, plain) {
		t.Errorf("ordinary boxes changed: %v → %v", before, plain)
	}
}

func TestTwoColumnProseIsNoTable(t *testing.T) {
	// A page of running text in two columns of 20 characters (10.5 pt
	// type, 16 pt line pitch): every line runs to its column's edge but
	// the last of each paragraph.
	left := []string{
		"謝辞：本研究の実施にあたり、多くの方々か", "らご協力をいただいた。特に調査に協力して", "くださった自治体の担当者の皆様に感謝する",
		"。", "また、データの提供にご協力いただいた事業", "者の皆様にも、この場を借りて御礼申し上げ", "る。",
	}
	right := []string{
		"参考文献：総務省「クラウドサービスの利用", "における適切な設定のためのガイドライン」", "、二〇二二年十月。ほかに多くの資料を参照",
		"した。", "なお、本稿の意見にわたる部分は筆者の個人", "的な見解であり、所属する組織の公式の見解", "ではない。",
	}
	var words []pdfWord
	for i := range left {
		y := 100 + 16*float64(i)
		for c, text := range []string{left[i], right[i]} {
			x := 50 + 250*float64(c)
			n := float64(utf8.RuneCountInString(text))
			words = append(words, pdfWord{x0: x, x1: x + 10.5*n, y0: y, y1: y + 12.6, text: text})
		}
	}
	if tables := findTables(words); len(tables) != 0 {
		t.Errorf("two-column prose rebuilt as a table: %q", tables[0].rowLines())
	}
	// The same bands with short cells that stop where their text ends
	// are a table.
	var grid []pdfWord
	for i, row := range [][2]string{{"項目", "内容"}, {"申請期限", "十日前まで"}, {"承認者", "部長"}, {"保存期間", "五年間"}, {"担当", "総務課"}} {
		y := 100 + 16*float64(i)
		for c, text := range row {
			x := 50 + 250*float64(c)
			n := float64(utf8.RuneCountInString(text))
			grid = append(grid, pdfWord{x0: x, x1: x + 10.5*n, y0: y, y1: y + 12.6, text: text})
		}
	}
	if tables := findTables(grid); len(tables) != 1 {
		t.Errorf("a two-column grid: %d tables, want 1", len(tables))
	}
}
