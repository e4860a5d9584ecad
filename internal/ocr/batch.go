package ocr

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/proc"
)

// Reading pages in batches. Starting tesseract and loading its Japanese
// model costs about 0.4 CPU seconds, a sixth of reading a page
// (docs/BENCHMARKS.md, "OCR"); one run given a list of page images loads
// it once for them all.

// RecognizeBatch reads single-page images (PNG, PNM, JPEG: one page each)
// as Recognize does, one Result or error per image, with one tesseract run
// for all the images not in the cache. The run's time limit is
// Options.Timeout per image read. A page that reads poorly as horizontal
// text is read again as vertical text on its own; when the batch run
// fails or times out, each image is read on its own (Recognize), so one
// bad or slow page costs only itself.
func (e *Engine) RecognizeBatch(ctx context.Context, imgs [][]byte) ([]Result, []error) {
	res := make([]Result, len(imgs))
	errs := make([]error, len(imgs))
	if err := e.Check(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return res, errs
	}
	keys := make([]string, len(imgs))
	var todo []int
	for i, img := range imgs {
		keys[i] = e.cacheKey(img, 0)
		if r, ok := e.cached(keys[i]); ok {
			r.Cached = true
			res[i] = r
			continue
		}
		todo = append(todo, i)
	}
	var batch []Result
	if len(todo) > 1 {
		var err error
		batch, err = e.runBatch(ctx, imgs, todo)
		if err != nil || len(batch) != len(todo) {
			batch = nil
		}
	}
	for k, i := range todo {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			continue
		}
		if batch == nil {
			res[i], errs[i] = e.Recognize(ctx, imgs[i], 0)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, e.opt.Timeout)
		r, err := e.orVertical(pctx, imgs[i], 0, batch[k])
		if err != nil && ctx.Err() == nil && pctx.Err() != nil {
			err = fmt.Errorf("%w after %v", ErrTimeout, e.opt.Timeout)
		}
		cancel()
		res[i], errs[i] = r, err
		if err == nil {
			e.store(keys[i], r)
		}
	}
	return res, errs
}

// runBatch reads imgs[i] for each i of todo as horizontal text in one
// tesseract run: the images in a temporary folder, their list as the
// input, the TSV's page_num telling the pages apart.
func (e *Engine) runBatch(ctx context.Context, imgs [][]byte, todo []int) ([]Result, error) {
	dir, err := os.MkdirTemp("", "shirube-ocr-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var list strings.Builder
	for k, i := range todo {
		p := filepath.Join(dir, "page"+strconv.Itoa(k)+imageExt(imgs[i]))
		if err := os.WriteFile(p, imgs[i], 0o600); err != nil {
			return nil, err
		}
		list.WriteString(p + "\n")
	}
	listPath := filepath.Join(dir, "pages.txt")
	if err := os.WriteFile(listPath, []byte(list.String()), 0o600); err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(ctx, e.opt.Timeout*time.Duration(len(todo)))
	defer cancel()
	e.runs.Add(1)
	cmd := proc.Command(bctx, e.path, listPath, "stdout", "-l", "jpn", "--psm", "3", "tsv")
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT="+strconv.Itoa(e.opt.Threads))
	out, err := e.exec(bctx, cmd)
	if err != nil {
		return nil, err
	}
	rs, err := parseTSVPages(out, true)
	if err != nil {
		return nil, err
	}
	for len(rs) < len(todo) { // trailing pages without words
		rs = append(rs, Result{})
	}
	return rs, nil
}

// imageExt names an image file by its first bytes, so that Tesseract's
// image library reads it: PNM, PNG, JPEG or TIFF.
func imageExt(img []byte) string {
	switch {
	case bytes.HasPrefix(img, []byte("\x89PNG")):
		return ".png"
	case bytes.HasPrefix(img, []byte("\xff\xd8")):
		return ".jpg"
	case bytes.HasPrefix(img, []byte("II*\x00")), bytes.HasPrefix(img, []byte("MM\x00*")):
		return ".tif"
	case len(img) > 1 && img[0] == 'P' && img[1] >= '1' && img[1] <= '6':
		return ".pnm"
	}
	return ".img"
}
