package answer

import (
	"context"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/retrieve"
)

// lawChunk is a chunk of a law-shaped document under one article heading.
func lawChunk(n int, heading, text string) retrieve.Result {
	return retrieve.Result{ChunkID: "database/law/act/page_001.md_" + string(rune('0'+n)), File: "database/law/act/page_001.md", Page: 1, Heading: heading, Text: text}
}

// TestExtractiveAnswersTheQuestionType: for each kind of question the
// answer quotes the sentence that carries the asked kind of fact, not the
// one that merely repeats the question's words.
func TestExtractiveAnswersTheQuestionType(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	report := []retrieve.Result{{
		ChunkID: "database/r/report/page_003.md_0", File: "database/r/report/page_003.md", Page: 3, Heading: "登録状況",
		Text: "本四半期の登録状況について、登録件数の推移を示す。\n登録件数の累計は 208,034 件になりました。\n登録件数の内訳は表のとおりである。",
	}}
	act := []retrieve.Result{
		lawChunk(1, "危険物法 > 第十条（貯蔵）", "第十条　指定数量以上の危険物は、貯蔵所以外の場所で貯蔵してはならない。ただし、消防署長の承認を受けて指定数量以上の危険物を、十日以内の期間、仮に貯蔵する場合は、この限りでない。"),
		lawChunk(2, "危険物法 > 第二条（定義）", "第二条　この法律において「危険物」とは、別表の品名欄に掲げる物品をいう。\nこの法律において危険物の貯蔵とは、倉庫に置くことを指す。"),
		lawChunk(3, "危険物法 > 第四十一条（罰則）", "第四十一条　第十条の規定に違反した者は、三年以下の懲役又は三百万円以下の罰金に処する。"),
		lawChunk(4, "危険物法 > 第十一条（許可）", "第十一条　貯蔵所を設置しようとする者は、市町村長の許可を受けなければならない。貯蔵所の設置については、この法律で定める。"),
	}
	tests := []struct {
		name    string
		query   string
		results []retrieve.Result
		want    string // the answer must contain this
		notWant string // … and must not be only this
	}{
		{"number with its counter", "登録件数の累計は何件ですか？", report, "208,034 件", ""},
		{"deadline", "危険物を貯蔵所以外で仮に貯蔵できるのは何日以内ですか？", act, "十日以内", ""},
		{"penalty provision", "貯蔵所以外で危険物を貯蔵した場合の罰則は？", act, "三年以下の懲役又は三百万円以下の罰金", ""},
		{"definition", "「危険物」とは何ですか？", act, "別表の品名欄に掲げる物品をいう", ""},
		{"who", "貯蔵所の設置は誰の許可を受けますか？", act, "市町村長の許可", ""},
		{"condition and exception", "貯蔵所以外の場所で貯蔵できるのはどんな場合ですか？", act, "ただし", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := gen.Generate(context.Background(), tt.query, tt.results)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(a.Text, tt.want) {
				t.Errorf("answer %q lacks %q", a.Text, tt.want)
			}
			if n := len([]rune(a.Text)); n > 250+20 {
				t.Errorf("answer is %d characters, want it short", n)
			}
		})
	}
}

// TestExtractiveProcedureSection: a procedure question is answered with the
// steps — commands included, in a fenced block as the source has them, so
// that they are copied as written — of the section whose own heading names
// it.
func TestExtractiveProcedureSection(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	rs := []retrieve.Result{
		{ChunkID: "database/rb/lockout/page_001.md_1", File: "database/rb/lockout/page_001.md", Page: 1, Heading: "アカウントロックアウト対応 > 1. 概要",
			Text: "## 1. 概要\nアカウントロックアウトは入力ミスでも発生する。本手順は、ロックアウトを安全に解除する流れを定める。"},
		{ChunkID: "database/rb/lockout/page_001.md_5", File: "database/rb/lockout/page_001.md", Page: 1, Heading: "アカウントロックアウト対応 > 5. 解除 > 5.1 ロックアウトの解除",
			Text: "### 5.1 ロックアウトの解除\n```powershell\nUnlock-ADAccount -Identity yamada.taro\nGet-ADUser yamada.taro -Properties LockedOut\n```"},
	}
	a, err := gen.Generate(context.Background(), "アカウントロックアウトの解除手順は？", rs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "```\nUnlock-ADAccount -Identity yamada.taro\nGet-ADUser yamada.taro -Properties LockedOut\n```") || strings.Contains(a.Text, "入力ミス") {
		t.Errorf("answer %q: want the unlock commands in a fenced block, not the overview", a.Text)
	}
}

// TestExtractiveCutsALongSentenceAtClauses: a sentence longer than the
// budget is cut to the clauses that hold the asked fact, marked with
// Ellipsis, and never reworded.
func TestExtractiveCutsALongSentenceAtClauses(t *testing.T) {
	long := "事業者は、" + strings.Repeat("当該事業場に係る建設物若しくは機械等を設置し、", 12) + "その計画を当該工事の開始の日の三十日前までに、労働基準監督署長に届け出なければならない。"
	rs := []retrieve.Result{{ChunkID: "database/l/a/page_001.md_0", File: "database/l/a/page_001.md", Page: 1, Heading: "法 > 第八十八条", Text: long}}
	a, err := NewExtractive(bigrams{}, ExtractiveOptions{}).Generate(context.Background(), "計画はいつまでにどこへ届け出ますか？", rs)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.TrimSuffix(a.Text, " [1]")
	if !strings.Contains(text, "三十日前までに") || !strings.HasPrefix(text, Ellipsis) || len([]rune(text)) > 250 {
		t.Errorf("answer %q: want the clauses with the deadline, cut with %s, within 250 characters", a.Text, Ellipsis)
	}
	if !strings.Contains(long, strings.Trim(text, Ellipsis)) {
		t.Errorf("answer %q is not verbatim", a.Text)
	}
}
