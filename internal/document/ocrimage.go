package document

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shirube/shirube/internal/ocr"
)

// Page images for OCR. A page is handed to Tesseract as an uncompressed
// 8-bit grey TIFF (ocr.Gray.TIFF: Tesseract reads it much faster than a
// PGM) that, like the PGM pdftoppm writes, does not say its resolution:
// Tesseract estimates it from the text, and told 300 dpi it found another
// layout that read worse (docs/BENCHMARKS.md, "OCR, ninth session"). A
// scanned page — one raster image that covers the page at close to
// OCRDPI — is taken out of the PDF as it is (pdfimages) instead of being
// rendered again (pdftoppm decodes the same image and resamples it onto
// the page); every other page is rendered at OCRDPI.

// tiffDPI is the resolution the page images say: none (see above).
const tiffDPI = 0

// scanTolerance is how far from OCRDPI a scan's resolution, and from the
// page's size the image's, may be for the image to be taken as it is.
const scanTolerance = 0.03

// pageTools are the poppler programs that make page images: pdftoppm
// (required) and pdfimages ("" when missing: every page is rendered).
type pageTools struct {
	pdftoppm, pdfimages string
}

// scanImage is the one raster image of a scanned page, as pdfimages
// -list describes it.
type scanImage struct {
	page          int
	width, height int
	color         string // gray, rgb, icc, …
	comps, bpc    int
	xppi, yppi    float64
}

// pdfImageList runs pdfimages -list on pages from..to of the PDF at path
// and returns the raster images of each page (any other row — a mask, a
// soft mask, a stencil — is returned too, with color "mask", so that a
// page with one is never taken for a plain scan).
func pdfImageList(ctx context.Context, tool, path string, from, to int) (map[int][]scanImage, error) {
	run, err := runTool(ctx, 1<<20, tool, "-list", "-f", strconv.Itoa(from), "-l", strconv.Itoa(to), path)
	if err != nil {
		return nil, err
	}
	return parseImageList(run.stdout.String()), nil
}

// parseImageList reads pdfimages -list output:
//
//	page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio
//	   1     0 image    2481  3508  gray    1   8  image  no        37  0   300   300  756K 3.0%
func parseImageList(out string) map[int][]scanImage {
	pages := map[int][]scanImage{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 14 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		im := scanImage{page: n, color: f[5]}
		if f[2] != "image" {
			im.color = "mask"
		}
		im.width, _ = strconv.Atoi(f[3])
		im.height, _ = strconv.Atoi(f[4])
		im.comps, _ = strconv.Atoi(f[6])
		im.bpc, _ = strconv.Atoi(f[7])
		im.xppi, _ = strconv.ParseFloat(f[12], 64)
		im.yppi, _ = strconv.ParseFloat(f[13], 64)
		pages[n] = append(pages[n], im)
	}
	return pages
}

// isScan reports whether a page of the given size in points (0 0:
// unknown) whose images are ims is a scan whose image can be read as it
// is: an unrotated page with exactly one image, grey or RGB (8 bits, or 1 bit grey), at OCRDPI
// within scanTolerance in both directions, covering the page. A page
// with a second image, a mask, another colour space or resolution, or an
// image smaller than the page is rendered instead.
func isScan(ims []scanImage, size pageSize) bool {
	if len(ims) != 1 {
		return false
	}
	im := ims[0]
	switch {
	case im.color == "gray" && im.comps == 1 && (im.bpc == 8 || im.bpc == 1):
	case (im.color == "rgb" || im.color == "icc") && im.comps == 3 && im.bpc == 8:
	case im.color == "icc" && im.comps == 1 && im.bpc == 8:
	default:
		return false
	}
	near := func(a, b float64) bool { return b > 0 && a >= b*(1-scanTolerance) && a <= b*(1+scanTolerance) }
	if !near(im.xppi, OCRDPI) || !near(im.yppi, OCRDPI) || size.rot%360 != 0 {
		return false
	}
	// The image's size at its resolution is the page's (a rotated page or
	// image swaps them and fails here).
	return near(float64(im.width)/im.xppi*72, size.w) && near(float64(im.height)/im.yppi*72, size.h)
}

// ocrPageImage returns page n of the PDF at path as the image OCR reads:
// the page's scan image as it is when scan is set (falling back to a
// render if pdfimages fails), else the page rendered at OCRDPI; either as
// an 8-bit grey TIFF.
func (t pageTools) ocrPageImage(ctx context.Context, path string, n int, scan bool) ([]byte, error) {
	if scan && t.pdfimages != "" {
		g, err := t.extractScan(ctx, path, n)
		if err == nil {
			return g.TIFF(tiffDPI), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	img, err := t.render(ctx, path, n, OCRDPI)
	if err != nil {
		return nil, err
	}
	g, err := ocr.DecodePNM(img)
	if err != nil {
		return nil, fmt.Errorf("pdftoppm: %w", err)
	}
	return g.TIFF(tiffDPI), nil
}

// extractScan writes page n's one image with pdfimages (PGM, PPM or PBM)
// into a temporary folder and reads it as grey.
func (t pageTools) extractScan(ctx context.Context, path string, n int) (ocr.Gray, error) {
	dir, err := os.MkdirTemp("", "shirube-scan-")
	if err != nil {
		return ocr.Gray{}, err
	}
	defer os.RemoveAll(dir)
	if _, err := runTool(ctx, 0, t.pdfimages, "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), path, filepath.Join(dir, "p")); err != nil {
		return ocr.Gray{}, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p-*"))
	if len(files) != 1 {
		return ocr.Gray{}, fmt.Errorf("pdfimages wrote %d images, want 1", len(files))
	}
	img, err := os.ReadFile(files[0])
	if err != nil {
		return ocr.Gray{}, err
	}
	return ocr.DecodePNM(img)
}

// render renders page n of the PDF at path as an 8-bit grey PGM at dpi,
// in pdftoppm's own process group.
func (t pageTools) render(ctx context.Context, path string, n, dpi int) ([]byte, error) {
	run, err := runTool(ctx, 0, t.pdftoppm, "-r", strconv.Itoa(dpi), "-gray", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), path)
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

// OCRPageImages returns pages (1-based) of the PDF at path as shirube
// index hands them to OCR (scans taken out as they are, other pages
// rendered at OCRDPI; 8-bit grey TIFF), with poppler's programs from
// PATH, and for each page whether it was taken out as a scan. For
// benchmarks (bench/ocr), which must read exactly what the index reads;
// with renderAll every page is rendered, to compare.
func OCRPageImages(ctx context.Context, path string, pages []int, renderAll bool) ([][]byte, []bool, []error) {
	t := pageTools{}
	t.pdftoppm, _ = exec.LookPath("pdftoppm")
	if !renderAll {
		t.pdfimages, _ = exec.LookPath("pdfimages")
	}
	imgs, scans, errs := make([][]byte, len(pages)), make([]bool, len(pages)), make([]error, len(pages))
	if t.pdftoppm == "" || len(pages) == 0 {
		for i := range errs {
			errs[i] = errors.New("pdftoppm not found")
		}
		return imgs, scans, errs
	}
	sizes, _ := pdfPageSizes(ctx, path, slices.Max(pages))
	found := t.scans(ctx, path, pages, sizes)
	for i, n := range pages {
		scans[i] = found[n]
		imgs[i], errs[i] = t.ocrPageImage(ctx, path, n, found[n])
	}
	return imgs, scans, errs
}

// scans lists which of pages are scans (isScan), from one pdfimages -list
// over their range; none when pdfimages is missing or fails.
func (t pageTools) scans(ctx context.Context, path string, pages []int, sizes map[int]pageSize) map[int]bool {
	out := map[int]bool{}
	if t.pdfimages == "" || len(pages) == 0 {
		return out
	}
	from, to := pages[0], pages[0]
	for _, n := range pages {
		from, to = min(from, n), max(to, n)
	}
	list, err := pdfImageList(ctx, t.pdfimages, path, from, to)
	if err != nil {
		return out
	}
	for _, n := range pages {
		out[n] = isScan(list[n], sizes[n])
	}
	return out
}
