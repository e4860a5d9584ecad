package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/shirube/shirube/internal/eval/checkpoint"
)

// checkpointVersion changes when the file layout does.
const checkpointVersion = 1

// progress is the state of a run kept in its checkpoint journal so that an
// interrupted run can resume without judging a question twice. The
// journal's first line is the run (version, key, seed, order); each later
// line is one finished question (doneLine).
type progress struct {
	Version int            `json:"version"`
	Key     string         `json:"key"`
	Seed    uint64         `json:"seed"`
	Order   []string       `json:"order"` // question keys in evaluation order
	Done    map[string]Row `json:"-"`     // finished questions by key

	journal *checkpoint.Journal // nil: progress is not being saved
}

// doneLine is one finished question in the journal.
type doneLine struct {
	Key string `json:"key"`
	Row Row    `json:"row"`
}

// checkpointKey identifies a run by what it evaluates: the three input
// files (resolved path and content), the judge, the model and the prompt.
// Any change gives a different key, so a stale checkpoint is never resumed.
func checkpointKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkpointPath is where the checkpoint of key lives.
func checkpointPath(dir, key string) string {
	return filepath.Join(dir, "shirube-judge-"+key[:16]+".json")
}

// loadCheckpoint reads the checkpoint at path. It returns nil, nil when
// there is none, and nil with an error when the file is unreadable or
// belongs to another run (the caller then starts afresh). A finished
// question whose line was cut short by a crash, and a question recorded as
// an error row (no verdict), are judged again.
func loadCheckpoint(path, key string) (*progress, error) {
	var p *progress
	var bad error
	_, err := checkpoint.Read(path, func(line []byte) bool {
		if p == nil && bad == nil {
			var h progress
			if err := json.Unmarshal(line, &h); err != nil {
				bad = fmt.Errorf("checkpoint %s is damaged (%v); starting a new run", path, err)
				return false
			}
			if h.Version != checkpointVersion || h.Key != key || len(h.Order) == 0 {
				bad = fmt.Errorf("checkpoint %s belongs to another run; starting a new run", path)
				return false
			}
			h.Done = map[string]Row{}
			p = &h
			return true
		}
		var d doneLine
		if p == nil || json.Unmarshal(line, &d) != nil || d.Key == "" {
			return false
		}
		if d.Row.Error != "" {
			// No verdict: a resumed run asks this question again.
			delete(p.Done, d.Key)
		} else {
			p.Done[d.Key] = d.Row
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	return p, nil
}

// save starts saving progress at path: a new run replaces whatever file is
// there with its first line, a resumed one appends to its journal.
func (p *progress) save(path string, resumed bool) error {
	if !resumed {
		if err := checkpoint.Remove(path); err != nil {
			return fmt.Errorf("save checkpoint: %w", err)
		}
	}
	j, err := checkpoint.Open(path)
	if err != nil {
		return err
	}
	if !resumed {
		if err := j.Append(p); err != nil {
			j.Close()
			return err
		}
	}
	p.journal = j
	return nil
}

// done records a finished question, in memory and, while progress is being
// saved, in the journal.
func (p *progress) done(key string, row Row) error {
	p.Done[key] = row
	if p.journal == nil {
		return nil
	}
	return p.journal.Append(doneLine{Key: key, Row: row})
}

// close stops saving progress.
func (p *progress) close() {
	if p.journal != nil {
		p.journal.Close()
		p.journal = nil
	}
}
