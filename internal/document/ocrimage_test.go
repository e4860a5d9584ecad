package document

import (
	"bytes"
	"context"
	"image"
	"os/exec"
	"path/filepath"
	"reflect"
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

// TestOCRPageImages: a range of pages rendered by one pdftoppm run gives
// each page's image exactly as rendering it alone does; a range past the
// last page is an error (the caller then renders page by page).
func TestOCRPageImages(t *testing.T) {
	for _, tool := range []string{"pdftoppm", "pdfunite"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, " not installed")
		}
	}
	ctx := context.Background()
	two := filepath.Join(t.TempDir(), "two.pdf")
	if out, err := exec.Command("pdfunite", "testdata/ocr/scanned.pdf", "testdata/one_page.pdf", two).CombinedOutput(); err != nil {
		t.Fatalf("pdfunite: %v %s", err, out)
	}
	imgs, err := ocrPageImages(ctx, "pdftoppm", two, 1, 2)
	if err != nil || len(imgs) != 2 {
		t.Fatalf("%d images, %v", len(imgs), err)
	}
	for n := 1; n <= 2; n++ {
		alone, err := OCRPageImage(ctx, two, n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(imgs[n-1], alone) {
			t.Errorf("page %d: the range's image differs from the page rendered alone", n)
		}
	}
	if _, err := ocrPageImages(ctx, "pdftoppm", two, 2, 3); err == nil {
		t.Error("pages 2–3 of a two-page PDF: no error")
	}
}

func TestConsecutive(t *testing.T) {
	tests := []struct {
		in   []int
		want [][]int
	}{
		{nil, nil},
		{[]int{4}, [][]int{{4}}},
		{[]int{0, 1, 2}, [][]int{{0, 1, 2}}},
		{[]int{0, 1, 3, 4, 7}, [][]int{{0, 1}, {3, 4}, {7}}},
	}
	for _, tc := range tests {
		if got := consecutive(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("consecutive(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
