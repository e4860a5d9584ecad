package ocr

import (
	"bytes"
	"encoding/binary"
	"image"
	"strings"
	"testing"

	"golang.org/x/image/tiff"
)

func TestDecodePNM(t *testing.T) {
	big := make([]byte, 100*60) // larger than a bufio buffer: the header must not be mis-measured
	for i := range big {
		big[i] = byte(i % 251)
	}
	tests := []struct {
		name    string
		img     string
		w, h    int
		pix     []byte
		wantErr string
	}{
		{name: "PGM", img: "P5\n3 1\n255\n\x00\x80\xff", w: 3, h: 1, pix: []byte{0, 128, 255}},
		{name: "PGM with comment", img: "P5 # pdftoppm\n2 1 # size\n255\n\x10\x20", w: 2, h: 1, pix: []byte{16, 32}},
		{name: "PGM larger than 4 KB", img: "P5\n100 60\n255\n" + string(big), w: 100, h: 60, pix: big},
		{name: "PGM maxval 15", img: "P5 2 1 15\n\x00\x0f", w: 2, h: 1, pix: []byte{0, 255}},
		{name: "PPM grey from RGB", img: "P6\n2 1\n255\n\xff\x00\x00\x80\x80\x80", w: 2, h: 1, pix: []byte{77, 128}},
		{name: "PBM, 1 is black, rows padded to bytes", img: "P4\n3 2\n\xa0\x40", w: 3, h: 2, pix: []byte{0, 255, 0, 255, 0, 255}},
		{name: "truncated", img: "P5\n3 2\n255\n\x00", wantErr: "truncated"},
		{name: "not PNM", img: "\x89PNG\r\n", wantErr: "not a binary PNM"},
		{name: "ASCII PGM", img: "P2\n1 1\n255\n0\n", wantErr: "unsupported"},
		{name: "16-bit", img: "P5\n1 1\n65535\n\x00\x00", wantErr: "unsupported"},
		{name: "header only", img: "P5\n1 1", wantErr: "not a binary PNM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := DecodePNM([]byte(tc.img))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.W != tc.w || g.H != tc.h || !bytes.Equal(g.Pix, tc.pix) {
				t.Errorf("got %dx%d %v, want %dx%d %v", g.W, g.H, g.Pix, tc.w, tc.h, tc.pix)
			}
		})
	}
}

// TestDecodePNMs: images one after the other, as pdftoppm writes a range
// of pages; a truncated last image is an error.
func TestDecodePNMs(t *testing.T) {
	gs, err := DecodePNMs([]byte("P5\n2 1\n255\n\x00\xffP5 1 2 255\n\x10\x20P4\n1 1\n\x80"))
	if err != nil || len(gs) != 3 {
		t.Fatalf("%d images, %v", len(gs), err)
	}
	if !bytes.Equal(gs[0].Pix, []byte{0, 255}) || gs[1].H != 2 || !bytes.Equal(gs[1].Pix, []byte{16, 32}) || !bytes.Equal(gs[2].Pix, []byte{0}) {
		t.Errorf("images %+v", gs)
	}
	if _, err := DecodePNMs([]byte("P5\n1 1\n255\n\x00P5\n2 2\n255\n\x00")); err == nil || !strings.Contains(err.Error(), "image 2") {
		t.Errorf("truncated second image: %v", err)
	}
}

// TestGrayTIFF: the TIFF a Gray encodes decodes (golang.org/x/image/tiff)
// to the same pixels, for odd and even sizes.
func TestGrayTIFF(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {3, 5}, {4, 4}, {7, 2}} {
		g := Gray{W: size[0], H: size[1], Pix: make([]byte, size[0]*size[1])}
		for i := range g.Pix {
			g.Pix[i] = byte(37 * i)
		}
		img, err := tiff.Decode(bytes.NewReader(g.TIFF(300)))
		if err != nil {
			t.Fatalf("%v: %v", size, err)
		}
		gi, ok := img.(*image.Gray)
		if !ok {
			t.Fatalf("%v: decoded as %T, want *image.Gray", size, img)
		}
		if gi.Rect.Dx() != g.W || gi.Rect.Dy() != g.H {
			t.Fatalf("%v: decoded %v", size, gi.Rect)
		}
		if x, y := tiffResolution(g.TIFF(300)); x != 300 || y != 300 {
			t.Errorf("%v: resolution %v x %v, want 300 x 300", size, x, y)
		}
		if x, y := tiffResolution(g.TIFF(0)); x != 0 || y != 0 {
			t.Errorf("%v: TIFF(0) says resolution %v x %v, want none (Tesseract estimates it)", size, x, y)
		}
		if _, err := tiff.Decode(bytes.NewReader(g.TIFF(0))); err != nil {
			t.Errorf("%v: TIFF(0): %v", size, err)
		}
		for y := range g.H {
			if !bytes.Equal(gi.Pix[y*gi.Stride:y*gi.Stride+g.W], g.Pix[y*g.W:(y+1)*g.W]) {
				t.Errorf("%v: row %d differs", size, y)
			}
		}
	}
}

// tiffResolution reads the X and Y resolution tags of a little-endian
// TIFF's first directory.
func tiffResolution(b []byte) (x, y float64) {
	le := binary.LittleEndian
	ifd := int(le.Uint32(b[4:]))
	n := int(le.Uint16(b[ifd:]))
	for k := range n {
		e := b[ifd+2+12*k:]
		tag, off := le.Uint16(e), int(le.Uint32(e[8:]))
		r := func() float64 { return float64(le.Uint32(b[off:])) / float64(le.Uint32(b[off+4:])) }
		switch tag {
		case 282:
			x = r()
		case 283:
			y = r()
		}
	}
	return x, y
}
