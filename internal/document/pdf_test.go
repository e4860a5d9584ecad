package document

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
)

const pdfDataset = "../../../shared/datasets/pdf-ja"

func needPDFToText(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed (apt-get install poppler-utils poppler-data)")
	}
}

// pdfDatasetFiles reads documents.csv: file name → page count.
func pdfDatasetFiles(t testing.TB) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(pdfDataset, "documents.csv"))
	if err != nil {
		t.Skipf("dataset missing: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string]int{}
	for _, r := range rows[1:] {
		n, err := strconv.Atoi(r[col["page"]])
		if err != nil {
			t.Fatal(err)
		}
		out[r[col["file_name"]]] = n
	}
	return out
}

func fileFor(t testing.TB, p string) File {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Skipf("missing %s: %v", p, err)
	}
	k, _ := KindOf(p)
	base := filepath.Base(p)
	return File{Path: p, Rel: base, Stem: strings.TrimSuffix(base, filepath.Ext(base)), Kind: k, Size: info.Size(), ModTime: info.ModTime()}
}

// japaneseRunes counts kana and kanji.
func japaneseRunes(s string) int {
	n := 0
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			n++
		}
	}
	return n
}

func TestPDFDatasetPageCounts(t *testing.T) {
	needPDFToText(t)
	want := pdfDatasetFiles(t)
	x := NewExtractor(Options{})
	for name, pages := range want {
		t.Run(name, func(t *testing.T) {
			f := fileFor(t, filepath.Join(pdfDataset, name))
			doc, err := x.Extract(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Pages) != pages {
				t.Errorf("%d pages, documents.csv says %d", len(doc.Pages), pages)
			}
			total := 0
			for i, p := range doc.Pages {
				if p.Number != i+1 {
					t.Errorf("page %d numbered %d", i+1, p.Number)
				}
				total += japaneseRunes(p.Text)
			}
			if total < 1000*len(doc.Pages)/10 {
				t.Errorf("only %d Japanese characters in %d pages", total, len(doc.Pages))
			}
			if doc.Kind != PDF || doc.Size != f.Size || len(doc.Hash) != 64 || doc.Source != name {
				t.Errorf("metadata: kind %s size %d hash %q source %q", doc.Kind, doc.Size, doc.Hash, doc.Source)
			}
		})
	}
}

func TestPDFBlankPageKept(t *testing.T) {
	needPDFToText(t)
	f := fileFor(t, filepath.Join(pdfDataset, "000843318.pdf"))
	doc, err := NewExtractor(Options{}).Extract(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != 84 {
		t.Fatalf("%d pages, want 84", len(doc.Pages))
	}
	if doc.Pages[1].Number != 2 || doc.Pages[1].Text != "" {
		t.Errorf("page 2 = %+v, want kept and empty", doc.Pages[1])
	}
	if len(doc.Notes) == 0 || !strings.HasPrefix(doc.Notes[0], "page 2: blank page") {
		t.Errorf("notes = %q, want page 2 first", doc.Notes)
	}
	// The publisher marks 8 pages "(This page is intentionally left blank.)";
	// each is kept, empty, and reported.
	if len(doc.Notes) != 8 {
		t.Errorf("%d notes, want 8: %q", len(doc.Notes), doc.Notes)
	}
	for _, n := range doc.Notes {
		var page int
		if _, err := fmt.Sscanf(n, "page %d:", &page); err != nil || page < 1 || page > 84 {
			t.Fatalf("note %q does not start with a page number", n)
		}
		if doc.Pages[page-1].Text != "" {
			t.Errorf("%s, but the page has text %q", n, doc.Pages[page-1].Text)
		}
	}
	if !strings.Contains(doc.Pages[2].Text, "クラウド") {
		t.Errorf("page 3 lacks クラウド: %.200q", doc.Pages[2].Text)
	}
}

func TestIsBlankMarker(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"(This page is intentionally left blank.)", true},
		{"This page intentionally left blank", true},
		{"- 2 -\nこのページは意図的に空白です。", true},
		{"（白紙）", true},
		{"余白", true},
		{"This page is intentionally left blank.\n本文があります。", false},
		{"インシデント対応", false},
		{"12", false},
	}
	for _, tt := range tests {
		if got := isBlankMarker(tt.text); got != tt.want {
			t.Errorf("isBlankMarker(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestPDFBadInput(t *testing.T) {
	needPDFToText(t)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.pdf")
	must(t, os.WriteFile(corrupt, []byte("%PDF-1.4\ngarbage garbage\n"), 0o644))
	notPDF := filepath.Join(dir, "notes.pdf")
	must(t, os.WriteFile(notPDF, []byte("これはPDFではありません"), 0o644))
	tests := []struct {
		path string
		want error
		msg  string
	}{
		{corrupt, ErrPDFCorrupt, "corrupt"},
		{notPDF, ErrPDFCorrupt, "re-export or repair"},
		{"testdata/encrypted.pdf", ErrPDFEncrypted, "encrypted"},
		{"testdata/zero_pages.pdf", ErrPDFNoPages, "zero pages"},
	}
	for _, fallback := range []bool{false, true} {
		opt := Options{}
		if fallback {
			opt.PDFToText = filepath.Join(dir, "no-such-pdftotext")
		}
		x := NewExtractor(opt)
		for _, tt := range tests {
			t.Run(filepath.Base(tt.path)+map[bool]string{false: "/pdftotext", true: "/go"}[fallback], func(t *testing.T) {
				_, err := x.Extract(context.Background(), fileFor(t, tt.path))
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				if !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n") {
					t.Errorf("message %q should be one line containing %q", err, tt.msg)
				}
			})
		}
	}
}

func TestPDFFallbackWarnsOnce(t *testing.T) {
	var warnings atomic.Int32
	var msg atomic.Value
	x := NewExtractor(Options{
		PDFToText: filepath.Join(t.TempDir(), "missing"),
		Warn:      func(s string) { warnings.Add(1); msg.Store(s) },
	})
	for range 3 {
		doc, err := x.Extract(context.Background(), fileFor(t, "testdata/one_page.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.Pages) != 1 || !strings.Contains(doc.Pages[0].Text, "Secret text") {
			t.Errorf("pages = %+v", doc.Pages)
		}
	}
	if warnings.Load() != 1 {
		t.Errorf("%d warnings, want 1", warnings.Load())
	}
	if s, _ := msg.Load().(string); !strings.Contains(s, "poppler-utils poppler-data") {
		t.Errorf("warning %q should say what to install", s)
	}
}

// TestPDFFallbackDataset runs the pure-Go reader over the real PDFs: it may
// read less text than pdftotext but must not panic and must count pages.
func TestPDFFallbackDataset(t *testing.T) {
	want := pdfDatasetFiles(t)
	x := NewExtractor(Options{PDFToText: filepath.Join(t.TempDir(), "missing")})
	for name, pages := range want {
		if pages > 20 {
			continue // keep the test fast
		}
		t.Run(name, func(t *testing.T) {
			doc, err := x.Extract(context.Background(), fileFor(t, filepath.Join(pdfDataset, name)))
			if err != nil {
				t.Logf("fallback could not read %s: %v", name, err)
				return
			}
			if len(doc.Pages) != pages {
				t.Errorf("%d pages, want %d", len(doc.Pages), pages)
			}
		})
	}
}

func TestExamplePDF(t *testing.T) {
	needPDFToText(t)
	f := fileFor(t, "../../examples/data/manuals/vpn_manual.pdf")
	doc, err := NewExtractor(Options{}).Extract(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"VPN接続マニュアル", "はじめに", "私物端末", "多要素認証"},
		{"接続手順", "vpn.corp.example", "30分", "12時間"},
		{"接続できない場合", "E-205", "TCPモード"},
		{"セキュリティ上の注意", "1時間以内", "SOCホットライン", "1年間保管"},
	}
	if len(doc.Pages) != len(want) {
		t.Fatalf("%d pages, want %d", len(doc.Pages), len(want))
	}
	for i, phrases := range want {
		for _, p := range phrases {
			if !strings.Contains(doc.Pages[i].Text, p) {
				t.Errorf("page %d lacks %q:\n%s", i+1, p, doc.Pages[i].Text)
			}
		}
	}
	if len(doc.Notes) != 0 {
		t.Errorf("notes: %q", doc.Notes)
	}
}

func TestExtractCanceled(t *testing.T) {
	needPDFToText(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewExtractor(Options{}).Extract(ctx, fileFor(t, "testdata/one_page.pdf"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// BenchmarkExtractPDF reports pages/s over the pdf-ja dataset.
//
//	go test -run '^$' -bench ExtractPDF ./internal/document/
func BenchmarkExtractPDF(b *testing.B) {
	needPDFToText(b)
	names := pdfDatasetFiles(b)
	var files []File
	for name := range names {
		files = append(files, fileFor(b, filepath.Join(pdfDataset, name)))
	}
	x := NewExtractor(Options{})
	pages := 0
	b.ResetTimer()
	for b.Loop() {
		for _, f := range files {
			doc, err := x.Extract(context.Background(), f)
			if err != nil {
				b.Fatal(err)
			}
			pages += len(doc.Pages)
		}
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}
