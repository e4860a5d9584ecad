package document

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/ocr"
)

// The OCR fixtures in testdata/ocr were rendered by Chromium from the HTML
// pages beside them (text written for these tests): horizontal.png and
// vertical.png (writing-mode: vertical-rl), 8-bit grey; scanned.pdf is
// horizontal.png wrapped by img2pdf at 300 dpi, a PDF without a text layer.
const (
	horizontalText = "会議室の予約について会議室は総務課の予約表から申し込んでください。予約は利用日の三か月前から前日の正午まで受け付けます。一回の利用は四時間までとし、使用後は机と椅子を元の位置に戻してください。プロジェクターは受付で貸し出します。"
	verticalText   = "図書室の利用について図書室は平日の午前九時から午後五時まで開いています。本の貸出しは一人五冊まで、期間は二週間です。返却が遅れた場合は、次の貸出しを一週間お待ちいただきます。辞典や年鑑などの参考図書は室内でのみ閲覧できます。"
)

// needTesseract skips a test when Tesseract or its Japanese models are
// missing, except under CI=true (make test installs them), where that is a
// failure.
func needTesseract(t *testing.T) {
	t.Helper()
	if err := ocr.New(ocr.Options{}).Check(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v", err)
		}
		t.Skip(err)
	}
	needPDFToText(t)
}

// cer is the character error rate of got against want: NFKC, white space
// removed, Levenshtein distance over the reference's length.
func cer(got, want string) float64 {
	norm := func(s string) []rune {
		return []rune(strings.Join(strings.Fields(analysis.Normalize(s)), ""))
	}
	a, b := norm(got), norm(want)
	if len(b) == 0 {
		return 0
	}
	return float64(ocr.EditDistance(a, b)) / float64(len(b))
}

// bodyOf is a page's text without its OCR marker line.
func bodyOf(t *testing.T, p Page) string {
	t.Helper()
	first, rest, _ := strings.Cut(p.Text, "\n")
	if !strings.HasPrefix(first, "<!-- shirube: OCR (tesseract") {
		t.Errorf("page %d does not start with the OCR marker: %q", p.Number, first)
	}
	return rest
}

func ocrExtractor(t *testing.T, o ocr.Options, mode OCRMode) (*Extractor, *ocr.Engine, *[]string) {
	var mu sync.Mutex
	var warnings []string
	eng := ocr.New(o)
	x := NewExtractor(Options{OCR: eng, OCRMode: mode, OCRWorkers: 2, Warn: func(s string) {
		mu.Lock()
		warnings = append(warnings, s)
		mu.Unlock()
	}})
	return x, eng, &warnings
}

func TestUnusable(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"", false},
		{"化粧品基準 平成12年9月29日", false},
		{"温度は25°C±2°C、寸法は10×20 mm、価格は¥1,000。", false},
		{"Café au lait, naïve résumé", false},
		{"\n71/#\x02UB\\\x19b\n\u0091\x05{Æ\x1b\x01*5\x0e./\x0e", true},
		{"#ßÅâ¼Ú çÐùã ìD:?fs&ð¢¼ã#", true},
		{"\uFFFD\uFFFD\uFFFD\uFFFD 第1条", true},
		{"\uE000\uE001\uE002\uE003\uE004 abc", true},
	} {
		if got := Unusable(c.text); got != c.want {
			t.Errorf("Unusable(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestGoPDFRefusesJunk: the bundled demo PDF uses fonts with their own
// encoding, which the pure-Go reader decodes as binary junk; without
// pdftotext the file is refused with one line naming pdftotext, and no
// page reaches the database (issue #22 item 5).
func TestGoPDFRefusesJunk(t *testing.T) {
	x := NewExtractor(Options{PDFToText: filepath.Join(t.TempDir(), "missing")})
	_, err := x.Extract(context.Background(), fileFor(t, "../../examples/data/manuals/vpn_manual.pdf"))
	if !errors.Is(err, ErrPDFUnreadable) {
		t.Fatalf("err = %v, want ErrPDFUnreadable", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pdftotext") || !strings.Contains(msg, "poppler-utils") || strings.Contains(msg, "\n") {
		t.Errorf("reason %q should be one line naming pdftotext (poppler-utils)", msg)
	}
	// A PDF the fallback reads properly is still read.
	doc, err := x.Extract(context.Background(), fileFor(t, "testdata/one_page.pdf"))
	if err != nil || !strings.Contains(doc.Pages[0].Text, "Secret text") {
		t.Errorf("one_page.pdf: %v %+v", err, doc.Pages)
	}
}

// TestOCRAutoDetection: in auto mode a page with a text layer is not read
// by OCR, a page without one is, and so is a page whose text layer is junk.
func TestOCRAutoDetection(t *testing.T) {
	needTesseract(t)
	ctx := context.Background()

	t.Run("text layer", func(t *testing.T) {
		x, eng, _ := ocrExtractor(t, ocr.Options{}, OCRAuto)
		doc, err := x.Extract(ctx, fileFor(t, "../../examples/data/manuals/vpn_manual.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if eng.Runs() != 0 || strings.Contains(doc.Pages[0].Text, "OCR") {
			t.Errorf("a PDF with a text layer was OCR'd (%d runs): %q", eng.Runs(), doc.Pages[0].Text)
		}
	})

	t.Run("no text layer", func(t *testing.T) {
		x, eng, _ := ocrExtractor(t, ocr.Options{}, OCRAuto)
		doc, err := x.Extract(ctx, fileFor(t, "testdata/ocr/scanned.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if eng.Runs() == 0 {
			t.Fatal("the scanned page was not OCR'd")
		}
		if e := cer(bodyOf(t, doc.Pages[0]), horizontalText); e > 0.05 {
			t.Errorf("CER %.3f > 0.05:\n%s", e, doc.Pages[0].Text)
		}
		if len(doc.Notes) != 1 || !strings.Contains(doc.Notes[0], "page 1: OCR, mean confidence") {
			t.Errorf("notes = %q", doc.Notes)
		}
	})

	t.Run("unusable text layer", func(t *testing.T) {
		// A pdftotext that returns junk for the scanned page stands in for
		// a PDF whose fonts map to private-use characters.
		fake := filepath.Join(t.TempDir(), "pdftotext")
		script := "#!/bin/sh\nfor a; do :; done\nif [ \"$a\" = - ]; then printf '\\356\\200\\200\\356\\200\\201\\356\\200\\202\\356\\200\\203 x\\f'; fi\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		eng := ocr.New(ocr.Options{})
		x := NewExtractor(Options{PDFToText: fake, OCR: eng})
		doc, err := x.Extract(ctx, fileFor(t, "testdata/ocr/scanned.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if e := cer(bodyOf(t, doc.Pages[0]), horizontalText); e > 0.05 {
			t.Errorf("CER %.3f > 0.05:\n%s", e, doc.Pages[0].Text)
		}
		// With OCR off the junk is dropped with a note, never indexed.
		x = NewExtractor(Options{PDFToText: fake})
		doc, err = x.Extract(ctx, fileFor(t, "testdata/ocr/scanned.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if doc.Pages[0].Text != "" || len(doc.Notes) != 1 || !strings.Contains(doc.Notes[0], "unreadable") {
			t.Errorf("junk kept: %q, notes %q", doc.Pages[0].Text, doc.Notes)
		}
	})

	t.Run("never", func(t *testing.T) {
		x, eng, _ := ocrExtractor(t, ocr.Options{}, OCRNever)
		doc, err := x.Extract(ctx, fileFor(t, "testdata/ocr/scanned.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if eng.Runs() != 0 || doc.Pages[0].Text != "" || !strings.Contains(strings.Join(doc.Notes, ";"), "no text layer") {
			t.Errorf("runs %d, page %q, notes %q", eng.Runs(), doc.Pages[0].Text, doc.Notes)
		}
	})
}

// TestOCRImageFiles: a PNG is a one-page document read by OCR; a vertical
// page is read top to bottom, right to left; a second read of the same
// images is served by the cache without running Tesseract.
func TestOCRImageFiles(t *testing.T) {
	needTesseract(t)
	ctx := context.Background()
	cache := t.TempDir()
	x, eng, _ := ocrExtractor(t, ocr.Options{CacheDir: cache}, OCRAuto)
	for _, c := range []struct {
		file, want string
		maxCER     float64
		vertical   bool
	}{
		{"testdata/ocr/horizontal.png", horizontalText, 0.05, false},
		{"testdata/ocr/vertical.png", verticalText, 0.10, true},
	} {
		doc, err := x.Extract(ctx, fileFor(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if doc.Kind != Image || len(doc.Pages) != 1 {
			t.Fatalf("%s: kind %s, %d pages", c.file, doc.Kind, len(doc.Pages))
		}
		if e := cer(bodyOf(t, doc.Pages[0]), c.want); e > c.maxCER {
			t.Errorf("%s: CER %.3f > %.2f:\n%s", c.file, e, c.maxCER, doc.Pages[0].Text)
		}
		if got := strings.Contains(doc.Pages[0].Text, "vertical"); got != c.vertical {
			t.Errorf("%s: marker %q, vertical %v", c.file, strings.SplitN(doc.Pages[0].Text, "\n", 2)[0], c.vertical)
		}
	}
	runs := eng.Runs()
	// The cache: a new engine (a new run of shirube) over the same cache
	// folder reads nothing again.
	x2, eng2, _ := ocrExtractor(t, ocr.Options{CacheDir: cache}, OCRAuto)
	for _, f := range []string{"testdata/ocr/horizontal.png", "testdata/ocr/vertical.png", "testdata/ocr/scanned.pdf"} {
		if _, err := x2.Extract(ctx, fileFor(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	before := eng2.Runs() // scanned.pdf was not in the cache yet
	for _, f := range []string{"testdata/ocr/horizontal.png", "testdata/ocr/vertical.png", "testdata/ocr/scanned.pdf"} {
		if _, err := x2.Extract(ctx, fileFor(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	if runs == 0 || eng2.Runs() != before || before > 1 {
		t.Errorf("tesseract runs: first engine %d, second %d then %d; want the images cached", runs, before, eng2.Runs())
	}
}

// TestOCRMissingTesseract: without Tesseract the run gets one warning that
// names the packages, image files are skipped with a reason, and textless
// PDF pages keep their note; nothing fails.
func TestOCRMissingTesseract(t *testing.T) {
	needPDFToText(t)
	x, _, warnings := ocrExtractor(t, ocr.Options{Command: filepath.Join(t.TempDir(), "tesseract")}, OCRAuto)
	ctx := context.Background()
	for range 2 {
		_, err := x.Extract(ctx, fileFor(t, "testdata/ocr/horizontal.png"))
		if !errors.Is(err, ErrOCROff) {
			t.Errorf("image: err = %v, want ErrOCROff", err)
		}
		doc, err := x.Extract(ctx, fileFor(t, "testdata/ocr/scanned.pdf"))
		if err != nil || doc.Pages[0].Text != "" || !strings.Contains(strings.Join(doc.Notes, ";"), "no text layer") || !doc.OCRPending {
			t.Errorf("scanned.pdf: %v %+v", err, doc)
		}
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], ocr.Packages) {
		t.Errorf("warnings = %q, want one naming %s", *warnings, ocr.Packages)
	}
}

// TestOCRTimeout: a page whose OCR does not finish within the page timeout
// is skipped with a note and the build goes on; the stuck tesseract (a
// script whose child sleeps) is killed with its process group.
func TestOCRTimeout(t *testing.T) {
	needPDFToText(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "tesseract")
	script := "#!/bin/sh\nif [ \"$1\" = --list-langs ]; then printf 'List of languages\\njpn\\njpn_vert\\n'; exit 0; fi\nsleep 600\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	x, _, _ := ocrExtractor(t, ocr.Options{Command: fake, Timeout: 300 * time.Millisecond}, OCRAuto)
	doc, err := x.Extract(context.Background(), fileFor(t, "testdata/ocr/horizontal.png"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages[0].Text != "" || len(doc.Notes) != 1 || !strings.Contains(doc.Notes[0], "timed out") {
		t.Errorf("page %q, notes %q", doc.Pages[0].Text, doc.Notes)
	}
}

// TestImageBombs: an image whose header declares more pixels than the
// limit is refused before any decoder runs, with the reason.
func TestImageBombs(t *testing.T) {
	// A PNG header declaring 100000 × 100000 pixels.
	ihdr := []byte("IHDR\x00\x01\x86\xa0\x00\x01\x86\xa0\x08\x00\x00\x00\x00")
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0d"), ihdr...)
	png = binary.BigEndian.AppendUint32(png, crc32.ChecksumIEEE(ihdr))
	// A little-endian TIFF whose one directory declares 60000 × 60000.
	tiff := []byte("II*\x00\x08\x00\x00\x00\x02\x00" +
		"\x00\x01\x04\x00\x01\x00\x00\x00\x60\xea\x00\x00" +
		"\x01\x01\x04\x00\x01\x00\x00\x00\x60\xea\x00\x00" +
		"\x00\x00\x00\x00")
	// A TIFF whose directory chain points back to itself.
	loop := []byte("II*\x00\x08\x00\x00\x00\x02\x00" +
		"\x00\x01\x03\x00\x01\x00\x00\x00\x10\x00\x00\x00" +
		"\x01\x01\x03\x00\x01\x00\x00\x00\x10\x00\x00\x00" +
		"\x08\x00\x00\x00")
	dir := t.TempDir()
	x, eng, _ := ocrExtractor(t, ocr.Options{Command: filepath.Join(dir, "never-run")}, OCRAuto)
	for name, data := range map[string][]byte{"bomb.png": png, "bomb.tif": tiff, "loop.tiff": loop, "junk.jpg": []byte("not a jpeg")} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := x.Extract(context.Background(), fileFor(t, p))
		if err == nil || errors.Is(err, ErrOCROff) {
			t.Errorf("%s: err = %v, want a refusal", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if eng.Runs() != 0 {
		t.Errorf("tesseract ran %d times", eng.Runs())
	}
}

// twoPageTIFF writes the images as one uncompressed 8-bit grey TIFF, one
// page (image file directory) each.
func twoPageTIFF(t *testing.T, imgs ...*image.Gray) []byte {
	t.Helper()
	le := binary.LittleEndian
	out := []byte("II*\x00\x00\x00\x00\x00")
	next := 4 // where the offset of the next directory goes
	for _, g := range imgs {
		w, h := g.Rect.Dx(), g.Rect.Dy()
		data := len(out)
		for y := range h {
			out = append(out, g.Pix[y*g.Stride:y*g.Stride+w]...)
		}
		if len(out)%2 == 1 {
			out = append(out, 0)
		}
		le.PutUint32(out[next:], uint32(len(out)))
		entries := [][3]uint32{{256, 4, uint32(w)}, {257, 4, uint32(h)}, {258, 3, 8}, {259, 3, 1}, {262, 3, 1},
			{273, 4, uint32(data)}, {277, 3, 1}, {278, 4, uint32(h)}, {279, 4, uint32(w * h)}}
		out = le.AppendUint16(out, uint16(len(entries)))
		for _, e := range entries {
			out = le.AppendUint16(out, uint16(e[0]))
			out = le.AppendUint16(out, uint16(e[1]))
			out = le.AppendUint32(out, 1)
			if e[1] == 3 {
				out = le.AppendUint16(out, uint16(e[2]))
				out = le.AppendUint16(out, 0)
			} else {
				out = le.AppendUint32(out, e[2])
			}
		}
		next = len(out)
		out = le.AppendUint32(out, 0)
	}
	return out
}

// TestOCRMultiPageTIFF: each image of a TIFF is a page of its own.
func TestOCRMultiPageTIFF(t *testing.T) {
	needTesseract(t)
	gray := func(p string) *image.Gray {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		g, ok := img.(*image.Gray)
		if !ok {
			t.Fatalf("%s is not 8-bit grey", p)
		}
		return g
	}
	p := filepath.Join(t.TempDir(), "two.tif")
	data := twoPageTIFF(t, gray("testdata/ocr/horizontal.png"), gray("testdata/ocr/vertical.png"))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	x, _, _ := ocrExtractor(t, ocr.Options{}, OCRAuto)
	doc, err := x.Extract(context.Background(), fileFor(t, p))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != 2 {
		t.Fatalf("%d pages, want 2; notes %q", len(doc.Pages), doc.Notes)
	}
	for i, want := range []string{horizontalText, verticalText} {
		if e := cer(bodyOf(t, doc.Pages[i]), want); e > 0.10 {
			t.Errorf("page %d: CER %.3f:\n%s", i+1, e, doc.Pages[i].Text)
		}
	}
}

// TestOCRTableFromBoxes: a table Tesseract read column by column (each
// column a block) becomes the text layer's table rows, each value with
// its column header, from the word boxes alone (no tesseract run).
func TestOCRTableFromBoxes(t *testing.T) {
	words := []ocr.Word{
		{Text: "化粧品の成分", X0: 100, Y0: 20, X1: 400, Y1: 60, Block: 1, Par: 1, Line: 1},
		{Text: "成分名", X0: 100, Y0: 100, X1: 250, Y1: 140, Block: 2, Par: 1, Line: 1},
		{Text: "塩化ナトリウム", X0: 100, Y0: 160, X1: 380, Y1: 200, Block: 2, Par: 1, Line: 2},
		{Text: "ホウ砂", X0: 100, Y0: 220, X1: 220, Y1: 260, Block: 2, Par: 1, Line: 3},
		{Text: "|", X0: 450, Y0: 95, X1: 455, Y1: 265, Block: 3, Par: 1, Line: 1},
		{Text: "配合量", X0: 600, Y0: 100, X1: 750, Y1: 140, Block: 4, Par: 1, Line: 1},
		// 「一」 alone is a few pixels tall: the table finder measures the
		// line's height, not the word's
		{Text: "一", X0: 600, Y0: 178, X1: 630, Y1: 182, Block: 4, Par: 1, Line: 2},
		{Text: "0.76g", X0: 600, Y0: 222, X1: 700, Y1: 262, Block: 4, Par: 1, Line: 3},
		{Text: "5.0", X0: 640, Y0: 162, X1: 700, Y1: 198, Block: 4, Par: 1, Line: 2},
	}
	r := ocr.Result{Words: words, Text: ocr.ReadingOrder(words), Confidence: 91}
	got := ocrMarkdown(r)
	want := "<!-- shirube: OCR (tesseract, horizontal), mean confidence 91% -->\n\n" +
		"化粧品の成分\n| 成分名 | 配合量 |\n| 塩化ナトリウム | 配合量: 一 5.0 |\n| ホウ砂 | 配合量: 0.76g |"
	if got != want {
		t.Errorf("ocrMarkdown =\n%s\nwant\n%s", got, want)
	}
	// A vertical page keeps its lines: the table finder reads rows.
	r.Vertical = true
	if got := ocrMarkdown(r); strings.Contains(got, "| ") {
		t.Errorf("vertical page rebuilt as a table:\n%s", got)
	}
}

func TestOCRBatches(t *testing.T) {
	seq := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	tests := []struct {
		pages, workers int
		want           []int // batch sizes
	}{
		{0, 2, nil},
		{1, 2, []int{1}},
		{5, 2, []int{2, 3}},
		{8, 1, []int{8}},
		{9, 1, []int{4, 5}},
		{84, 2, []int{7, 8, 7, 8, 8, 7, 8, 8, 7, 8, 8}},
		{3, 4, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		got := ocrBatches(seq(tt.pages), tt.workers)
		var sizes []int
		next := 0
		for _, b := range got {
			sizes = append(sizes, len(b))
			for _, p := range b {
				if p != next {
					t.Errorf("%d pages, %d workers: batches %v skip or repeat a page", tt.pages, tt.workers, got)
				}
				next++
			}
		}
		if next != tt.pages || !slices.Equal(sizes, tt.want) {
			t.Errorf("%d pages, %d workers: batch sizes %v, want %v", tt.pages, tt.workers, sizes, tt.want)
		}
	}
}

// TestOCRNotUnderFileTimeout: OCR of a scanned PDF is bounded per page
// (OCRPageTimeout), not by the per-file limit meant for reading a text
// layer: a page read slower than the file limit still gets its text (a
// hundred-page scan takes minutes; the file limit silently emptied most of
// its pages).
func TestOCRNotUnderFileTimeout(t *testing.T) {
	needPDFToText(t)
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("no pdftoppm")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "tesseract")
	script := "#!/bin/sh\nif [ \"$1\" = --list-langs ]; then printf 'List of languages\\njpn\\njpn_vert\\n'; exit 0; fi\n" +
		"cat >/dev/null\nsleep 3\nprintf '5\\t1\\t1\\t1\\t1\\t1\\t0\\t0\\t40\\t10\\t95\\t読めた頁\\n'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	x := NewExtractor(Options{OCR: ocr.New(ocr.Options{Command: fake, Timeout: time.Minute}), OCRWorkers: 1, FileTimeout: 2 * time.Second})
	doc, err := x.Extract(context.Background(), fileFor(t, "testdata/ocr/scanned.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != 1 || !strings.Contains(doc.Pages[0].Text, "読めた頁") {
		t.Errorf("pages %+v, notes %q", doc.Pages, doc.Notes)
	}
}
