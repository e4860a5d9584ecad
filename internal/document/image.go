package document

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of .jpg
	_ "image/png"  // DecodeConfig of .png
	"strings"
	"sync"
)

// maxTIFFPages bounds the pages of one TIFF file (a loop in its chain of
// image directories is caught by it too).
const maxTIFFPages = 2000

// ErrOCROff is returned (wrapped) for an image file when OCR is off or
// cannot run.
var ErrOCROff = errors.New("image not read: OCR is off")

// extractImage reads an image file by OCR: one page per image, the pages
// of a multi-page TIFF in order. The dimensions are read from the file's
// header first, and an image over MaxImagePixels is refused before any
// decoder sees it.
func (e *Extractor) extractImage(ctx context.Context, path string, data []byte) ([]Page, []string, error) {
	dims, err := imageDims(data)
	if err != nil {
		return nil, nil, err
	}
	for i, d := range dims {
		if px := int64(d[0]) * int64(d[1]); px > e.maxPixels() {
			return nil, nil, fmt.Errorf("image %d is %d×%d pixels, over the limit of %d megapixels — a decompression bomb or a very large scan; scale it down", i+1, d[0], d[1], e.maxPixels()/1_000_000)
		}
	}
	switch {
	case e.opt.OCR == nil:
		return nil, nil, ErrOCROff
	case e.ocrMode() == OCRNever:
		return nil, nil, fmt.Errorf("%w (--ocr never)", ErrOCROff)
	}
	if !e.ocrReady(ctx, false) {
		return nil, nil, fmt.Errorf("%w: Tesseract is not installed", ErrOCROff)
	}
	pages := make([]Page, len(dims))
	notes := make([]string, len(dims))
	e.ocrQueued(len(dims))
	var wg sync.WaitGroup
	for i := range dims {
		pages[i].Number = i + 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer e.ocrDone()
			release, err := e.ocrSlot(ctx)
			if err != nil {
				return
			}
			defer release()
			r, err := e.opt.OCR.Recognize(ctx, data, i)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				notes[i] = fmt.Sprintf("page %d: %s — %v", i+1, noteNotOCRd, err)
			case strings.TrimSpace(r.Text) == "":
				notes[i] = fmt.Sprintf("page %d: OCR found no text", i+1)
			default:
				pages[i].Text = ocrMarkdown(r)
				notes[i] = ocrNote(i+1, r)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var kept []string
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	return pages, kept, nil
}

// imageDims returns the width and height of each image in data: one for
// PNG and JPEG, one per page for TIFF.
func imageDims(data []byte) ([][2]int, error) {
	if len(data) >= 4 && (string(data[:4]) == "II*\x00" || string(data[:4]) == "MM\x00*") {
		return tiffDims(data)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a readable PNG, JPEG or TIFF image (%v) — re-save it", err)
	}
	return [][2]int{{cfg.Width, cfg.Height}}, nil
}

// tiffDims walks the chain of image file directories of a TIFF and returns
// each page's ImageWidth and ImageLength. Offsets outside the file, a
// chain longer than maxTIFFPages and a page without dimensions are
// errors.
func tiffDims(data []byte) ([][2]int, error) {
	bad := func(why string) error {
		return fmt.Errorf("damaged TIFF image (%s) — re-save it", why)
	}
	if len(data) < 8 {
		return nil, bad("too short")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if data[0] == 'M' {
		bo = binary.BigEndian
	}
	off := int64(bo.Uint32(data[4:8]))
	var dims [][2]int
	for off != 0 {
		if len(dims) >= maxTIFFPages {
			return nil, bad(fmt.Sprintf("more than %d pages", maxTIFFPages))
		}
		if off < 8 || off+2 > int64(len(data)) {
			return nil, bad("directory outside the file")
		}
		n := int64(bo.Uint16(data[off:]))
		end := off + 2 + 12*n
		if end+4 > int64(len(data)) {
			return nil, bad("directory outside the file")
		}
		var w, h int
		for i := int64(0); i < n; i++ {
			ent := data[off+2+12*i:]
			tag, typ := bo.Uint16(ent), bo.Uint16(ent[2:])
			var v int
			switch typ {
			case 3: // SHORT
				v = int(bo.Uint16(ent[8:]))
			case 4: // LONG
				v = int(bo.Uint32(ent[8:]))
			default:
				continue
			}
			switch tag {
			case 256:
				w = v
			case 257:
				h = v
			}
		}
		if w <= 0 || h <= 0 {
			return nil, bad(fmt.Sprintf("page %d has no size", len(dims)+1))
		}
		dims = append(dims, [2]int{w, h})
		off = int64(bo.Uint32(data[end:]))
	}
	if len(dims) == 0 {
		return nil, bad("no image")
	}
	return dims, nil
}
