package csvx

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadAll(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		header []string
		rows   [][]string
		warn   string
	}{
		{
			name:   "bom stripped",
			in:     "\uFEFFQuestion Number,Question\n1,冷蔵庫の温度は？\n",
			header: []string{"Question Number", "Question"},
			rows:   [][]string{{"1", "冷蔵庫の温度は？"}},
		},
		{
			name:   "latin-1 fallback",
			in:     "Question Number,Question\n1,caf\xe9 cr\xe8me \x80\n",
			header: []string{"Question Number", "Question"},
			rows:   [][]string{{"1", "café crème €"}},
			warn:   Latin1Warning,
		},
		{
			// "冷蔵庫の温度は？" and "表紙・目次" as Japanese Excel saves them.
			name:   "shift_jis (cp932) detected",
			in:     "Question,Reference\n\x97\xe2\x91\xa0\x8c\xc9\x82\xcc\x89\xb7\x93x\x82\xcd\x81H,\x95\\\x8e\x86\x81E\x96\xda\x8e\x9f\n",
			header: []string{"Question", "Reference"},
			rows:   [][]string{{"冷蔵庫の温度は？", "表紙・目次"}},
			warn:   ShiftJISWarning,
		},
		{
			// NEC special characters (①, ㈱) exist in CP932 only.
			name:   "cp932 extensions",
			in:     "a\n\x87@\x87\x8a\x8a\x94\x8e\xae\x89\xef\x8e\xd0\n",
			header: []string{"a"},
			rows:   [][]string{{"①㈱株式会社"}},
			warn:   ShiftJISWarning,
		},
		{
			name:   "german latin-1 stays latin-1",
			in:     "a\nGr\xf6\xdfe M\xfcller \xc4rger\n",
			header: []string{"a"},
			rows:   [][]string{{"Größe Müller Ärger"}},
			warn:   Latin1Warning,
		},
		{
			name:   "ragged rows padded, long rows kept",
			in:     "a,b,c\n1\n1,2,3,4\n",
			header: []string{"a", "b", "c"},
			rows:   [][]string{{"1", "", ""}, {"1", "2", "3", "4"}},
		},
		{
			name:   "quoted newline and blank lines",
			in:     "a,b\n\n\"line1\nline2\",x\n\n",
			header: []string{"a", "b"},
			rows:   [][]string{{"line1\nline2", "x"}},
		},
		{
			name:   "lazy quotes",
			in:     "a,b\nsay \"hi\",2\n",
			header: []string{"a", "b"},
			rows:   [][]string{{"say \"hi\"", "2"}},
		},
		{
			name:   "escaped formula unescaped",
			in:     "a\n'=SUM(A1)\n''-x\n'plain\n",
			header: []string{"a"},
			rows:   [][]string{{"=SUM(A1)"}, {"'-x"}, {"'plain"}},
		},
		{name: "empty", in: ""},
		{name: "only bom", in: "\uFEFF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rows, warn, err := ReadAll(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ReadAll: %v", err)
			}
			if !reflect.DeepEqual(h, tt.header) {
				t.Errorf("header = %q, want %q", h, tt.header)
			}
			if !reflect.DeepEqual(rows, tt.rows) {
				t.Errorf("rows = %q, want %q", rows, tt.rows)
			}
			if warn != tt.warn {
				t.Errorf("warn = %q, want %q", warn, tt.warn)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	_, _, _, err := ReadFile(filepath.Join(t.TempDir(), "nope.csv"))
	if !os.IsNotExist(err) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	records := [][]string{
		{"Question Number", "Question", "RAG Answer"},
		{"1", "改行を含む\n質問", "- 項目1\n- 項目2"},
		{"2", "=1+1", "@user +81 'quoted' \"double\""},
		{"3", "''=x", "comma, inside"},
		{"4", "", "-"},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, BOM+"Question Number,") {
		t.Fatalf("output does not start with BOM and header: %q", out[:20])
	}
	for _, want := range []string{"'=1+1", "\"- 項目1\n- 項目2\"", "'''=x", ",-\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	h, rows, warn, err := ReadAll(&buf)
	if err != nil || warn != "" {
		t.Fatalf("ReadAll: %v %q", err, warn)
	}
	got := append([][]string{h}, rows...)
	if !reflect.DeepEqual(got, records) {
		t.Errorf("round trip:\n got %q\nwant %q", got, records)
	}
}

func TestWriteComment(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteComment("#SUMMARY: Total Questions: 50"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteComment("#SUMMARY: a, b\nc"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// No byte-order mark before #SUMMARY (seed 001: the first line is the
	// summary line itself).
	want := "#SUMMARY: Total Questions: 50\n#SUMMARY: a, b c\na,b\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestEscapeCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"=A1", "'=A1"}, {"@x", "'@x"}, {"@SUM(A1)", "'@SUM(A1)"},
		{"'=A1", "''=A1"}, {"'", "'"}, {"'abc", "'abc"}, {"a=b", "a=b"}, {"", ""}, {"日本", "日本"},
		// Formula-like text after + or -.
		{"+A1", "'+A1"}, {"-2+3", "'-2+3"}, {"-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"}, {"+81-3-1234-5678", "'+81-3-1234-5678"},
		{"--1", "'--1"}, {"- =HYPERLINK(\"x\")", "'- =HYPERLINK(\"x\")"},
		// TAB and CR at the start.
		{"\t=1+1", "'\t=1+1"}, {"\rx", "'\rx"},
		// Ordinary text: list items, a lone sign, plain numbers.
		{"- item", "- item"}, {"- 項目1\n- 項目2", "- 項目1\n- 項目2"}, {"-", "-"}, {"+ note", "+ note"}, {"-\u3000全角", "-\u3000全角"},
		{"-5", "-5"}, {"+1.5e3", "+1.5e3"}, {"'- item", "'- item"},
	}
	for _, tt := range tests {
		if got := EscapeCell(tt.in); got != tt.want {
			t.Errorf("EscapeCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := UnescapeCell(EscapeCell(tt.in)); got != tt.in {
			t.Errorf("UnescapeCell(EscapeCell(%q)) = %q", tt.in, got)
		}
	}
}

// TestEscapeCellLeadingControl: a tab or line break before a formula does
// not hide it from the escaping (spreadsheets skip the whitespace), in a
// cell and in a written file, and the escaping still round-trips.
func TestEscapeCellLeadingControl(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\t=2+2", "'\t=2+2"}, {"\r=2+2", "'\r=2+2"}, {"\n@SUM(A1)", "'\n@SUM(A1)"},
		{"\t", "'\t"}, {"'\t=1", "''\t=1"}, {"a\t=1", "a\t=1"},
	}
	for _, tt := range tests {
		if got := EscapeCell(tt.in); got != tt.want {
			t.Errorf("EscapeCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := UnescapeCell(EscapeCell(tt.in)); got != tt.in {
			t.Errorf("UnescapeCell(EscapeCell(%q)) = %q", tt.in, got)
		}
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write([]string{"Question", "RAG Answer"})
	w.Write([]string{"\t=2+2", "\r=HYPERLINK(\"http://x\")"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := BOM + "Question,RAG Answer\n'\t=2+2,\"'\r=HYPERLINK(\"\"http://x\"\")\"\n"; buf.String() != want {
		t.Errorf("written %q, want %q", buf.String(), want)
	}
	_, rows, _, err := ReadAll(&buf)
	if err != nil || rows[0][0] != "\t=2+2" || rows[0][1] != "\r=HYPERLINK(\"http://x\")" {
		t.Errorf("read back %q %v", rows, err)
	}
}

func TestMatchColumn(t *testing.T) {
	header := []string{"\uFEFFQuestion_Num", "Ground-Truth", "rag answer", "Ｑｕｅｓｔｉｏｎ"}
	tests := []struct {
		want    string
		aliases []string
		idx     int
	}{
		{"Question Number", nil, 0},
		{"QuestionNumber", nil, 0},
		{"question number", nil, 0},
		{"question_num", nil, 0},
		{"Ground Truth", nil, 1},
		{"groundtruth", nil, 1},
		{"RAG Answer", nil, 2},
		{"RAGAnswer", nil, 2},
		{"Question", nil, 3},
		{"Answer", []string{"Response", "rag_answer"}, 2},
		{"Reference", nil, -1},
		{"", nil, -1},
	}
	for _, tt := range tests {
		if got := MatchColumn(header, tt.want, tt.aliases...); got != tt.idx {
			t.Errorf("MatchColumn(%q, %q) = %d, want %d", tt.want, tt.aliases, got, tt.idx)
		}
	}
	for _, h := range []string{"question_num", "QuestionNumber", "question number", "Question Number", "Question No", "Question #", "QUESTION-NUMBER"} {
		if got := MatchColumn([]string{"x", h}, "Question Number"); got != 1 {
			t.Errorf("header %q not matched: %d", h, got)
		}
	}
}

func TestCreateTimestamped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Evaluation_Runs")
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	want := []string{
		"precision_scores_20250304_050607.csv",
		"precision_scores_20250304_050607_2.csv",
		"precision_scores_20250304_050607_3.csv",
	}
	for i, w := range want {
		ext := ".csv"
		if i == 1 {
			ext = "csv"
		}
		f, path, err := CreateTimestamped(dir, "precision_scores_", ext, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("run"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if filepath.Base(path) != w {
			t.Errorf("file %d = %s, want %s", i, filepath.Base(path), w)
		}
	}
	// The first file was not overwritten.
	b, err := os.ReadFile(filepath.Join(dir, want[0]))
	if err != nil || string(b) != "run" {
		t.Errorf("first file = %q, %v", b, err)
	}
}

func FuzzReadAll(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "\uFEFFx\n\"q\nq\",y", "caf\xe9", "\"unterminated", "a\n'=b\n", "", ",,,\n\n\"\"\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, rows, _, err := ReadAll(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rows {
			if len(r) < len(h) {
				t.Fatalf("row shorter than header: %d < %d", len(r), len(h))
			}
		}
		// Whatever was read must survive a write/read round trip.
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if h != nil {
			if err := w.Write(h); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		_ = MatchColumn(h, "Question Number")
	})
}

// FuzzEscapeCell: escaping is always undone exactly, and an escaped cell
// never starts a formula.
func FuzzEscapeCell(f *testing.F) {
	for _, s := range []string{"- item", "=1", "'-2+3", "''@x", "-", "+ =x", "\t1", "-5", "- 項目"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapeCell(s)
		if got := UnescapeCell(e); got != s {
			t.Fatalf("UnescapeCell(EscapeCell(%q)) = %q", s, got)
		}
		if IsFormula(e) {
			t.Fatalf("EscapeCell(%q) = %q still starts a formula", s, e)
		}
	})
}
