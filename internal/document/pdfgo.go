package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// Bounds on the pure-Go PDF reader. The library walks page trees and
// inherited attributes by following references without remembering where
// it has been, so a 603-byte file whose page tree points to itself makes it
// loop forever. It does not expose object identities either, so a cycle is
// recognised by what it causes: a tree deeper or larger than any real
// document.
const (
	// maxTreeDepth is the deepest page tree accepted (real ones are under
	// 10 levels; the PDF limits of common writers are far below 64).
	maxTreeDepth = 64
	// maxTreeNodes bounds the page tree nodes visited, so that a node whose
	// Kids name it twice cannot make the walk exponential.
	maxTreeNodes = 200_000
	// goPDFGrace is how long goPDFText waits, once its context has ended,
	// for the reader to notice. The reader fails its next read of the
	// file's bytes (ctxReaderAt), which comes within microseconds on any
	// file seen so far; the grace only bounds a loop no test has found.
	goPDFGrace = 10 * time.Second
)

// ErrPDFTimeout is the per-file deadline (ErrFileTimeout) as the pure-Go
// reader reports it; kept as a name for callers that test for it.
var ErrPDFTimeout = ErrFileTimeout

// ErrPDFUnreadable is returned (wrapped) when the pure-Go reader decoded
// a page into characters that are not text (fonts with their own
// encoding): the file is refused rather than indexed as junk.
var ErrPDFUnreadable = errors.New("the built-in PDF reader cannot decode this file's text")

// goPDFUsable refuses texts, read by the pure-Go reader, when any page
// is unusable (Unusable): one line that names pdftotext as the fix.
func goPDFUsable(texts []string) error {
	for i, t := range texts {
		if Unusable(t) {
			return fmt.Errorf("%w (page %d: fonts with their own encoding) — install pdftotext (apt-get install poppler-utils poppler-data) and index again", ErrPDFUnreadable, i+1)
		}
	}
	return nil
}

// goPDFText reads page texts with the pure-Go parser, bounded: the page
// tree is walked with cycle limits (pdfPages), reading stops once the text
// passes maxText bytes (ErrTextTooLarge; maxText <= 0 means no limit), and
// the reader stops when ctx ends — the per-file deadline (Options.FileTimeout)
// or a cancellation (Ctrl-C, a server shutting down).
//
// The library cannot be given a context, so the stop goes through the
// bytes it reads: every read of the file (ctxReaderAt) fails once ctx is
// done, and the library turns that failure into an error (a panic inside,
// recovered) at once, also in the middle of a page's content stream. The
// read runs on its own goroutine only so that goPDFText returns promptly;
// it waits for that goroutine to end, so no reader is left spinning after
// a timeout (a server rebuilding every few minutes used to collect them).
func goPDFText(ctx context.Context, data []byte, maxText int64) ([]string, error) {
	type result struct {
		texts []string
		err   error
	}
	done := make(chan result, 1) // buffered: a reader past the grace never blocks on send
	go func() {
		texts, err := goPDFRead(ctx, data, maxText)
		done <- result{texts, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		case <-time.After(goPDFGrace):
		}
	}
	if err := ctx.Err(); err != nil {
		// Whatever the reader made of its failed reads, the cause is
		// the deadline or the cancellation.
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, ErrFileTimeout
		}
		return nil, err
	}
	return r.texts, r.err
}

// ctxReaderAt reads from a byte slice until ctx ends; then every read fails
// with ctx's error, which stops the PDF library wherever it is.
type ctxReaderAt struct {
	ctx context.Context
	r   *bytes.Reader
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// goPDFRead does the reading for goPDFText. The library can panic on
// malformed input; a panic becomes an ErrPDFCorrupt error.
func goPDFRead(ctx context.Context, data []byte, maxText int64) (texts []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			texts, err = nil, fmt.Errorf("%w (parser failed: %v) — re-export the file, or install poppler-utils for a more tolerant reader", ErrPDFCorrupt, r)
		}
	}()
	r, err := pdf.NewReader(ctxReaderAt{ctx, bytes.NewReader(data)}, int64(len(data)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(strings.ToLower(err.Error()), "encrypt") {
			// Many public PDFs are encrypted only to restrict editing;
			// pdftotext reads those, the Go parser does not.
			return nil, fmt.Errorf("%w, or uses encryption the built-in reader cannot open (%v) — install poppler-utils poppler-data, or remove the password with qpdf --decrypt in.pdf out.pdf", ErrPDFEncrypted, err)
		}
		return nil, fmt.Errorf("%w (%v) — re-export or repair the file", ErrPDFCorrupt, err)
	}
	pages, err := pdfPages(ctx, r.Trailer().Key("Root").Key("Pages"))
	if err != nil {
		return nil, err
	}
	var total int64
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p.V.IsNull() {
			texts = append(texts, "")
			continue
		}
		t, err := p.GetPlainText(nil)
		if err != nil {
			t = "" // reported as a page without a text layer
		}
		if total += int64(len(t)); maxText > 0 && total > maxText {
			return nil, textTooLarge(maxText)
		}
		texts = append(texts, t)
	}
	return texts, nil
}

// pdfPages returns the pages of the page tree under root, in order. It
// replaces the library's NumPage/Page(i), which trust /Count (a huge count
// allocates without bound) and follow a Kids entry that names its own node
// forever. A tree deeper than maxTreeDepth or with more than maxTreeNodes
// nodes, and a page whose /Parent chain is longer than maxTreeDepth (the
// library follows it for inherited resources), is ErrPDFCorrupt.
func pdfPages(ctx context.Context, root pdf.Value) ([]pdf.Page, error) {
	corrupt := func(why string) error {
		return fmt.Errorf("%w (%s) — re-export or repair the file, or install poppler-utils poppler-data", ErrPDFCorrupt, why)
	}
	type node struct {
		v     pdf.Value
		depth int
	}
	var pages []pdf.Page
	stack := []node{{root, 0}}
	for visited := 0; len(stack) > 0; visited++ {
		if visited > maxTreeNodes {
			return nil, corrupt(fmt.Sprintf("page tree has more than %d nodes; it probably loops", maxTreeNodes))
		}
		if visited%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.v.Key("Type").Name() {
		case "Pages":
			if n.depth >= maxTreeDepth {
				return nil, corrupt(fmt.Sprintf("page tree deeper than %d levels; it probably points back to itself", maxTreeDepth))
			}
			kids := n.v.Key("Kids")
			for i := kids.Len() - 1; i >= 0; i-- {
				stack = append(stack, node{kids.Index(i), n.depth + 1})
			}
		case "Page":
			if !inheritsWithin(n.v, maxTreeDepth) {
				return nil, corrupt(fmt.Sprintf("page %d: parent chain longer than %d levels; it probably loops", len(pages)+1, maxTreeDepth))
			}
			pages = append(pages, pdf.Page{V: n.v})
		}
	}
	return pages, nil
}

// inheritsWithin reports whether the library's lookup of inherited page
// attributes (Resources through /Parent) ends within limit steps: at a node
// holding Resources, or at the end of the chain.
func inheritsWithin(page pdf.Value, limit int) bool {
	v := page
	for range limit {
		if v.IsNull() || !v.Key("Resources").IsNull() {
			return true
		}
		v = v.Key("Parent")
	}
	return v.IsNull()
}
