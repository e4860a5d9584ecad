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
	// goPDFDeadline is the most time the fallback reader may spend on one
	// file; past it the file is skipped (the reader cannot be stopped, so
	// its goroutine is abandoned and ends with the process).
	goPDFDeadline = 2 * time.Minute
	// maxTreeDepth is the deepest page tree accepted (real ones are under
	// 10 levels; the PDF limits of common writers are far below 64).
	maxTreeDepth = 64
	// maxTreeNodes bounds the page tree nodes visited, so that a node whose
	// Kids name it twice cannot make the walk exponential.
	maxTreeNodes = 200_000
)

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

// ErrPDFTimeout is returned (wrapped) when the pure-Go reader did not
// finish one file within goPDFDeadline.
var ErrPDFTimeout = errors.New("PDF reader timed out")

// goPDFText reads page texts with the pure-Go parser, bounded: the page
// tree is walked with cycle limits (pdfPages), reading stops once the text
// passes maxText bytes (ErrTextTooLarge; maxText <= 0 means no limit), and
// the whole read runs on its own goroutine so that a file the parser
// still loops on costs at most goPDFDeadline and never blocks
// cancellation (Ctrl-C, SIGTERM).
func goPDFText(ctx context.Context, data []byte, maxText int64) ([]string, error) {
	texts, err := runAbandoning(ctx, goPDFDeadline, func(ctx context.Context) ([]string, error) {
		return goPDFRead(ctx, data, maxText)
	})
	if errors.Is(err, ErrPDFTimeout) {
		return nil, fmt.Errorf("%w after %v — the file is probably malformed (for example a page tree that loops); re-export it, or install poppler-utils poppler-data", err, goPDFDeadline)
	}
	return texts, err
}

// runAbandoning runs read on its own goroutine and returns its result, or
// an error as soon as ctx is done or limit has passed (ErrPDFTimeout).
// read gets a context that ends at the same moment and should check it;
// if it does not, it is abandoned and its result dropped.
func runAbandoning[T any](ctx context.Context, limit time.Duration, read func(context.Context) (T, error)) (T, error) {
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned reader never blocks on send
	go func() {
		v, err := read(rctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-rctx.Done():
		var zero T
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		return zero, ErrPDFTimeout
	}
}

// goPDFRead does the reading for goPDFText. The library can panic on
// malformed input; a panic becomes an ErrPDFCorrupt error.
func goPDFRead(ctx context.Context, data []byte, maxText int64) (texts []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			texts, err = nil, fmt.Errorf("%w (parser failed: %v) — re-export the file, or install poppler-utils for a more tolerant reader", ErrPDFCorrupt, r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
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
