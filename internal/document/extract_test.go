package document

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/japanese"
)

func TestExtractText(t *testing.T) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().Bytes([]byte("# 手順\n本文"))
	tests := []struct {
		name    string
		file    string
		body    []byte
		want    string
		wantErr string
	}{
		{"markdown as is", "a.md", []byte("# 見出し\n\n本文　全角スペース ｶﾀｶﾅ\n"), "# 見出し\n\n本文　全角スペース ｶﾀｶﾅ\n", ""},
		{"BOM stripped", "a.md", []byte("\xef\xbb\xbf# 見出し\n"), "# 見出し\n", ""},
		{"CRLF and CR to LF", "a.txt", []byte("一行目\r\n二行目\r三行目"), "一行目\n二行目\n三行目", ""},
		{"markdown extension", "a.markdown", []byte("x"), "x", ""},
		{"Shift_JIS markdown rejected", "a.md", sjis, "", "not UTF-8 — convert the file to UTF-8"},
		{"Latin-1 text rejected", "a.txt", []byte("caf\xe9"), "", "not UTF-8"},
		{"binary rejected", "a.txt", []byte("abc\x00def"), "", "NUL bytes"},
	}
	x := NewExtractor(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tt.file)
			must(t, os.WriteFile(p, tt.body, 0o644))
			mt := time.Date(2024, 12, 29, 13, 0, 0, 0, time.UTC)
			must(t, os.Chtimes(p, mt, mt))
			files, _, err := Walk(context.Background(), dir, WalkOptions{})
			must(t, err)
			doc, err := x.Extract(context.Background(), files[0])
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), tt.file+": ") {
					t.Fatalf("err = %v, want %q prefixed with the file", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "not UTF-8") && !errors.Is(err, ErrNotUTF8) {
					t.Errorf("errors.Is(err, ErrNotUTF8) = false")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Pages) != 1 || doc.Pages[0].Number != 1 || doc.Pages[0].Text != tt.want {
				t.Errorf("pages = %+v, want one page %q", doc.Pages, tt.want)
			}
			sum := sha256.Sum256(tt.body)
			if doc.Hash != hex.EncodeToString(sum[:]) {
				t.Errorf("hash %s is not the SHA-256 of the source bytes", doc.Hash)
			}
			if doc.Size != int64(len(tt.body)) || !doc.ModTime.Equal(mt) || doc.Source != tt.file {
				t.Errorf("size %d modtime %v source %q", doc.Size, doc.ModTime, doc.Source)
			}
		})
	}
}

func TestExtractHTMLModes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "page.html")
	must(t, os.WriteFile(p, []byte("<title>題</title><h2>節</h2><ul><li>項目</li></ul>"), 0o644))
	f := File{Path: p, Rel: "page.html", Stem: "page", Kind: HTML}
	for mode, want := range map[HTMLMode]string{
		"":           "# 題\n\n## 節\n\n- 項目\n",
		HTMLMarkdown: "# 題\n\n## 節\n\n- 項目\n",
		HTMLText:     "題\n節\n項目\n",
	} {
		doc, err := NewExtractor(Options{HTMLMode: mode}).Extract(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Kind != HTML || doc.Pages[0].Text != want {
			t.Errorf("mode %q: %q, want %q", mode, doc.Pages[0].Text, want)
		}
	}
}

// TestExampleCorpus ingests examples/data end to end: every file is found
// and read, runbooks are within the size the brief asks for.
func TestExampleCorpus(t *testing.T) {
	needPDFToText(t)
	files, skips, err := Walk(context.Background(), "../../examples/data", WalkOptions{})
	if err != nil {
		t.Skipf("examples missing: %v", err)
	}
	if len(skips) != 0 {
		t.Errorf("skips: %v", skips)
	}
	x := NewExtractor(Options{})
	kinds := map[Kind]int{}
	for _, f := range files {
		doc, err := x.Extract(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		kinds[doc.Kind]++
		if doc.Kind == Markdown {
			n := len([]rune(doc.Pages[0].Text))
			if n < 1500 || n > 3500 {
				t.Errorf("%s: %d characters, want 1500–3500", f.Rel, n)
			}
			for _, h := range []string{"\n## ", "\n### "} {
				if !strings.HasPrefix(doc.Pages[0].Text, "# ") || !strings.Contains(doc.Pages[0].Text, h) {
					t.Errorf("%s: lacks a %q heading", f.Rel, strings.TrimSpace(h))
				}
			}
		}
	}
	if kinds[Markdown] < 5 || kinds[HTML] < 1 || kinds[PDF] < 1 {
		t.Errorf("corpus kinds = %v, want ≥5 Markdown, ≥1 HTML, ≥1 PDF", kinds)
	}
}
