package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/shirube/shirube/internal/auditlog"
)

// AuditLogger writes audit log entries somewhere (auditlog.Logger writes
// JSONL files).
type AuditLogger interface {
	Log(ctx context.Context, e auditlog.Entry) error
}

// AuditLog writes audit log entries to the audit_log table — the JSONL
// line's exact JSON in entry, with the time, session and question in
// columns for queries — and, when Also is set, to it as well.
type AuditLog struct {
	DB   *DB
	Also AuditLogger
}

// Log writes one entry. Both destinations are attempted; the first error
// is returned.
func (l AuditLog) Log(ctx context.Context, e auditlog.Entry) error {
	if e.Timestamp.IsZero() {
		e.Timestamp = time.Now()
	}
	var errAlso error
	if l.Also != nil {
		errAlso = l.Also.Log(ctx, e)
	}
	b, err := e.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	if _, err := l.DB.pool.Exec(ctx, "INSERT INTO audit_log (session_id, query, entry) VALUES ($1, $2, $3)", e.SessionID, e.Query, b); err != nil {
		return fmt.Errorf("write audit_log table: %w", err)
	}
	return errAlso
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
