package document

import (
	"bytes"
	"context"
	"image"
	"os/exec"
	"testing"

	"golang.org/x/image/tiff"
)

func TestParseImageList(t *testing.T) {
	out := `page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio
--------------------------------------------------------------------------------------------
   1     0 image    2481  3508  rgb     3   8  image  no        37  0   300   300  756K 3.0%
   2     1 image     650   450  rgb     3   8  jpeg   no        12  0   150   150 40.1K 4.6%
   2     2 smask     650   450  gray    1   8  image  no        13  0   150   150  1.2K 0.4%
`
	got := parseImageList(out)
	if len(got) != 2 || len(got[1]) != 1 || len(got[2]) != 2 {
		t.Fatalf("pages %v", got)
	}
	want := scanImage{page: 1, width: 2481, height: 3508, color: "rgb", comps: 3, bpc: 8, xppi: 300, yppi: 300}
	if got[1][0] != want {
		t.Errorf("page 1: %+v, want %+v", got[1][0], want)
	}
	if got[2][1].color != "mask" {
		t.Errorf("a soft mask reads as colour %q, want mask", got[2][1].color)
	}
}

func TestIsScan(t *testing.T) {
	a4 := pageSize{w: 595.276, h: 841.89}
	scan := scanImage{width: 2481, height: 3508, color: "gray", comps: 1, bpc: 8, xppi: 300, yppi: 300}
	with := func(f func(*scanImage)) []scanImage {
		s := scan
		f(&s)
		return []scanImage{s}
	}
	tests := []struct {
		name string
		ims  []scanImage
		size pageSize
		want bool
	}{
		{"grey scan covering A4 at 300 dpi", []scanImage{scan}, a4, true},
		{"RGB scan", with(func(s *scanImage) { s.color, s.comps = "rgb", 3 }), a4, true},
		{"1-bit scan", with(func(s *scanImage) { s.bpc = 1 }), a4, true},
		{"ICC-based grey", with(func(s *scanImage) { s.color = "icc" }), a4, true},
		{"301 dpi (rounding)", with(func(s *scanImage) { s.xppi, s.yppi = 301, 301 }), a4, true},
		{"200 dpi: rendered at 300", with(func(s *scanImage) { s.xppi, s.yppi, s.width, s.height = 200, 200, 1654, 2339 }), a4, false},
		{"600 dpi: rendered at 300", with(func(s *scanImage) { s.xppi, s.yppi, s.width, s.height = 600, 600, 4961, 7016 }), a4, false},
		{"CMYK", with(func(s *scanImage) { s.color, s.comps = "cmyk", 4 }), a4, false},
		{"indexed colours", with(func(s *scanImage) { s.color = "index" }), a4, false},
		{"16 bits", with(func(s *scanImage) { s.bpc = 16 }), a4, false},
		{"a picture on half the page", with(func(s *scanImage) { s.height = 1754 }), a4, false},
		{"two images", []scanImage{scan, scan}, a4, false},
		{"an image and its mask", []scanImage{scan, {color: "mask"}}, a4, false},
		{"no image", nil, a4, false},
		{"rotated page", []scanImage{scan}, pageSize{w: 595.276, h: 841.89, rot: 90}, false},
		{"landscape page, portrait image", []scanImage{scan}, pageSize{w: 841.89, h: 595.276}, false},
		{"unknown page size", []scanImage{scan}, pageSize{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isScan(tc.ims, tc.size); got != tc.want {
				t.Errorf("isScan = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParsePageSizes(t *testing.T) {
	out := "Pages:           2\nPage    1 size: 595.276 x 841.89 pts (A4)\nPage    1 rot:  0\nPage    2 size: 216 x 100.8 pts\nPage    2 rot:  270\n"
	got := parsePageSizes(out)
	want := map[int]pageSize{1: {w: 595.276, h: 841.89}, 2: {w: 216, h: 100.8, rot: 270}}
	if len(got) != len(want) || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestOCRPageImages: the scanned fixture (a 900×420 grey image at 300 dpi
// filling its page) is taken out as it is, as a grey TIFF of the image's
// own size whose pixels are the render's, give or take pdftoppm's
// resampling.
func TestOCRPageImages(t *testing.T) {
	for _, tool := range []string{"pdftoppm", "pdfimages", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, " not installed")
		}
	}
	ctx := context.Background()
	path := "testdata/ocr/scanned.pdf"
	imgs, scans, errs := OCRPageImages(ctx, path, []int{1}, false)
	if errs[0] != nil || !scans[0] {
		t.Fatalf("scan %v, err %v", scans[0], errs[0])
	}
	img, err := tiff.Decode(bytes.NewReader(imgs[0]))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := img.(*image.Gray)
	if !ok || g.Rect.Dx() != 900 || g.Rect.Dy() != 420 {
		t.Fatalf("decoded %T %v, want a 900×420 grey image", img, img.Bounds())
	}
	// The same page rendered (the path every other page takes).
	r, err := pageTools{pdftoppm: "pdftoppm"}.ocrPageImage(ctx, path, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	rimg, err := tiff.Decode(bytes.NewReader(r))
	if err != nil {
		t.Fatal(err)
	}
	rg := rimg.(*image.Gray)
	if rg.Rect != g.Rect {
		t.Fatalf("render %v, scan %v", rg.Rect, g.Rect)
	}
	var diff int
	for i := range g.Pix {
		d := int(g.Pix[i]) - int(rg.Pix[i])
		diff += max(d, -d)
	}
	if mean := float64(diff) / float64(len(g.Pix)); mean > 12 { // 5 measured; a flipped or inverted image differs by far more
		t.Errorf("mean difference from the render %.1f grey levels, want under 12", mean)
	}
}
