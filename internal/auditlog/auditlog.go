// Package auditlog writes the query audit log of seed 002 §6: one JSON
// object per answered question, appended to logs/query_YYYY-MM-DD.jsonl.
//
// Writing the log must never break answering: Log returns its error and
// also reports it through Options.Warn, and callers treat it as a warning.
package auditlog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultDir is the log directory when Open is given "" (seed 002 LOGS_FOLDER).
const DefaultDir = "logs"

// TimestampLayout is the timestamp format of seed 002 §6.1: local wall
// clock with microseconds and no zone, e.g. "2024-12-29T13:14:15.123456".
const TimestampLayout = "2006-01-02T15:04:05.000000"

// SearchResult is one retrieved chunk as logged.
type SearchResult struct {
	ChunkID     string  `json:"chunk_id"`
	Score       float64 `json:"score"`
	BM25Score   float64 `json:"bm25_score"`
	VectorScore float64 `json:"vector_score"`
	File        string  `json:"file"`
	Heading     string  `json:"heading"`
	Excerpt     string  `json:"excerpt"` // see Excerpt
	// EvidenceScore is the chunk's absolute evidence for the question
	// (retrieve.Result.EvidenceScore). Score is relative — the best hit of
	// every search scores 1, a refused question's too — so only this one
	// says how well the chunk supports an answer.
	EvidenceScore float64 `json:"evidence_score"`
}

// TokenUsage counts the tokens of the answer's model calls.
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// SearchConfig is the search settings the answer was made with.
type SearchConfig struct {
	K            int     `json:"k"`
	BM25Weight   float64 `json:"bm25_weight"`
	VectorWeight float64 `json:"vector_weight"`
}

// Flags are the guardrail outcomes of the question.
type Flags struct {
	InsufficientEvidence bool `json:"insufficient_evidence"`
	DangerousOperation   bool `json:"dangerous_operation"`
	AmbiguousQuery       bool `json:"ambiguous_query"`
}

// How a question ended, the Entry.Outcome values.
const (
	OutcomeAnswered       = "answered"        // an answer or a guardrail template
	OutcomeIncomplete     = "incomplete"      // the model's answer was cut off; the partial answer is logged
	OutcomeLLMUnavailable = "llm_unavailable" // the model failed after its retries; answered extractively
	OutcomeTimeout        = "timeout"         // the answer's time limit ran out (the server's 504)
	OutcomeCancelled      = "cancelled"       // the client went away (a closed tab, a dropped stream)
	OutcomeError          = "error"           // anything else failed (search, generation)
)

// Entry is one line of the log. Its JSON has exactly the fields of seed 002
// §6.1, in that order (each search result with its evidence_score added),
// followed by the question's evidence_score and the threshold it was
// gated with, then optional fields that are left out when empty: the
// rewritten follow-up, the generator, and how the question ended (outcome,
// incomplete, llm_unavailable, llm_error, error).
type Entry struct {
	// Timestamp is when the question was answered; the zero time means
	// "now". It is written in its own location's wall clock (time.Now() is
	// local, as in the seed) and also picks the day's file.
	Timestamp         time.Time
	SessionID         string
	Query             string
	SearchResults     []SearchResult // nil is written as []
	Answer            string
	ProcessingTimeSec float64
	TokenUsage        TokenUsage
	CostUSD           float64
	SearchConfig      SearchConfig
	Flags             Flags
	// EvidenceScore is the best evidence score of the logged results: what
	// the insufficient-evidence gate compared with EvidenceThreshold (on
	// the agentic path the gate scores the strategy's results again, so it
	// can differ slightly). Both are added fields, written right after the
	// §6.1 fields when something was searched and left out otherwise.
	EvidenceScore     float64
	EvidenceThreshold float64
	// RewrittenQuery is the self-contained query a follow-up question was
	// rewritten to, if any.
	RewrittenQuery string
	// Generator names what produced the answer (for example the model id,
	// or "template" for a guardrail answer), if recorded.
	Generator string
	// Outcome is how the question ended, one of the Outcome… constants;
	// "" in lines written before it existed.
	Outcome string
	// Incomplete marks an answer whose model stream was cut off.
	Incomplete bool
	// LLMUnavailable marks an answer made extractively because the model
	// failed after its retries; LLMError says why (llm.Reason: kind,
	// HTTP status, attempts).
	LLMUnavailable bool
	LLMError       string
	// Error is what failed when Outcome is timeout, cancelled or error.
	Error string
	// Trace is how the agentic retrieval searched (seed 003: profile,
	// route, facets, searches per round, budget used, stop reason), as
	// JSON; nil for the plain search path. It is an added field: the §6.1
	// fields are unchanged.
	Trace json.RawMessage
}

// wireEntry fixes the JSON field names and order.
type wireEntry struct {
	Timestamp         string          `json:"timestamp"`
	SessionID         string          `json:"session_id"`
	Query             string          `json:"query"`
	SearchResults     []SearchResult  `json:"search_results"`
	Answer            string          `json:"answer"`
	ProcessingTimeSec float64         `json:"processing_time_sec"`
	TokenUsage        TokenUsage      `json:"token_usage"`
	CostUSD           float64         `json:"cost_usd"`
	SearchConfig      SearchConfig    `json:"search_config"`
	Flags             Flags           `json:"flags"`
	EvidenceScore     *float64        `json:"evidence_score,omitempty"`
	EvidenceThreshold float64         `json:"evidence_threshold,omitempty"`
	RewrittenQuery    string          `json:"rewritten_query,omitempty"`
	Generator         string          `json:"generator,omitempty"`
	Outcome           string          `json:"outcome,omitempty"`
	Incomplete        bool            `json:"incomplete,omitempty"`
	LLMUnavailable    bool            `json:"llm_unavailable,omitempty"`
	LLMError          string          `json:"llm_error,omitempty"`
	Error             string          `json:"error,omitempty"`
	Trace             json.RawMessage `json:"trace,omitempty"`
}

// MarshalJSON writes e in the §6.1 schema.
func (e Entry) MarshalJSON() ([]byte, error) {
	w := wireEntry{
		Timestamp:         e.Timestamp.Format(TimestampLayout),
		SessionID:         e.SessionID,
		Query:             e.Query,
		SearchResults:     e.SearchResults,
		Answer:            e.Answer,
		ProcessingTimeSec: e.ProcessingTimeSec,
		TokenUsage:        e.TokenUsage,
		CostUSD:           e.CostUSD,
		SearchConfig:      e.SearchConfig,
		Flags:             e.Flags,
		EvidenceThreshold: e.EvidenceThreshold,
		RewrittenQuery:    e.RewrittenQuery,
		Generator:         e.Generator,
		Outcome:           e.Outcome,
		Incomplete:        e.Incomplete,
		LLMUnavailable:    e.LLMUnavailable,
		LLMError:          e.LLMError,
		Error:             e.Error,
		Trace:             e.Trace,
	}
	if w.SearchResults == nil {
		w.SearchResults = []SearchResult{}
	}
	if len(e.SearchResults) > 0 || e.EvidenceThreshold > 0 {
		w.EvidenceScore = &e.EvidenceScore
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<", ">" and "&" readable in answers
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// UnmarshalJSON reads a line written by MarshalJSON. The timestamp is read
// in the local time zone.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var w wireEntry
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	ts, err := time.ParseInLocation(TimestampLayout, w.Timestamp, time.Local)
	if err != nil {
		return fmt.Errorf("audit log timestamp %q: %w", w.Timestamp, err)
	}
	*e = Entry{
		Timestamp: ts, SessionID: w.SessionID, Query: w.Query, SearchResults: w.SearchResults,
		Answer: w.Answer, ProcessingTimeSec: w.ProcessingTimeSec, TokenUsage: w.TokenUsage,
		CostUSD: w.CostUSD, SearchConfig: w.SearchConfig, Flags: w.Flags,
		EvidenceThreshold: w.EvidenceThreshold,
		RewrittenQuery:    w.RewrittenQuery, Generator: w.Generator,
		Outcome: w.Outcome, Incomplete: w.Incomplete, LLMUnavailable: w.LLMUnavailable,
		LLMError: w.LLMError, Error: w.Error, Trace: w.Trace,
	}
	if w.EvidenceScore != nil {
		e.EvidenceScore = *w.EvidenceScore
	}
	return nil
}

// Options tune a Logger. The zero value is ready to use.
type Options struct {
	// Warn receives a one-line message when a line could not be written;
	// nil means no report (Log still returns the error).
	Warn func(msg string)
	// Now stamps entries with a zero Timestamp; nil means time.Now.
	Now func() time.Time
	// OpenFile opens a day's file for appending; nil means OpenAppend.
	// Tests inject faults (a full disk) through it.
	OpenFile func(path string) (File, error)
}

// File is what the Logger needs of an open log file (*os.File has it).
type File interface {
	io.Writer
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	Close() error
}

// OpenAppend opens path for appending (and reading back its tail),
// creating it when needed.
func OpenAppend(path string) (File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
}

// Logger appends entries to daily JSONL files in one directory. It is
// safe for concurrent use. Each line is written with a single write(2) on
// a file opened with O_APPEND, under a mutex and an exclusive flock:
// goroutines never interleave, and neither do separate processes
// appending to the same file. A line is written whole or not at all (see
// appendLine), so a full disk loses only the entry that did not fit.
type Logger struct {
	dir string
	opt Options
	mu  sync.Mutex
}

// Open returns a Logger writing under dir ("" means DefaultDir). Nothing
// is created until the first Log.
func Open(dir string, opt Options) *Logger {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.OpenFile == nil {
		opt.OpenFile = OpenAppend
	}
	return &Logger{dir: cmp.Or(dir, DefaultDir), opt: opt}
}

// Dir returns the log directory.
func (l *Logger) Dir() string { return l.dir }

// Path returns the file that entries stamped t go to:
// <dir>/query_YYYY-MM-DD.jsonl, the date taken from t's wall clock.
func (l *Logger) Path(t time.Time) string {
	return filepath.Join(l.dir, "query_"+t.Format("2006-01-02")+".jsonl")
}

// Log appends e as one line to the file of its day, creating the
// directory and file when needed. On failure it reports a warning through
// Options.Warn and returns the error; the caller should carry on.
func (l *Logger) Log(ctx context.Context, e Entry) error {
	if err := ctx.Err(); err != nil {
		return l.fail(fmt.Errorf("audit log: not written: %w", err))
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = l.opt.Now()
	}
	line, err := encodeLine(e)
	if err != nil {
		return l.fail(fmt.Errorf("audit log: encoding the entry for %q: %w", e.Query, err))
	}
	path := l.Path(e.Timestamp)

	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return l.fail(fmt.Errorf("audit log: creating directory %s: %w — check that it is writable or choose another log directory", l.dir, err))
	}
	f, err := l.opt.OpenFile(path)
	if err != nil {
		return l.fail(fmt.Errorf("audit log: opening %s: %w — check that the log directory is writable", path, err))
	}
	unlock := LockFile(f)
	werr := appendLine(f, line)
	unlock()
	cerr := f.Close()
	switch {
	case werr != nil:
		return l.fail(fmt.Errorf("audit log: writing %s: %w — check free disk space and permissions", path, werr))
	case cerr != nil:
		return l.fail(fmt.Errorf("audit log: closing %s: %w — check free disk space", path, cerr))
	}
	return nil
}

// appendLine writes line whole or not at all: first a torn tail — a last
// line without its newline, left by a write that failed part-way — is cut
// off, then line goes out in one write, and when that fails the file is
// truncated back to its previous size so no half line stays behind to
// swallow the next entry.
func appendLine(f File, line []byte) error {
	size, err := repairTail(f)
	if err != nil {
		return err
	}
	n, werr := f.Write(line)
	if werr == nil && n != len(line) {
		werr = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if werr != nil {
		if terr := f.Truncate(size); terr != nil {
			return fmt.Errorf("%w; removing the partial line also failed: %v", werr, terr)
		}
		return werr
	}
	return nil
}

// tailWindow is how far back repairTail looks for the last newline.
const tailWindow = 1 << 20

// repairTail cuts a torn last line off f and returns the resulting size.
func repairTail(f File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size == 0 {
		return 0, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return 0, fmt.Errorf("reading the end of the file: %w", err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	from := max(0, size-tailWindow)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return 0, fmt.Errorf("reading the end of the file: %w", err)
	}
	keep := from + int64(bytes.LastIndexByte(buf, '\n')+1)
	if keep == from && from > 0 {
		keep = size // a line longer than the window: leave it to Read to skip
	}
	if keep == size {
		return size, nil
	}
	if err := f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("removing a torn last line: %w", err)
	}
	return keep, nil
}

// encodeLine returns e as one JSON line ending in "\n", with "<", ">" and
// "&" left unescaped so answers stay readable.
func encodeLine(e Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fail reports err as a warning and returns it.
func (l *Logger) fail(err error) error {
	if l.opt.Warn != nil {
		l.opt.Warn(err.Error() + " (the answer is not affected)")
	}
	return err
}

// DefaultExcerptRunes is the excerpt length of seed 002 §4.5 (最大200文字).
const DefaultExcerptRunes = 200

// Excerpt returns text as a one-line preview of at most limit characters
// (runes; limit <= 0 means DefaultExcerptRunes): runs of white space become
// one space, and when text is longer it is cut on a character boundary and
// "..." is appended.
func Excerpt(text string, limit int) string {
	if limit <= 0 {
		limit = DefaultExcerptRunes
	}
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	i, n := 0, 0
	for i = range text {
		if n == limit {
			break
		}
		n++
	}
	return strings.TrimRight(text[:i], " ") + "..."
}

// Read calls fn with every entry of the daily files in dir
// (query_YYYY-MM-DD.jsonl, oldest day first, lines in file order). A line
// that is not an entry is skipped and counted in skipped; a missing
// directory has no entries. An error from fn stops the reading.
func Read(ctx context.Context, dir string, fn func(Entry) error) (skipped int, err error) {
	files, err := filepath.Glob(filepath.Join(cmp.Or(dir, DefaultDir), "query_*.jsonl"))
	if err != nil {
		return 0, err
	}
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return skipped, fmt.Errorf("audit log: %w", err)
		}
		for line := range bytes.Lines(data) {
			if err := ctx.Err(); err != nil {
				return skipped, err
			}
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var e Entry
			if json.Unmarshal(line, &e) != nil {
				skipped++
				continue
			}
			if err := fn(e); err != nil {
				return skipped, err
			}
		}
	}
	return skipped, nil
}

// ReadAll returns every entry of the daily files in dir (see Read). A line
// that is not an entry is an error here, naming how many there were.
func ReadAll(ctx context.Context, dir string) ([]Entry, error) {
	var out []Entry
	skipped, err := Read(ctx, dir, func(e Entry) error { out = append(out, e); return nil })
	if err == nil && skipped > 0 {
		err = fmt.Errorf("audit log %s: %d lines are not entries", cmp.Or(dir, DefaultDir), skipped)
	}
	return out, err
}
