package metrics

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fakeJudge returns a fixed verdict.
type fakeJudge struct {
	j   Judgement
	err error
}

func (f fakeJudge) Judge(context.Context, []string, string) (Judgement, error) { return f.j, f.err }

// cells renders a Checklist as the CSV cells batch writes, so expectations
// read like the spreadsheet.
func checklistCells(c Checklist) []string {
	return []string{c.Recall.Cell(), c.Precision.Cell(), c.F1.Cell(), c.Accuracy.Cell(), c.Specificity.Cell()}
}

func TestEvaluateChecklist(t *testing.T) {
	items := []string{"a", "b", "c"}
	tests := []struct {
		name           string
		in             ChecklistInput
		judge          Judgement
		tp, fp, fn, tn int
		// Recall, Precision, F1, Accuracy, Specificity
		cells []string
	}{
		{
			name:  "no reference, agent refuses: TN=1",
			in:    ChecklistInput{ReferenceEmpty: true, Refused: true},
			tn:    1,
			cells: []string{"", "", "", "1", "1"},
		},
		{
			name:  "no reference, agent answers: FP=1",
			in:    ChecklistInput{ReferenceEmpty: true, Answer: "x"},
			fp:    1,
			cells: []string{"", "0", "0", "0", "0"},
		},
		{
			name:  "reference present, agent refuses: FN=item count",
			in:    ChecklistInput{Items: items, Refused: true},
			fn:    3,
			cells: []string{"0", "", "0", "0", ""},
		},
		{
			name:  "reference present, agent refuses, no items: FN=1",
			in:    ChecklistInput{Refused: true},
			fn:    1,
			cells: []string{"0", "", "0", "0", ""},
		},
		{
			// TP=2 FN=1 FP=1: R=2/3 P=2/3 F1=4/6 Acc=2/4 Spec=0/1.
			name:  "judged: two of three plus one extra",
			in:    ChecklistInput{Items: items, Answer: "x"},
			judge: Judgement{Present: []bool{true, false, true}, Extra: []string{"e"}},
			tp:    2, fp: 1, fn: 1,
			cells: []string{"0.6667", "0.6667", "0.6667", "0.5", "0"},
		},
		{
			name:  "judged: all present, nothing extra, specificity undefined",
			in:    ChecklistInput{Items: items, Answer: "x"},
			judge: Judgement{Present: []bool{true, true, true}},
			tp:    3,
			cells: []string{"1", "1", "1", "1", ""},
		},
		{
			// TP=0 FN=3 FP=2: P=0/2 F1=0/5 Acc=0/5.
			name:  "judged: nothing present",
			in:    ChecklistInput{Items: items, Answer: "x"},
			judge: Judgement{Present: []bool{false, false, false}, Extra: []string{"e", "f"}},
			fp:    2, fn: 3,
			cells: []string{"0", "0", "0", "0", "0"},
		},
		{
			name:  "reference present but empty checklist: all undefined",
			in:    ChecklistInput{Answer: "x"},
			cells: []string{"", "", "", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := EvaluateChecklist(t.Context(), fakeJudge{j: tt.judge}, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if c.TP != tt.tp || c.FP != tt.fp || c.FN != tt.fn || c.TN != tt.tn {
				t.Errorf("TP,FP,FN,TN = %d,%d,%d,%d; want %d,%d,%d,%d", c.TP, c.FP, c.FN, c.TN, tt.tp, tt.fp, tt.fn, tt.tn)
			}
			if got := checklistCells(c); !reflect.DeepEqual(got, tt.cells) {
				t.Errorf("R,P,F1,Acc,Spec = %q; want %q", got, tt.cells)
			}
			if c.Reason == "" {
				t.Error("empty Reason")
			}
		})
	}
}

func TestEvaluateChecklistJudgeErrors(t *testing.T) {
	in := ChecklistInput{Items: []string{"a", "b"}, Answer: "x"}
	if _, err := EvaluateChecklist(t.Context(), fakeJudge{err: errors.New("boom")}, in); err == nil {
		t.Error("judge error not returned")
	}
	if _, err := EvaluateChecklist(t.Context(), fakeJudge{j: Judgement{Present: []bool{true}}}, in); err == nil {
		t.Error("verdict count mismatch not reported")
	}
}

func TestParseChecklist(t *testing.T) {
	tests := []struct {
		cell string
		want []string
	}{
		{"- 影響範囲を確認する\n- 管理者に報告する", []string{"影響範囲を確認する", "管理者に報告する"}},
		{"* a\r\n* b\r\n", []string{"a", "b"}},
		{"・電源を切る\n\n・プラグを抜く", []string{"電源を切る", "プラグを抜く"}},
		{"1. first\n2) second\n(3) third\n１．全角\n4、読点", []string{"first", "second", "third", "全角", "読点"}},
		{"① 丸数字\n  -インデント  ", []string{"丸数字", "インデント"}},
		{"単独の項目", []string{"単独の項目"}},
		{"2024年に更新", []string{"2024年に更新"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := ParseChecklist(tt.cell); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseChecklist(%q) = %q; want %q", tt.cell, got, tt.want)
		}
	}
}

func TestIsRefusal(t *testing.T) {
	tests := []struct {
		answer string
		want   bool
	}{
		{"該当する手順が見つかりませんでした。資料を追加してください。", true},
		{"申し訳ありませんが、回答できません。", true},
		{"関連する情報が見つかりませんでした", true},
		{"I cannot answer this question.", true},
		{"There is ｎｏ ｉｎｆｏｒｍａｔｉｏｎ about it.", true}, // full-width, NFKC
		{"I can’t answer that.", true},
		{"提供された資料には、社員食堂の営業時間についての記載がありません。", true},
		{"その点は資料からは分かりません。", true},
		{"VPNの料金に関する情報がありません。", true},
		{"The documents do not mention it.", true},
		{"まず影響範囲を確認します。", false},
		{"手順書に記載された手順に従ってください。", false},
		{"", false},
		// A partial answer names an unsupported part: it is an answer.
		{"連続接続は最長12時間までとなる [1]。なお、料金については記載がありません。", false},
		{"料金については記載がありません。連続接続は最長12時間までとなる [1]。", false},
		{"資料には記載がありません。担当部署にお問い合わせください。", true},
		{"該当する手順が見つかりませんでした。\n出典: runbooks/vpn.md", true},
	}
	for _, tt := range tests {
		if got := IsRefusal(tt.answer); got != tt.want {
			t.Errorf("IsRefusal(%q) = %v; want %v", tt.answer, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"冷蔵庫の温度設定を変更したい", []string{"冷蔵庫", "温度設定", "変更"}},
		{"ＶＰＮの接続方法は？", []string{"vpn", "接続方法"}},
		{"How to reset the router", []string{"how", "reset", "router"}},
		{"を", nil},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Terms(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestOfflineJudgeParaphrases(t *testing.T) {
	tests := []struct {
		item, answer string
		coverage     float64 // hand-counted features found / features
		present      bool
	}{
		// 影響,響範,範囲,確認: all four in the answer.
		{"影響範囲を確認する", "まず影響範囲の確認を行います。", 1, true},
		// 電源,プラ,ラグ,抜: all found.
		{"電源プラグを抜く", "コンセントから電源プラグを抜いてください。", 1, true},
		// 管理,理者,報告.
		{"管理者に報告する", "速やかに管理者へ報告してください。", 1, true},
		// 関係,係者 missing; エス,スカ,カレ,レー,ーシ,ショ,ョン found: 7/9.
		{"関係者へエスカレーションする", "上長にエスカレーションします。", 7.0 / 9, true},
		// ログ found, 保全 missing: 1/2.
		{"ログを保全する", "ログを削除してください。", 0.5, false},
		{"パスワードを変更する", "影響範囲の確認を行います。", 0, false},
		// check, logs.
		{"Check the logs", "First, check the logs carefully.", 1, true},
		// Hiragana-only item falls back to all bigrams: しっ,っか,かり,りし,しめ found, める not: 5/6.
		{"しっかりしめる", "ドアをしっかりしめてください。", 5.0 / 6, true},
		// Full-width and half-width forms normalise: ｻｰﾊﾞ → サーバ.
		{"ｻｰﾊﾞを再起動する", "サーバを再起動します", 1, true},
	}
	for _, tt := range tests {
		got := ItemCoverage(tt.item, tt.answer)
		if diff := got - tt.coverage; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("ItemCoverage(%q, %q) = %v; want %v", tt.item, tt.answer, got, tt.coverage)
		}
		j, err := OfflineJudge{}.Judge(t.Context(), []string{tt.item}, tt.answer)
		if err != nil {
			t.Fatal(err)
		}
		if j.Present[0] != tt.present {
			t.Errorf("item %q in %q: present = %v; want %v", tt.item, tt.answer, j.Present[0], tt.present)
		}
	}
}

func TestOfflineJudgeExtraPoints(t *testing.T) {
	items := []string{"影響範囲を確認する", "管理者に報告する"}
	answer := "以下の手順で対応します。\n" +
		"1. まず影響範囲の確認を行います。\n" + // matches item 1
		"2. 管理者へ報告してください。\n" + // matches item 2
		"3. 作業記録を残します。\n" + // extra key point
		"以上です。\n" + // one feature (以上): not a key point
		"[出典: database/runbook/page_001.md]" // citation
	j, err := OfflineJudge{}.Judge(t.Context(), items, answer)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j.Present, []bool{true, true}) {
		t.Errorf("Present = %v; want [true true]", j.Present)
	}
	// 以下の手順で対応します: 以下,手順,対応 — no item shares them, so it
	// is an extra point too; the offline judge cannot tell filler from content.
	want := []string{"以下の手順で対応します。", "作業記録を残します。"}
	if !reflect.DeepEqual(j.Extra, want) {
		t.Errorf("Extra = %q; want %q", j.Extra, want)
	}
}

func refCells(r Reference) []string {
	return []string{r.Recall.Cell(), r.Precision.Cell(), r.Specificity.Cell(), r.F1.Cell(), r.Accuracy.Cell()}
}

func TestEvaluateReference(t *testing.T) {
	var all []string
	for _, p := range []string{"a", "b", "b2", "c", "d", "e", "f", "g", "h", "i"} {
		all = append(all, "database/x/"+p+".md")
	}
	tests := []struct {
		name           string
		cell           string
		retrieved      []string
		tp, tn, fp, fn int
		// Recall, Precision, Specificity, F1, Accuracy
		cells []string
	}{
		{
			// Universe: 2 groups + 7 other pages = 9. TP=1 (b via b2), FN=1 (a),
			// FP=2 (c, d), TN=9-4=5. R=1/2 P=1/3 Spec=5/7 F1=2/5 Acc=6/9.
			name:      "alias group hit through the copy",
			cell:      "database/x/a.md\ndatabase/x/b.md|database/x/b2.md",
			retrieved: []string{"database/x/b2.md", "database/x/c.md", "database/x/d.md"},
			tp:        1, tn: 5, fp: 2, fn: 1,
			cells: []string{"0.5", "0.3333", "0.7143", "0.4", "0.6667"},
		},
		{
			// Both aliases retrieved count once; duplicates ignored.
			// Universe 1 group + 8 others = 9; TP=1 TN=8.
			name:      "both aliases and windows separators",
			cell:      `.\database\x\b.md|./database/x/b2.md`,
			retrieved: []string{"database/x/b.md", `database\x\b2.md`, "database/x/b.md"},
			tp:        1, tn: 8,
			cells: []string{"1", "1", "1", "1", "1"},
		},
		{
			// No reference: 10 pages, FP=2, TN=8. P=0/2, Spec=8/10, Acc=8/10.
			name:      "no reference",
			cell:      "",
			retrieved: []string{"database/x/a.md", "database/x/c.md"},
			tn:        8, fp: 2,
			cells: []string{"", "0", "0.8", "0", "0.8"},
		},
		{
			// Full path matching: a page with the same name elsewhere is not a hit.
			// Relevant page is outside allPages: universe = 1 + 10 = 11.
			// TP=0 FN=1 FP=1 TN=9. R=0 P=0 Spec=9/10 F1=0 Acc=9/11.
			name:      "same file name, other folder",
			cell:      "database/y/a.md",
			retrieved: []string{"database/x/a.md"},
			tn:        9, fp: 1, fn: 1,
			cells: []string{"0", "0", "0.9", "0", "0.8182"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := EvaluateReference(ParseReference(tt.cell), tt.retrieved, all)
			if r.TP != tt.tp || r.TN != tt.tn || r.FP != tt.fp || r.FN != tt.fn {
				t.Errorf("TP,TN,FP,FN = %d,%d,%d,%d; want %d,%d,%d,%d", r.TP, r.TN, r.FP, r.FN, tt.tp, tt.tn, tt.fp, tt.fn)
			}
			if got := refCells(r); !reflect.DeepEqual(got, tt.cells) {
				t.Errorf("R,P,Spec,F1,Acc = %q; want %q", got, tt.cells)
			}
		})
	}
}

func TestParseReference(t *testing.T) {
	got := ParseReference(" ./a/b.md | a/c.md \r\n\n.\\x\\y.md|")
	want := [][]string{{"a/b.md", "a/c.md"}, {"x/y.md"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	if s := FormatReference(want); s != "a/b.md|a/c.md\nx/y.md" {
		t.Errorf("FormatReference = %q", s)
	}
	// A comma-separated list is that many pages, not one path.
	for cell, want := range map[string][][]string{
		"a.md, b.md":            {{"a.md"}, {"b.md"}},
		"a.md|a2.md、b.md":       {{"a.md", "a2.md"}, {"b.md"}},
		"runbooks/x.md; y/z.md": {{"runbooks/x.md"}, {"y/z.md"}},
		"report, final.md":      {{"report, final.md"}}, // "report" is no path: one name with a comma
	} {
		if got := ParseReference(cell); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseReference(%q) = %q; want %q", cell, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	s := NewSummary()
	s.Add("Recall", Defined(1))
	s.Add("Spec", Ratio{})
	s.Add("Recall", Defined(0.5))
	s.Add("Recall", Ratio{}) // undefined rows are left out of the mean
	s.AddCount("TP", 1)
	s.AddCount("TP", 2)
	got := s.Rows()
	want := []SummaryRow{
		{Metric: "Recall", Mean: Defined(0.75), Rows: 2},
		{Metric: "Spec", Rows: 0},
		{Metric: "TP", Mean: Defined(1.5), Rows: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

func TestRatioCell(t *testing.T) {
	tests := []struct {
		r    Ratio
		want string
	}{
		{Ratio{}, ""},
		{Of(1, 3), "0.3333"},
		{Of(2, 3), "0.6667"},
		{Of(1, 1), "1"},
		{Of(0, 5), "0"},
		{Of(1, 0), ""},
	}
	for _, tt := range tests {
		if got := tt.r.Cell(); got != tt.want {
			t.Errorf("%+v.Cell() = %q; want %q", tt.r, got, tt.want)
		}
	}
}

func FuzzParseChecklist(f *testing.F) {
	for _, s := range []string{"- a\n* b", "1. x\n(2) y", "①\n", "・"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cell string) {
		for _, it := range ParseChecklist(cell) {
			if it == "" || strings.Contains(it, "\n") {
				t.Fatalf("bad item %q", it)
			}
		}
	})
}

func FuzzParseReference(f *testing.F) {
	f.Add("a.md|b.md\nc.md")
	f.Add(`.\x\y.md`)
	f.Add("a.md, b.md|c.md")
	f.Fuzz(func(t *testing.T, cell string) {
		g := ParseReference(cell)
		if again := ParseReference(FormatReference(g)); !reflect.DeepEqual(again, g) {
			t.Fatalf("round trip %q -> %q", g, again)
		}
	})
}

func FuzzOfflineJudge(f *testing.F) {
	f.Add("影響範囲を確認する", "まず影響範囲の確認を行います。")
	f.Fuzz(func(t *testing.T, item, answer string) {
		j, err := OfflineJudge{}.Judge(context.Background(), []string{item}, answer)
		if err != nil || len(j.Present) != 1 {
			t.Fatalf("judge: %v %v", j, err)
		}
	})
}

func TestNormalizePath(t *testing.T) {
	for in, want := range map[string]string{
		`.\database\a\page_001.md`:    "database/a/page_001.md",
		" ./database//a/page_001.md ": "database/a/page_001.md",
		`.\ ./x.md`:                   "x.md", // stripping "./" exposes a space, then another "./"
		"":                            "",
	} {
		if got := NormalizePath(in); got != want {
			t.Errorf("NormalizePath(%q) = %q; want %q", in, got, want)
		}
		if again := NormalizePath(NormalizePath(in)); again != NormalizePath(in) {
			t.Errorf("NormalizePath is not idempotent on %q: %q", in, again)
		}
	}
}
