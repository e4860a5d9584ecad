package ocr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Page images as Tesseract reads them fastest. Tesseract's image library
// (Leptonica 1.82) reads a PNM image one byte per fread call; an
// uncompressed TIFF it reads a row at a time. The same 11 pages of
// 化粧品基準 at 300 dpi read as PGM took 16.4–17.4 CPU s, as TIFF 11.8
// (docs/BENCHMARKS.md, "OCR, ninth session"), with the same output to the
// byte when the TIFF, like the PGM, says no resolution.

// Gray is an 8-bit grey image, one byte per pixel, rows top to bottom.
type Gray struct {
	W, H int
	Pix  []byte // W*H bytes, 0 black … 255 white
}

// DecodePNM reads a binary PNM image — PBM (P4, 1 bit), PGM (P5, 8 bit)
// or PPM (P6, 8-bit RGB) — as 8-bit grey: what pdftoppm -gray and
// pdfimages write. A PPM's colours become grey as poppler makes them
// (0.3 R + 0.59 G + 0.11 B).
func DecodePNM(img []byte) (Gray, error) {
	g, _, err := decodePNM(img)
	return g, err
}

// DecodePNMs reads images that follow one another, as pdftoppm writes the
// pages of a range to its standard output, each as DecodePNM does.
func DecodePNMs(b []byte) ([]Gray, error) {
	var out []Gray
	for len(b) > 0 {
		g, rest, err := decodePNM(b)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", len(out)+1, err)
		}
		out = append(out, g)
		b = rest
	}
	return out, nil
}

// decodePNM is DecodePNM, also returning the bytes after the image.
func decodePNM(img []byte) (Gray, []byte, error) {
	magic, fields, data, ok := pnmHeader(img)
	if !ok {
		return Gray{}, nil, errors.New("not a binary PNM image")
	}
	w, h, maxval := fields[0], fields[1], 1
	if magic != "P4" {
		maxval = fields[2]
	}
	if w <= 0 || h <= 0 || w > 1<<16 || h > 1<<16 || maxval < 1 || maxval > 255 {
		return Gray{}, nil, fmt.Errorf("unsupported PNM image (%s %dx%d, maxval %d)", magic, w, h, maxval)
	}
	g := Gray{W: w, H: h}
	var n int // bytes of pixel data
	switch magic {
	case "P5":
		n = w * h
		if len(data) < w*h {
			return Gray{}, nil, errors.New("PGM image is truncated")
		}
		g.Pix = data[:w*h]
	case "P6":
		n = 3 * w * h
		if len(data) < 3*w*h {
			return Gray{}, nil, errors.New("PPM image is truncated")
		}
		g.Pix = make([]byte, w*h)
		for i := range g.Pix {
			p := data[3*i : 3*i+3]
			g.Pix[i] = byte((77*int(p[0]) + 151*int(p[1]) + 28*int(p[2]) + 128) >> 8)
		}
	case "P4":
		stride := (w + 7) / 8
		n = stride * h
		if len(data) < stride*h {
			return Gray{}, nil, errors.New("PBM image is truncated")
		}
		g.Pix = make([]byte, w*h)
		for y := range h {
			row := data[y*stride:]
			for x := range w {
				if row[x/8]&(0x80>>(x%8)) == 0 { // PBM: 1 is black
					g.Pix[y*w+x] = 255
				}
			}
		}
	default:
		return Gray{}, nil, fmt.Errorf("unsupported PNM image %q", magic)
	}
	if maxval != 255 && magic != "P4" {
		pix := make([]byte, len(g.Pix))
		for i, p := range g.Pix {
			pix[i] = byte(min(int(p), maxval) * 255 / maxval)
		}
		g.Pix = pix
	}
	return g, data[n:], nil
}

// pnmHeader splits a binary PNM image into its magic number ("P4" …),
// the numbers of its header (width, height and, but for P4, maxval) and
// the pixel data after the single white space that ends the header.
// Comments (# to the end of the line) are skipped.
func pnmHeader(img []byte) (magic string, fields [3]int, data []byte, ok bool) {
	if len(img) < 2 || img[0] != 'P' {
		return "", fields, nil, false
	}
	magic = string(img[:2])
	want := 3
	if magic == "P4" {
		want = 2
	}
	i := 2
	for k := 0; k < want; k++ {
		for i < len(img) && (isPNMSpace(img[i]) || img[i] == '#') {
			if img[i] == '#' {
				for i < len(img) && img[i] != '\n' {
					i++
				}
				continue
			}
			i++
		}
		start := i
		n := 0
		for i < len(img) && img[i] >= '0' && img[i] <= '9' && i-start < 9 {
			n = n*10 + int(img[i]-'0')
			i++
		}
		if i == start || i >= len(img) || !isPNMSpace(img[i]) {
			return "", fields, nil, false
		}
		fields[k] = n
	}
	return magic, fields, img[i+1:], true
}

func isPNMSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// TIFF encodes g as an uncompressed 8-bit grey TIFF: the header, the
// pixels as one strip, then the directory. With dpi > 0 the TIFF says its
// resolution; with 0 it says none, and Tesseract estimates it from the
// text's size as it does for a PNM (the layout it finds depends on it:
// docs/BENCHMARKS.md).
func (g Gray) TIFF(dpi int) []byte {
	entries := 9
	if dpi > 0 {
		entries += 2
	}
	pixOff := 8
	ifdOff := pixOff + len(g.Pix)
	ifdOff += ifdOff & 1 // word boundary
	resOff := ifdOff + 2 + entries*12 + 4
	size := resOff
	if dpi > 0 {
		size += 16
	}
	out := make([]byte, size)
	le := binary.LittleEndian
	copy(out, "II*\x00")
	le.PutUint32(out[4:], uint32(ifdOff))
	copy(out[pixOff:], g.Pix)
	p := out[ifdOff:]
	le.PutUint16(p, uint16(entries))
	p = p[2:]
	put := func(tag, typ uint16, value uint32) {
		le.PutUint16(p, tag)
		le.PutUint16(p[2:], typ)
		le.PutUint32(p[4:], 1)
		if typ == 3 { // SHORT: left-justified in the value field
			le.PutUint16(p[8:], uint16(value))
		} else {
			le.PutUint32(p[8:], value)
		}
		p = p[12:]
	}
	const short, long, rational = 3, 4, 5
	put(256, long, uint32(g.W))        // ImageWidth
	put(257, long, uint32(g.H))        // ImageLength
	put(258, short, 8)                 // BitsPerSample
	put(259, short, 1)                 // Compression: none
	put(262, short, 1)                 // PhotometricInterpretation: black is zero
	put(273, long, uint32(pixOff))     // StripOffsets
	put(277, short, 1)                 // SamplesPerPixel
	put(278, long, uint32(g.H))        // RowsPerStrip
	put(279, long, uint32(len(g.Pix))) // StripByteCounts
	if dpi > 0 {
		put(282, rational, uint32(resOff))   // XResolution
		put(283, rational, uint32(resOff+8)) // YResolution
		for _, off := range []int{resOff, resOff + 8} {
			le.PutUint32(out[off:], uint32(dpi))
			le.PutUint32(out[off+4:], 1)
		}
	}
	le.PutUint32(p, 0) // no next directory
	return out
}
