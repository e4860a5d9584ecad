package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkpointVersion changes when the file layout does.
const checkpointVersion = 1

// checkpoint is the progress of a run, saved after every question so that
// an interrupted run can resume without judging a question twice.
type checkpoint struct {
	Version int            `json:"version"`
	Key     string         `json:"key"`
	Seed    uint64         `json:"seed"`
	Order   []string       `json:"order"` // question keys in evaluation order
	Done    map[string]Row `json:"done"`  // finished questions by key
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
// belongs to another run (the caller then starts afresh).
func loadCheckpoint(path, key string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("checkpoint %s is damaged (%v); starting a new run", path, err)
	}
	if c.Version != checkpointVersion || c.Key != key || len(c.Order) == 0 {
		return nil, fmt.Errorf("checkpoint %s belongs to another run; starting a new run", path)
	}
	if c.Done == nil {
		c.Done = map[string]Row{}
	}
	return &c, nil
}

// save writes the checkpoint atomically: a temporary file in the same
// folder, synced, then renamed over path. A crash leaves either the old or
// the new checkpoint, never a torn one.
func (c *checkpoint) save(path string) (err error) {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}
