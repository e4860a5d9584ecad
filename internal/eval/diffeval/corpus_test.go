package diffeval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/assistant"
)

func TestFindTwins(t *testing.T) {
	write := func(dir string, files ...string) string {
		for _, f := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Run("twins in sibling folders", func(t *testing.T) {
		dir := write(t.TempDir(), "html/a.html", "html/b.htm", "text/a.txt", "text/b.txt", "notes.md")
		tw, err := FindTwins(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tw.Count != 2 || tw.HTMLDir != "html" || tw.Example != [2]string{filepath.Join("html", "a.html"), filepath.Join("text", "a.txt")} {
			t.Fatalf("twins %+v", tw)
		}
		w := tw.Warning(dir)
		if !strings.Contains(w, "2 document(s) both as HTML and as text") || !strings.Contains(w, "--data "+filepath.Join(dir, "html")) {
			t.Errorf("warning %q", w)
		}
	})
	t.Run("twins side by side", func(t *testing.T) {
		dir := write(t.TempDir(), "a.html", "a.md")
		tw, err := FindTwins(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tw.Count != 1 || tw.HTMLDir != "" || !strings.Contains(tw.Warning(dir), "move the text copies out") {
			t.Errorf("twins %+v, warning %q", tw, tw.Warning(dir))
		}
	})
	t.Run("only HTML", func(t *testing.T) {
		dir := write(t.TempDir(), "html/a.html", "other/b.txt")
		tw, err := FindTwins(dir)
		if err != nil || tw.Count != 0 || tw.Warning(dir) != "" {
			t.Errorf("twins %+v, %v", tw, err)
		}
	})
	t.Run("the law set", func(t *testing.T) {
		dir := "../../../../shared/datasets/law-html-ja"
		if _, err := os.Stat(dir); err != nil {
			t.Skip("dataset not available:", err)
		}
		tw, err := FindTwins(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tw.Count != 6 || tw.HTMLDir != "html" {
			t.Errorf("law-html-ja: %+v; want 6 twins, HTML in html/", tw)
		}
		if tw, err := FindTwins(filepath.Join(dir, "html")); err != nil || tw.Count != 0 {
			t.Errorf("law-html-ja/html: %+v, %v; want no twins", tw, err)
		}
	})
}

// TestUnevaluated: when one configuration's every answer fails (the LLM
// is down), every case is SKIPPED and the report says nothing was compared.
func TestUnevaluated(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.json")
	if err := os.WriteFile(cases, []byte(testCases), 0o644); err != nil {
		t.Fatal(err)
	}
	up := &scripted{scripts: map[string][]assistant.Reply{
		"製造物責任法第三条は？": {ans("第三条により損害を賠償する。")},
		"国会の地位は？":     {ans("国権の最高機関")},
		"審査基準は？":      {ans("審査基準を定める")},
	}}
	down := &scripted{} // every Ask fails
	rep, err := Run(t.Context(), Options{Cases: cases, A: up, B: down, NameA: "html-text", NameB: "markdown", Runs: 1,
		OutDir: filepath.Join(dir, "out"), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	name, why, none := rep.Unevaluated()
	if !none || name != "markdown" || !strings.Contains(why, "index not found") {
		t.Errorf("Unevaluated() = %q, %q, %t; want markdown, the asker's error, true", name, why, none)
	}
	rep, err = Run(t.Context(), Options{Cases: cases, A: up, B: up, Runs: 1, OutDir: filepath.Join(dir, "out"), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, none := rep.Unevaluated(); none {
		t.Error("Unevaluated() true for two working configurations")
	}
}
