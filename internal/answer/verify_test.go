package answer

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
)

var (
	kagomeOnce sync.Once
	kagome     *analysis.Analyzer
)

// analyser returns the project's real analyser, loaded once per test run.
func analyser(t testing.TB) *analysis.Analyzer {
	t.Helper()
	kagomeOnce.Do(func() {
		a, err := analysis.New(analysis.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		kagome = a
	})
	return kagome
}

func TestSplitClaims(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Statement
	}{
		{"citation after the full stop", "端末を隔離する。[1]ログを保全する。[2]",
			[]Statement{{Text: "端末を隔離する。", Cited: []int{1}}, {Text: "ログを保全する。", Cited: []int{2}}}},
		{"citation before the full stop", "端末を隔離する [1]。ログを保全する [1][2]。",
			[]Statement{{Text: "端末を隔離する。", Cited: []int{1}}, {Text: "ログを保全する。", Cited: []int{1, 2}}}},
		{"one citation closes a run", "手順は三段階。まず隔離する。次に報告する。 [3]",
			[]Statement{{Text: "手順は三段階。", Cited: []int{3}, Inherited: true}, {Text: "まず隔離する。", Cited: []int{3}, Inherited: true}, {Text: "次に報告する。", Cited: []int{3}}}},
		{"list items and headings", "## 回答\n1. ネットワークから切断する [1]\n- 管理者に報告する［2］\n* 記録を残す",
			[]Statement{{Text: "ネットワークから切断する", Cited: []int{1}, Line: 1}, {Text: "管理者に報告する", Cited: []int{2}, Line: 2}, {Text: "記録を残す", Line: 3}}},
		{"grouped citation", "Rotate the keys [1, 3]. Then audit.",
			[]Statement{{Text: "Rotate the keys.", Cited: []int{1, 3}}, {Text: "Then audit.", Cited: nil}}},
		{"punctuation only", "。[1]\n---", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitClaims(tt.text)
			lines := strings.Split(tt.text, "\n")
			for i, st := range got {
				if l := lines[st.Line]; l[st.start:st.start+len(st.raw)] != st.raw {
					t.Errorf("statement %d: raw %q is not at byte %d of %q", i, st.raw, st.start, l)
				}
				got[i].raw, got[i].start = "", 0
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SplitClaims(%q)\n got %+v\nwant %+v", tt.text, got, tt.want)
			}
		})
	}
}

func TestVerifyClaims(t *testing.T) {
	tok := analyser(t)
	evidence := map[int]string{
		1: "# マルウェア感染端末の隔離手順\n感染が疑われる端末は、直ちにLANケーブルを抜きネットワークから隔離する。隔離後30分以内にSOCへ報告する。",
		2: "# ログ保管・管理規程\nファイアウォールのログは1年間保管する。保管期間を過ぎたログは承認を得て削除する。",
	}
	tests := []struct {
		name      string
		text      string
		supported []bool
		precision float64
	}{
		{"faithful paraphrase", "感染端末はLANケーブルを抜いてネットワークから隔離します。[1]", []bool{true}, 1},
		{"wrong number", "隔離後60分以内にSOCへ報告します。[1]", []bool{false}, 0},
		{"right number", "隔離後30分以内にSOCへ報告します。[1]", []bool{true}, 1},
		{"wrong citation", "ファイアウォールのログは1年間保管します。[1]", []bool{false}, 0},
		{"one of two citations supports", "ファイアウォールのログは1年間保管します。[1][2]", []bool{true}, 0.5},
		{"invented fact", "隔離した端末はメーカーへ修理に出し、代替機をリース契約で手配します。[1]", []bool{false}, 0},
		{"uncited but in the evidence", "ログは1年間保管する。", []bool{true}, 1},
		{"no claim at all", "以下の通りです。", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := VerifyClaims(tt.text, evidence, tok, 0)
			var got []bool
			for _, c := range v.Claims {
				got = append(got, c.Supported)
			}
			if !reflect.DeepEqual(got, tt.supported) || v.CitationPrecision != tt.precision {
				t.Errorf("supported %v, precision %v; want %v, %v\n%+v", got, v.CitationPrecision, tt.supported, tt.precision, v.Claims)
			}
			if tt.name == "wrong number" && !reflect.DeepEqual(v.Claims[0].MissingNumbers, []string{"60"}) {
				t.Errorf("missing numbers %v; want [60]", v.Claims[0].MissingNumbers)
			}
		})
	}
}

func TestWithoutUnsupported(t *testing.T) {
	tok := analyser(t)
	evidence := map[int]string{1: "感染が疑われる端末は、直ちにLANケーブルを抜きネットワークから隔離する。隔離後30分以内にSOCへ報告する。"}
	tests := []struct{ text, want string }{
		// The invented sentence goes with its line.
		{"端末のLANケーブルを抜いて隔離する。[1]\n- 隔離した端末はメーカーへ修理に出し代替機をリースで手配する。[1]",
			"端末のLANケーブルを抜いて隔離する。[1]"},
		// A run closed by one citation: the kept sentence keeps [1].
		{"端末のLANケーブルを抜いて隔離する。隔離後は端末をメーカーへ修理に出し代替機をリースで手配する。[1]",
			"端末のLANケーブルを抜いて隔離する。[1]"},
		// Everything supported: unchanged.
		{"隔離後30分以内にSOCへ報告する。[1]", "隔離後30分以内にSOCへ報告する。[1]"},
		// A table keeps its header and delimiter rows; the invented row goes
		// without leaving a blank line that would end the table.
		{"| 手順 | 内容 |\n|---|---|\n| 1 | LANケーブルを抜いてネットワークから隔離する [1] |\n| 2 | 端末はメーカーへ修理に出し代替機をリースで手配する [1] |\n| 3 | 隔離後30分以内にSOCへ報告する [1] |",
			"| 手順 | 内容 |\n|---|---|\n| 1 | LANケーブルを抜いてネットワークから隔離する [1] |\n| 3 | 隔離後30分以内にSOCへ報告する [1] |"},
		// A code block left empty goes whole; a rule and a kept block stay.
		{"端末のLANケーブルを抜いて隔離する。[1]\n\n```\n端末はメーカーへ修理に出し代替機をリースで手配する [1]\n```\n\n---\n\n```\n隔離後30分以内にSOCへ報告する [1]\n```",
			"端末のLANケーブルを抜いて隔離する。[1]\n\n\n---\n\n```\n隔離後30分以内にSOCへ報告する [1]\n```"},
	}
	for _, tt := range tests {
		v := VerifyClaims(tt.text, evidence, tok, 0)
		if got := v.WithoutUnsupported(tt.text); got != tt.want {
			t.Errorf("WithoutUnsupported(%q)\n got %q\nwant %q\n%+v", tt.text, got, tt.want, v.Claims)
		}
	}
}

func FuzzSplitClaims(f *testing.F) {
	for _, s := range []string{"端末を隔離する。[1]ログを保全する。[2]", "1. a [1]\n- b［2］", "A. B! C? [1, 2]", "。[", "[1]", "## x\n|a|b|", "|a|b|\n|---|---|\n| 1 | 隔離する [1] |\n```\nx y [2]\n```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, st := range SplitClaims(text) {
			if strings.TrimSpace(st.Text) == "" || !hasWordRune(st.Text) {
				t.Fatalf("empty statement %+v from %q", st, text)
			}
			if citation.MatchString(st.Text) {
				t.Fatalf("statement %q keeps a citation marker", st.Text)
			}
			if st.Line < 0 || st.Line > strings.Count(text, "\n") {
				t.Fatalf("line %d out of range", st.Line)
			}
			if l := strings.Split(text, "\n")[st.Line]; st.start < 0 || st.start+len(st.raw) > len(l) || l[st.start:st.start+len(st.raw)] != st.raw {
				t.Fatalf("raw %q is not at byte %d of line %q", st.raw, st.start, l)
			}
		}
	})
}

func TestVerifyClaimsUncitedEvidence(t *testing.T) {
	tok := analyser(t)
	cited := map[int]string{1: "感染が疑われる端末はネットワークから隔離する。"}
	uncited := []string{"ファイアウォールのログは1年間保管する。"}
	v := verifyClaims("ファイアウォールのログは1年間保管する。[1]", cited, uncited, tok, 0)
	if len(v.Claims) != 1 {
		t.Fatalf("claims %+v", v.Claims)
	}
	c := v.Claims[0]
	if !c.Supported || !c.Uncited || len(c.SupportedBy) != 0 || v.SupportedRate != 1 || v.CitationPrecision != 0 {
		t.Errorf("a claim found only in evidence it does not cite is supported with a wrong citation: %+v, precision %v", c, v.CitationPrecision)
	}
}

func TestVerifyClaimsBracketedText(t *testing.T) {
	tok := analyser(t)
	ev := map[int]string{1: "Get-WinEvent で $_.Properties[0].Value を確認し、ロックアウト元の端末を特定する。"}
	v := VerifyClaims("$_.Properties[0].Value を確認し、ロックアウト元の端末を特定する。 [1]", ev, tok, 0)
	if len(v.Claims) != 1 || !reflect.DeepEqual(v.Claims[0].Cited, []int{1}) || v.CitationPrecision != 1 {
		t.Errorf("[0] names no evidence and is not a citation: %+v, precision %v", v.Claims, v.CitationPrecision)
	}
}

// FuzzVerifyClaims checks the claim check on arbitrary answer text: rates
// stay in [0, 1], and taking the unsupported claims out never panics,
// never adds text and leaves no unsupported claim behind.
func FuzzVerifyClaims(f *testing.F) {
	for _, s := range []string{"端末を隔離する。[1]翌日に廃棄する。[1]", "- 30分以内に報告する [2]\n1. 隔離 [1]", "A. B [3]. [1]", "[1][1]。。", "x\n\n- [2]", "| 手順 | 内容 |\n|---|---|\n| 1 | 30分以内に報告する [1] |\n| 2 | 翌日に廃棄する [2] |\n```\n翌日に廃棄する [1]\n```"} {
		f.Add(s)
	}
	ev := map[int]string{1: "感染端末はネットワークから隔離する。30分以内にSOCへ報告する。", 2: "ログは1年間保管する。"}
	f.Fuzz(func(t *testing.T, text string) {
		v := VerifyClaims(text, ev, bigrams{}, 0)
		if v.SupportedRate < 0 || v.SupportedRate > 1 || v.CitationPrecision < 0 || v.CitationPrecision > 1 {
			t.Fatalf("rates %v, %v", v.SupportedRate, v.CitationPrecision)
		}
		out := v.WithoutUnsupported(text)
		if len(out) > len(text) {
			t.Fatalf("WithoutUnsupported grew %q into %q", text, out)
		}
		if len(v.Unsupported()) > 0 {
			if again := VerifyClaims(out, ev, bigrams{}, 0); len(again.Unsupported()) > 0 && again.Unsupported()[0].Text == v.Unsupported()[0].Text {
				t.Fatalf("claim %q still in %q", v.Unsupported()[0].Text, out)
			}
		}
	})
}

func TestStripCitationsNested(t *testing.T) {
	if got := stripCitations("手順 [[[1]2]3] です"); got != "手順 です" {
		t.Errorf("stripCitations = %q", got)
	}
}
