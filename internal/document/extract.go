package document

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/ocr"
)

// HTMLMode selects how HTML is turned into page text.
type HTMLMode string

// The HTML modes. HTMLMarkdown keeps structure (headings, lists, tables);
// HTMLText keeps only the words, one block per line, for the HTML-vs-Markdown
// differential evaluation of seed 004.
const (
	HTMLMarkdown HTMLMode = "markdown"
	HTMLText     HTMLMode = "text"
)

// DefaultMaxTextBytes is the default Options.MaxTextBytes: 8 MiB, about
// 4,000 pages of a dense manual (the largest PDF of the pdf-ja dataset, 84
// pages, gives 161 KB; the longest law of the e-Gov corpus about 3 MB).
const DefaultMaxTextBytes int64 = 8 << 20

// ErrTextTooLarge is returned (wrapped) for a file whose extracted text is
// over Options.MaxTextBytes.
var ErrTextTooLarge = errors.New("extracted text is over the per-file limit")

// textTooLarge is the one-line skip reason for ErrTextTooLarge.
func textTooLarge(max int64) error {
	return fmt.Errorf("%w of %s — split the file, or raise the limit (SHIRUBE_MAX_TEXT_SIZE, in bytes)", ErrTextTooLarge, humanSize(max))
}

// maxText is the text cap in bytes; 0 means none.
func (e *Extractor) maxText() int64 {
	switch {
	case e.opt.MaxTextBytes == 0:
		return DefaultMaxTextBytes
	case e.opt.MaxTextBytes < 0:
		return 0
	}
	return e.opt.MaxTextBytes
}

// cappedWriter collects at most max bytes (max <= 0: no limit); a write
// past that fails and sets over, which stops a child process writing to it.
type cappedWriter struct {
	max  int64
	buf  *bytes.Buffer
	over bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.max > 0 && int64(c.buf.Len()+len(p)) > c.max {
		c.over = true
		return 0, ErrTextTooLarge
	}
	return c.buf.Write(p)
}

// DefaultFileTimeout is the default Options.FileTimeout: the longest any
// file may take to be read, outside programs included. Real files take
// well under a second per hundred pages; a file that takes a minute is
// pathological (a PDF whose 2,000 pages share one stream of no-op drawing
// commands kept pdftotext busy for hours).
const DefaultFileTimeout = 60 * time.Second

// ErrFileTimeout is returned (wrapped) for a file that took longer than
// Options.FileTimeout to read; the programs reading it were stopped.
var ErrFileTimeout = errors.New("reading the file took longer than the per-file time limit")

// fileTimeout is the per-file limit; 0 means none.
func (e *Extractor) fileTimeout() time.Duration {
	switch {
	case e.opt.FileTimeout == 0:
		return DefaultFileTimeout
	case e.opt.FileTimeout < 0:
		return 0
	}
	return e.opt.FileTimeout
}

// ErrNotUTF8 is returned (wrapped) for Markdown and text files that are not
// valid UTF-8.
var ErrNotUTF8 = errors.New("not UTF-8 — convert the file to UTF-8")

// Options configure an Extractor. The zero value is ready to use.
type Options struct {
	// HTMLMode is HTMLMarkdown (the default when empty) or HTMLText.
	HTMLMode HTMLMode

	// Warn receives one-line warnings that concern the whole run rather than
	// one file, such as a missing pdftotext. Each is sent at most once per
	// Extractor. Nil discards them.
	Warn func(string)

	// MaxTextBytes caps the text extracted from one file, in bytes: a file
	// whose text is larger is skipped with ErrTextTooLarge (a 946 KB PDF of
	// 6,000 pages once expanded to a 214 MB index). Zero means
	// DefaultMaxTextBytes; negative means no limit.
	MaxTextBytes int64

	// PDFToText is the pdftotext command to run. Empty means "pdftotext"
	// looked up on PATH. If it cannot be found, PDFs are read with a
	// pure-Go parser of lower quality and Warn is told once.
	PDFToText string

	// FileTimeout bounds the time one file may take to be read: outside
	// programs (pdftotext) are killed with their process group and the
	// built-in PDF reader stops; the file is skipped with ErrFileTimeout.
	// Zero means DefaultFileTimeout; negative means no limit. OCR is not
	// under it — a scanned file of a hundred pages takes minutes — but
	// under OCRPageTimeout per page.
	FileTimeout time.Duration
	// OCR reads page images (image files, PDF pages without a usable text
	// layer); nil means no OCR: image files are skipped and textless PDF
	// pages stay empty with a note.
	OCR *ocr.Engine
	// OCRMode selects the PDF pages OCR reads; empty means OCRAuto.
	OCRMode OCRMode
	// OCRWorkers is how many pages are read at once, across all the files
	// the Extractor reads in parallel; zero means 1.
	OCRWorkers int
	// OCRPageTimeout bounds rendering and reading one page; zero means
	// ocr.DefaultTimeout. The engine applies its own Timeout as well.
	OCRPageTimeout time.Duration
	// OCRProgress, when set, is told the pages read so far and the pages
	// queued for OCR so far (the total grows as files are opened).
	OCRProgress func(done, total int)
	// PDFToPPM is the pdftoppm command that renders PDF pages for OCR;
	// empty means "pdftoppm" on PATH.
	PDFToPPM string
	// MaxImagePixels refuses a page image larger than this many pixels
	// (a decompression bomb); zero means DefaultMaxImagePixels.
	MaxImagePixels int64
}

// Extractor turns source files into Documents. It is safe for concurrent use.
type Extractor struct {
	opt Options

	pdfOnce  sync.Once
	pdfTool  string // resolved pdftotext path; "" means use the Go fallback
	warnOnce sync.Once

	ocrWarn  sync.Once     // the one note of a run without Tesseract
	ppmOnce  sync.Once     // looks up pdftoppm
	ppmTool  string        // resolved pdftoppm path; "" when missing
	slotOnce sync.Once     // makes slots
	slots    chan struct{} // one place per page being read (OCRWorkers)

	progMu                sync.Mutex
	ocrTotal, ocrFinished int
}

// NewExtractor returns an Extractor with the given options.
func NewExtractor(opt Options) *Extractor {
	if opt.HTMLMode == "" {
		opt.HTMLMode = HTMLMarkdown
	}
	return &Extractor{opt: opt}
}

// Extract reads f and returns its Document. Errors name the file and say
// what to do; a failed file should be reported as a Skip and the ingest
// continued. Raw HTML inside Markdown becomes Markdown (MarkdownHTML).
// Legal text — HTML in Markdown mode, Markdown and text — gets its article
// structure as headings (StructureLegal); other text is kept as read.
func (e *Extractor) Extract(ctx context.Context, f File) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, fmt.Errorf("%s: %w", f.Rel, err)
	}
	parent := ctx
	if limit := e.fileTimeout(); limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	doc, err := e.extract(ctx, parent, f)
	if err != nil && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Document{}, fmt.Errorf("%s: %w (%v) — the file is probably malformed; re-export it, or raise the limit (SHIRUBE_FILE_TIMEOUT) if it is genuine", f.Rel, ErrFileTimeout, e.fileTimeout())
	}
	return doc, err
}

// extract is Extract under the per-file deadline (ctx); OCR runs under
// ocrCtx, the caller's context without that deadline.
func (e *Extractor) extract(ctx, ocrCtx context.Context, f File) (Document, error) {
	kind := f.Kind
	if kind == "" {
		k, ok := KindOf(f.Path)
		if !ok {
			return Document{}, fmt.Errorf("%s: unsupported file type — use .pdf .md .html .txt, or an image (.png .jpg .tif)", f.Rel)
		}
		kind = k
	}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return Document{}, fmt.Errorf("%s: cannot read: %w", f.Rel, err)
	}
	sum := sha256.Sum256(data)
	doc := Document{
		Source:  f.Rel,
		Kind:    kind,
		ModTime: f.ModTime,
		Size:    int64(len(data)),
		Hash:    hex.EncodeToString(sum[:]),
	}
	if doc.ModTime.IsZero() {
		if info, err := os.Stat(f.Path); err == nil {
			doc.ModTime = info.ModTime()
		}
	}

	switch kind {
	case PDF:
		doc.Pages, doc.Notes, err = e.extractPDF(ctx, ocrCtx, f.Path, data)
	case Image:
		doc.Pages, doc.Notes, err = e.extractImage(ocrCtx, f.Path, data)
	case HTML:
		var text string
		text, err = ConvertHTML(ctx, data, e.opt.HTMLMode)
		if e.opt.HTMLMode == HTMLMarkdown {
			text, _ = StructureLegal(text)
		}
		doc.Pages = []Page{{Number: 1, Text: text}}
	case Markdown, Text:
		var text string
		text, err = decodeUTF8Text(data)
		if kind == Markdown {
			text = MarkdownHTML(ctx, MarkdownExtensions(text))
		}
		text, _ = StructureLegal(text)
		doc.Pages = []Page{{Number: 1, Text: text}}
	default:
		err = fmt.Errorf("unsupported kind %q", kind)
	}
	if err == nil {
		err = e.checkTextSize(doc.Pages)
	}
	if err != nil {
		return Document{}, fmt.Errorf("%s: %w", f.Rel, err)
	}
	doc.OCRPending = ocrPending(doc.Notes)
	if len(doc.Pages) == 1 && strings.TrimSpace(doc.Pages[0].Text) == "" && kind != PDF && kind != Image {
		doc.Notes = append(doc.Notes, "no text found")
	}
	return doc, nil
}

// checkTextSize applies Options.MaxTextBytes to the extracted pages.
func (e *Extractor) checkTextSize(pages []Page) error {
	max := e.maxText()
	if max <= 0 {
		return nil
	}
	var n int64
	for _, p := range pages {
		n += int64(len(p.Text))
	}
	if n > max {
		return textTooLarge(max)
	}
	return nil
}

// warn sends msg to Options.Warn the first time it is called on e.
func (e *Extractor) warn(msg string) {
	e.warnOnce.Do(func() {
		if e.opt.Warn != nil {
			e.opt.Warn(msg)
		}
	})
}

// decodeUTF8Text checks that data is UTF-8 text, strips a UTF-8 byte order
// mark and turns CRLF and lone CR line ends into LF.
func decodeUTF8Text(data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return "", ErrNotUTF8
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", errors.New("contains NUL bytes — this looks like a binary file, not text; remove it or fix its extension")
	}
	return normalizeNewlines(string(data)), nil
}

// normalizeNewlines turns CRLF and lone CR into LF.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
