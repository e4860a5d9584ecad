package optimize

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/llm"
)

func fixedNow() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

const missedPage = "database/冷蔵庫/r_h54xg_b/操作と機能/page_008.md"

// newTree builds a small database under a temp root.
func newTree(t *testing.T) string {
	return writeTree(t, map[string]string{
		missedPage: "# 温度設定\n設定ボタンを押す。",
		"database/冷蔵庫/r_h54xg_b/お手入れ/page_010.md": "# お手入れ",
		"database/温度設定/page_001.md":               "# 温度設定の概要",
	})
}

// writeTree writes files (slash-separated paths → content) under a new temp
// root and returns the root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// snapshot maps every path under root/database to its content.
func snapshot(t *testing.T, root string) map[string]string { return treeOf(t, root, "database") }

// treeOf maps every path under root/sub (relative to root, slash-separated)
// to its content, "/" for folders.
func treeOf(t *testing.T, root, sub string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(filepath.Join(root, sub), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			m[filepath.ToSlash(rel)] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writeResults(t *testing.T, dir string, rows [][]string) string {
	t.Helper()
	p := filepath.Join(dir, "qa_results_20250101_000000.csv")
	var b bytes.Buffer
	w := csvx.NewWriter(&b)
	w.Write([]string{"Question", "Reference Document", "Retrieved Files", "Ref Recall", "Notes"})
	for _, r := range rows {
		w.Write(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func failedRow() []string {
	return []string{"冷蔵庫の温度設定を変更したい", missedPage, "database/冷蔵庫/r_h54xg_b/お手入れ/page_010.md", "0", "n1"}
}

func readCSV(t *testing.T, p string) ([]string, [][]string) {
	t.Helper()
	h, rows, _, err := csvx.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return h, rows
}

func TestRunOfflineCopyAndUndo(t *testing.T) {
	root := newTree(t)
	before := snapshot(t, root)
	input := writeResults(t, t.TempDir(), [][]string{
		failedRow(),
		{"ok", "database/温度設定/page_001.md", "database/温度設定/page_001.md", "1", "n2"},
		{"社食は？", "", "", "", "n3"},
	})
	var manifests []string
	// The input is updated in place (seed 000). The second run finds the
	// first run's copy in the folder: it makes no byte-identical second
	// copy (no page_008_2.md) and keeps the alias as it was.
	wantAliases := []string{missedPage + "|database/温度設定/page_008.md", missedPage + "|database/温度設定/page_008.md"}
	for run, wantCopy := range []string{"database/温度設定/page_008.md", "database/温度設定/page_008.md"} {
		orig, err := os.ReadFile(input)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		res, err := Run(t.Context(), Options{Input: input, Root: root, Log: &log, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0].Status != "optimized" {
			t.Fatalf("run %d: rows %+v\nlog: %s", run, res.Rows, log.String())
		}
		if res.Output != input {
			t.Errorf("run %d wrote %s; want the input %s updated", run, res.Output, input)
		}
		if b, err := os.ReadFile(res.Backup); err != nil || !bytes.Equal(b, orig) || filepath.Dir(res.Backup) != filepath.Dir(input) {
			t.Errorf("run %d backup %s: %v; want the input as it was, next to it", run, res.Backup, err)
		}
		h, rows := readCSV(t, res.Output)
		if want := []string{"Question", "Reference Document", "Retrieved Files", "Ref Recall", "Notes", "Optimized Reference Document"}; !reflect.DeepEqual(h, want) {
			t.Errorf("header %q", h)
		}
		wantCells := []string{wantAliases[run], "database/温度設定/page_001.md", ""}
		for i, w := range wantCells {
			if rows[i][5] != w {
				t.Errorf("run %d row %d Optimized = %q; want %q", run, i+1, rows[i][5], w)
			}
		}
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(wantCopy)))
		if err != nil || string(got) != before[missedPage] {
			t.Errorf("copy %s: %q %v", wantCopy, got, err)
		}
		if run == 1 {
			if res.Manifest != "" {
				t.Errorf("run 2 created nothing but wrote the manifest %s", res.Manifest)
			}
			continue
		}
		if !strings.HasPrefix(filepath.Base(res.Manifest), "optimize_manifest_20250102_030405") {
			t.Errorf("manifest %s", res.Manifest)
		}
		manifests = append(manifests, res.Manifest)
	}
	if before[missedPage] != snapshot(t, root)[missedPage] {
		t.Error("original page changed")
	}
	if _, err := os.Stat(filepath.Join(root, "database", "温度設定", "page_008_2.md")); err == nil {
		t.Error("a byte-identical second copy page_008_2.md was made")
	}
	for i := len(manifests) - 1; i >= 0; i-- {
		rep, err := Undo(t.Context(), manifests[i], filepath.Join(root, "database"))
		if err != nil || len(rep.Problems) > 0 || len(rep.Removed) != 1 {
			t.Errorf("undo %d: %+v %v", i, rep, err)
		}
	}
	if after := snapshot(t, root); !reflect.DeepEqual(after, before) {
		t.Errorf("tree after undo:\n%v\nwant\n%v", after, before)
	}
	// Undone again: nothing left to remove, and no false problem.
	for i := len(manifests) - 1; i >= 0; i-- {
		rep, err := Undo(t.Context(), manifests[i], filepath.Join(root, "database"))
		if err != nil || len(rep.Problems) > 0 || len(rep.Removed) != 0 {
			t.Errorf("second undo %d: %+v %v", i, rep, err)
		}
	}
}

func TestRunNewFolderInPlaceAndUndoReport(t *testing.T) {
	root := newTree(t)
	// Without the 温度設定 folder a new one is named from the key terms.
	if err := os.RemoveAll(filepath.Join(root, "database", "温度設定")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	input := writeResults(t, t.TempDir(), [][]string{failedRow()})
	res, err := Run(t.Context(), Options{Input: input, Root: root, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != input {
		t.Errorf("Output = %s; want in place %s", res.Output, input)
	}
	_, rows := readCSV(t, input)
	// Terms 冷蔵庫, 温度設定, 変更: the folder 冷蔵庫 shares 冷蔵庫 (3 chars)
	// and wins over a new folder.
	if want := missedPage + "|database/冷蔵庫/page_008.md"; rows[0][5] != want {
		t.Errorf("Optimized = %q; want %q", rows[0][5], want)
	}
	// A file changed after the run is reported and kept by Undo.
	copyPath := filepath.Join(root, "database", "冷蔵庫", "page_008.md")
	if err := os.WriteFile(copyPath, []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Undo(t.Context(), res.Manifest, filepath.Join(root, "database"))
	if err != nil || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "changed since it was copied") {
		t.Errorf("undo report %+v %v", rep, err)
	}
	os.Remove(copyPath)
	if after := snapshot(t, root); !reflect.DeepEqual(after, before) {
		t.Errorf("tree differs after undo: %v", after)
	}
}

func TestSafeFolder(t *testing.T) {
	scope := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(scope, "link")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	os.WriteFile(filepath.Join(scope, "file.md"), nil, 0o644)
	os.Mkdir(filepath.Join(scope, "real"), 0o755)
	tests := []struct {
		in, want, err string
	}{
		{in: "../x", err: "leaves the scope"},
		{in: "/etc", err: "absolute"},
		{in: "a/../../b", err: "leaves the scope"},
		{in: "a/..", err: "leaves the scope"},
		{in: `C:\Windows`, err: "absolute"},
		{in: `\\server\share`, err: "absolute"},
		{in: "CON", err: "reserved"},
		{in: "a/nul.txt", err: "reserved"},
		{in: "com1", err: "reserved"},
		{in: "LPT9", err: "reserved"},
		{in: "COM²", err: "reserved"},
		{in: "a\x00b", err: "control"},
		{in: "a\nb", err: "control"},
		{in: strings.Repeat("あ", 86), err: "258 bytes"},
		{in: "link", err: "symbolic link"},
		{in: "link/sub", err: "symbolic link"},
		{in: "file.md/x", err: "is a file"},
		{in: "", err: "empty"},
		{in: "./.", err: "scope itself"},
		{in: "...", err: "only dots"},
		{in: "a/b/c/d/e/f/g/h/i", err: "9 levels"},
		{in: "real/新しい", want: "real/新しい"},
		{in: `a\.\b//c/`, want: "a/b/c"},
		{in: `q<>:"|?*`, want: "q_______"},
		{in: " 末尾. ", want: "末尾"},
		{in: "ＣＯＮＦＩＧ", want: "ＣＯＮＦＩＧ"},
		{in: "console", want: "console"},
		{in: "か\u3099", want: "が"}, // NFC
	}
	for _, tt := range tests {
		got, err := SafeFolder(scope, tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SafeFolder(%q) = %q, %v; want error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("SafeFolder(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// seqProposer proposes the given folders in turn.
type seqProposer struct {
	mu      sync.Mutex
	folders []string
	reqs    []Request
}

func (s *seqProposer) Propose(_ context.Context, req Request) (Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	f := s.folders[0]
	s.folders = s.folders[1:]
	return Proposal{Folder: f, Reason: "test"}, nil
}

// fsAsker "retrieves" every page under database/<folder>, so a copy is
// found exactly when it sits in that folder.
type fsAsker struct {
	root, folder string
	calls        int
}

func (a *fsAsker) Ask(context.Context, string) (batch.AskResult, error) {
	a.calls++
	var got []string
	m, _ := filepath.Glob(filepath.Join(a.root, "database", a.folder, "*.md"))
	for _, p := range m {
		rel, _ := filepath.Rel(a.root, p)
		got = append(got, filepath.ToSlash(rel))
	}
	return batch.AskResult{Retrieved: got}, nil
}

type countReindexer struct{ n int }

func (c *countReindexer) Reindex(context.Context) error { c.n++; return nil }

func TestRunRLRollsBackIneffectiveCopies(t *testing.T) {
	root := newTree(t)
	before := snapshot(t, root)
	input := writeResults(t, t.TempDir(), [][]string{failedRow()})
	prop := &seqProposer{folders: []string{"a", "温度設定", "c/d", "e"}}
	asker := &fsAsker{root: root, folder: "c/d"}
	ri := &countReindexer{}
	var log bytes.Buffer
	res, err := Run(t.Context(), Options{Input: input, Root: root, Proposer: prop, EnableRL: true, Asker: asker, Reindexer: ri, Log: &log, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Rows[0]
	if rep.Status != "optimized" || len(rep.Attempts) != 3 || asker.calls != 3 || ri.n != 3 {
		t.Fatalf("report %+v, asks %d, reindex %d\nlog:\n%s", rep, asker.calls, ri.n, log.String())
	}
	for i, want := range []bool{false, false, true} {
		if rep.Attempts[i].Kept != want {
			t.Errorf("attempt %d Kept = %v", i+1, rep.Attempts[i].Kept)
		}
	}
	if got := prop.reqs[2].Tried; !reflect.DeepEqual(got, []string{"a", "温度設定"}) {
		t.Errorf("third request Tried = %q", got)
	}
	// Only the effective copy and its folders remain.
	after := snapshot(t, root)
	want := map[string]string{}
	for k, v := range before {
		want[k] = v
	}
	want["database/c"] = "/"
	want["database/c/d"] = "/"
	want["database/c/d/page_008.md"] = before[missedPage]
	if !reflect.DeepEqual(after, want) {
		t.Errorf("tree after RL:\n%v\nwant\n%v", after, want)
	}
	_, rows := readCSV(t, res.Output)
	if w := missedPage + "|database/c/d/page_008.md"; rows[0][5] != w {
		t.Errorf("Optimized = %q; want %q", rows[0][5], w)
	}
	if n := strings.Count(log.String(), "rolled back"); n != 2 {
		t.Errorf("%d rollbacks logged; want 2:\n%s", n, log.String())
	}
	if _, err := Undo(t.Context(), res.Manifest, filepath.Join(root, "database")); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, root); !reflect.DeepEqual(got, before) {
		t.Errorf("undo after RL left %v", got)
	}
}

func TestRunRLNotImproved(t *testing.T) {
	root := newTree(t)
	before := snapshot(t, root)
	input := writeResults(t, t.TempDir(), [][]string{failedRow()})
	prop := &seqProposer{folders: []string{"x", "../escape", "y"}}
	res, err := Run(t.Context(), Options{Input: input, Root: root, Proposer: prop, EnableRL: true, MaxAttempts: 3,
		Asker: &fsAsker{root: root, folder: "never"}, Reindexer: &countReindexer{}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if rep := res.Rows[0]; rep.Status != "not improved" || len(rep.Attempts) != 3 || !strings.Contains(rep.Attempts[1].Err, "leaves the scope") {
		t.Errorf("report %+v", rep)
	}
	if res.Manifest != "" {
		t.Errorf("manifest kept with nothing in it: %s", res.Manifest)
	}
	if got := snapshot(t, root); !reflect.DeepEqual(got, before) {
		t.Errorf("tree changed: %v", got)
	}
	_, rows := readCSV(t, res.Output)
	if rows[0][5] != missedPage {
		t.Errorf("Optimized = %q; want the original only", rows[0][5])
	}
}

// fakeLLM replies with a fixed text.
type fakeLLM struct{ text string }

func (f fakeLLM) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Text: f.text}, nil
}

func TestRunLLMProposer(t *testing.T) {
	tests := []struct {
		name, reply, status, cell string
	}{
		{"valid", `{"folder": "冷蔵庫/温度の設定", "reason": "温度の質問"}`, "optimized", missedPage + "|database/冷蔵庫/温度の設定/page_008.md"},
		{"fenced", "```json\n{\"folder\": \"温度設定\"}\n```", "optimized", missedPage + "|database/温度設定/page_008.md"},
		{"malformed", `{"folder": "x"`, "skipped: folder proposal is not valid JSON: unexpected EOF", missedPage},
		{"prose", `I suggest the folder x.`, "skipped: folder proposal is not valid JSON", missedPage},
		{"no folder", `{"reason": "?"}`, `skipped: folder proposal has no "folder"`, missedPage},
		{"escape", `{"folder": "../../etc"}`, "skipped: rejected: folder \"../../etc\" leaves the scope (..)", missedPage},
		{"same folder", `{"folder": "冷蔵庫/r_h54xg_b/操作と機能"}`, "skipped: rejected: folder \"冷蔵庫/r_h54xg_b/操作と機能\" already holds the missed page", missedPage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newTree(t)
			input := writeResults(t, t.TempDir(), [][]string{failedRow()})
			var log bytes.Buffer
			res, err := Run(t.Context(), Options{Input: input, Root: root, Proposer: LLMProposer{LLM: fakeLLM{tt.reply}}, Log: &log, Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Rows[0].Status; !strings.HasPrefix(got, tt.status) {
				t.Errorf("status %q; want prefix %q", got, tt.status)
			}
			if strings.HasPrefix(tt.status, "skipped") && strings.Count(log.String(), "\n") != 1 {
				t.Errorf("want one log line, got %q", log.String())
			}
			_, rows := readCSV(t, res.Output)
			if rows[0][5] != tt.cell {
				t.Errorf("Optimized = %q; want %q", rows[0][5], tt.cell)
			}
		})
	}
}

func TestRunSkipsMissingPage(t *testing.T) {
	root := newTree(t)
	input := writeResults(t, t.TempDir(), [][]string{{"q", "database/none/page_001.md", "", "0", ""}})
	var log bytes.Buffer
	res, err := Run(t.Context(), Options{Input: input, Root: root, Log: &log, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Rows[0].Status, "not found") || !strings.Contains(log.String(), "row 1: skipped") {
		t.Errorf("status %q log %q", res.Rows[0].Status, log.String())
	}
}

func TestRunInputErrors(t *testing.T) {
	root := newTree(t)
	dir := t.TempDir()
	noCols := filepath.Join(dir, "x.csv")
	os.WriteFile(noCols, []byte("Question\nq\n"), 0o644)
	if _, err := Run(t.Context(), Options{Input: noCols, Root: root}); err == nil || !strings.Contains(err.Error(), "batch evaluation first") {
		t.Errorf("err = %v", err)
	}
	if _, err := Run(t.Context(), Options{Input: noCols, Root: root, Scope: "../x"}); err == nil {
		t.Error("scope outside root accepted")
	}
	if _, err := Run(t.Context(), Options{Input: noCols, Root: root, EnableRL: true}); err == nil {
		t.Error("RL without Asker accepted")
	}
}

func TestOfflineProposer(t *testing.T) {
	folders := []string{"冷蔵庫", "冷蔵庫/r_h54xg_b", "冷蔵庫/温度設定", "温度設定", "洗濯機"}
	tests := []struct {
		name    string
		q       string
		folders []string
		tried   []string
		want    string
		err     string
	}{
		// 冷蔵庫/温度設定 and 温度設定 share 温度設定 (4 chars) in their own
		// name; the first also shares 冷蔵庫 in its path.
		{name: "existing, most specific", q: "冷蔵庫の温度設定を変更したい", folders: folders, want: "冷蔵庫/温度設定"},
		{name: "next after tried", q: "冷蔵庫の温度設定を変更したい", folders: folders, tried: []string{"冷蔵庫/温度設定"}, want: "温度設定"},
		// フィルター and 掃除 stand next to each other: one compound.
		{name: "new folder from two words", q: "エアコンのフィルター掃除", folders: folders, want: "エアコン_フィルター掃除"},
		{name: "new folder, next name", q: "エアコンのフィルター掃除", folders: folders, tried: []string{"エアコン_フィルター掃除"}, want: "エアコン"},
		{name: "single term", q: "ＷｉＦｉ", want: "wifi"},
		{name: "no terms", q: "どうしたらいい？", err: "no key terms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := OfflineProposer{}.Propose(t.Context(), Request{Question: tt.q, Folders: tt.folders, Tried: tt.tried})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil || p.Folder != tt.want {
				t.Errorf("Propose = %+v, %v; want %q", p, err, tt.want)
			}
		})
	}
}

func TestListTree(t *testing.T) {
	root := newTree(t)
	os.Mkdir(filepath.Join(root, "database", ".git"), 0o755)
	tree, folders, err := ListTree(filepath.Join(root, "database"), 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	wantFolders := []string{"冷蔵庫", "冷蔵庫/r_h54xg_b", "温度設定"}
	if !reflect.DeepEqual(folders, wantFolders) {
		t.Errorf("folders %q; want %q", folders, wantFolders)
	}
	want := "冷蔵庫/ (0 pages)\n  r_h54xg_b/ (0 pages)\n温度設定/ (1 pages)\n"
	if tree != want {
		t.Errorf("tree %q; want %q", tree, want)
	}
}

// TestUndoRefusesOutsidePaths: Undo trusts neither the manifest's root
// nor its paths; only what lies inside the database it runs against, after
// resolving links, is removed.
func TestUndoRefusesOutsidePaths(t *testing.T) {
	root := newTree(t)
	db := filepath.Join(root, "database")
	outside := t.TempDir()
	victim := filepath.Join(outside, "keep.md")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const sumX = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" // sha256("x")
	// A link inside the database to the outside folder.
	if err := os.Symlink(outside, filepath.Join(db, "link")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	relFromRoot, _ := filepath.Rel(root, victim)
	tests := []struct {
		name string
		m    Manifest
	}{
		{"root is /", Manifest{Root: "/", Files: []ManifestFile{{Path: filepath.ToSlash(strings.TrimPrefix(victim, "/")), SHA256: sumX}}, Dirs: []string{filepath.ToSlash(strings.TrimPrefix(outside, "/"))}}},
		{"root is the victim's folder", Manifest{Root: outside, Files: []ManifestFile{{Path: "keep.md", SHA256: sumX}}}},
		{"dot-dot path", Manifest{Root: root, Files: []ManifestFile{{Path: filepath.ToSlash(relFromRoot), SHA256: sumX}}}},
		{"through a link in the database", Manifest{Root: root, Files: []ManifestFile{{Path: "database/link/keep.md", SHA256: sumX}}}},
		{"the database itself", Manifest{Root: root, Dirs: []string{"database"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.Version = 1
			mp := filepath.Join(t.TempDir(), "m.json")
			if err := writeJSONAtomic(mp, tc.m); err != nil {
				t.Fatal(err)
			}
			rep, err := Undo(t.Context(), mp, db)
			if err != nil || len(rep.Removed) != 0 || len(rep.Problems) == 0 {
				t.Errorf("report %+v %v; want everything refused", rep, err)
			}
			for _, p := range rep.Problems {
				if !strings.Contains(p, "not inside the database") {
					t.Errorf("problem %q", p)
				}
			}
			if _, err := os.Stat(victim); err != nil {
				t.Fatal("file outside the database was deleted")
			}
			if _, err := os.Stat(db); err != nil {
				t.Fatal("the database was deleted")
			}
		})
	}
	if _, err := Undo(t.Context(), filepath.Join(t.TempDir(), "none.json"), db); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing manifest: %v", err)
	}
}

func FuzzSafeFolder(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "CON", `C:\x`, "a/./b", "x|y"} {
		f.Add(s)
	}
	scope := f.TempDir()
	f.Fuzz(func(t *testing.T, in string) {
		got, err := SafeFolder(scope, in)
		if err != nil {
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(got)) || strings.ContainsAny(got, "\\|\x00\n") {
			t.Fatalf("SafeFolder(%q) = %q escapes or is unportable", in, got)
		}
		for c := range strings.SplitSeq(got, "/") {
			if isReserved(c) || c == ".." || c == "" || len(c) > maxNameBytes {
				t.Fatalf("SafeFolder(%q) = %q has bad component %q", in, got, c)
			}
		}
	})
}

func FuzzParseProposal(f *testing.F) {
	f.Add(`{"folder":"a","reason":"b"}`)
	f.Add("```json\n{\"folder\":\"a\"}\n```")
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := ParseProposal(raw)
		if err == nil && strings.TrimSpace(p.Folder) == "" {
			t.Fatalf("empty folder accepted from %q", raw)
		}
	})
}

// TestCompounds: adjacent tokens of the question become the whole words it
// used, so offline folder names are not fragments (化粧_品, 品_基準).
func TestCompounds(t *testing.T) {
	for _, tc := range []struct {
		q     string
		terms []string
		want  []string
	}{
		{"化粧品基準の改正はいつですか", []string{"化粧", "品", "基準", "改正"}, []string{"化粧品基準", "改正"}},
		{"公衆無線LANでVPNを使うときの注意は？", []string{"公衆", "無線", "lan", "vpn", "使う", "注意"}, []string{"公衆無線lan", "vpn", "使う", "注意"}},
		{"冷蔵庫の温度設定を変更したい", []string{"冷蔵庫", "温度", "設定", "変更"}, []string{"冷蔵庫", "温度設定", "変更"}},
		{"x", []string{"missing"}, []string{"missing"}},
	} {
		if got := Compounds(tc.q, tc.terms); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Compounds(%q, %q) = %q; want %q", tc.q, tc.terms, got, tc.want)
		}
	}
}
