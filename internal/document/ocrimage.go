package document

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/shirube/shirube/internal/ocr"
)

// Page images for OCR. A page is rendered at OCRDPI (pdftoppm, 8-bit
// grey) and handed to Tesseract as an uncompressed 8-bit grey TIFF
// (ocr.Gray.TIFF: Tesseract reads it much faster than the PGM pdftoppm
// writes) that, like the PGM, does not say its resolution: Tesseract
// estimates it from the text, and told 300 dpi it found another layout
// that read worse (docs/BENCHMARKS.md, "OCR, ninth session"). A scan's
// image taken out of the PDF as it is (pdfimages) instead of rendered
// also read worse there — Tesseract's layout analysis is that sensitive to
// pdftoppm's resampling — so every page is rendered.

// tiffDPI is the resolution the page images say: none (see above).
const tiffDPI = 0

// ocrPageImage renders page n of the PDF at path with the pdftoppm at
// tool as the image OCR reads: an 8-bit grey TIFF at OCRDPI.
func ocrPageImage(ctx context.Context, tool, path string, n int) ([]byte, error) {
	imgs, err := ocrPageImages(ctx, tool, path, n, n)
	if err != nil {
		return nil, err
	}
	return imgs[0], nil
}

// ocrPageImages renders pages from..to of the PDF at path with one
// pdftoppm run, each as ocrPageImage does: a pdftoppm run costs about a
// third more per page when it renders one page than when it renders
// eleven (its start), and the pixels are the same.
func ocrPageImages(ctx context.Context, tool, path string, from, to int) ([][]byte, error) {
	img, err := renderRange(ctx, tool, path, from, to, OCRDPI)
	if err != nil {
		return nil, err
	}
	gs, err := ocr.DecodePNMs(img)
	if err != nil {
		return nil, fmt.Errorf("pdftoppm: %w", err)
	}
	if len(gs) != to-from+1 {
		return nil, fmt.Errorf("pdftoppm wrote %d images for pages %d–%d", len(gs), from, to)
	}
	out := make([][]byte, len(gs))
	for i, g := range gs {
		out[i] = g.TIFF(tiffDPI)
	}
	return out, nil
}

// renderPage renders page n of the PDF at path as an 8-bit grey PGM at
// dpi, in pdftoppm's own process group.
func renderPage(ctx context.Context, tool, path string, n, dpi int) ([]byte, error) {
	return renderRange(ctx, tool, path, n, n, dpi)
}

// renderRange renders pages from..to of the PDF at path as 8-bit grey
// PGMs at dpi, one after the other, in pdftoppm's own process group.
func renderRange(ctx context.Context, tool, path string, from, to, dpi int) ([]byte, error) {
	run, err := runTool(ctx, 0, tool, "-r", strconv.Itoa(dpi), "-gray", "-f", strconv.Itoa(from), "-l", strconv.Itoa(to), path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if d := firstLine(run.stderr.String()); d != "" {
			return nil, errors.New(d)
		}
		return nil, err
	}
	if run.stdout.Len() == 0 {
		return nil, errors.New("pdftoppm wrote no image")
	}
	return run.stdout.Bytes(), nil
}

// OCRPageImage returns page n (1-based) of the PDF at path as shirube
// index hands it to OCR, with pdftoppm from PATH. For benchmarks
// (bench/ocr), which must read exactly what the index reads.
func OCRPageImage(ctx context.Context, path string, n int) ([]byte, error) {
	tool, err := exec.LookPath("pdftoppm")
	if err != nil {
		return nil, errors.New("pdftoppm not found")
	}
	return ocrPageImage(ctx, tool, path, n)
}
