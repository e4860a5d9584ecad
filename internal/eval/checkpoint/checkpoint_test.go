package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

type entry struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// readEntries reads a journal of entries; lines that are not an entry
// with a text are rejected.
func readEntries(t *testing.T, path string) ([]entry, int) {
	t.Helper()
	var got []entry
	skipped, err := Read(path, func(line []byte) bool {
		var e entry
		if json.Unmarshal(line, &e) != nil || e.Text == "" {
			return false
		}
		got = append(got, e)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, skipped
}

func TestJournalConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.checkpoint.jsonl")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("長い答え", 5000) // lines far larger than a pipe buffer
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if err := j.Append(entry{N: i, Text: long}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got, skipped := readEntries(t, path)
	if skipped != 0 || len(got) != 50 {
		t.Fatalf("read %d entries, %d skipped; want 50, 0", len(got), skipped)
	}
	ns := make([]int, len(got))
	for i, e := range got {
		ns[i] = e.N
	}
	sort.Ints(ns)
	for i, n := range ns {
		if n != i {
			t.Fatalf("entries %v, want 0..49 once each", ns)
		}
	}
}

func TestReadSkipsWhatTheCallerCannotUse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    int // entries read
		skipped int
	}{
		{"missing file", "", 0, 0},
		{"whole lines", `{"n":1,"text":"a"}` + "\n" + `{"n":2,"text":"b"}` + "\n", 2, 0},
		{"blank lines ignored", "\n  \n" + `{"n":1,"text":"a"}` + "\n\n", 1, 0},
		{"torn last line", `{"n":1,"text":"a"}` + "\n" + `{"n":2,"te`, 1, 1},
		{"rejected line", `{"n":1}` + "\n" + `{"n":2,"text":"b"}` + "\n", 1, 1},
		{"no final line end", `{"n":1,"text":"a"}`, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cp.jsonl")
			if tc.name != "missing file" {
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, skipped := readEntries(t, path)
			if len(got) != tc.want || skipped != tc.skipped {
				t.Errorf("read %d, skipped %d; want %d, %d", len(got), skipped, tc.want, tc.skipped)
			}
		})
	}
}

func TestAppendAfterResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.jsonl")
	for i := range 2 { // two runs: the second appends to the first's journal
		j, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Append(entry{N: i, Text: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := readEntries(t, path); len(got) != 2 || got[0].N != 0 || got[1].N != 1 {
		t.Errorf("entries %+v, want 0 then 1", got)
	}
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Errorf("removing a missing journal: %v", err)
	}
}

// TestAppendAfterTornLine: a run killed while writing a line leaves it
// torn; the resumed run's lines must not be glued onto it.
func TestAppendAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.jsonl")
	if err := os.WriteFile(path, []byte(`{"n":0,"text":"a"}`+"\n"+`{"n":1,"te`), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(entry{N: 2, Text: "c"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	got, skipped := readEntries(t, path)
	if len(got) != 2 || got[1].N != 2 || skipped != 1 {
		t.Errorf("entries %+v, %d skipped; want n 0 and 2, the torn line skipped", got, skipped)
	}
}

func TestOpenError(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir", "cp.jsonl")); err == nil || !strings.Contains(err.Error(), "open checkpoint") {
		t.Errorf("err = %v", err)
	}
}
