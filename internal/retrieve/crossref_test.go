package retrieve

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
)

// testLaw is a small law in the shape of e-Gov's text: chapters, captions
// above articles, paragraphs numbered ２, ３, items 一, 二, and a 罰則
// chapter whose articles list the provisions they punish.
const testLaw = `テスト安全衛生法
（令和元年法律第九十九号）

　　　第一章　総則

（目的）
第一条　この法律は、職場における労働者の安全と健康を確保することを目的とする。

　　　第二章　事業者の義務

（健康診断）
第十条　事業者は、労働者に対し、医師による健康診断を行わなければならない。
２　事業者は、前項の健康診断の結果を記録しておかなければならない。
３　都道府県労働局長は、事業者に対し、臨時の健康診断の実施を指示することができる。

（心理的な負担の程度を把握するための検査）
第十条の二　事業者は、労働者に対し、心理的な負担の程度を把握するための検査を行うよう努めなければならない。

（製造等の禁止）
第十一条　黄りんマッチその他の有害物は、製造し、輸入し、又は使用してはならない。

（作業主任者）
第十二条　事業者は、作業主任者を選任しなければならない。

（報告）
第百十条　事業者は、労働災害が発生したときは、遅滞なく、労働基準監督署長に報告しなければならない。

　　　第三章　罰則

第百二十条　第十一条の規定に違反した者は、三年以下の懲役又は三百万円以下の罰金に処する。

第百二十一条　次の各号のいずれかに該当する者は、五十万円以下の罰金に処する。
一　第一条の目的に反して安全衛生の確保を怠り、労働者の生命又は身体に重大な危険を生じさせ、その事実を知りながら相当の期間にわたりこれを放置し、かつ、監督官庁の求めに応じた報告又は資料の提出を拒んだ者
二　第十条第一項若しくは第二項又は第十二条の規定に違反した者

第百二十二条　第十条第三項の規定による指示に違反した者は、二十万円以下の罰金に処する。

第百二十三条　第百十条の規定に違反した者は、十万円以下の過料に処する。

　　　附　則

（施行期日）
第一条　この法律は、公布の日から施行する。
`

// lawIndex builds an index of testLaw through the legal structure and the
// chunker, with small windows so that 第百二十一条 spans two chunks: its
// penalty sentence in the first, the item that lists 第十条 in the second.
func lawIndex(t *testing.T) *index.Index {
	t.Helper()
	md, ok := document.StructureLegal(testLaw)
	if !ok {
		t.Fatal("test law not recognised as legal text")
	}
	cs, err := chunk.Page("database/law/page_001.md", "law.txt", 1, "2026-01-01T00:00:00", md, chunk.Options{Size: 120, Overlap: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Another document that only shares words.
	cs = append(cs, chunk.Chunk{ID: "database/other/page_001.md_0", File: "database/other/page_001.md", Source: "other.md", Page: 1,
		Heading: "安全の手引き", Text: "# 安全の手引き\n健康診断を受けない場合の罰則については、各法令を確認すること。"})
	ix, err := index.FromChunks(context.Background(), cs, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

const lawFile = "database/law/page_001.md_"

// TestCrossReferences: a question about a penalty gets the penalty
// provision that refers to the article it names, or to the article its
// top result is, placed right after the top result; numbers match exactly.
func TestCrossReferences(t *testing.T) {
	s := New(lawIndex(t))
	ctx := context.Background()
	tests := []struct {
		name  string
		query string
		k     int      // results searched (default 1)
		want  []string // chunk numbers placed right after the top result, in order
		not   []string // chunk numbers that must not be added
	}{
		{"named article and paragraph: the long penalty article's lead and the window that lists it",
			"テスト安全衛生法で、事業者が第十条第一項の健康診断を行わなかった場合、罰則はどうなっていますか？",
			0, []string{"8", "9"}, []string{"10", "11", "7"}},
		{"the law's name before the article",
			"テスト安全衛生法第十条第一項の健康診断を行わなかった場合、罰則は？",
			0, []string{"8", "9"}, []string{"10", "11", "7"}},
		{"another paragraph of the same article has its own penalty",
			"都道府県労働局長が第十条第三項により臨時の健康診断の実施を事業者に指示できる場合、従わない事業者の罰則は？",
			0, []string{"10"}, []string{"8", "9", "11"}},
		{"第十条の二 is not 第十条",
			"第十条の二の検査をしなかった場合の罰則は？",
			0, nil, []string{"8", "9", "10", "11", "7"}},
		{"第百十条 is not 第十条",
			"第百十条の報告をしなかった場合の罰金は？",
			0, []string{"11"}, []string{"8", "9", "10"}},
		{"the top result's article, the question naming none",
			"黄りんマッチを製造し、又は使用すると、どんな罰がありますか？",
			0, []string{"7"}, []string{"8", "9", "10", "11"}},
		{"reverse: a named penalty article brings the provision it refers to",
			"第百二十条の罰則は、どのような行為に科されますか？",
			0, []string{"4"}, []string{"8", "9", "10", "11"}},
		{"the strongest evidence is another document: no law's obligation is asked about",
			"安全の手引きでは、健康診断を受けない場合の罰則については、何を確認することになっていますか？", 3,
			nil, []string{"8", "9", "10", "11", "7"}},
		{"not a penalty question",
			"第十条第一項の健康診断は誰が行いますか？",
			0, nil, []string{"8", "9", "10", "11", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := Options{K: max(tt.k, 1), BM25Weight: 0.6}
			before, _, err := s.Search(ctx, tt.query, opt)
			if err != nil {
				t.Fatal(err)
			}
			got := s.CrossReferences(ctx, tt.query, before, opt)
			if len(got) == 0 || got[0].ChunkID != before[0].ChunkID {
				t.Fatalf("top changed: %v", lawIDs(got))
			}
			want := tt.want
			if len(want) > 0 && got[0].ChunkID == lawFile+want[0] {
				want = want[1:] // the search found it first: nothing to add
			}
			if len(got) < 1+len(want) {
				t.Fatalf("got %v, want %v after the top", lawIDs(got), tt.want)
			}
			for i, w := range want {
				if got[1+i].ChunkID != lawFile+w {
					t.Errorf("got %v, want %v right after the top %s", lawIDs(got), tt.want, got[0].ChunkID)
					break
				}
			}
			for _, n := range tt.not {
				if slices.ContainsFunc(got, func(r Result) bool { return r.ChunkID == lawFile+n }) &&
					!slices.ContainsFunc(before, func(r Result) bool { return r.ChunkID == lawFile+n }) {
					t.Errorf("got %v: %s added", lawIDs(got), n)
				}
			}
			for _, r := range got {
				if r.EvidenceScore <= 0 {
					t.Errorf("%s: evidence %v, want it scored", r.ChunkID, r.EvidenceScore)
				}
			}
		})
	}
}

func lawIDs(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.TrimPrefix(r.ChunkID, lawFile))
	}
	return out
}

func TestArticleRefs(t *testing.T) {
	ref := func(from, to []int, pf, pt int) ArticleRef {
		return ArticleRef{From: from, To: to, ParaFrom: pf, ParaTo: pt}
	}
	tests := []struct {
		text string
		want []ArticleRef
	}{
		{"第五十五条の規定に違反した者", []ArticleRef{ref([]int{55}, []int{55}, 0, 0)}},
		{"第六十六条第一項から第三項まで、第六十六条の三", []ArticleRef{ref([]int{66}, []int{66}, 1, 3), ref([]int{66, 3}, []int{66, 3}, 0, 0)}},
		{"第二十条から第二十五条まで", []ArticleRef{ref([]int{20}, []int{25}, 0, 0)}},
		{"第十五条第一項、第三項若しくは第四項", []ArticleRef{ref([]int{15}, []int{15}, 1, 1), ref([]int{15}, []int{15}, 3, 3), ref([]int{15}, []int{15}, 4, 4)}},
		{"第八十八条第一項（同条第二項において準用する場合を含む。）", []ArticleRef{ref([]int{88}, []int{88}, 1, 1), ref([]int{88}, []int{88}, 2, 2)}},
		{"第五十三条の三から第五十四条の二まで", []ArticleRef{ref([]int{53, 3}, []int{54, 2}, 0, 0)}},
		{"第百二十条及び第千二百三条", []ArticleRef{ref([]int{120}, []int{120}, 0, 0), ref([]int{1203}, []int{1203}, 0, 0)}},
		{"第８条第２項", []ArticleRef{ref([]int{8}, []int{8}, 2, 2)}},
		{"刑法（明治四十年法律第四十五号）第百九十七条", nil},
		{"刑法第百九十七条", nil},
		{"附則第三条", nil},
		{"前条第一項に規定する", nil},
		{"前項の規定", nil},
	}
	for _, tt := range tests {
		got := ArticleRefs(tt.text)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.text, got, tt.want)
			continue
		}
		for i := range got {
			if compareArt(got[i].From, tt.want[i].From) != 0 || compareArt(got[i].To, tt.want[i].To) != 0 || got[i].ParaFrom != tt.want[i].ParaFrom || got[i].ParaTo != tt.want[i].ParaTo {
				t.Errorf("%s: got %v, want %v", tt.text, got, tt.want)
				break
			}
		}
	}
}

func TestOverlapsExact(t *testing.T) {
	one := func(s string) ArticleRef {
		rs := ArticleRefs(s)
		if len(rs) != 1 {
			t.Fatalf("%s: %v", s, rs)
		}
		return rs[0]
	}
	tests := []struct {
		a, b string
		want bool
	}{
		{"第十条", "第百十条", false},
		{"第六十六条", "第六十六条の二", false},
		{"第六十六条の二", "第六十六条の二", true},
		{"第六十六条第一項", "第六十六条第一項から第三項まで", true},
		{"第六十六条第四項", "第六十六条第一項から第三項まで", false},
		{"第六十六条", "第六十六条第四項", true},
		{"第二十二条", "第二十条から第二十五条まで", true},
		{"第二十条の二", "第二十条から第二十五条まで", true},
		{"第二十六条", "第二十条から第二十五条まで", false},
	}
	for _, tt := range tests {
		a, b := one(tt.a), one(tt.b)
		if got := a.Overlaps(b); got != tt.want {
			t.Errorf("%s overlaps %s: %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := b.Overlaps(a); got != tt.want {
			t.Errorf("%s overlaps %s: %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestArticleNumbers(t *testing.T) {
	for _, tt := range []struct {
		s string
		n int
	}{{"一", 1}, {"十", 10}, {"十一", 11}, {"六十六", 66}, {"百", 100}, {"百十", 110}, {"百二十", 120}, {"千二百三", 1203}, {"二千", 2000}, {"12", 12}} {
		if got := parseNum(tt.s); got != tt.n {
			t.Errorf("parseNum(%s) = %d, want %d", tt.s, got, tt.n)
		}
		if got := kanjiNum(tt.n); tt.s[0] > '9' && got != tt.s {
			t.Errorf("kanjiNum(%d) = %s, want %s", tt.n, got, tt.s)
		}
	}
	if got := articleString(artNum{66, 2}); got != "第六十六条の二" {
		t.Errorf("articleString = %s", got)
	}
}
