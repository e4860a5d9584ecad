package chunk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/golden"
)

func TestSections(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want []section // line field ignored
	}{
		{"empty", "", []section{{}}},
		{"text only", "本文\n", []section{{body: "本文"}}},
		{
			"nested path and reset",
			"# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne",
			[]section{
				{},
				{heading: "A", prefix: "# A\n", body: "a"},
				{heading: "A > B", prefix: "# A\n## B\n", body: "b"},
				{heading: "A > B > C", prefix: "# A\n## B\n### C\n", body: "c"},
				{heading: "A > D", prefix: "# A\n## D\n", body: "d"},
				{heading: "E", prefix: "# E\n", body: "e"},
			},
		},
		{
			"level 7 and non-headings stay in the body",
			"## B\n####### deep\n#tag\n #indented\nx",
			[]section{{}, {heading: "B", prefix: "## B\n", body: "####### deep\n#tag\n #indented\nx"}},
		},
		{
			"levels 4 to 6 are headings too; a shallower one closes them",
			"# L\n## 第三章 罰則\n###### 第十一条（罰則）\nx\n#### 第十二条\ny\n## 附則\nz",
			[]section{
				{},
				{heading: "L", prefix: "# L\n"},
				{heading: "L > 第三章 罰則", prefix: "# L\n## 第三章 罰則\n"},
				{heading: "L > 第三章 罰則 > 第十一条（罰則）", prefix: "# L\n## 第三章 罰則\n###### 第十一条（罰則）\n", body: "x"},
				{heading: "L > 第三章 罰則 > 第十二条", prefix: "# L\n## 第三章 罰則\n#### 第十二条\n", body: "y"},
				{heading: "L > 附則", prefix: "# L\n## 附則\n", body: "z"},
			},
		},
		{
			"skipped level",
			"### C\nc",
			[]section{{}, {heading: "C", prefix: "### C\n", body: "c"}},
		},
		{
			"fenced code hides headings",
			"# A\n```\n# not\n```\n~~~~\n## no\n~~~\n~~~~\n# B\nb",
			[]section{
				{},
				{heading: "A", prefix: "# A\n", body: "```\n# not\n```\n~~~~\n## no\n~~~\n~~~~"},
				{heading: "B", prefix: "# B\n", body: "b"},
			},
		},
		{
			"unclosed fence runs to the end",
			"# A\n```go\n# x",
			[]section{{}, {heading: "A", prefix: "# A\n", body: "```go\n# x"}},
		},
		{
			"closing hashes, CRLF, tabs",
			"# A ##\r\nx\r\n##\tB\t#\r\ny\r\n# C#\r\nz",
			[]section{
				{},
				{heading: "A", prefix: "# A\n", body: "x"},
				{heading: "A > B", prefix: "# A\n## B\n", body: "y"},
				{heading: "C#", prefix: "# C#\n", body: "z"},
			},
		},
		{
			"empty heading is a break without a path element",
			"# A\n##\nx",
			[]section{{}, {heading: "A", prefix: "# A\n"}, {heading: "A", prefix: "# A\n", body: "x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sections(tt.md)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d sections %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				got[i].line = ""
				if got[i] != tt.want[i] {
					t.Errorf("section %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestWindows(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		size, overlap int
		want          []string
	}{
		{"fits", "あいう", 5, 1, []string{"あいう"}},
		{"exact size", "あいうえお", 5, 1, []string{"あいうえお"}},
		{"hard cut with overlap", "0123456789abcdef", 10, 3, []string{"0123456789", "789abcdef"}},
		{"no overlap", "0123456789abcdef", 10, 0, []string{"0123456789", "abcdef"}},
		{"break at 。 in last 20 %", "あいうえおかきく。けこさしすせそ", 10, 2, []string{"あいうえおかきく。", "く。けこさしすせそ"}},
		{"break too early is ignored", "あい。うえおかきくけこさし", 10, 2, []string{"あい。うえおかきくけ", "くけこさし"}},
		{"newline break", "abcdefgh\nijklmnop", 10, 0, []string{"abcdefgh\n", "ijklmnop"}},
		{"period needs a space", "abcdefgh.ijklmn", 10, 0, []string{"abcdefgh.i", "jklmn"}},
		{"period before space", "abcdefg. ijklmn", 10, 0, []string{"abcdefg.", " ijklmn"}},
		{"empty", "", 10, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []rune(tt.body)
			var got []string
			for _, w := range windows(body, tt.size, tt.overlap) {
				got = append(got, string(body[w[0]:w[1]]))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("windows(%q, %d, %d) = %q, want %q", tt.body, tt.size, tt.overlap, got, tt.want)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		in      Options
		want    Options
		wantErr bool
	}{
		{Options{}, Options{500, 50}, false},
		{Options{Size: 400}, Options{400, 50}, false},
		{Options{Size: 100, Overlap: -1}, Options{100, 0}, false},
		{Options{Size: 40}, Options{}, true}, // default overlap 50 ≥ 40
		{Options{Size: 10, Overlap: 10}, Options{}, true},
		{Options{Size: -5}, Options{}, true},
	}
	for _, tt := range tests {
		got, err := tt.in.resolved()
		if (err != nil) != tt.wantErr {
			t.Errorf("%+v: err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && got != tt.want {
			t.Errorf("%+v resolved to %+v, want %+v", tt.in, got, tt.want)
		}
		if tt.wantErr {
			if _, err := Split("x", tt.in); err == nil {
				t.Errorf("Split accepted %+v", tt.in)
			}
		}
	}
}

func TestPage(t *testing.T) {
	md := "# 手順\n" + strings.Repeat("あ", 120)
	chunks, err := Page("database/a/page_001.md", "a.pdf", 1, "2024-12-29T13:00:00", md, Options{Size: 100, Overlap: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	want0 := Chunk{
		ID: "database/a/page_001.md_0", File: "database/a/page_001.md", Source: "a.pdf", Page: 1,
		Heading: "手順", Text: "# 手順\n" + strings.Repeat("あ", 100), UpdatedAt: "2024-12-29T13:00:00", Index: 0,
	}
	if chunks[0] != want0 {
		t.Errorf("chunk 0 = %+v\nwant %+v", chunks[0], want0)
	}
	if c := chunks[1]; c.ID != "database/a/page_001.md_1" || c.Index != 1 || c.Text != "# 手順\n"+strings.Repeat("あ", 30) {
		t.Errorf("chunk 1 = %+v", c)
	}
}

// TestHeadingOnly: a page that is only headings gives a chunk of each
// innermost heading's lines, so a document that is only a title can be
// found; a page with text is split as before.
func TestHeadingOnly(t *testing.T) {
	tests := []struct {
		md   string
		want []Piece
	}{
		{"# 障害対応手順書\n", []Piece{{Heading: "障害対応手順書", Text: "# 障害対応手順書"}}},
		{"\n\n## 連絡先 ##\n\n", []Piece{{Heading: "連絡先", Text: "## 連絡先"}}},
		{"# A\n## B\n", []Piece{{Heading: "A > B", Text: "# A\n## B"}}},
		{"# A\n# B\n", []Piece{{Heading: "A", Text: "# A"}, {Heading: "B", Text: "# B"}}},
		{"# A\n## B\nb", []Piece{{Heading: "A > B", Text: "# A\n## B\nb", Body: "b"}}},
		{"# 空\n# B\nb", []Piece{{Heading: "B", Text: "# B\nb", Body: "b"}}}, // a page with text keeps only text pieces
		{"#\n", nil},
	}
	for _, tt := range tests {
		got, err := Split(tt.md, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.want) {
			t.Errorf("Split(%q) = %+v, want %+v", tt.md, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Split(%q)[%d] = %+v, want %+v", tt.md, i, got[i], tt.want[i])
			}
		}
	}
	chunks, err := Page("database/title/page_001.md", "title.md", 1, "2024-12-29T13:00:00", "# 障害対応手順書\n", Options{})
	if err != nil || len(chunks) != 1 || chunks[0].Text != "# 障害対応手順書" || chunks[0].ID != "database/title/page_001.md_0" {
		t.Errorf("Page of a title-only document = %+v, %v; want one chunk with the title", chunks, err)
	}
}

// TestGolden splits testdata/*.md with small windows and compares the JSON
// of the chunks with testdata/*.golden. Run with -update to rewrite.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			md, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := Page("database/runbook/page_001.md", "runbook.pdf", 1, "2024-12-29T13:00:00", string(md), Options{Size: 60, Overlap: 10})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(chunks, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden.Check(t, strings.TrimSuffix(f, ".md")+".golden", got)
		})
	}
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func FuzzSplit(f *testing.F) {
	seed, _ := os.ReadFile("testdata/runbook.md")
	f.Add(string(seed), 60, 10)
	f.Add("# A\n```\n# x\n```\n## B\nあいう。えお\n", 3, 1)
	f.Add("\xff# \r\n#\n~~~\n", 1, 0)
	f.Fuzz(func(t *testing.T, md string, size, overlap int) {
		size = 1 + abs(size)%700
		overlap = abs(overlap) % size
		if overlap == 0 {
			overlap = -1
		}
		opt := Options{Size: size, Overlap: overlap}
		pieces, err := Split(md, opt)
		if err != nil {
			t.Fatalf("Split(%+v): %v", opt, err)
		}
		for _, p := range pieces {
			if p.Body == "" && (p.Heading == "" || !strings.HasPrefix(p.Text, "#")) {
				t.Fatalf("empty piece %+v that is not a heading", p)
			}
			if n := utf8.RuneCountInString(p.Body); n == 0 && p.Heading == "" || n > size {
				t.Fatalf("body of %d runes, size %d", n, size)
			}
			if !strings.HasSuffix(p.Text, p.Body) || !utf8.ValidString(p.Text) {
				t.Fatalf("text %q does not end with body %q", p.Text, p.Body)
			}
		}
		// Windows without their overlaps rebuild each section body.
		ov := max(overlap, 0)
		var rebuilt strings.Builder
		for _, s := range sections(md) {
			rebuilt.WriteString(s.line)
			body := []rune(s.body)
			var joined []rune
			for i, w := range windows(body, size, ov) {
				from := w[0]
				if i > 0 {
					from += ov
				}
				joined = append(joined, body[from:w[1]]...)
			}
			if string(joined) != s.body {
				t.Fatalf("windows do not rebuild section body %q: %q", s.body, string(joined))
			}
			rebuilt.WriteString(s.body)
		}
		// Heading lines plus bodies rebuild the page modulo whitespace.
		want := strings.ToValidUTF8(md, "\uFFFD")
		if stripSpace(rebuilt.String()) != stripSpace(want) {
			t.Fatalf("sections do not rebuild the page:\n%q\n%q", rebuilt.String(), want)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		if -x < 0 { // math.MinInt
			return 0
		}
		return -x
	}
	return x
}

func TestCommentLine(t *testing.T) {
	md := "<!-- shirube: OCR (tesseract, horizontal), mean confidence 91% -->\n\n# 見出し\n本文 <!-- inline --> です。\n"
	pieces, err := Split(md, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 1 || strings.Contains(pieces[0].Text, "shirube: OCR") || !strings.Contains(pieces[0].Text, "<!-- inline -->") {
		t.Errorf("pieces = %+v", pieces)
	}
}
