package auditlog

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is a log file on a disk that fills up: while full, a write
// stores only the first half of its bytes and fails with ENOSPC, as
// write(2) does when the space runs out part-way; truncating can be made
// to fail too.
type fullDisk struct {
	*os.File
	full         *bool
	truncateFail bool
}

func (f fullDisk) Write(p []byte) (int, error) {
	if !*f.full {
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:len(p)/2])
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

func (f fullDisk) Truncate(size int64) error {
	if f.truncateFail {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: syscall.EIO}
	}
	return f.File.Truncate(size)
}

func entryN(n string) Entry {
	e := seedEntry()
	e.Query = "質問 " + n
	return e
}

// TestFullDisk: an entry that does not fit is not written at all (no half
// line that would swallow the next entry), Log reports the error, and the
// entries before and after it are intact.
func TestFullDisk(t *testing.T) {
	for _, truncateFail := range []bool{false, true} {
		name := "truncate works"
		if truncateFail {
			name = "truncate fails too; repaired on the next open"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			full := false
			var warned []string
			l := Open(dir, Options{
				Warn: func(m string) { warned = append(warned, m) },
				OpenFile: func(path string) (File, error) {
					f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
					if err != nil {
						return nil, err
					}
					return fullDisk{File: f, full: &full, truncateFail: truncateFail && full}, nil
				},
			})
			ctx := context.Background()
			if err := l.Log(ctx, entryN("1")); err != nil {
				t.Fatal(err)
			}
			full = true
			err := l.Log(ctx, entryN("2"))
			if !errors.Is(err, syscall.ENOSPC) || len(warned) != 1 || !strings.Contains(warned[0], "disk space") {
				t.Fatalf("full disk: err = %v, warnings %q; want ENOSPC reported", err, warned)
			}
			full = false
			if err := l.Log(ctx, entryN("3")); err != nil {
				t.Fatal(err)
			}
			es, err := ReadAll(ctx, dir)
			if err != nil {
				t.Fatalf("log damaged: %v", err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Query)
			}
			if strings.Join(got, ",") != "質問 1,質問 3" {
				t.Errorf("entries %q, want 質問 1 and 質問 3", got)
			}
		})
	}
}

// TestTornTailRepairedOnOpen: a file whose last line was cut short by an
// earlier crash or full disk is repaired before the next entry is
// appended, so that entry is not glued onto the fragment.
func TestTornTailRepairedOnOpen(t *testing.T) {
	dir := t.TempDir()
	l := Open(dir, Options{})
	e := entryN("1")
	line, err := encodeLine(e)
	if err != nil {
		t.Fatal(err)
	}
	path := l.Path(e.Timestamp)
	if err := os.WriteFile(path, append(line, line[:40]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(context.Background(), entryN("2")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != 2 || !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("file has %d lines:\n%s", n, data)
	}
	es, err := ReadAll(context.Background(), dir)
	if err != nil || len(es) != 2 || es[1].Query != "質問 2" {
		t.Errorf("ReadAll = %d entries, %v", len(es), err)
	}
}

// TestOutcomeFields: the fields added after the §6.1 ones round-trip and
// are left out when empty, so an ordinary answer's line is exactly §6.1
// plus the evidence score and threshold and outcome.
func TestOutcomeFields(t *testing.T) {
	e := seedEntry()
	e.Outcome, e.LLMUnavailable, e.LLMError, e.Incomplete, e.Error = OutcomeLLMUnavailable, true, "timeout", true, "x"
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `"flags":{"insufficient_evidence":false,"dangerous_operation":false,"ambiguous_query":false},"evidence_score":0.62,"evidence_threshold":0.5,"outcome":"llm_unavailable","incomplete":true,"llm_unavailable":true,"llm_error":"timeout","error":"x"}`
	if !strings.HasSuffix(string(b), want) {
		t.Errorf("line ends %s\nwant ...%s", b[max(0, len(b)-len(want)-20):], want)
	}
	var back Entry
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	back.Timestamp = e.Timestamp
	if back.Outcome != e.Outcome || !back.LLMUnavailable || back.LLMError != "timeout" || !back.Incomplete || back.Error != "x" {
		t.Errorf("round trip = %+v", back)
	}
	plain, _ := seedEntry().MarshalJSON()
	if strings.Contains(string(plain), "outcome") || strings.Contains(string(plain), "llm_") {
		t.Errorf("empty added fields written: %s", plain)
	}
}
