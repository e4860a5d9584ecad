package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"

	"github.com/shirube/shirube/internal/proc"
)

// pdfInstallHint is the fix for a missing pdftotext.
const pdfInstallHint = "pdftotext not found — PDFs are read with a slower, less accurate pure-Go parser; install poppler-utils poppler-data (apt-get install poppler-utils poppler-data) for reliable Japanese text"

// Errors for PDFs that cannot be read at all, wrapped with a fix.
var (
	ErrPDFEncrypted = errors.New("PDF is encrypted (password-protected)")
	ErrPDFCorrupt   = errors.New("PDF is corrupt or not a PDF")
	ErrPDFNoPages   = errors.New("PDF has zero pages")
)

// extractPDF returns one Page per physical page of the PDF at path (whose
// bytes are data) plus notes about blank and textless pages. Pages are
// OCR'd under ocrCtx (each under its own time limit), the rest under ctx.
func (e *Extractor) extractPDF(ctx, ocrCtx context.Context, path string, data []byte) ([]Page, []string, error) {
	e.pdfOnce.Do(func() {
		name := e.opt.PDFToText
		if name == "" {
			name = "pdftotext"
		}
		if p, err := exec.LookPath(name); err == nil {
			e.pdfTool = p
		}
	})

	var texts []string
	var err error
	var boxes [][]pdfWord
	if e.pdfTool != "" {
		// The word boxes (tables, titles) are read beside the text, on
		// the other core; without them a page keeps pdftotext -raw's
		// lines.
		bctx, cancel := context.WithCancel(ctx)
		type boxResult struct {
			pages [][]pdfWord
			err   error
		}
		done := make(chan boxResult, 1)
		go func() {
			b, err := runPDFBoxes(bctx, e.pdfTool, path, e.maxText())
			done <- boxResult{b, err}
		}()
		texts, err = runPDFToText(ctx, e.pdfTool, path, e.maxText())
		if err != nil {
			cancel()
		}
		b := <-done
		cancel()
		if err == nil && b.err == nil && len(b.pages) == len(texts) {
			boxes = b.pages
		}
	} else {
		e.warn(pdfInstallHint)
		texts, err = goPDFText(ctx, data, e.maxText())
		if err == nil {
			err = goPDFUsable(texts)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if len(texts) == 0 {
		return nil, nil, fmt.Errorf("%w — the file may be damaged; re-export it", ErrPDFNoPages)
	}
	ocrd, notes := e.ocrPDF(ocrCtx, path, texts)
	pages := make([]Page, len(texts))
	for i, t := range texts {
		t = strings.TrimRight(normalizeNewlines(strings.ToValidUTF8(t, "\uFFFD")), " \t\n")
		n := i + 1
		if o, ok := ocrd[i]; ok {
			pages[i] = Page{Number: n, Text: o.text}
			continue
		}
		switch {
		case Unusable(t):
			t = ""
			notes = append(notes, fmt.Sprintf("page %d: %s", n, noteUnreadable))
		case strings.TrimSpace(t) == "":
			t = ""
			notes = append(notes, fmt.Sprintf("page %d: %s", n, noteNoText))
		case isBlankMarker(t):
			notes = append(notes, fmt.Sprintf("page %d: blank page (%q)", n, strings.Join(strings.Fields(t), " ")))
			t = ""
		default:
			if boxes != nil {
				t = applyTables(titleFirst(t, boxes[i]), boxes[i])
			}
			t = layoutPDFPage(t)
		}
		pages[i] = Page{Number: n, Text: t}
	}
	demoteListItems(pages)
	return pages, notes, nil
}

// toolRun is what one run of an outside program (pdftotext, pdftoppm,
// pdftohtml) left: its output, the start of its error output, and whether
// the output passed its cap.
type toolRun struct {
	stdout, stderr bytes.Buffer
	over           bool
}

// runTool runs tool with args in a process group of its own (proc), keeping
// at most limit bytes of its output (limit <= 0: all of it; past the cap
// the program is stopped and over is set) and the first 4 KB of its error
// output.
func runTool(ctx context.Context, limit int64, tool string, args ...string) (*toolRun, error) {
	r := &toolRun{}
	capped := &cappedWriter{max: limit, buf: &r.stdout}
	cmd := proc.Command(ctx, tool, args...)
	cmd.Stdout = capped
	cmd.Stderr = &limitedBuffer{max: 4096, buf: &r.stderr}
	err := cmd.Run()
	r.over = capped.over
	return r, err
}

// runPDFToText runs pdftotext -raw -enc UTF-8 on path and splits its output
// into pages. pdftotext ends every page, including the last, with a form
// feed, so N pages give N form feeds. Output past maxText bytes (<= 0: no
// limit) stops pdftotext and is ErrTextTooLarge, so a small file that
// expands to gigabytes of text never sits in memory.
func runPDFToText(ctx context.Context, tool, path string, maxText int64) ([]string, error) {
	run, err := runTool(ctx, maxText, tool, "-raw", "-enc", "UTF-8", path, "-")
	if err != nil || run.over {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pdftotext: %w", ctx.Err())
		}
		if run.over {
			return nil, textTooLarge(maxText)
		}
		return nil, pdfToolError(err, run.stderr.String())
	}
	out := run.stdout.String()
	if out == "" {
		return nil, nil
	}
	texts := strings.Split(out, "\f")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	return texts, nil
}

// pdfToolError turns a failed pdftotext run into an error that says what
// is wrong with the file.
func pdfToolError(err error, stderr string) error {
	detail := firstLine(stderr)
	var exit *exec.ExitError
	code := -1
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	switch {
	case strings.Contains(stderr, "Incorrect password"), code == 3:
		return fmt.Errorf("%w — remove the password (e.g. qpdf --decrypt in.pdf out.pdf) and add the decrypted copy", ErrPDFEncrypted)
	case strings.Contains(stderr, "Invalid page count 0"), strings.Contains(stderr, "Wrong page range"):
		return fmt.Errorf("%w — the file may be damaged; re-export it", ErrPDFNoPages)
	case code == 1:
		return fmt.Errorf("%w (pdftotext: %s) — re-export or repair the file", ErrPDFCorrupt, detail)
	}
	if detail == "" {
		detail = err.Error()
	}
	return fmt.Errorf("pdftotext failed: %s — check the file and your poppler-utils install", detail)
}

// blankMarker matches the lines publishers print on deliberately empty
// pages, in English and Japanese.
var blankMarker = regexp.MustCompile(`(?i)^[(（]?\s*(this\s+page\s+(is\s+)?(intentionally|deliberately)\s+(left\s+)?blank|(この|本)?(ページ|頁)は(意図的に)?(空白|白紙)(としています|です|ページです)?|(以下)?(余白|白紙)(ページ)?)[.。．]?\s*[)）]?$`)

// pageNumber matches a line holding only a page number such as "12" or "- 3 -".
var pageNumber = regexp.MustCompile(`^[-–—\s]*[0-9０-９ivxlcIVXLC]+[-–—\s]*$`)

// isBlankMarker reports whether a page holds nothing but a "this page is
// intentionally left blank" line and perhaps a page number.
func isBlankMarker(text string) bool {
	found := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "", pageNumber.MatchString(line):
		case blankMarker.MatchString(line):
			found = true
		default:
			return false
		}
	}
	return found
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// limitedBuffer keeps the first max bytes written to it and discards the
// rest, so a chatty child process cannot exhaust memory.
type limitedBuffer struct {
	max int
	buf *bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		if len(p) > room {
			l.buf.Write(p[:room])
		} else {
			l.buf.Write(p)
		}
	}
	return len(p), nil
}
