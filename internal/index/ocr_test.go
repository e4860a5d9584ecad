package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/ocr"
)

// TestBuildOCRCache: a scanned PDF is OCR'd on the first build; a second
// build — a full --rebuild, with a new engine as a new run of shirube has —
// finds every page in the OCR cache and runs Tesseract no more; the chunks
// hold the text, not the OCR marker line.
func TestBuildOCRCache(t *testing.T) {
	if err := ocr.New(ocr.Options{}).Check(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v", err)
		}
		t.Skip(err)
	}
	root := t.TempDir()
	opt := testOptions(root)
	data, err := os.ReadFile("../document/testdata/ocr/scanned.pdf")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(opt.DataDir, 0o755)
	if err := os.WriteFile(filepath.Join(opt.DataDir, "scanned.pdf"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(opt.Dir, "ocr-cache")
	ctx := context.Background()

	first := ocr.New(ocr.Options{CacheDir: cache})
	opt.OCR = first
	sum, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if first.Runs() == 0 || !strings.Contains(strings.Join(sum.Notes, ";"), "OCR, mean confidence") {
		t.Fatalf("first build: %d tesseract runs, notes %q", first.Runs(), sum.Notes)
	}
	ix, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for i := range ix.Len() {
		c := ix.Chunk(i)
		if strings.Contains(c.Text, "shirube: OCR") {
			t.Errorf("chunk holds the OCR marker: %q", c.Text)
		}
		if strings.Contains(c.Text, "会議室") {
			hits++
		}
	}
	if hits == 0 {
		t.Error("no chunk holds the OCR'd text")
	}

	second := ocr.New(ocr.Options{CacheDir: cache})
	opt.OCR, opt.Rebuild = second, true
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if second.Runs() != 0 {
		t.Errorf("second build ran tesseract %d times; want the cache to serve every page", second.Runs())
	}
}
