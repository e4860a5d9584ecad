// Package csvx is the CSV toolkit shared by every shirube command that reads
// or writes spreadsheets.
//
// Reading (ReadAll, ReadFile) is forgiving, because the files usually come
// from Excel or from people: a UTF-8 byte-order mark is dropped, bytes that are
// not valid UTF-8 are decoded as Shift_JIS / CP932 (Japanese Excel's default)
// when they read as Japanese text, else as Windows-1252 (the superset of
// ISO-8859-1 "latin-1" that Excel writes), each with a warning, and rows may
// have any number of cells.
//
// Writing (Writer) produces "utf-8-sig" files — UTF-8 with a byte-order mark —
// so Excel on Windows shows Japanese text correctly. Cells that a spreadsheet
// would run as a formula are neutralised (see EscapeCell).
//
// MatchColumn finds a column by a human-friendly name, and CreateTimestamped
// makes output files that never overwrite an earlier run.
package csvx

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/unicode/norm"
)

// BOM is the UTF-8 byte-order mark written at the start of every file
// that starts with a record (see Writer).
const BOM = "\uFEFF"

// Latin1Warning is the warning ReadAll returns when the input was not valid
// UTF-8 and was decoded as Windows-1252 instead.
const Latin1Warning = "not valid UTF-8; read as latin-1 (Windows-1252). Save the file as UTF-8 to be sure every character is read correctly"

// ShiftJISWarning is the warning ReadAll returns when the input was not
// valid UTF-8 and was decoded as Shift_JIS (CP932) instead.
const ShiftJISWarning = "not valid UTF-8; read as Shift_JIS (CP932, the default of Japanese Excel). Save the file as \"CSV UTF-8\" to be sure every character is read correctly"

// decodeLegacy decodes data that is not valid UTF-8: as CP932 when every
// byte sequence is valid CP932 and at least half of the non-ASCII
// characters it gives are Japanese (kana, kanji, full-width forms), else
// as Windows-1252. Latin-1 text almost never passes the first test: its
// accented letters are CP932 lead bytes without a valid trail byte, or
// half-width katakana, which are not counted as Japanese.
func decodeLegacy(data []byte) ([]byte, string, error) {
	if sj, err := japanese.ShiftJIS.NewDecoder().Bytes(data); err == nil && looksJapanese(sj) {
		return sj, ShiftJISWarning, nil
	}
	decoded, err := charmap.Windows1252.NewDecoder().Bytes(data)
	if err != nil {
		return nil, "", fmt.Errorf("decode csv as latin-1: %w", err)
	}
	return decoded, Latin1Warning, nil
}

// looksJapanese reports whether decoded text has no replacement character
// and at least half of its non-ASCII characters are Japanese.
func looksJapanese(text []byte) bool {
	ja, other := 0, 0
	for _, r := range string(text) {
		switch {
		case r == utf8.RuneError:
			return false
		case r < utf8.RuneSelf:
		case unicode.In(r, unicode.Hiragana, unicode.Han) ||
			(unicode.Is(unicode.Katakana, r) && (r < 0xFF61 || r > 0xFF9F)) || // not half-width
			(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF01 && r <= 0xFF5E):
			ja++
		default:
			other++
		}
	}
	return ja > 0 && ja >= other
}

// ReadAll reads a whole CSV document. The first record is the header; the
// remaining records are rows. Rows shorter than the header are padded with
// empty cells so that row[i] is safe for every header index i; longer rows are
// kept as they are. Blank lines are skipped and quotes are parsed leniently.
//
// A leading byte-order mark is removed. If the bytes are not valid UTF-8 they
// are decoded as Shift_JIS (warn is ShiftJISWarning) or Windows-1252 (warn is
// Latin1Warning) as decodeLegacy decides; otherwise warn is "".
// Every cell is passed through UnescapeCell, so files made by Writer read back
// exactly as they were written.
//
// An empty input gives a nil header, nil rows and no error.
func ReadAll(r io.Reader) (header []string, rows [][]string, warn string, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, "", fmt.Errorf("read csv: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte(BOM))
	if !utf8.Valid(data) {
		if data, warn, err = decodeLegacy(data); err != nil {
			return nil, nil, "", err
		}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	records, err := cr.ReadAll()
	if err != nil {
		return nil, nil, warn, fmt.Errorf("parse csv: %w", err)
	}
	if len(records) == 0 {
		return nil, nil, warn, nil
	}
	for _, rec := range records {
		for i, c := range rec {
			rec[i] = UnescapeCell(c)
		}
	}
	header = records[0]
	for _, rec := range records[1:] {
		if len(rec) < len(header) {
			rec = append(rec, make([]string, len(header)-len(rec))...)
		}
		rows = append(rows, rec)
	}
	return header, rows, warn, nil
}

// ReadFile is ReadAll on the named file. A missing file gives an error that
// satisfies errors.Is(err, fs.ErrNotExist).
func ReadFile(path string) (header []string, rows [][]string, warn string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	header, rows, warn, err = ReadAll(f)
	if err != nil {
		return nil, nil, warn, fmt.Errorf("%s: %w", path, err)
	}
	return header, rows, warn, nil
}

// IsFormula reports whether a spreadsheet would treat a cell holding s as a
// formula ("CSV injection"); it is the one escaping rule of this package.
//
//   - '=' always starts a formula;
//   - a TAB, CR or LF at the start is escaped too (OWASP: spreadsheets may
//     skip it and evaluate what follows, "\t=2+2");
//   - '+', '-' and '@' start a formula when formula-like text follows them
//     at once: "-2+3", "+A1", "@SUM(A1)", "-cmd|' /C calc'!A0". Ordinary
//     text is left alone: list items ("- item", "-" alone, "+ note", "@ 10
//     yen" — the sign followed by white space, unless a formula follows that,
//     or by nothing) and plain numbers
//     ("-5", "+1.5e3"), which a spreadsheet reads as the same value.
func IsFormula(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '\t', '\r', '\n':
		return true
	case '+', '-', '@':
		rest := s[1:]
		if rest == "" {
			return false
		}
		if t := strings.TrimLeft(rest, " \t\n\u3000"); t != rest {
			return IsFormula(t) // "- item" is text, "- =cmd|…" is not
		}
		if s[0] != '@' {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return false
			}
		}
		return true
	}
	return false
}

// needsEscape reports whether s is zero or more single quotes followed by a
// formula (IsFormula). Those are exactly the cells EscapeCell changes.
func needsEscape(s string) bool {
	return IsFormula(strings.TrimLeft(s, "'"))
}

// EscapeCell neutralises a cell that Excel or LibreOffice would evaluate as a
// formula (IsFormula): it gets a single quote prefixed ("=SUM(A1)" becomes
// "'=SUM(A1)", "-2+3" becomes "'-2+3"), which spreadsheets display as text.
// List text such as "- item" is not a formula and is written as it is. So
// that the escaping can always be undone, a cell that already is one or more
// quotes followed by a formula gets one more quote. Every other cell is
// returned unchanged.
func EscapeCell(s string) string {
	if needsEscape(s) {
		return "'" + s
	}
	return s
}

// UnescapeCell undoes EscapeCell: it removes one leading single quote from a
// cell made of one or more quotes followed by a formula (IsFormula).
// UnescapeCell(EscapeCell(s)) == s for every s.
func UnescapeCell(s string) string {
	if strings.HasPrefix(s, "'") && needsEscape(s) {
		return s[1:]
	}
	return s
}

// Writer writes utf-8-sig CSV: a byte-order mark before the first record,
// "\n" line endings, and cells escaped with EscapeCell. Newlines inside cells
// are kept (the cell is quoted). Call Flush when done.
//
// A file that starts with a comment line (WriteComment) has no byte-order
// mark: its first bytes are the comment itself, "#SUMMARY: …" as seed 001
// shows it, so that tools matching the first line's "#" see it. Readers of
// such a file (ReadFile, Excel's import) read it as UTF-8 either way.
type Writer struct {
	out      io.Writer
	cw       *csv.Writer
	wroteBOM bool
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{out: w, cw: csv.NewWriter(w)}
}

func (w *Writer) bom() error {
	if w.wroteBOM {
		return nil
	}
	w.wroteBOM = true
	if _, err := io.WriteString(w.out, BOM); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Write writes one record.
func (w *Writer) Write(record []string) error {
	if err := w.bom(); err != nil {
		return err
	}
	esc := make([]string, len(record))
	for i, c := range record {
		esc[i] = EscapeCell(c)
	}
	if err := w.cw.Write(esc); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// WriteComment writes one line verbatim, outside the CSV grammar — for
// summary lines such as "#SUMMARY: Total Questions: 50" that precede the
// header. Line breaks in text are replaced by spaces so the comment stays on
// one line.
func (w *Writer) WriteComment(text string) error {
	w.wroteBOM = true // a comment first: no byte-order mark (see Writer)
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	text = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(text)
	if _, err := io.WriteString(w.out, text+"\n"); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Flush writes any buffered data and reports the first write error.
func (w *Writer) Flush() error {
	if err := w.bom(); err != nil {
		return err
	}
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// WriteFile writes a table to path atomically: into a temporary file beside
// it, renamed over path once everything is written, so a failure leaves an
// existing file as it was. The folder is created if needed, and an
// existing file keeps its permissions.
func WriteFile(path string, header []string, rows [][]string) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if fi, serr := os.Stat(path); serr == nil {
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := Write(f, nil, header, rows); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteNew writes a table to a new file named as CreateTimestamped names
// it (never overwriting one) and returns its path. comments are written
// before the header (see WriteComment).
func WriteNew(dir, prefix string, now time.Time, comments []string, header []string, rows [][]string) (string, error) {
	f, path, err := CreateTimestamped(dir, prefix, ".csv", now)
	if err != nil {
		return "", err
	}
	if err := Write(f, comments, header, rows); err != nil {
		f.Close()
		return path, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return path, fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// Write writes a whole utf-8-sig table to w: comment lines (see
// WriteComment), the header, then the rows. It returns the first error.
// Every CSV shirube writes goes through it, by WriteFile, WriteNew or
// directly.
func Write(w io.Writer, comments []string, header []string, rows [][]string) error {
	cw := NewWriter(w)
	for _, c := range comments {
		if err := cw.WriteComment(c); err != nil {
			return err
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// expandAbbreviation maps a lower-case word to its canonical spelling, so
// that "question_num", "Question No" and "Question #" all mean
// "question number".
func expandAbbreviation(w string) string {
	switch w {
	case "num", "no", "nr", "nbr", "#":
		return "number"
	case "qnum", "qno":
		return "questionnumber"
	}
	return w
}

// NormalizeColumn is the key MatchColumn compares: NFKC (so full-width
// letters equal ASCII), lower case, split into words at '_', '-', spaces and
// camelCase boundaries, common abbreviations of "number" expanded, then
// joined without separators. "QuestionNumber", "question_num",
// "question number" and "Ｑｕｅｓｔｉｏｎ　Ｎｕｍｂｅｒ" all give "questionnumber".
func NormalizeColumn(s string) string {
	s = norm.NFKC.String(strings.TrimPrefix(s, BOM))
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, expandAbbreviation(strings.ToLower(string(cur))))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || unicode.IsSpace(r):
			flush()
			continue
		case r == '#':
			flush()
			cur = append(cur, r)
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return strings.Join(words, "")
}

// MatchColumn returns the index of the header cell that names the column
// want, or -1. Names are compared with NormalizeColumn, so case, '_', '-',
// spaces, camelCase and "num"/"no" abbreviations do not matter. If want is not
// found, each alias is tried in order.
func MatchColumn(header []string, want string, aliases ...string) int {
	keys := make([]string, len(header))
	for i, h := range header {
		keys[i] = NormalizeColumn(h)
	}
	for _, name := range append([]string{want}, aliases...) {
		k := NormalizeColumn(name)
		if k == "" {
			continue
		}
		for i, hk := range keys {
			if hk == k {
				return i
			}
		}
	}
	return -1
}

// TimestampLayout is the time layout CreateTimestamped puts in file names:
// YYYYMMDD_HHMMSS.
const TimestampLayout = "20060102_150405"

// maxSuffix bounds the "_2", "_3", ... attempts of CreateTimestamped.
const maxSuffix = 10000

// CreateTimestamped creates a new file dir/prefix+YYYYMMDD_HHMMSS+ext (ext
// with or without its dot; the caller includes any separator in prefix, e.g.
// "precision_scores_"). It creates dir if needed and never overwrites: if the
// name is taken it tries ..._2.ext, ..._3.ext and so on. It returns the open
// file and its path.
func CreateTimestamped(dir, prefix, ext string, now time.Time) (*os.File, string, error) {
	if ext != "" && !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("create output folder: %w", err)
	}
	base := prefix + now.Format(TimestampLayout)
	for n := 1; n <= maxSuffix; n++ {
		name := base + ext
		if n > 1 {
			name = fmt.Sprintf("%s_%d%s", base, n, ext)
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, path, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("create output file: %w", err)
		}
	}
	return nil, "", fmt.Errorf("create output file: %d files named %s* already exist in %s; move some away", maxSuffix, base, dir)
}
