package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointJournal: progress saved question by question reads back;
// a line cut short by a crash only costs that question, and a journal of
// another run or a damaged first line is not resumed.
func TestCheckpointJournal(t *testing.T) {
	dir := t.TempDir()
	key := checkpointKey("a", "b")
	path := checkpointPath(dir, key)
	p := &progress{Version: checkpointVersion, Key: key, Seed: 7, Order: []string{"1", "2", "3"}, Done: map[string]Row{}}
	if err := p.save(path, false); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"2", "1"} {
		if err := p.done(k, Row{Key: k, Number: "Q" + k, Verdict: Verdict{Precision: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	p.close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"key":"3","row":{"numb`) // killed while writing
	f.Close()

	got, err := loadCheckpoint(path, key)
	if err != nil || got == nil {
		t.Fatalf("load = %v, %v", got, err)
	}
	if got.Seed != 7 || len(got.Order) != 3 || len(got.Done) != 2 || got.Done["1"].Number != "Q1" || got.Done["2"].Precision != 1 {
		t.Errorf("loaded %+v", got)
	}

	// A resumed run appends; a new run starts the journal afresh.
	if err := got.save(path, true); err != nil {
		t.Fatal(err)
	}
	got.done("3", Row{Key: "3"})
	got.close()
	if again, _ := loadCheckpoint(path, key); again == nil || len(again.Done) != 3 {
		t.Errorf("after resume: %+v", again)
	}
	fresh := &progress{Version: checkpointVersion, Key: key, Seed: 8, Order: []string{"1"}, Done: map[string]Row{}}
	if err := fresh.save(path, false); err != nil {
		t.Fatal(err)
	}
	fresh.close()
	if again, _ := loadCheckpoint(path, key); again == nil || again.Seed != 8 || len(again.Done) != 0 {
		t.Errorf("after a new run: %+v", again)
	}

	if p, err := loadCheckpoint(path, checkpointKey("other")); p != nil || err == nil || !strings.Contains(err.Error(), "another run") {
		t.Errorf("other key: %v, %v", p, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json\n"), 0o644)
	if p, err := loadCheckpoint(bad, key); p != nil || err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged: %v, %v", p, err)
	}
	if p, err := loadCheckpoint(filepath.Join(dir, "none.json"), key); p != nil || err != nil {
		t.Errorf("missing: %v, %v", p, err)
	}
}
