// Package document turns source files (PDF, Markdown, HTML, plain text) into
// pages of Markdown and writes them to the per-page Markdown database.
//
// A Document is what one source file becomes: an ordered list of Pages. A PDF
// has one Page per physical page, an image file one per image (a TIFF may
// hold several); every other kind has exactly one Page.
// Page text is kept as extracted (the original wording, for display); analysis
// normalises it separately.
//
// Every page has an identity, its path in the page database:
//
//	database/<relative folder>/<document stem>/page_NNN.md
//
// Citations, the audit log and the reference metrics all use that path.
package document

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind is the format a source file was read as.
type Kind string

// The kinds of source the ingester understands.
const (
	PDF      Kind = "pdf"
	Markdown Kind = "markdown"
	HTML     Kind = "html"
	Text     Kind = "text"
	Image    Kind = "image" // .png .jpg .jpeg .tif .tiff, read by OCR; a TIFF may hold several pages
)

// Page is one page of a document, as Markdown.
type Page struct {
	Number int    // 1-based
	Text   string // Markdown, original wording; empty for a blank or scanned page
}

// Document is one ingested source file.
type Document struct {
	Source  string    // slash-separated path relative to the data folder, e.g. "runbooks/incident.md"
	Kind    Kind      // how it was read
	Pages   []Page    // in order; never nil for a successfully read file (a zero-page PDF is an error)
	ModTime time.Time // source file mtime
	Size    int64     // source size in bytes
	Hash    string    // hex SHA-256 of the source bytes
	Notes   []string  // one-line warnings that did not stop ingestion, e.g. "page 2: no text layer — scanned?"
	// OCRPending says that a page OCR could read was left empty (OCR was
	// off, Tesseract missing, the page timed out): the next build that can
	// run OCR reads the file again even though it did not change.
	OCRPending bool
}

// Skip records a file that was not ingested and why, in one line.
type Skip struct {
	Path   string // as given to the walker (relative to the data folder when possible)
	Reason string // one line, says what went wrong and how to fix it when possible
}

// String is the skip as one report line, "path: reason". The path is
// quoted when it holds a control character (see QuotePath) and line breaks
// in the reason become spaces, so a file named "a\nb.md: …" cannot forge
// lines in the report.
func (s Skip) String() string {
	return QuotePath(s.Path) + ": " + strings.Join(strings.Fields(s.Reason), " ")
}

// QuotePath returns p unchanged, or Go-quoted ("a\nb.md") when it holds a
// control character (a newline, a tab, an escape sequence) or invalid
// UTF-8, so that a file name always stays on one line of a report.
func QuotePath(p string) string {
	if !utf8.ValidString(p) || strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
