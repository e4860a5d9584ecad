// Package checkpoint is the progress journal of a long evaluation run (the
// batch answers of a question CSV, the judge's verdicts): one JSON line per
// finished piece of work, appended the moment it is done, so that an
// interrupted run resumes without asking or judging anything twice.
//
// The journal is append-only. A crash can only cut the last line short;
// Read hands every line to the caller, who rejects what it cannot use (a
// torn line, a line about input that has since changed), and counts the
// rejected ones so the run can say how many pieces it will redo. Several
// goroutines may Append to one Journal.
package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// maxLine bounds one line of a journal (a finished row with its answer).
const maxLine = 64 << 20

// Journal appends lines to a checkpoint file.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Open opens the journal at path for appending, creating it if needed. A
// journal whose last line was cut short by a crash is first ended with a
// line break, so the torn line stays one line that Read skips and the next
// Append starts a line of its own.
func Open(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open checkpoint %s: %w", path, err)
	}
	return &Journal{f: f, path: path}, nil
}

// endLine writes a line break after a torn last line.
func endLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Append writes v as one JSON line. The line is written with one write
// call, so concurrent appends never interleave.
func (j *Journal) Append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write checkpoint %s: %w", j.path, err)
	}
	return nil
}

// Close closes the journal's file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.f.Close(); err != nil {
		return fmt.Errorf("close checkpoint %s: %w", j.path, err)
	}
	return nil
}

// Read calls use for every non-blank line of the journal at path, in
// order, without its line end; use returns false for a line it cannot use.
// skipped counts those lines. A missing journal is no error: there is no
// progress to resume.
func Read(path string, use func(line []byte) bool) (skipped int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open checkpoint: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !use(line) {
			skipped++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return skipped, nil
}

// Remove deletes the journal at path; a missing one is no error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
