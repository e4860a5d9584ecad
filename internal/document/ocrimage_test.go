package document

import (
	"bytes"
	"context"
	"image"
	"os/exec"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/shirube/shirube/internal/ocr"
)

// TestOCRPageImage: the scanned fixture (a 900×420 grey image at 300 dpi
// filling its page) becomes a grey TIFF of the same size whose pixels are
// pdftoppm's render's.
func TestOCRPageImage(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not installed")
	}
	ctx := context.Background()
	path := "testdata/ocr/scanned.pdf"
	img, err := OCRPageImage(ctx, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := tiff.Decode(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := dec.(*image.Gray)
	if !ok || g.Rect.Dx() != 900 || g.Rect.Dy() != 420 {
		t.Fatalf("decoded %T %v, want a 900×420 grey image", dec, dec.Bounds())
	}
	pgm, err := renderPage(ctx, "pdftoppm", path, 1, OCRDPI)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ocr.DecodePNM(pgm)
	if err != nil {
		t.Fatal(err)
	}
	for y := range want.H {
		if !bytes.Equal(g.Pix[y*g.Stride:y*g.Stride+want.W], want.Pix[y*want.W:(y+1)*want.W]) {
			t.Fatalf("row %d differs from the render", y)
		}
	}
	if _, err := OCRPageImage(ctx, path, 2); err == nil {
		t.Error("page 2 of a one-page PDF: no error")
	}
}

// TestPageInk: the ink estimate decodes a real render and counts its dark
// pixels. (The first PGM reader mis-measured any image over 4 KB — an A4
// page at inkDPI is 38 KB — so the check failed on every real page and a
// short text layer was never OCR'd; ocr.TestDecodePNM covers that size.)
func TestPageInk(t *testing.T) {
	p, err := exec.LookPath("pdftoppm")
	if err != nil {
		t.Skip("pdftoppm not installed")
	}
	x := &Extractor{}
	x.ppmTool = p
	ink, err := x.pageInk(context.Background(), "testdata/ocr/scanned.pdf", 1)
	if err != nil {
		t.Fatal(err)
	}
	// 60×28 pixels at 20 dpi, a few lines of 14-pixel type: some but not
	// most pixels are dark.
	if ink <= 0 || ink > 60*28/2 {
		t.Errorf("ink = %d dark pixels", ink)
	}
}
