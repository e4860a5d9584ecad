package document

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/ocr"
	"github.com/shirube/shirube/internal/proc"
)

// OCRMode says which PDF pages are read by OCR (Options.OCRMode).
type OCRMode string

// The OCR modes. OCRAuto reads a page whose text layer is missing or
// unusable (see Unusable, and a page with far fewer characters than its
// ink suggests); OCRAlways reads every page; OCRNever reads none (image
// files are then skipped).
const (
	OCRAuto   OCRMode = "auto"
	OCRAlways OCRMode = "always"
	OCRNever  OCRMode = "never"
)

// OCR page limits.
const (
	// OCRDPI is the resolution PDF pages are rendered at for OCR.
	OCRDPI = 300
	// DefaultMaxImagePixels is the default Options.MaxImagePixels: 100
	// megapixels, an A0 sheet at 150 dpi or an A3 one at 600 dpi. A page
	// image over it is refused (a small file can declare an image of
	// gigapixels: a decompression bomb).
	DefaultMaxImagePixels = 100_000_000
	// inkDPI is the resolution of the quick render that estimates a page's
	// ink (pixels darker than 160 of 255). On the pdf-ja pages a character
	// of the text layer goes with 0.02 (thin type, whose strokes average
	// to light grey) to 5.8 (a title page with graphics) such pixels at
	// this resolution; a page with more than inkPerRune per character plus
	// inkSlack has text that its layer lacks. A scanned body page leaves
	// 250 to 4,000.
	inkDPI     = 20
	inkPerRune = 8
	inkSlack   = 200
	// inkCheckRunes: a text layer with at least this many characters is
	// taken as it is; a shorter one is compared with the page's ink.
	inkCheckRunes = 200
)

// The notes of PDF pages left empty that OCR could read; OCRPending is
// derived from them (see ocrPending).
const (
	noteNoText     = "no text layer — scanned?"
	noteUnreadable = "text layer unreadable (mostly unknown or private-use characters) — not indexed; OCR reads such pages (--ocr auto, Tesseract)"
	noteNotOCRd    = "not OCR'd"
)

// ocrPending reports whether notes say a page was left for OCR.
func ocrPending(notes []string) bool {
	for _, n := range notes {
		if strings.HasSuffix(n, noteNoText) || strings.HasSuffix(n, noteUnreadable) || strings.Contains(n, ": "+noteNotOCRd+" — ") {
			return true
		}
	}
	return false
}

// CanOCR reports whether e reads pages by OCR: a mode other than never,
// Tesseract and pdftoppm installed. Database.Sync reads a document whose
// pages were left for OCR (Document.OCRPending) again when it can.
func (e *Extractor) CanOCR(ctx context.Context) bool {
	return e.ocrMode() != OCRNever && e.ocrReady(ctx, true)
}

// Unusable reports whether extracted text is not readable text: more than
// a fifth of its visible characters are U+FFFD, private-use code points,
// control characters or Latin-1 letters — what a font with its own
// encoding or a parser that misread the content stream produces
// (「#ßÅâ¼Ú」). Empty text is not unusable (it is missing).
func Unusable(text string) bool {
	var bad, all int
	for _, r := range text {
		if unicode.IsSpace(r) {
			continue
		}
		all++
		switch {
		case r == utf8.RuneError, unicode.Is(unicode.Co, r), unicode.IsControl(r):
			bad++
		case r >= 0xC0 && r <= 0xFF && r != 0xD7 && r != 0xF7: // À–ÿ but × ÷
			bad++
		case r >= 0xA0 && r < 0xC0 && !strings.ContainsRune("\u00a0§¨°±´¶·¥©®µ¼½¾", r):
			bad++
		}
	}
	return all > 0 && bad*5 > all
}

// visibleRunes counts the characters of text that are not white space.
func visibleRunes(text string) int {
	n := 0
	for _, r := range text {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// ocrMode is the configured mode, OCRNever when there is no engine.
func (e *Extractor) ocrMode() OCRMode {
	if e.opt.OCR == nil {
		return OCRNever
	}
	if e.opt.OCRMode == "" {
		return OCRAuto
	}
	return e.opt.OCRMode
}

// ocrReady reports whether OCR can run, telling Warn once per Extractor
// why not (Tesseract or pdftoppm missing).
func (e *Extractor) ocrReady(ctx context.Context, needPPM bool) bool {
	if err := e.opt.OCR.Check(ctx); err != nil {
		e.ocrWarn.Do(func() {
			if e.opt.Warn != nil {
				e.opt.Warn(err.Error())
			}
		})
		return false
	}
	if !needPPM {
		return true
	}
	e.ppmOnce.Do(func() {
		name := e.opt.PDFToPPM
		if name == "" {
			name = "pdftoppm"
		}
		if p, err := exec.LookPath(name); err == nil {
			e.ppmTool = p
		} else if e.opt.Warn != nil {
			e.opt.Warn("pdftoppm not found — PDF pages without text cannot be OCR'd; install poppler-utils poppler-data")
		}
	})
	return e.ppmTool != ""
}

// ocrSlot waits for one of the Options.OCRWorkers places for a page read,
// shared by every file the Extractor reads at once.
func (e *Extractor) ocrSlot(ctx context.Context) (release func(), err error) {
	e.slotOnce.Do(func() {
		n := e.opt.OCRWorkers
		if n <= 0 {
			n = 1
		}
		e.slots = make(chan struct{}, n)
	})
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ocrQueued and ocrDone drive Options.OCRProgress.
func (e *Extractor) ocrQueued(n int) {
	e.progMu.Lock()
	e.ocrTotal += n
	d, t := e.ocrFinished, e.ocrTotal
	e.progMu.Unlock()
	if e.opt.OCRProgress != nil && n > 0 {
		e.opt.OCRProgress(d, t)
	}
}

func (e *Extractor) ocrDone() {
	e.progMu.Lock()
	e.ocrFinished++
	d, t := e.ocrFinished, e.ocrTotal
	e.progMu.Unlock()
	if e.opt.OCRProgress != nil {
		e.opt.OCRProgress(d, t)
	}
}

// ocrPage is what OCR made of one page: its Markdown.
type ocrPage struct {
	text string
}

// ocrMarker is the first line of an OCR'd page's Markdown: an HTML
// comment, which the chunker leaves out of every chunk, saying how the
// text was read.
func ocrMarker(r ocr.Result) string {
	dir := "horizontal"
	if r.Vertical {
		dir = "vertical"
	}
	return fmt.Sprintf("<!-- shirube: OCR (tesseract, %s), mean confidence %.0f%% -->", dir, r.Confidence)
}

// ocrNote is the page's note in the build summary.
func ocrNote(n int, r ocr.Result) string {
	dir := ""
	if r.Vertical {
		dir = ", vertical"
	}
	return fmt.Sprintf("page %d: OCR%s, mean confidence %.0f%%", n, dir, r.Confidence)
}

// ocrMarkdown is an OCR result as page Markdown: the marker line, then
// the text through the same layout step as a text layer.
func ocrMarkdown(r ocr.Result) string {
	t := strings.TrimSpace(r.Text)
	if !r.Vertical {
		t = applyTables(t, ocrWords(r.Words))
	}
	return ocrMarker(r) + "\n\n" + layoutPDFPage(t)
}

// ocrWords are OCR'd words as the table finder reads a text layer's word
// boxes: in pixels rather than points (the finder measures in line
// heights), touching words joined and each as tall as its line
// (ocr.Phrases).
func ocrWords(ws []ocr.Word) []pdfWord {
	ws = ocr.Phrases(ws)
	out := make([]pdfWord, len(ws))
	for i, w := range ws {
		out[i] = pdfWord{x0: float64(w.X0), y0: float64(w.Y0), x1: float64(w.X1), y1: float64(w.Y1), text: w.Text}
	}
	return out
}

// ocrPDF reads by OCR the pages of the PDF at path that the mode selects,
// given their text layers (texts[i] is page i+1's). It returns the pages
// it read, by index, and notes on pages it could not read. Pages are read
// in batches (ocrBatches), in parallel within Options.OCRWorkers.
func (e *Extractor) ocrPDF(ctx context.Context, path string, texts []string) (map[int]ocrPage, []string) {
	mode := e.ocrMode()
	if mode == OCRNever {
		return nil, nil
	}
	var want []int
	for i, t := range texts {
		if mode == OCRAlways || strings.TrimSpace(t) == "" || Unusable(t) || visibleRunes(t) < inkCheckRunes {
			want = append(want, i)
		}
	}
	if len(want) == 0 || !e.ocrReady(ctx, true) {
		return nil, nil
	}
	// ctx has no per-file deadline (OCR may take minutes): each helper run
	// here gets the per-page limit.
	sctx, cancel := context.WithTimeout(ctx, e.opt.OCRTimeout())
	sizes, _ := pdfPageSizes(sctx, path, len(texts)) // unknown sizes are checked on the image
	cancel()
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		out   = map[int]ocrPage{}
		notes []string
	)
	if mode == OCRAuto {
		// A short but readable text layer is kept unless the page's ink
		// says there is much more text on it (a scan with a stamped page
		// number or title).
		kept := want[:0]
		for _, i := range want {
			t := texts[i]
			if strings.TrimSpace(t) == "" || Unusable(t) {
				kept = append(kept, i)
				continue
			}
			ictx, cancel := context.WithTimeout(ctx, e.opt.OCRTimeout())
			ink, err := e.pageInk(ictx, path, i+1)
			cancel()
			if err == nil && ink > inkPerRune*visibleRunes(t)+inkSlack {
				kept = append(kept, i)
			}
		}
		want = kept
	}
	e.ocrQueued(len(want))
	for _, batch := range ocrBatches(want, max(e.opt.OCRWorkers, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, bnotes := e.ocrPDFPages(ctx, path, batch, sizes, texts, mode)
			mu.Lock()
			defer mu.Unlock()
			for i, p := range got {
				out[i] = p
			}
			notes = append(notes, bnotes...)
		}()
	}
	wg.Wait()
	sortNotes(notes)
	return out, notes
}

// ocrBatchPages is the most pages one tesseract run reads
// (ocr.Engine.RecognizeBatch): enough that loading the model once saves
// most of its cost, few enough that a document's pages are shared among
// the workers and that the progress bar moves.
const ocrBatchPages = 8

// ocrBatches splits page indexes into batches of at most ocrBatchPages
// consecutive pages, and into at least workers batches when there are
// that many pages, so that every worker has pages to read.
func ocrBatches(pages []int, workers int) [][]int {
	if len(pages) == 0 {
		return nil
	}
	n := max((len(pages)+ocrBatchPages-1)/ocrBatchPages, min(workers, len(pages)))
	out := make([][]int, 0, n)
	for k := range n {
		from, to := k*len(pages)/n, (k+1)*len(pages)/n
		out = append(out, pages[from:to])
	}
	return out
}

// ocrPDFPages renders the pages of one batch (indexes) at OCRDPI and reads
// them with one tesseract run, holding one OCR slot. In auto mode a
// readable text layer is replaced only when OCR finds clearly more text.
func (e *Extractor) ocrPDFPages(ctx context.Context, path string, batch []int, sizes map[int][2]float64, texts []string, mode OCRMode) (map[int]ocrPage, []string) {
	defer func() {
		for range batch {
			e.ocrDone()
		}
	}()
	release, err := e.ocrSlot(ctx)
	if err != nil {
		return nil, nil
	}
	defer release()
	var notes []string
	var imgs [][]byte
	var read []int // indexes whose image is in imgs
	var fit []int  // indexes of the pages under the pixel limit
	for _, i := range batch {
		n, size := i+1, sizes[i+1]
		if px := size[0] / 72 * OCRDPI * size[1] / 72 * OCRDPI; px > float64(e.maxPixels()) {
			notes = append(notes, fmt.Sprintf("page %d: %s — %.0f megapixels at %d dpi is over the limit of %d", n, noteNotOCRd, px/1e6, OCRDPI, e.maxPixels()/1_000_000))
			continue
		}
		fit = append(fit, i)
	}
	// Consecutive pages are rendered by one pdftoppm run; when that
	// fails, each page on its own, so one bad page costs only itself.
	for _, run := range consecutive(fit) {
		if len(run) > 1 {
			rctx, cancel := context.WithTimeout(ctx, e.opt.OCRTimeout()*time.Duration(len(run)))
			got, err := ocrPageImages(rctx, e.ppmTool, path, run[0]+1, run[len(run)-1]+1)
			cancel()
			if err == nil {
				imgs = append(imgs, got...)
				read = append(read, run...)
				continue
			}
			if ctx.Err() != nil {
				return nil, nil
			}
		}
		for _, i := range run {
			n := i + 1
			rctx, cancel := context.WithTimeout(ctx, e.opt.OCRTimeout())
			img, err := ocrPageImage(rctx, e.ppmTool, path, n)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil
				}
				notes = append(notes, fmt.Sprintf("page %d: %s — rendering failed: %v", n, noteNotOCRd, err))
				continue
			}
			imgs = append(imgs, img)
			read = append(read, i)
		}
	}
	if len(imgs) == 0 {
		return nil, notes
	}
	rs, errs := e.opt.OCR.RecognizeBatch(ctx, imgs)
	out := map[int]ocrPage{}
	for k, i := range read {
		n, r, layer := i+1, rs[k], texts[i]
		if err := errs[k]; err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			notes = append(notes, fmt.Sprintf("page %d: %s — %v", n, noteNotOCRd, err))
			continue
		}
		if mode == OCRAuto && strings.TrimSpace(layer) != "" && !Unusable(layer) &&
			visibleRunes(r.Text) < 2*visibleRunes(layer)+20 {
			continue // the text layer was right after all
		}
		if strings.TrimSpace(r.Text) == "" {
			out[i] = ocrPage{text: ""}
			notes = append(notes, fmt.Sprintf("page %d: OCR found no text", n))
			continue
		}
		out[i] = ocrPage{text: ocrMarkdown(r)}
		notes = append(notes, ocrNote(n, r))
	}
	return out, notes
}

// consecutive splits ascending page indexes into runs of consecutive
// ones.
func consecutive(pages []int) [][]int {
	var out [][]int
	for k, i := range pages {
		if k > 0 && i == pages[k-1]+1 {
			out[len(out)-1] = append(out[len(out)-1], i)
			continue
		}
		out = append(out, []int{i})
	}
	return out
}

// OCRTimeout is the per-page OCR limit: Options.OCRPageTimeout, or
// ocr.DefaultTimeout when that is zero.
func (o Options) OCRTimeout() time.Duration {
	if o.OCRPageTimeout > 0 {
		return o.OCRPageTimeout
	}
	return ocr.DefaultTimeout
}

func (e *Extractor) maxPixels() int64 {
	if e.opt.MaxImagePixels > 0 {
		return e.opt.MaxImagePixels
	}
	return DefaultMaxImagePixels
}

// pageInk renders page n at inkDPI and counts its dark pixels.
func (e *Extractor) pageInk(ctx context.Context, path string, n int) (int, error) {
	img, err := renderPage(ctx, e.ppmTool, path, n, inkDPI)
	if err != nil {
		return 0, err
	}
	g, err := ocr.DecodePNM(img)
	if err != nil {
		return 0, err
	}
	dark := 0
	for _, p := range g.Pix {
		if p < 160 {
			dark++
		}
	}
	return dark, nil
}

// pageSizeLine matches pdfinfo's "Page    3 size: 595.276 x 841.89 pts".
var pageSizeLine = regexp.MustCompile(`^Page\s+(\d+) size:\s+([0-9.]+) x ([0-9.]+) pts`)

// pdfPageSizes returns the size in points of every page, from pdfinfo.
func pdfPageSizes(ctx context.Context, path string, pages int) (map[int][2]float64, error) {
	sizes := map[int][2]float64{}
	tool, err := exec.LookPath("pdfinfo")
	if err != nil {
		return sizes, err
	}
	cmd := proc.Command(ctx, tool, "-f", "1", "-l", strconv.Itoa(pages), path)
	out, err := cmd.Output()
	if err != nil {
		return sizes, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		m := pageSizeLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		w, _ := strconv.ParseFloat(m[2], 64)
		h, _ := strconv.ParseFloat(m[3], 64)
		sizes[n] = [2]float64{w, h}
	}
	return sizes, nil
}

// sortNotes orders "page N: …" notes by page number.
func sortNotes(notes []string) {
	num := func(s string) int {
		s = strings.TrimPrefix(s, "page ")
		n, _ := strconv.Atoi(s[:max(0, strings.IndexByte(s, ':'))])
		return n
	}
	for i := 1; i < len(notes); i++ {
		for j := i; j > 0 && num(notes[j]) < num(notes[j-1]); j-- {
			notes[j], notes[j-1] = notes[j-1], notes[j]
		}
	}
}
