package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/assistant"
)

// lawHTMLDir holds the shared e-Gov law pages (Shift_JIS, read-only).
const lawHTMLDir = "../../../shared/datasets/law-html-ja/html"

// TestAskCitesArticle indexes a real e-Gov law page and asks about one of
// its articles: the evidence, the citation and the audit log name the
// article (製造物責任法 > 第二条（定義）), not just the law.
func TestAskCitesArticle(t *testing.T) {
	src, _ := filepath.Glob(filepath.Join(lawHTMLDir, "a99edcb3*.html")) // 製造物責任法
	if len(src) != 1 {
		t.Skip("law-html-ja dataset missing")
	}
	b, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	offlineEnv(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "pl.html"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	mustRun(t, "index")

	page, err := os.ReadFile(filepath.Join("database", "pl", "page_001.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "\n## 第二条（定義）\n") {
		t.Errorf("page database has no article heading:\n%s", page)
	}

	out := mustRun(t, "ask", "--json", "製造物責任法でいう「製造物」の定義は？")
	var rep assistant.Reply
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("ask --json: %v\n%s", err, out)
	}
	const want = "製造物責任法 > 第二条（定義）"
	if len(rep.Evidence) == 0 || rep.Evidence[0].Heading != want {
		t.Fatalf("first evidence %+v, want heading %q", rep.Evidence, want)
	}
	text := mustRun(t, "ask", "製造物責任法でいう「製造物」の定義は？")
	if !strings.Contains(text, want) {
		t.Errorf("rendered citation does not name the article:\n%s", text)
	}
	logs := auditLines(t, "logs")
	if len(logs) == 0 || len(logs[0].SearchResults) == 0 || logs[0].SearchResults[0].Heading != want {
		t.Errorf("audit log search results do not name the article: %+v", logs)
	}
}
