// Package ocr reads the text of page images with Tesseract 5.
//
// An Engine runs the tesseract command on page images — one run per image,
// or one run for a batch of PDF pages (RecognizeBatch) — with the Japanese
// models for horizontal (jpn) and vertical (jpn_vert) writing, and keeps
// its TSV output: every recognised word with its box, line and paragraph
// (Result.Words). The text (Result.Text) is rebuilt from the boxes in
// reading order (ReadingOrder, layout.go). The caller (the document
// package) passes that text through the same page layout steps as a PDF's
// text layer, and its tables through the same table finder.
//
// Writing direction is chosen per page: the page is read as horizontal
// text first; when the mean confidence stays under VerticalRetry, it is
// read again with the vertical model and the reading with the higher mean
// confidence is kept (docs/BENCHMARKS.md, "OCR", has the figures behind
// this rule).
//
// Results are cached by the SHA-256 of the image bytes and the reading
// settings, so an unchanged page is never read twice. A missing tesseract
// is ErrNotInstalled, whose message names the packages to install.
package ocr

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/shirube/shirube/internal/proc"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Packages are the Debian packages that provide Tesseract and the models
// this package uses.
const Packages = "tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert"

// DefaultTimeout is the default Options.Timeout.
const DefaultTimeout = 60 * time.Second

// VerticalRetry is the mean confidence (0–100) under which a page read as
// horizontal text is read again with the vertical model. Measured: printed
// horizontal pages read at 65 (a table of contents full of dot leaders) to
// 95, a vertical page read as horizontal text at 14, a horizontal page read
// as vertical text at 18. Reading every page both ways, or with the
// combined jpn+jpn_vert model, costs 6–8 times as long on horizontal pages.
const VerticalRetry = 50

// Errors an Engine returns, wrapped with details.
var (
	// ErrNotInstalled: the tesseract command or a model it needs is
	// missing. Its message names the packages.
	ErrNotInstalled = errors.New("tesseract not found — OCR is off; install " + Packages + " (apt-get install -y " + Packages + ", or make deps)")
	// ErrTimeout: one page took longer than Options.Timeout.
	ErrTimeout = errors.New("OCR timed out")
)

// Options configure an Engine. The zero value is ready to use.
type Options struct {
	// Command is the tesseract program; empty means "tesseract" on PATH.
	Command string
	// Timeout bounds the reading of one page (both directions together);
	// zero means DefaultTimeout.
	Timeout time.Duration
	// CacheDir holds one small JSON file per page read; empty means no
	// cache.
	CacheDir string
	// Threads is Tesseract's OMP_THREAD_LIMIT per run; zero means 1, which
	// suits pages read in parallel (one per worker).
	Threads int
}

// Result is the text of one page image.
type Result struct {
	Text       string  `json:"-"`          // from Words: in reading order, lines; paragraphs separated by a blank line
	Words      []Word  `json:"words"`      // every word with its box, in Tesseract's order
	Confidence float64 `json:"confidence"` // mean word confidence, 0–100, weighted by characters
	Vertical   bool    `json:"vertical"`   // read with the vertical model
	Cached     bool    `json:"-"`          // came from the cache: Tesseract did not run
}

// Engine runs Tesseract. It is safe for concurrent use.
type Engine struct {
	opt  Options
	once sync.Once
	path string // resolved command
	err  error  // ErrNotInstalled when the command or a model is missing
	runs atomic.Int64
	cpu  atomic.Int64 // nanoseconds of CPU (user + system) tesseract used
}

// New returns an Engine with the given options. It does not look for
// tesseract yet; Check or the first Recognize does.
func New(opt Options) *Engine {
	if opt.Command == "" {
		opt.Command = "tesseract"
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Threads <= 0 {
		opt.Threads = 1
	}
	return &Engine{opt: opt}
}

// Check reports whether Tesseract and its jpn and jpn_vert models are
// installed: nil, or an error wrapping ErrNotInstalled.
func (e *Engine) Check(ctx context.Context) error {
	e.once.Do(func() {
		p, err := exec.LookPath(e.opt.Command)
		if err != nil {
			e.err = ErrNotInstalled
			return
		}
		e.path = p
		cmd := proc.Command(ctx, p, "--list-langs")
		out, err := cmd.Output()
		if err != nil {
			e.err = fmt.Errorf("%w (tesseract --list-langs: %v)", ErrNotInstalled, err)
			return
		}
		langs := map[string]bool{}
		for _, l := range strings.Fields(string(out)) {
			langs[l] = true
		}
		for _, need := range []string{"jpn", "jpn_vert"} {
			if !langs[need] {
				e.err = fmt.Errorf("%w (the %s model is missing)", ErrNotInstalled, need)
				return
			}
		}
	})
	return e.err
}

// Runs is the number of times the engine has started tesseract to read
// (a page read in both directions counts twice, a batch once). Tests use it to see
// that the cache works.
func (e *Engine) Runs() int64 { return e.runs.Load() }

// CPUTime is the processor time (user + system) the engine's tesseract
// runs have used: on a machine shared with other work it measures the cost
// of OCR better than the wall clock does.
func (e *Engine) CPUTime() time.Duration { return time.Duration(e.cpu.Load()) }

// Recognize reads the text of one page image (PNG, PNM, JPEG or TIFF:
// whatever Tesseract's image library reads); page is the 0-based page of a
// multi-page TIFF, 0 for other images. A page that takes longer than
// Options.Timeout is ErrTimeout; ctx's cancellation stops the tesseract
// process group at once.
func (e *Engine) Recognize(ctx context.Context, img []byte, page int) (Result, error) {
	if err := e.Check(ctx); err != nil {
		return Result{}, err
	}
	key := e.cacheKey(img, page)
	if r, ok := e.cached(key); ok {
		r.Cached = true
		return r, nil
	}
	pctx, cancel := context.WithTimeout(ctx, e.opt.Timeout)
	defer cancel()
	r, err := e.read(pctx, img, page)
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return Result{}, fmt.Errorf("%w after %v", ErrTimeout, e.opt.Timeout)
		}
		return Result{}, err
	}
	e.store(key, r)
	return r, nil
}

// read reads img as horizontal text and, when that reads poorly, as
// vertical text, keeping the better reading.
func (e *Engine) read(ctx context.Context, img []byte, page int) (Result, error) {
	h, err := e.run(ctx, img, page, "jpn")
	if err != nil {
		return Result{}, err
	}
	return e.orVertical(ctx, img, page, h)
}

// orVertical returns h, a horizontal reading of img, when it reads well,
// and otherwise the better of h and a vertical reading.
func (e *Engine) orVertical(ctx context.Context, img []byte, page int, h Result) (Result, error) {
	if h.Confidence >= VerticalRetry && h.Text != "" {
		return h, nil
	}
	v, err := e.run(ctx, img, page, "jpn_vert")
	if err != nil {
		return Result{}, err
	}
	v.Vertical = true
	v.setText()
	if v.Confidence > h.Confidence {
		return v, nil
	}
	return h, nil
}

// run is one tesseract reading of page of img (fully automatic page
// segmentation, --psm 3) from standard input, TSV on standard output.
func (e *Engine) run(ctx context.Context, img []byte, page int, lang string) (Result, error) {
	e.runs.Add(1)
	cmd := proc.Command(ctx, e.path, "stdin", "stdout", "-l", lang, "--psm", "3",
		"-c", "tessedit_page_number="+strconv.Itoa(page), "tsv")
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT="+strconv.Itoa(e.opt.Threads))
	cmd.Stdin = bytes.NewReader(img)
	out, err := e.exec(ctx, cmd)
	if err != nil {
		return Result{}, err
	}
	return ParseTSV(out)
}

// exec runs cmd, a tesseract, counting its CPU time, and returns its
// standard output.
func (e *Engine) exec(ctx context.Context, cmd *exec.Cmd) (*bytes.Buffer, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ps := cmd.ProcessState; ps != nil {
		e.cpu.Add(int64(ps.UserTime() + ps.SystemTime()))
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := firstLine(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("tesseract failed: %s", msg)
	}
	return &stdout, nil
}

// ParseTSV turns Tesseract's TSV output into a Result: its words with
// their boxes, the text in reading order (ReadingOrder) and the mean word
// confidence weighted by the words' lengths in characters. Rows that do
// not parse are skipped.
func ParseTSV(r interface{ Read([]byte) (int, error) }) (Result, error) {
	pages, err := parseTSVPages(r, false)
	if err != nil {
		return Result{}, err
	}
	return pages[0], nil
}

// parseTSVPages reads Tesseract's TSV as one Result per page_num (1, 2,
// …; a page without words is an empty Result) when byPage is set, else as
// one Result.
func parseTSVPages(r interface{ Read([]byte) (int, error) }, byPage bool) ([]Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var pages [][]Word
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 12 || f[0] == "level" {
			continue
		}
		pg := 0
		if byPage {
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 1 || n > 1<<16 {
				continue
			}
			pg = n - 1
		}
		for len(pages) <= pg {
			pages = append(pages, nil)
		}
		if f[0] != "5" {
			continue
		}
		text := strings.TrimSpace(f[11])
		if text == "" {
			continue
		}
		var n [8]int
		ok := true
		for i, k := range []int{2, 3, 4, 6, 7, 8, 9} {
			v, err := strconv.Atoi(f[k])
			ok = ok && err == nil
			n[i] = v
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		if !ok || err != nil || n[5] < 0 || n[6] < 0 {
			continue
		}
		pages[pg] = append(pages[pg], Word{Text: strings.ToValidUTF8(text, ""), Block: n[0], Par: n[1], Line: n[2],
			X0: n[3], Y0: n[4], X1: n[3] + n[5], Y1: n[4] + n[6], Conf: conf})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading tesseract output: %w", err)
	}
	if len(pages) == 0 {
		pages = append(pages, nil)
	}
	out := make([]Result, len(pages))
	for i, ws := range pages {
		out[i] = resultOf(ws)
	}
	return out, nil
}

// resultOf is the Result of one page's words.
func resultOf(words []Word) Result {
	var confSum, c float64
	for _, w := range words {
		if w.Conf >= 0 {
			k := float64(utf8.RuneCountInString(w.Text))
			confSum += w.Conf * k
			c += k
		}
	}
	res := Result{Words: words}
	res.setText()
	if c > 0 {
		res.Confidence = confSum / c
	}
	return res
}

// setText sets r.Text from r.Words: a horizontal page in ReadingOrder, a
// vertical one in Tesseract's order (columns right to left, each top to
// bottom), its lines cleaned as ReadingOrder's are (cleanLine).
func (r *Result) setText() {
	if r.Vertical {
		ls := strings.Split(TesseractOrder(r.Words), "\n")
		for i, l := range ls {
			ls[i] = cleanLine(l)
		}
		r.Text = strings.Join(ls, "\n")
	} else {
		r.Text = ReadingOrder(r.Words)
	}
}

// TesseractOrder is the text of words in Tesseract's own order: the words
// of a line joined, one line per line, a blank line between paragraphs
// — the text the first OCR benchmark measured.
// (A vertical page keeps it: ReadingOrder is for horizontal lines.)
func TesseractOrder(words []Word) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			p := words[i-1]
			switch {
			case p.Block != w.Block || p.Par != w.Par:
				b.WriteString("\n\n")
			case p.Line != w.Line:
				b.WriteString("\n")
			case spaced(p.Text, w.Text):
				b.WriteString(" ")
			}
		}
		b.WriteString(w.Text)
	}
	return b.String()
}

// spaced reports whether a space belongs between two words of a line:
// only between Latin letters or digits on both sides.
func spaced(prev, next string) bool {
	a, _ := utf8.DecodeLastRuneInString(prev)
	z, _ := utf8.DecodeRuneInString(next)
	latin := func(r rune) bool { return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }
	return latin(a) && latin(z)
}

// cacheVersion changes whenever what a cached result means changes (the
// reading rule, the languages, the text layout), so old entries are not
// used.
const cacheVersion = "2"

// cacheKey names img's cached result: the image bytes and the reading
// settings hashed together.
func (e *Engine) cacheKey(img []byte, page int) string {
	h := sha256.New()
	fmt.Fprintf(h, "shirube-ocr %s jpn/jpn_vert psm3 retry<%d page %d\n", cacheVersion, VerticalRetry, page)
	h.Write(img)
	return hex.EncodeToString(h.Sum(nil))
}

func (e *Engine) cachePath(key string) string {
	return filepath.Join(e.opt.CacheDir, key[:2], key+".json")
}

// cached returns the stored result for key, if any.
func (e *Engine) cached(key string) (Result, bool) {
	if e.opt.CacheDir == "" {
		return Result{}, false
	}
	data, err := os.ReadFile(e.cachePath(key))
	if err != nil {
		return Result{}, false
	}
	var r Result
	if json.Unmarshal(data, &r) != nil {
		return Result{}, false
	}
	r.setText()
	return r, true
}

// store writes r under key (temporary file + rename, so a reader never
// sees half a file). A cache that cannot be written only costs time.
func (e *Engine) store(key string, r Result) {
	if e.opt.CacheDir == "" {
		return
	}
	p := e.cachePath(key)
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	data, err := json.Marshal(r)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
