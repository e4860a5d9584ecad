package optimize

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/shirube/shirube/internal/eval/batch"
)

// treeProposer proposes a folder named after the number of folders it is
// shown ("f3") at first, and "good" once a folder was tried: what it
// proposes depends on the tree it sees, as an LLM's or the offline rule's
// proposal does.
type treeProposer struct{}

func (p *treeProposer) Propose(_ context.Context, req Request) (Proposal, error) {
	if len(req.Tried) > 0 {
		return Proposal{Folder: "good", Reason: "retry"}, nil
	}
	return Proposal{Folder: fmt.Sprintf("f%d", len(req.Folders)), Reason: "first"}, nil
}

// lockedAsker is fsAsker safe for parallel rows.
type lockedAsker struct {
	mu sync.Mutex
	a  fsAsker
}

func (l *lockedAsker) Ask(ctx context.Context, q string) (batch.AskResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.a.Ask(ctx, q)
}

// TestRunRLSameResultAtAnyWorkerCount: eight failed rows through the RL
// loop give the same tree and the same CSV with 1 and with 8 workers, and
// no empty folder is left behind by the rolled-back first attempts (which
// all rows make into the same folder).
func TestRunRLSameResultAtAnyWorkerCount(t *testing.T) {
	files := map[string]string{}
	var rows [][]string
	for i := range 8 {
		p := fmt.Sprintf("database/docs/d%d/page_001.md", i)
		files[p] = fmt.Sprintf("# 文書%d\n本文%d", i, i)
		rows = append(rows, []string{fmt.Sprintf("質問%dの答えは？", i), p, "database/other/page_001.md", "0", fmt.Sprintf("n%d", i)})
	}
	files["database/other/page_001.md"] = "# 他"
	type outcome struct {
		tree map[string]string
		csv  [][]string
	}
	runWith := func(workers int) outcome {
		root := writeTree(t, files)
		input := writeResults(t, t.TempDir(), rows)
		var log bytes.Buffer
		res, err := Run(t.Context(), Options{Input: input, Root: root, Workers: workers, Proposer: &treeProposer{},
			EnableRL: true, MaxAttempts: 2, Asker: &lockedAsker{a: fsAsker{root: root, folder: "good"}}, Reindexer: &countReindexer{},
			Log: &log, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Rows {
			if r.Status != "optimized" {
				t.Fatalf("workers %d row %d: %s\n%s", workers, r.Row, r.Status, log.String())
			}
		}
		// No empty folder anywhere under the database.
		filepath.WalkDir(filepath.Join(root, "database"), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				if ents, _ := os.ReadDir(p); len(ents) == 0 {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("workers %d: empty folder %s left behind", workers, rel)
				}
			}
			return nil
		})
		_, out := readCSV(t, res.Output)
		return outcome{tree: snapshot(t, root), csv: out}
	}
	want := runWith(1)
	for range 3 {
		if got := runWith(8); !reflect.DeepEqual(got, want) {
			t.Fatalf("8 workers differ from 1:\ntree %v\nwant %v\ncsv %q\nwant %q", got.tree, want.tree, got.csv, want.csv)
		}
	}
}

// TestRunSeparateAndTarget: Separate leaves the input alone and writes
// <stem>_optimized_<ts>.csv; Target updates another CSV with the same rows
// (the batch input), merging the aliases already in it.
func TestRunSeparateAndTarget(t *testing.T) {
	t.Run("separate", func(t *testing.T) {
		root := newTree(t)
		dir := t.TempDir()
		input := writeResults(t, dir, [][]string{failedRow()})
		orig, _ := os.ReadFile(input)
		res, err := Run(t.Context(), Options{Input: input, Root: root, Separate: true, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "qa_results_20250101_000000_optimized_20250102_030405.csv"); res.Output != want || res.Backup != "" {
			t.Errorf("output %s, backup %q; want %s and none", res.Output, res.Backup, want)
		}
		if now, _ := os.ReadFile(input); !bytes.Equal(now, orig) {
			t.Error("the input changed")
		}
	})
	t.Run("target", func(t *testing.T) {
		root := newTree(t)
		dir := t.TempDir()
		input := writeResults(t, dir, [][]string{failedRow(), {"ok", "database/温度設定/page_001.md", "database/温度設定/page_001.md", "1", "n2"}})
		target := filepath.Join(dir, "qa.csv")
		const earlier = missedPage + "|database/旧/page_008.md"
		os.WriteFile(target, []byte("Question,Reference Document,Optimized Reference Document\n冷蔵庫の温度設定を変更したい,"+missedPage+","+earlier+"\nok,database/温度設定/page_001.md,\n"), 0o644)
		res, err := Run(t.Context(), Options{Input: input, Root: root, Target: target, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if res.Output != target || filepath.Dir(res.Backup) != dir {
			t.Errorf("output %s, backup %s", res.Output, res.Backup)
		}
		h, rows := readCSV(t, target)
		if !reflect.DeepEqual(h, []string{"Question", "Reference Document", "Optimized Reference Document"}) {
			t.Errorf("header %q", h)
		}
		if want := earlier + "|database/温度設定/page_008.md"; rows[0][2] != want {
			t.Errorf("row 1 = %q; want the earlier alias kept and the new one added: %q", rows[0][2], want)
		}
		if rows[1][2] != "database/温度設定/page_001.md" {
			t.Errorf("row 2 = %q", rows[1][2])
		}
		// A target with other rows is refused, not mis-aligned.
		os.WriteFile(target, []byte("Question,Reference Document\na,b\n"), 0o644)
		if _, err := Run(t.Context(), Options{Input: input, Root: root, Target: target, Now: fixedNow}); err == nil {
			t.Error("a target with 1 row for 2 results rows was accepted")
		}
	})
}
