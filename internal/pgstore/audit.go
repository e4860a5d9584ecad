package pgstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/auditlog"
)

// AuditLogger writes audit log entries somewhere (auditlog.Logger writes
// JSONL files).
type AuditLogger interface {
	Log(ctx context.Context, e auditlog.Entry) error
}

// Defaults of AuditOptions.
const (
	DefaultAuditRetry   = 2 * time.Second
	DefaultAuditTimeout = 5 * time.Second
	maxAuditRetry       = 30 * time.Second
)

// AuditOptions configure NewAuditLog. The zero value writes to the table
// only and returns its errors.
type AuditOptions struct {
	// Also receives every entry as well (the JSONL files with --audit both).
	Also AuditLogger
	// Spool is the file that keeps the entries PostgreSQL could not take
	// (unreachable, restarting, timing out) until it takes them again; ""
	// means no spool: such an entry is lost to the table and Log returns
	// the error.
	Spool string
	// Warn is told once when entries start going to the spool and once when
	// they have been written; nil means no report.
	Warn func(string)
	// Retry is the first wait before the spool is offered to PostgreSQL
	// again (DefaultAuditRetry when 0); each failure doubles it, up to 30 s.
	Retry time.Duration
	// Timeout bounds each write to the table (DefaultAuditTimeout when 0),
	// so that a database that stopped answering delays an answer's log
	// line by at most this once: the entries after it go to the spool.
	Timeout time.Duration
}

// AuditLog writes audit log entries to the audit_log table — the JSONL
// line's exact JSON in entry, with the time, session and question in
// columns for queries — and, when AuditOptions.Also is set, there too.
//
// When PostgreSQL cannot take an entry, the entry goes to the spool file,
// and so does every later one until the spool has been written to the
// table: a goroutine offers it again and again (AuditOptions.Retry), and a
// new AuditLog finds a spool left by a process that stopped first. No
// entry is lost, they reach the table in the order they were logged, and
// none is stored twice: each row carries a random key (entry_key, unique),
// and a spooled entry whose insert may or may not have committed is
// inserted again with ON CONFLICT DO NOTHING.
//
// It is safe for concurrent use, and several processes may share a spool
// (appends and its emptying are under an flock).
type AuditLog struct {
	db  *DB
	opt AuditOptions

	mu       sync.Mutex // spooling, flushing, warned and the spool file
	spooling bool       // entries go to the spool until it is empty
	flushing bool       // the retry goroutine runs
	flushMu  sync.Mutex // one Flush at a time

	ctx    context.Context // ends the retry goroutine (Close)
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewAuditLog returns the table's audit log. When the spool holds entries
// (a previous process could not write them), they are offered to the
// table at once, in the background. Close stops the retries.
func NewAuditLog(db *DB, opt AuditOptions) *AuditLog {
	if opt.Retry <= 0 {
		opt.Retry = DefaultAuditRetry
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultAuditTimeout
	}
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	l := &AuditLog{db: db, opt: opt}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if opt.Spool != "" {
		if st, err := os.Stat(opt.Spool); err == nil && st.Size() > 0 {
			l.mu.Lock()
			l.spooling = true
			l.startRetry(0)
			l.mu.Unlock()
		}
	}
	return l
}

// Close stops offering the spool to the table; what it holds stays for the
// next process.
func (l *AuditLog) Close() {
	l.cancel()
	l.wg.Wait()
}

// spooled is one line of the spool.
type spooled struct {
	Key   string          `json:"key"`
	At    time.Time       `json:"at"`
	Entry json.RawMessage `json:"entry"`
}

// Log writes one entry. The Also log and the table are both attempted; an
// entry the table cannot take goes to the spool (see AuditLog), and only
// when that fails too is it lost to the table and an error returned. The
// first error is returned.
func (l *AuditLog) Log(ctx context.Context, e auditlog.Entry) error {
	if e.Timestamp.IsZero() {
		e.Timestamp = time.Now()
	}
	var errAlso error
	if l.opt.Also != nil {
		errAlso = l.opt.Also.Log(ctx, e)
	}
	b, err := e.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	rec := spooled{Key: newKey(), At: e.Timestamp, Entry: b}
	l.mu.Lock()
	spooling := l.spooling
	l.mu.Unlock()
	if !spooling {
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opt.Timeout)
		err := l.insert(ictx, []spooled{rec})
		cancel()
		if err == nil {
			return errAlso
		}
		if l.opt.Spool == "" {
			return fmt.Errorf("write audit_log table: %w", err)
		}
		if err := l.spool(rec, err); err != nil {
			return err
		}
		return errAlso
	}
	if err := l.spool(rec, nil); err != nil {
		return err
	}
	return errAlso
}

// insert writes recs in one statement, in their order, skipping keys the
// table already has.
func (l *AuditLog) insert(ctx context.Context, recs []spooled) error {
	keys := make([]string, len(recs))
	at := make([]time.Time, len(recs))
	entries := make([]string, len(recs))
	for i, r := range recs {
		keys[i], at[i], entries[i] = r.Key, r.At, string(r.Entry)
	}
	_, err := l.db.pool.Exec(ctx, `INSERT INTO audit_log (entry_key, logged_at, session_id, query, entry)
SELECT k, t, e::jsonb->>'session_id', e::jsonb->>'query', e::jsonb
FROM unnest($1::text[], $2::timestamptz[], $3::text[]) WITH ORDINALITY AS r(k, t, e, n)
ORDER BY n
ON CONFLICT (entry_key) DO NOTHING`, keys, at, entries)
	return err
}

// spool appends rec to the spool file and makes sure the retry goroutine
// runs. why is the table's error when this entry is the first to be
// spooled.
func (l *AuditLog) spool(rec spooled, why error) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(l.opt.Spool), 0o755); err != nil {
		return fmt.Errorf("write audit_log table: %v; keeping the entry in the spool also failed: %w", why, err)
	}
	f, err := os.OpenFile(l.opt.Spool, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("write audit_log table: %v; keeping the entry in the spool also failed: %w", why, err)
	}
	unlock := auditlog.LockFile(f)
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		// A torn last line (an append cut off by a kill) is ended first,
		// so that it does not swallow this entry.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, werr := f.Write(line)
	unlock()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write audit_log table: %v; keeping the entry in the spool %s also failed: %w — check free disk space", why, l.opt.Spool, werr)
	}
	if !l.spooling {
		l.spooling = true
		l.opt.Warn(fmt.Sprintf("audit log: PostgreSQL did not take an entry (%v); entries are kept in %s and written to the audit_log table when it answers again (the answers are not affected)", why, l.opt.Spool))
	}
	l.startRetry(l.opt.Retry)
	return nil
}

// startRetry starts the retry goroutine unless it runs; l.mu is held.
func (l *AuditLog) startRetry(first time.Duration) {
	if l.flushing || l.ctx.Err() != nil {
		return
	}
	l.flushing = true
	l.wg.Add(1)
	go l.retry(first)
}

// retry offers the spool to the table until it is empty or Close is
// called, waiting longer after each failure.
func (l *AuditLog) retry(wait time.Duration) {
	defer l.wg.Done()
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			l.mu.Lock()
			l.flushing = false
			l.mu.Unlock()
			return
		case <-t.C:
		}
		n, err := l.Flush(l.ctx)
		l.mu.Lock()
		if err == nil && !l.spooling {
			l.flushing = false
			l.mu.Unlock()
			if n > 0 {
				l.opt.Warn(fmt.Sprintf("audit log: PostgreSQL answers again; the %d spooled entries are in the audit_log table", n))
			}
			return
		}
		l.mu.Unlock()
		if err != nil {
			wait = min(max(2*wait, l.opt.Retry), maxAuditRetry)
		}
		t.Reset(wait)
	}
}

// Flush writes the spooled entries to the table and empties the spool; it
// returns how many entries it wrote (keys the table already had
// included). Entries logged meanwhile go to the spool and are written
// too: the last ones under the spool's lock, so that Log writes to the
// table again only once the spool is empty and the order is kept.
func (l *AuditLog) Flush(ctx context.Context) (int, error) {
	if l.opt.Spool == "" {
		return 0, nil
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	// What the spool holds now is written without holding the lock, so
	// that answers logged meanwhile are not held up.
	recs, size, err := l.readSpool()
	if err != nil {
		return 0, err
	}
	if len(recs) > 0 {
		if err := l.insertTimed(ctx, recs); err != nil {
			return 0, err
		}
	}
	// The entries appended since are written under the lock, then the
	// spool is emptied.
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.opt.Spool, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		l.spooling = false
		return len(recs), nil
	}
	if err != nil {
		return 0, fmt.Errorf("audit log spool: %w", err)
	}
	defer f.Close()
	unlock := auditlog.LockFile(f)
	defer unlock()
	if st, err := f.Stat(); err != nil || st.Size() < size {
		size = 0 // emptied and refilled by another process: read it all
	}
	rest, err := readRecords(io.NewSectionReader(f, size, 1<<62))
	if err != nil {
		return 0, err
	}
	if len(rest) > 0 {
		if err := l.insertTimed(ctx, rest); err != nil {
			return 0, err
		}
	}
	if err := f.Truncate(0); err != nil {
		return 0, fmt.Errorf("audit log spool: emptying %s: %w", l.opt.Spool, err)
	}
	l.spooling = false
	return len(recs) + len(rest), nil
}

// insertTimed is insert bounded by the write timeout (plus a millisecond
// an entry).
func (l *AuditLog) insertTimed(ctx context.Context, recs []spooled) error {
	ctx, cancel := context.WithTimeout(ctx, l.opt.Timeout+time.Duration(len(recs))*time.Millisecond)
	defer cancel()
	if err := l.insert(ctx, recs); err != nil {
		return fmt.Errorf("write %d spooled audit entries: %w", len(recs), err)
	}
	return nil
}

// readSpool reads the spool's entries under its lock and returns them with
// the size it read.
func (l *AuditLog) readSpool() ([]spooled, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.opt.Spool)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("audit log spool: %w", err)
	}
	defer f.Close()
	unlock := auditlog.LockFile(f)
	defer unlock()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("audit log spool: %w", err)
	}
	// A torn last line (an append cut off by a kill) is left for the
	// final read, which skips it.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	recs, err := readRecords(bytes.NewReader(data))
	return recs, int64(len(data)), err
}

// readRecords reads a spool's lines. A torn last line (a process killed
// mid-append) is skipped.
func readRecords(r io.Reader) ([]spooled, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("audit log spool: %w", err)
	}
	var out []spooled
	for line := range bytes.Lines(data) {
		var s spooled
		if json.Unmarshal(line, &s) != nil || s.Key == "" || len(s.Entry) == 0 {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// newKey is a random 128-bit key in hex.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// AuditEntries returns the table's entries, oldest first (for tests and
// `shirube status`).
func (db *DB) AuditEntries(ctx context.Context) ([]auditlog.Entry, error) {
	rows, err := db.pool.Query(ctx, "SELECT entry FROM audit_log ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auditlog.Entry
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		var e auditlog.Entry
		if err := e.UnmarshalJSON(b); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
