package questions

import (
	"strings"
	"testing"
)

// TestCheckRow: a generated question passes when its answer is on its page
// and it names no fragment of a longer word; the examples fail.
func TestCheckRow(t *testing.T) {
	page := "令和5年4月12日各府省情報化統括責任者（CIO）連絡会議決定\n" +
		"第一世代抗ヒスタミン3 成分を含む。エストロン又はエストラジオールを配合しない。\n" +
		"端末の紛失に気付いたら、1時間以内にSOCホットライン（内線4110）へ連絡する。"
	row := func(q, gt string, items ...string) Row {
		return Row{Kind: KindPage, Question: q, GroundTruth: gt, Checklist: items}
	}
	for _, tc := range []struct {
		name string
		r    Row
		why  string // "" passes
	}{
		{"whole", row("「文書」では、SOCホットラインについてどのような値や番号が示されていますか？", "1時間以内にSOCホットライン（内線4110）へ連絡する。", "1時間以内", "内線4110"), ""},
		{"date tail", row("「文書」では、日各府省情報化統括責任者についてどのように定められていますか？", "各府省情報化統括責任者（CIO）連絡会議決定"), "follows a number"},
		{"glued list number", row("q", "第一世代抗ヒスタミン3 成分を含む。", "抗ヒスタミン3"), "ends in a number glued to a word"},
		{"cut conjunction", row("q", "エストロン又はエストラジオールを配合しない。", "エストロン又"), "conjunction cut off"},
		{"answer not on page", row("q", "保管期間は5年間とする。"), "not on the page"},
		{"cloze mid-sentence", row("「文書」によると、次の文の【　】に入る語句は何ですか？「はなく、【　】の中核を成す。」", "SOCホットライン", "SOCホットライン"), "starts mid-sentence"},
		{"cloze list number", row("「文書」によると、次の文の【　】に入る語句は何ですか？「【　】 SOCホットラインへ連絡する。」", "1", "1"), "list or page number"},
		{"multi-page is not checked", Row{Kind: KindMulti, GroundTruth: "x"}, ""},
	} {
		c := CheckRow(tc.r, page)
		if tc.why == "" && !c.OK || tc.why != "" && (c.OK || !strings.Contains(c.Why, tc.why)) {
			t.Errorf("%s: %+v; want why containing %q", tc.name, c, tc.why)
		}
	}
}
