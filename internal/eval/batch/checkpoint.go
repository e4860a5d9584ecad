package batch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/shirube/shirube/internal/eval/metrics"
)

// checkpointPath is results/.<stem>.checkpoint.jsonl.
func checkpointPath(dir, stem string) string {
	return filepath.Join(dir, "."+stem+".checkpoint.jsonl")
}

// checkpointLine is one finished row. Question guards against resuming
// with an edited input: a line whose question differs from the input row's
// is ignored and the row is asked again.
type checkpointLine struct {
	Row      int                      `json:"row"`
	Question string                   `json:"question"`
	Cells    map[string]string        `json:"cells"`
	Values   map[string]metrics.Ratio `json:"values,omitempty"`
}

// checkpoint appends finished rows, one JSON line each, under a mutex.
type checkpoint struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

func openCheckpoint(path string) (*checkpoint, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	return &checkpoint{f: f, path: path}, nil
}

func (c *checkpoint) add(i int, question string, r *row) error {
	b, err := json.Marshal(checkpointLine{Row: i, Question: question, Cells: r.cells, Values: r.values})
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write checkpoint %s: %w", c.path, err)
	}
	return nil
}

func (c *checkpoint) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.f.Close(); err != nil {
		return fmt.Errorf("close checkpoint %s: %w", c.path, err)
	}
	return nil
}

// loadCheckpoint returns the finished rows recorded at path, by row index.
// A missing file is no error. Lines that do not parse (a write cut short
// by a crash) or do not match the input are counted in skipped.
func loadCheckpoint(path string, rows [][]string, question int) (done map[int]checkpointLine, skipped int, err error) {
	done = map[int]checkpointLine{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return done, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("open checkpoint: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var l checkpointLine
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Cells == nil ||
			l.Row < 0 || l.Row >= len(rows) || cell(rows[l.Row], question) != l.Question {
			skipped++
			continue
		}
		done[l.Row] = l
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return done, skipped, nil
}
