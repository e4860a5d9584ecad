package document

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/golden"
)

func TestStructureLegal(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  string // "" means unchanged and not legal
		legal bool
	}{
		{
			name: "text twin: caption line, bare article and paragraph numbers, chapters",
			in: "製品安全規程\n（令和二年規程第一号）\n\n　　　第一章　総則\n\n（目的）\n第一条\n\n　この規程は、安全を目的とする。\n\n" +
				"　　　第三章　罰則\n\n（罰則）\n第十一条\n\n　第三条に違反した者は、罰金に処する。\n２\n\n　前項の罰金は、十万円以下とする。\n一\n\n　故意の場合\n",
			want: "# 製品安全規程\n\n（令和二年規程第一号）\n\n## 第一章 総則\n\n### 第一条（目的）\n\n　この規程は、安全を目的とする。\n\n" +
				"## 第三章 罰則\n\n### 第十一条（罰則）\n\n　第三条に違反した者は、罰金に処する。\n\n２　前項の罰金は、十万円以下とする。\n\n一　故意の場合\n",
			legal: true,
		},
		{
			name: "e-Gov Markdown: bold labels, title repeated, table of contents, supplement",
			in: "# 見本法\n\n**見本法**\n**（平成一年法律第一号）**\n\n　第一章　総則（第一条―第二条）\n　第二章　雑則（第三条）\n　附則\n\n" +
				"　　　**第一章　総則**\n\n（目的）\n\n**第一条** 　この法律は、見本とする。\n\n**第二条** 　次に掲げる。\n\n**一** 　甲\n\n" +
				"　　　**第二章　雑則**\n\n**第三条** 　削除\n\n　　　**附　則　抄**\n\n**第一条** 　公布の日から施行する。\n",
			want: "# 見本法\n\n**（平成一年法律第一号）**\n\n　第一章　総則（第一条―第二条）\n　第二章　雑則（第三条）\n　附則\n\n" +
				"## 第一章 総則\n\n### 第一条（目的）\n\nこの法律は、見本とする。\n\n### 第二条\n\n次に掲げる。\n\n一　甲\n\n" +
				"## 第二章 雑則\n\n### 第三条\n\n削除\n\n## 附則 抄\n\n### 第一条\n\n公布の日から施行する。\n",
			legal: true,
		},
		{
			name:  "regulation with Arabic numbers, captions attached, sections and a table",
			in:    "## 就業規則\n\n第1章 総則\n第1節 通則\n第1条（目的） この規則は、従業員の労働条件を定める。\n第2条（適用範囲） この規則は、全従業員に適用する。\n\n| 区分 | 第3条 |\n|---|---|\n| 甲 | 乙 |\n第2節 服務\n第3条（遵守） 従業員はこの規則を守る。\n",
			want:  "## 就業規則\n\n### 第1章 総則\n\n#### 第1節 通則\n\n##### 第1条（目的）\n\nこの規則は、従業員の労働条件を定める。\n\n##### 第2条（適用範囲）\n\nこの規則は、全従業員に適用する。\n\n| 区分 | 第3条 |\n|---|---|\n| 甲 | 乙 |\n\n#### 第2節 服務\n\n##### 第3条（遵守）\n\n従業員はこの規則を守る。\n",
			legal: true,
		},
		{
			name: "mentions of articles mid-sentence are ordinary text",
			in:   "# 社内メモ\n\n契約書の第三条によれば、納期は月末である。\n第五条と第六条も確認すること。\n",
		},
		{
			name: "one article line is not enough",
			in:   "# 議事録\n\n第一条　この議事録は社外秘とする。\n\n以上\n",
		},
		{
			name: "references broken across lines do not start articles",
			in:   "規程の改正について\n第三条\nの規定により、次のとおり改める。\n第四条\nに規定する手続は廃止する。\n",
		},
		{
			name: "numbers that do not increase are not articles",
			in:   "参照表\n\n第五条　甲\n第二条　乙\n",
		},
		{
			name: "Markdown rules: the caption below the heading joins it",
			in: "# 就業規則\n\n## 第2章 人事\n\n### 第7条\n試用期間\n\n新たに採用した者は、3か月の試用期間を置く。\n\n" +
				"### 第8条\n\n**労働時間**\n\n所定労働時間は8時間とする。\n\n### 第9条\n（休憩）\n休憩は1時間とする。\n\n" +
				"### 第10条 年次有給休暇\n\n10日を付与する。\n",
			want: "# 就業規則\n\n## 第2章 人事\n\n### 第7条 試用期間\n\n新たに採用した者は、3か月の試用期間を置く。\n\n" +
				"### 第8条 労働時間\n\n所定労働時間は8時間とする。\n\n### 第9条（休憩）\n\n休憩は1時間とする。\n\n" +
				"### 第10条 年次有給休暇\n\n10日を付与する。\n",
			legal: true,
		},
		{
			name:  "a short rule, a list or a sentence below an article is not its caption",
			in:    "# 規程\n\n### 第1条\n削除する\n\n### 第2条\n- 甲\n\n### 第3条\n社員は、次の事項を守る\n\n### 第4条\n別に定める\n",
			want:  "# 規程\n\n## 第1条\n\n削除する\n\n## 第2条\n\n- 甲\n\n## 第3条\n\n社員は、次の事項を守る\n\n## 第4条\n\n別に定める\n",
			legal: true,
		},
		{
			name: "fenced code is left alone",
			in:   "# 例\n\n```\n第一条　甲\n第二条　乙\n```\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, legal := StructureLegal(tt.in)
			if legal != tt.legal {
				t.Fatalf("legal = %v, want %v\n%s", legal, tt.legal, got)
			}
			want := tt.want
			if !tt.legal {
				want = tt.in
			}
			if got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestStructureLegalRejects(t *testing.T) {
	// Each line alone is a candidate the context must turn down.
	tests := []struct {
		name, in, notHeading string
	}{
		{"a 別表 cell inside an article", "第一条　甲\n\n別表第五\n\n第二条　乙\n", "別表第五"},
		{"a table of contents entry", "第一章　総則（第一条―第二条）\n第一章　総則\n第一条　甲\n第二条　乙\n", "第一章 総則（第一条―第二条）"},
		{"a chapter that goes back", "第二章　甲\n第一条　甲\n第一章　乙\n第二条　乙\n", "第一章 乙"},
		{"a caption not above an article", "第一条　甲\n（注記）\n本文\n第二条　乙\n", "（注記）"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, legal := StructureLegal(tt.in)
			if !legal {
				t.Fatalf("not legal:\n%s", got)
			}
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, "#") && strings.Contains(l, tt.notHeading) {
					t.Errorf("%q became a heading:\n%s", tt.notHeading, got)
				}
			}
		})
	}
}

// lawPage returns one law of the shared dataset as the extractor sees it
// (html: converted to Markdown; txt: the text twin).
func lawPage(t *testing.T, hashPrefix, ext string) string {
	t.Helper()
	dir := map[string]string{".html": "html", ".txt": "text"}[ext]
	paths, _ := filepath.Glob(filepath.Join(lawDataset, dir, hashPrefix+"*"+ext))
	if len(paths) != 1 {
		t.Skipf("law-html-ja dataset missing (%s*%s)", hashPrefix, ext)
	}
	data, err := os.ReadFile(paths[0])
	must(t, err)
	if ext == ".txt" {
		return string(data)
	}
	md, err := ConvertHTML(context.Background(), data, HTMLMarkdown)
	must(t, err)
	return md
}

// The six laws of the dataset (prefixes of their file names).
var lawHashes = []string{"6670beb7", "a99edcb3", "bb6d62d3", "c25333a2", "cdcc0b7a", "d72ef67f"}

// sortedRunes is the multiset of s's runes without white space and the
// Markdown marks the structure adds or removes.
func sortedRunes(s string) string {
	r := []rune(squash(s))
	slices.Sort(r)
	return string(r)
}

// TestStructureLegalLaws runs every law of the dataset, as HTML and as its
// text twin: each is legal, keeps every character (the only one dropped is
// the HTML page's repeated title), and its article headings are the same
// in both forms.
func TestStructureLegalLaws(t *testing.T) {
	for _, h := range lawHashes {
		var headings [2][]string
		for i, ext := range []string{".html", ".txt"} {
			t.Run(h+ext, func(t *testing.T) {
				in := lawPage(t, h, ext)
				out, legal := StructureLegal(in)
				if !legal {
					t.Fatal("not detected as legal")
				}
				title := strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "# ")
				want := sortedRunes(in)
				if ext == ".html" {
					want = sortedRunes(strings.Replace(in, "**"+title+"**", "", 1))
				}
				if got := sortedRunes(out); got != want {
					t.Errorf("characters changed: %d in, %d out", len([]rune(want)), len([]rune(got)))
				}
				for _, l := range strings.Split(out, "\n") {
					if articleHeading.MatchString(l) {
						headings[i] = append(headings[i], squash(l)) // a link in a caption leaves a space in the HTML form
					}
				}
				if len(headings[i]) < 6 {
					t.Errorf("%d article headings", len(headings[i]))
				}
			})
		}
		if headings[0] != nil && headings[1] != nil && !slices.Equal(headings[0], headings[1]) {
			t.Errorf("%s: HTML and text twin differ in article headings (%d vs %d)", h, len(headings[0]), len(headings[1]))
		}
	}
}

var articleHeading = regexp.MustCompile(`^#{1,6} 第[一二三四五六七八九十百千]+条`)

// TestLegalGolden pins the whole conversion of the smallest law, as HTML
// and as text.
func TestLegalGolden(t *testing.T) {
	for _, ext := range []string{".html", ".txt"} {
		out, _ := StructureLegal(lawPage(t, "a99edcb3", ext))
		golden.Check(t, filepath.Join("testdata", "law_pl"+ext+".md.golden"), []byte(out))
	}
}

// TestLegalChunks checks what the structure is for: chunks that name their
// article, never straddle two, and repeat the heading when an article is
// longer than one chunk.
func TestLegalChunks(t *testing.T) {
	md, _ := StructureLegal(lawPage(t, "a99edcb3", ".html"))
	pieces, err := chunk.Split(md, chunk.Options{})
	must(t, err)
	var third *chunk.Piece
	for i, p := range pieces {
		if strings.Count(p.Text, "第三条（") > 1 || articleCount(p.Text) > 1 {
			t.Errorf("chunk %d straddles articles:\n%s", i, p.Text)
		}
		if p.Heading == "製造物責任法 > 第三条（製造物責任）" {
			third = &pieces[i]
		}
	}
	if third == nil {
		t.Fatalf("no chunk with heading path 製造物責任法 > 第三条（製造物責任）: %v", headingsOf(pieces))
	}
	if !strings.HasPrefix(third.Text, "# 製造物責任法\n## 第三条（製造物責任）\n製造業者等は、") {
		t.Errorf("article chunk text:\n%s", third.Text)
	}

	// 労働安全衛生法 第八十八条 (計画の届出等) is several chunks long.
	md, _ = StructureLegal(lawPage(t, "6670beb7", ".html"))
	pieces, err = chunk.Split(md, chunk.Options{})
	must(t, err)
	var long []chunk.Piece
	for _, p := range pieces {
		if strings.HasSuffix(p.Heading, " > 第八十八条（計画の届出等）") {
			long = append(long, p)
		}
	}
	if len(long) < 2 {
		t.Fatalf("第八十八条 gave %d chunks, want a long article split in several", len(long))
	}
	for _, p := range long {
		if p.Heading != "労働安全衛生法 > 第十章 監督等 > 第八十八条（計画の届出等）" {
			t.Errorf("heading path %q", p.Heading)
		}
		if !strings.Contains(p.Text, "\n#### 第八十八条（計画の届出等）\n") || articleCount(p.Text) != 1 {
			t.Errorf("window without its article heading:\n%s", p.Text)
		}
	}
}

// articleCount counts the article heading lines of a chunk.
func articleCount(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if articleHeading.MatchString(l) {
			n++
		}
	}
	return n
}

func headingsOf(ps []chunk.Piece) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Heading)
	}
	return out
}

// TestExtractStructuresLegalText: the extractor applies the structure to
// Markdown and text files, and leaves ordinary ones as they were.
func TestExtractStructuresLegalText(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"rule.txt":  "安全規程\n（目的）\n第一条\n　安全を守る。\n（罰則）\n第二条\n　罰金に処する。\n",
		"memo.md":   "# メモ\n\n第三条に従い、月末までに提出すること。\n",
		"notes.txt": "第三条\nの規定を確認する。\n",
	}
	for name, text := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	e := NewExtractor(Options{})
	for name, want := range map[string]string{
		"rule.txt":  "# 安全規程\n\n## 第一条（目的）\n\n　安全を守る。\n\n## 第二条（罰則）\n\n　罰金に処する。\n",
		"memo.md":   files["memo.md"],
		"notes.txt": files["notes.txt"],
	} {
		doc, err := e.Extract(context.Background(), File{Path: filepath.Join(dir, name), Rel: name})
		must(t, err)
		if got := doc.Pages[0].Text; got != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
	}
}

func FuzzStructureLegal(f *testing.F) {
	f.Add("製造物責任法\n（定義）\n第二条\n\n　甲\n２\n\n　乙\n第三条　丙\n")
	f.Add("# 法\n\n　第一章　総則（第一条―第二条）\n**第一章　総則**\n**第一条** 　甲\n**一** 　乙\n**附　則　抄**\n**第一条** 　丙\n別表第一　（第一条関係）\n")
	f.Add("第1章 総則\n第1条（目的） 甲\n第2条 乙\n```\n第3条\n```\n第九百九十九億条\n")
	f.Add("第三条に規定する\n第四条\nの規定")
	f.Fuzz(func(t *testing.T, in string) {
		out, legal := StructureLegal(in)
		if !legal {
			if out != in {
				t.Fatalf("not legal but changed:\n%q\n%q", in, out)
			}
			return
		}
		// Structure never invents a character: every rune of the output
		// (white space and Markdown marks aside) comes from the input.
		have := map[rune]int{}
		for _, r := range squash(strings.ToValidUTF8(in, "\uFFFD")) {
			have[r]++
		}
		for _, r := range squash(out) {
			if have[r] == 0 {
				t.Fatalf("output has %q that the input lacks:\n%q\n%q", r, in, out)
			}
			have[r]--
		}
		if _, again := StructureLegal(out); !again {
			t.Errorf("structured output is no longer legal:\n%q", out)
		}
	})
}

func BenchmarkStructureLegal(b *testing.B) {
	paths, _ := filepath.Glob(filepath.Join(lawDataset, "text", "6670beb7*.txt"))
	if len(paths) != 1 {
		b.Skip("law-html-ja dataset missing")
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		StructureLegal(string(data))
	}
}
