package document

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/llm"
)

const categorizeDataset = "../../../shared/datasets/pdf-ja"

func TestSanitizeFolder(t *testing.T) {
	long := strings.Repeat("あ", 40) // 120 bytes
	tests := []struct{ in, want string }{
		{"操作と機能", "操作と機能"},
		{"Ⅰ．序編", "Ⅰ．序編"},
		{`a/b\c:d*e?f"g<h>i|j`, "a_b_c_d_e_f_g_h_i_j"},
		{"tab\there\nnew\u3000line", "tab here new line"},
		{"ctrl\x00\x07x", "ctrl__x"},
		{"zero\u200bwidth", "zero_width"},
		{"  ..trailing dots.. ", "trailing dots"},
		{"..", Uncategorized},
		{"", Uncategorized},
		{"   ", Uncategorized},
		{"CON", "CON_"},
		{"con.txt", "con_.txt"},
		{"nul.tar.gz", "nul_.tar.gz"},
		{"Lpt9", "Lpt9_"},
		{"COM0", "COM0"},
		{"CONSOLE", "CONSOLE"},
		{"AUX ", "AUX_"},
		{long, strings.Repeat("あ", 33)}, // 99 bytes: a rune boundary under 100
		{"bad\xffutf8", "badutf8"},
	}
	for _, tt := range tests {
		if got := SanitizeFolder(tt.in); got != tt.want {
			t.Errorf("SanitizeFolder(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSanitizeFolder(f *testing.F) {
	for _, s := range []string{"操作と機能", "CON", "a/b", " . ", strings.Repeat("漢", 60), "x\x00y", "nul.tar.gz", "COM¹"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := SanitizeFolder(in)
		switch {
		case got == "" || got == "." || got == "..":
			t.Fatalf("SanitizeFolder(%q) = %q", in, got)
		case len(got) > MaxFolderBytes:
			t.Fatalf("SanitizeFolder(%q) = %q is %d bytes", in, got, len(got))
		case !utf8.ValidString(got):
			t.Fatalf("SanitizeFolder(%q) = %q is not UTF-8", in, got)
		case strings.ContainsAny(got, `/\:*?"<>|`):
			t.Fatalf("SanitizeFolder(%q) = %q has a forbidden character", in, got)
		case strings.TrimRight(got, " .") != got || strings.TrimLeft(got, " ") != got:
			t.Fatalf("SanitizeFolder(%q) = %q has leading/trailing space or dot", in, got)
		case isReservedWindowsName(got):
			t.Fatalf("SanitizeFolder(%q) = %q is a reserved Windows name", in, got)
		case SanitizeFolder(got) != got:
			t.Fatalf("not idempotent: %q → %q → %q", in, got, SanitizeFolder(got))
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("SanitizeFolder(%q) = %q has a control character", in, got)
			}
		}
	})
}

func TestCategorizedPageFile(t *testing.T) {
	f := File{Rel: "冷蔵庫/r_h54xg_b.pdf", Stem: "r_h54xg_b"}
	if got, want := CategorizedPageFile("./database", f, "操作と機能", 8), "database/冷蔵庫/r_h54xg_b/操作と機能/page_008.md"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := CategorizedPageFile("db", f, "a/b", 1), "db/冷蔵庫/r_h54xg_b/a_b/page_001.md"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := CategorizedPageFile("db", f, "", 1), PageFile("db", f, 1); got != want {
		t.Errorf("empty category: got %q, want %q", got, want)
	}
	if n, ok := PageNumber(CategorizedPageFile("db", f, "x", 12)); !ok || n != 12 {
		t.Errorf("PageNumber of a categorised identity = %d, %v", n, ok)
	}
}

func TestParseOutlineXML(t *testing.T) {
	xml := `<?xml version="1.0" encoding="UTF-8"?>
<pdf2xml producer="poppler" version="22.12.0">
<page number="1"><text>表紙 &amp; <b>broken</text></page>
<outline>
<item page="3">1.  2024年第2四半期 登録状況</item>
<outline>
<item page="3">1-1. 登録状況</item>
</outline>
<item page="4">2. 登録データ分類</item>
<item page="x">bad page</item>
<item page="9">3.  活用状況 &amp; 傾向</item>
</outline>
</pdf2xml>`
	got, err := parseOutlineXML([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	want := []OutlineItem{
		{"1. 2024年第2四半期 登録状況", 3, 0},
		{"1-1. 登録状況", 3, 1},
		{"2. 登録データ分類", 4, 0},
		{"3. 活用状況 & 傾向", 9, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	cats := outlineCategories(got, 10, FrontMatterJA)
	wantCats := []string{FrontMatterJA, FrontMatterJA, "2024年第2四半期 登録状況", "登録データ分類", "登録データ分類", "登録データ分類", "登録データ分類", "登録データ分類", "活用状況 & 傾向", "活用状況 & 傾向"}
	if !reflect.DeepEqual(cats, wantCats) {
		t.Errorf("categories = %q\nwant %q", cats, wantCats)
	}
	if outlineCategories([]OutlineItem{{"only", 1, 0}}, 3, FrontMatterJA) != nil {
		t.Error("a one-entry outline should not be used")
	}
	if items, err := parseOutlineXML([]byte("<pdf2xml><page/></pdf2xml>")); err != nil || items != nil {
		t.Errorf("no outline: %v %v", items, err)
	}
}

func TestSectionTitle(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Ⅱ．１　本ガイドラインの前提事項", "本ガイドラインの前提事項"},
		{"1-1. 脆弱性対策情報の登録状況", "脆弱性対策情報の登録状況"},
		{"１ はじめに", "はじめに"},
		{"(2) 情報セキュリティ", "情報セキュリティ"},
		{"○少額な返還インボイスの交付義務免除", "少額な返還インボイスの交付義務免除"},
		{"第2章 運用", "第2章 運用"},
		{"2024年第2四半期", "2024年第2四半期"},
		{"Introduction", "Introduction"},
		{"Chapter 3: Setup", "Setup"},
		{"12", "12"},
	}
	for _, tt := range tests {
		if got := sectionTitle(tt.in); got != tt.want {
			t.Errorf("sectionTitle(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHeadingCategories(t *testing.T) {
	doc := Document{Pages: []Page{
		{Number: 1, Text: "製品マニュアル\n目次\n1 安全上の注意 ........ 2"},
		{Number: 2, Text: "2\n1 安全上の注意\n必ずアースを接続してください。\n1.電源を切る。\n2.プラグを抜く。"},
		{Number: 3, Text: "3\n注意の続きです。\n子供に触らせないでください。\n水をかけないでください。\n2 操作と機能\n温度は3段階で切り替えられます。"},
		{Number: 4, Text: "4\n冷凍室の使い方を説明します。\n5 OS Microsoft Windows 11 41"},
		{Number: 5, Text: "3 お手入れ\n月に一度、棚を拭いてください。"},
	}}
	got := headingCategories(doc, FrontMatterJA)
	want := []string{FrontMatterJA, "安全上の注意", "安全上の注意", "操作と機能", "お手入れ"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if headingCategories(Document{Pages: []Page{{Number: 1, Text: "見出しのない本文です。"}}}, FrontMatterJA) != nil {
		t.Error("a document without headings should give nil")
	}
}

// loadCategorizePDF extracts one PDF of the shared dataset.
func loadCategorizePDF(t *testing.T, name string) (Document, string) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed (apt-get install poppler-utils poppler-data)")
	}
	p := filepath.Join(categorizeDataset, name)
	info, err := os.Stat(p)
	if err != nil {
		t.Skipf("dataset missing: %v", err)
	}
	doc, err := NewExtractor(Options{}).Extract(context.Background(), File{Path: p, Rel: name, Stem: strings.TrimSuffix(name, ".pdf"), Kind: PDF, Size: info.Size()})
	if err != nil {
		t.Fatal(err)
	}
	return doc, p
}

func TestCategorizePDFOutline(t *testing.T) {
	if _, err := exec.LookPath("pdftohtml"); err != nil {
		t.Skip("pdftohtml not installed (apt-get install poppler-utils)")
	}
	doc, p := loadCategorizePDF(t, "JVNiPedia2024q2.pdf")
	cats, method, err := CategorizeWithMethod(context.Background(), doc, p, CategorizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if method != MethodOutline || len(cats) != len(doc.Pages) {
		t.Fatalf("method %s, %d categories for %d pages", method, len(cats), len(doc.Pages))
	}
	want := map[int]string{1: FrontMatterJA, 2: FrontMatterJA, 4: "JVN iPediaの登録データ分類", 8: "JVN iPediaの登録データ分類", 9: "脆弱性対策情報の活用状況", 11: "脆弱性対策情報の活用状況"}
	for page, w := range want {
		if cats[page-1] != w {
			t.Errorf("page %d: %q, want %q", page, cats[page-1], w)
		}
	}
	if !strings.Contains(cats[2], "JVN iPediaの登録状況") {
		t.Errorf("page 3: %q", cats[2])
	}
}

func TestCategorizePDFHeadings(t *testing.T) {
	// This PDF has no outline: its sections come from heading lines.
	doc, p := loadCategorizePDF(t, "cloud_policy_20210910.pdf")
	cats, method, err := CategorizeWithMethod(context.Background(), doc, p, CategorizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if method != MethodHeadings {
		t.Fatalf("method = %s, want %s", method, MethodHeadings)
	}
	want := map[int]string{1: FrontMatterJA, 4: FrontMatterJA, 5: "はじめに", 9: "基本方針", 11: "具体方針", 18: "補足", 19: "別紙 附則"}
	for page, w := range want {
		if cats[page-1] != w {
			t.Errorf("page %d: %q, want %q (all: %q)", page, cats[page-1], w, cats)
		}
	}
	// Without a PDF path (e.g. no pdftohtml) the same headings are used.
	again, err := Categorize(context.Background(), doc, "", CategorizeOptions{})
	if err != nil || !reflect.DeepEqual(again, cats) {
		t.Errorf("without pdf path: %q, %v", again, err)
	}
}

func TestCategorizeNothingFound(t *testing.T) {
	doc := Document{Source: "a.txt", Kind: Text, Pages: []Page{{Number: 1, Text: "ただの本文です。"}}}
	cats, method, err := CategorizeWithMethod(context.Background(), doc, "", CategorizeOptions{})
	if err != nil || method != MethodNone || !reflect.DeepEqual(cats, []string{Uncategorized}) {
		t.Errorf("got %q %s %v", cats, method, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Categorize(ctx, doc, "", CategorizeOptions{}); err == nil {
		t.Error("cancelled context: no error")
	}
}

// fakeChat is an OpenAI-compatible server answering every chat completion
// with reply(user message).
func fakeChat(t *testing.T, reply func(user string) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		json.Unmarshal(raw, &body)
		user := ""
		for _, m := range body.Messages {
			if m.Role == "user" {
				user = m.Content
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": "fake-model",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply(user)}}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCategorizeLLM(t *testing.T) {
	doc := Document{Source: "冷蔵庫/r_h54xg_b.pdf", Kind: PDF, Pages: []Page{
		{Number: 1, Text: "取扱説明書"}, {Number: 2, Text: "安全上の注意"}, {Number: 3, Text: "温度設定"},
		{Number: 4, Text: "製氷"}, {Number: 5, Text: "お手入れ"},
	}}
	var prompts []string
	srv := fakeChat(t, func(user string) string {
		prompts = append(prompts, user)
		if strings.Contains(user, "[page 1]") {
			// page 2 left out on purpose: it continues page 1's category
			return `{"pages":[{"page":1,"category":"表紙・目次"},{"page":3,"category":"1. 操作と機能"}]}`
		}
		return `{"pages":[{"page":4,"category":"操作と機能"},{"page":5,"category":"お手入れ/清掃"}]}`
	})
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cats, method, err := CategorizeWithMethod(context.Background(), doc, "", CategorizeOptions{LLM: client, PagesPerRequest: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"表紙・目次", "表紙・目次", "操作と機能", "操作と機能", "お手入れ_清掃"}
	if method != MethodLLM || !reflect.DeepEqual(cats, want) {
		t.Errorf("got %s %q, want %q", method, cats, want)
	}
	if len(prompts) != 2 || !strings.Contains(prompts[1], "Categories so far: 表紙・目次 / 操作と機能") {
		t.Errorf("prompts = %q", prompts)
	}
}

func TestCategorizeLLMMalformedFallsBack(t *testing.T) {
	doc := Document{Source: "m.pdf", Kind: PDF, Pages: []Page{
		{Number: 1, Text: "1 安全上の注意\n本文。"}, {Number: 2, Text: "2 操作と機能\n本文。"},
	}}
	for _, reply := range []string{`{"pages": [`, `{"pages": []}`, `{"pages":[{"page":9,"category":"x"}]}`} {
		srv := fakeChat(t, func(string) string { return reply })
		client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		var warns []string
		cats, method, err := CategorizeWithMethod(context.Background(), doc, "", CategorizeOptions{LLM: client, Warn: func(s string) { warns = append(warns, s) }})
		if err != nil {
			t.Fatal(err)
		}
		if method != MethodHeadings || !reflect.DeepEqual(cats, []string{"安全上の注意", "操作と機能"}) {
			t.Errorf("reply %q: got %s %q", reply, method, cats)
		}
		if len(warns) != 1 || !strings.HasPrefix(warns[0], "m.pdf: LLM categorisation failed") || strings.Contains(warns[0], "\n") {
			t.Errorf("reply %q: warnings %q", reply, warns)
		}
	}
}

func FuzzParseOutlineXML(f *testing.F) {
	for _, s := range []string{`<outline><item page="3">a</item><outline><item page="4">b</item></outline></outline>`, `<outline><item page="-1">x</item>`, `<outline>`, `</outline>`, `<outline><item page="2">&bogus;</item></outline>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		items, _ := parseOutlineXML([]byte(data))
		for _, it := range items {
			if it.Page <= 0 || it.Title == "" || it.Depth < 0 {
				t.Fatalf("bad item %+v from %q", it, data)
			}
		}
		cats := outlineCategories(items, 5, FrontMatterEN)
		if cats != nil && len(cats) != 5 {
			t.Fatalf("%d categories for 5 pages", len(cats))
		}
	})
}
