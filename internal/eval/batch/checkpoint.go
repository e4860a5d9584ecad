package batch

import (
	"encoding/json"
	"path/filepath"

	"github.com/shirube/shirube/internal/eval/checkpoint"
	"github.com/shirube/shirube/internal/eval/metrics"
)

// checkpointPath is results/.<stem>.checkpoint.jsonl.
func checkpointPath(dir, stem string) string {
	return filepath.Join(dir, "."+stem+".checkpoint.jsonl")
}

// checkpointLine is one finished row in the checkpoint journal. Question guards against resuming
// with an edited input: a line whose question differs from the input row's
// is ignored and the row is asked again.
type checkpointLine struct {
	Row      int                      `json:"row"`
	Question string                   `json:"question"`
	Cells    map[string]string        `json:"cells"`
	Values   map[string]metrics.Ratio `json:"values,omitempty"`
}

// loadCheckpoint returns the finished rows recorded at path, by row index.
// A missing file is no error. Lines that do not parse (a write cut short
// by a crash) or do not match the input are counted in skipped.
func loadCheckpoint(path string, rows [][]string, question int) (done map[int]checkpointLine, skipped int, err error) {
	done = map[int]checkpointLine{}
	skipped, err = checkpoint.Read(path, func(line []byte) bool {
		var l checkpointLine
		if err := json.Unmarshal(line, &l); err != nil || l.Cells == nil ||
			l.Row < 0 || l.Row >= len(rows) || cell(rows[l.Row], question) != l.Question {
			return false
		}
		done[l.Row] = l
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	return done, skipped, nil
}
