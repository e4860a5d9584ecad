// Package feedback keeps the 👍/👎 that people give answers, each with the
// question's audit data (who, when, question, answer, evidence), in one
// JSONL file, and turns the 👎 into cases of the evaluation dataset
// (internal/eval/evalset) so that a team's complaints become its
// regression tests.
package feedback

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/eval/evalset"
	"github.com/shirube/shirube/internal/guard"
)

// FileName is the feedback file's name in the log folder.
const FileName = "feedback.jsonl"

// Ratings.
const (
	Up   = "up"
	Down = "down"
)

// MaxCommentRunes is the longest comment kept.
const MaxCommentRunes = 1000

// Evidence is one cited source of the rated answer.
type Evidence struct {
	N       int    `json:"n"`
	ChunkID string `json:"chunk_id,omitempty"`
	Title   string `json:"title,omitempty"`
	File    string `json:"file"` // page identity: database/<folder>/<doc>/page_NNN.md
	Page    int    `json:"page"`
	Heading string `json:"heading,omitempty"`
	Excerpt string `json:"excerpt,omitempty"`
}

// Turn is one earlier message of the conversation the question was asked in.
type Turn struct {
	Role    string `json:"role"` // "user" or "assistant"
	Content string `json:"content"`
}

// Record is one rating with the audit data of the answer it rates.
type Record struct {
	Timestamp      time.Time       `json:"timestamp"` // when the rating was given
	Rating         string          `json:"rating"`    // up or down
	Comment        string          `json:"comment,omitempty"`
	RequestID      string          `json:"request_id"`
	SessionID      string          `json:"session_id"` // who: the audit log's session id
	ConversationID string          `json:"conversation_id,omitempty"`
	ExchangeID     string          `json:"exchange_id,omitempty"`
	Version        int             `json:"version"`
	AnsweredAt     time.Time       `json:"answered_at"`
	Query          string          `json:"query"`
	RewrittenQuery string          `json:"rewritten_query,omitempty"`
	Answer         string          `json:"answer"`
	Status         string          `json:"status,omitempty"`
	Flags          map[string]bool `json:"flags,omitempty"`
	Evidence       []Evidence      `json:"evidence"`
	History        []Turn          `json:"history,omitempty"`
}

// Key identifies the answer a record rates: a later record with the same
// key replaces an earlier one.
func (r Record) Key() string {
	if r.ExchangeID != "" {
		return fmt.Sprintf("%s#%d", r.ExchangeID, r.Version)
	}
	return r.RequestID
}

// Log appends records to <dir>/feedback.jsonl, one whole line per write.
// It is safe for concurrent use.
type Log struct {
	path string
	mu   sync.Mutex
}

// Open returns the feedback log of the log folder dir.
func Open(dir string) *Log { return &Log{path: filepath.Join(dir, FileName)} }

// Path is the file the log writes.
func (l *Log) Path() string { return l.path }

// Append writes rec as one line.
func (l *Log) Append(rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode feedback: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("create the feedback folder: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", l.path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w — is the disk full?", l.path, err)
	}
	return f.Close()
}

// Read returns the records of the file at path, the last rating of each
// answer only, oldest first. A line that does not decode (a torn last
// line) is skipped and counted in skipped.
func Read(path string) (recs []Record, skipped int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, fmt.Errorf("no feedback yet: %s does not exist — ratings given on the chat page are written there", path)
		}
		return nil, 0, fmt.Errorf("read feedback: %w", err)
	}
	last := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.Query == "" {
			skipped++
			continue
		}
		if i, ok := last[r.Key()]; ok {
			recs[i] = r
			continue
		}
		last[r.Key()] = len(recs)
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, skipped, fmt.Errorf("read feedback: %w", err)
	}
	return recs, skipped, nil
}

// Dataset turns the 👎 records into an evaluation dataset (the format
// `shirube eval` reads). What a case checks is what the complaint says
// for sure:
//
//   - a refusal (insufficient evidence, ambiguous question) that was
//     rated down must become an answer: expected_flags says the flag is
//     false;
//   - an answer rated down must not be given again: should_not_contain
//     holds its first sentence (without banner and citation markers), so
//     the case fails until the answer changes.
//
// The rejected answer, the comment and the cited pages go along in
// "feedback" for the person who adds expected_keywords and
// expected_citations.
func Dataset(recs []Record, now time.Time) ExportDataset {
	ds := ExportDataset{Version: "1.0", CreatedAt: now.Format("2006-01-02T15:04:05"),
		Description: "shirube feedback export: answers rated 👎 on the chat page. Add expected_keywords / expected_citations from the documents to make each case check the right answer.",
		Cases:       []ExportCase{}}
	for _, r := range recs {
		if r.Rating != Down {
			continue
		}
		c := ExportCase{
			Case: evalset.Case{
				ID:       "feedback_" + shortID(r),
				Category: evalset.CategoryNormal,
				Query:    r.Query,
			},
			Feedback: ExportNote{Comment: r.Comment, RejectedAnswer: r.Answer, At: r.Timestamp, SessionID: r.SessionID, RequestID: r.RequestID},
		}
		for _, e := range r.Evidence {
			c.Feedback.CitedPages = append(c.Feedback.CitedPages, e.File)
		}
		for _, t := range r.History {
			c.ConversationContext = append(c.ConversationContext, evalset.Turn{Role: t.Role, Content: t.Content})
		}
		if len(c.ConversationContext) > 0 {
			c.Category = evalset.CategoryConversation
		}
		switch {
		case r.Flags[evalset.FlagInsufficientEvidence]:
			c.ExpectedFlags = map[string]bool{evalset.FlagInsufficientEvidence: false}
		case r.Flags[evalset.FlagAmbiguousQuery]:
			c.ExpectedFlags = map[string]bool{evalset.FlagAmbiguousQuery: false}
		default:
			if s := firstSentence(r.Answer); s != "" {
				c.ShouldNotContain = []string{s}
			}
		}
		ds.Cases = append(ds.Cases, c)
	}
	return ds
}

// ExportDataset is the evaluation dataset written by Dataset.
type ExportDataset struct {
	Version     string       `json:"version"`
	CreatedAt   string       `json:"created_at"`
	Description string       `json:"description"`
	Cases       []ExportCase `json:"test_cases"`
}

// ExportCase is an evaluation case with the feedback it came from.
type ExportCase struct {
	evalset.Case
	Feedback ExportNote `json:"feedback"`
}

// ExportNote is what the person who rated the answer said and saw.
type ExportNote struct {
	Comment        string    `json:"comment,omitempty"`
	RejectedAnswer string    `json:"rejected_answer"`
	CitedPages     []string  `json:"cited_pages,omitempty"`
	At             time.Time `json:"at"`
	SessionID      string    `json:"session_id,omitempty"`
	RequestID      string    `json:"request_id,omitempty"`
}

// shortID is a stable id for a record's case.
func shortID(r Record) string {
	id := r.RequestID
	if r.ExchangeID != "" {
		id = fmt.Sprintf("%s_v%d", r.ExchangeID, r.Version+1)
	}
	id = strings.Map(func(c rune) rune {
		if c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			return c
		}
		return -1
	}, id)
	if id == "" {
		id = r.Timestamp.UTC().Format("20060102T150405")
	}
	return id
}

// firstSentence is the first sentence of an answer's body as the answer
// writes it (so that should_not_contain finds it): banner and notices
// skipped, a list marker in front removed, cut at the first citation
// marker or sentence end; "" when no line gives 8 characters.
func firstSentence(answer string) string {
	for _, line := range strings.Split(answer, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t == guard.Banner || strings.HasPrefix(t, "⚠️") {
			continue
		}
		t = strings.TrimSpace(listMarker.ReplaceAllString(t, ""))
		if loc := citationRE.FindStringIndex(t); loc != nil {
			t = t[:loc[0]]
		}
		if i := strings.IndexAny(t, "。！？"); i >= 0 {
			t = t[:i+len("。")]
		}
		t = strings.TrimSpace(t)
		if utf8.RuneCountInString(t) < 8 {
			continue
		}
		return t
	}
	return ""
}

// listMarker is a Markdown list or heading marker at the start of a line.
var listMarker = regexp.MustCompile(`^(?:[-*+]|#{1,6}|\d{1,3}[.)])\s+`)

// citationRE matches citation markers: [1], [1][2], ［1］.
var citationRE = regexp.MustCompile(`\s?[\[［]\s*\d{1,4}(?:\s*[,、，]\s*\d{1,4})*\s*[\]］]`)

// Sort orders records by time (export order).
func Sort(recs []Record) {
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Timestamp.Before(recs[j].Timestamp) })
}

// Export reads the feedback of the log folder dir and writes its 👎 as an
// evaluation dataset to out (replacing it atomically). It returns the
// number of cases written and of unreadable lines skipped.
func Export(dir, out string, now time.Time) (cases, skipped int, err error) {
	recs, skipped, err := Read(filepath.Join(dir, FileName))
	if err != nil {
		return 0, skipped, err
	}
	Sort(recs)
	ds := Dataset(recs, now)
	b, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return 0, skipped, fmt.Errorf("encode the dataset: %w", err)
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(out), ".feedback-*.json")
	if err != nil {
		return 0, skipped, fmt.Errorf("write %s: %w", out, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return 0, skipped, fmt.Errorf("write %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return 0, skipped, fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		os.Remove(tmp.Name())
		return 0, skipped, fmt.Errorf("write %s: %w", out, err)
	}
	return len(ds.Cases), skipped, nil
}
