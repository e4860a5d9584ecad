package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// buildPDF assembles a PDF from numbered object bodies (object i+1 is
// objs[i]) with a correct cross-reference table, so that the reader gets
// past parsing and meets whatever the objects describe.
func buildPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

const (
	pdfCatalog = "<< /Type /Catalog /Pages 2 0 R >>"
	pdfFont    = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
)

// pdfStream is a content stream object showing each text on its own line.
func pdfStream(lines ...string) string {
	s := "BT /F1 10 Tf 72 720 Td"
	for _, l := range lines {
		s += " (" + l + ") Tj 0 -12 Td"
	}
	s += " ET"
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(s), s)
}

// hostilePDFs are small files the pure-Go reader used to loop on forever
// or allocate without bound.
func hostilePDFs() map[string][]byte {
	page := "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
	return map[string][]byte{
		// The page tree's only kid is the tree itself (the 603-byte file of
		// issue 12).
		"self_kid": buildPDF(pdfCatalog, "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"),
		// Each node names itself twice: an exponential walk without a
		// node budget.
		"double_self_kid": buildPDF(pdfCatalog, "<< /Type /Pages /Kids [2 0 R 2 0 R] /Count 3 >>"),
		// A page without resources whose parent is itself: the lookup of
		// inherited resources never ends.
		"self_parent": buildPDF(pdfCatalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 3 0 R /Contents 5 0 R >>", pdfFont, pdfStream("loop")),
		// A count of two billion pages for a one-page tree.
		"huge_count": buildPDF(pdfCatalog, "<< /Type /Pages /Kids [3 0 R] /Count 2147483647 >>", page, pdfFont, pdfStream("one page")),
	}
}

// TestGoPDFHostile: without pdftotext, PDFs whose page tree or parent
// chain loops are refused as corrupt instead of hanging, and a huge /Count
// does not allocate for pages that do not exist.
func TestGoPDFHostile(t *testing.T) {
	for name, data := range hostilePDFs() {
		t.Run(name, func(t *testing.T) {
			texts, err := goPDFText(t.Context(), data, DefaultMaxTextBytes)
			if name == "huge_count" {
				if err != nil || len(texts) != 1 || !strings.Contains(texts[0], "one page") {
					t.Fatalf("texts %q, %v; want the one real page", texts, err)
				}
				return
			}
			if !errors.Is(err, ErrPDFCorrupt) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v; want a one-line ErrPDFCorrupt", err)
			}
		})
	}
	// The same file through the extractor without pdftotext: a skip
	// reason, not a hang.
	dir := t.TempDir()
	p := filepath.Join(dir, "loop.pdf")
	must(t, os.WriteFile(p, hostilePDFs()["self_kid"], 0o644))
	x := NewExtractor(Options{PDFToText: filepath.Join(dir, "no-pdftotext")})
	if _, err := x.Extract(t.Context(), fileFor(t, p)); !errors.Is(err, ErrPDFCorrupt) {
		t.Errorf("Extract: %v; want ErrPDFCorrupt", err)
	}
}

// slowPDF is the hostile file of issue 24: pages that all share one long
// stream of no-op drawing commands — a small file that takes any reader
// minutes to hours.
func slowPDF(pages int) []byte {
	ops := strings.Repeat("q Q ", 250_000)
	stream := fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(ops), ops)
	objs := []string{pdfCatalog, "", pdfFont, stream}
	var kids []string
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", i+5))
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	return buildPDF(objs...)
}

// TestGoPDFStopsOnTimeout: when the per-file deadline passes (or the
// caller cancels), the built-in reader really stops — goPDFText returns
// only once its reading goroutine has ended, so none is left spinning.
func TestGoPDFStopsOnTimeout(t *testing.T) {
	data := slowPDF(2000)
	for _, cancelled := range []bool{false, true} {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		if cancelled {
			ctx, cancel = context.WithCancel(t.Context())
			time.AfterFunc(200*time.Millisecond, cancel)
		}
		_, err := goPDFText(ctx, data, -1)
		cancel()
		want := ErrFileTimeout
		if cancelled {
			want = context.Canceled
		}
		if !errors.Is(err, want) {
			t.Errorf("cancelled=%v: %v, want %v", cancelled, err, want)
		}
		// No goroutine is still reading (one that has just sent its
		// result may not have exited yet: it is not counted).
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if strings.Contains(stacks, "document.goPDFRead") {
			t.Errorf("cancelled=%v: a reader goroutine is still running after the timeout (%d goroutines, %d before):\n%s", cancelled, runtime.NumGoroutine(), before, stacks)
		}
	}
}

// TestExtractFileTimeout: a file that takes longer than
// Options.FileTimeout is a one-line skip naming the setting, with
// pdftotext (killed with its process group) and with the built-in reader.
func TestExtractFileTimeout(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "slow.pdf")
	must(t, os.WriteFile(p, slowPDF(2000), 0o644))
	for _, fallback := range []bool{false, true} {
		opt := Options{FileTimeout: 300 * time.Millisecond, MaxTextBytes: -1}
		if fallback {
			opt.PDFToText = filepath.Join(dir, "no-pdftotext")
		} else {
			needPDFToText(t)
		}
		_, err := NewExtractor(opt).Extract(t.Context(), fileFor(t, p))
		if !errors.Is(err, ErrFileTimeout) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "SHIRUBE_FILE_TIMEOUT") {
			t.Errorf("fallback=%v: %v; want a one-line ErrFileTimeout naming the setting", fallback, err)
		}
	}
}

// TestPDFTextCap: text over Options.MaxTextBytes is a skip with a
// one-line reason, for pdftotext, the pure-Go reader and other kinds; the
// real PDFs of the dataset stay under the default.
func TestPDFTextCap(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "many_pages.pdf")
	// 200 pages sharing one content stream: a small file, a lot of text.
	objs := []string{pdfCatalog, "", pdfFont, pdfStream(slices.Repeat([]string{"manual text, one line of a long page"}, 40)...)}
	var kids []string
	for i := range 200 {
		kids = append(kids, fmt.Sprintf("%d 0 R", i+5))
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	must(t, os.WriteFile(big, buildPDF(objs...), 0o644))
	md := filepath.Join(dir, "big.md")
	must(t, os.WriteFile(md, bytes.Repeat([]byte("手順書の本文。\n"), 3000), 0o644))

	for _, fallback := range []bool{false, true} {
		opt := Options{MaxTextBytes: 50_000}
		if fallback {
			opt.PDFToText = filepath.Join(dir, "no-pdftotext")
		} else {
			needPDFToText(t)
		}
		x := NewExtractor(opt)
		for _, p := range []string{big, md} {
			_, err := x.Extract(t.Context(), fileFor(t, p))
			if !errors.Is(err, ErrTextTooLarge) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "SHIRUBE_MAX_TEXT_SIZE") {
				t.Errorf("fallback=%v %s: %v; want a one-line ErrTextTooLarge naming the setting", fallback, filepath.Base(p), err)
			}
		}
		// Under the cap the same file is read.
		opt.MaxTextBytes = -1
		if doc, err := NewExtractor(opt).Extract(t.Context(), fileFor(t, big)); err != nil || len(doc.Pages) != 200 {
			t.Errorf("fallback=%v without a cap: %v", fallback, err)
		}
	}

	// The real manuals stay under the default cap.
	x := NewExtractor(Options{})
	for name := range pdfDatasetFiles(t) {
		if _, err := x.Extract(t.Context(), fileFor(t, filepath.Join(pdfDataset, name))); errors.Is(err, ErrTextTooLarge) {
			t.Errorf("%s: %v; the default cap must fit real manuals", name, err)
		}
	}
}

// FuzzGoPDFText feeds the pure-Go reader arbitrary bytes, seeded with the
// hostile files above and a real one: it must return page texts or one of
// the documented errors, within its deadline, and never panic.
func FuzzGoPDFText(f *testing.F) {
	for _, data := range hostilePDFs() {
		f.Add(data)
	}
	if b, err := os.ReadFile("testdata/one_page.pdf"); err == nil {
		f.Add(b)
	}
	f.Add(buildPDF(pdfCatalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>", pdfFont, pdfStream("hello")))
	f.Fuzz(func(t *testing.T, data []byte) {
		texts, err := goPDFText(context.Background(), data, 1<<20)
		if err == nil {
			var n int
			for _, s := range texts {
				n += len(s)
			}
			if n > 1<<20 {
				t.Fatalf("%d bytes of text over the 1 MiB cap", n)
			}
			return
		}
		for _, want := range []error{ErrPDFCorrupt, ErrPDFEncrypted, ErrFileTimeout, ErrTextTooLarge} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("undocumented error %v", err)
	})
}
