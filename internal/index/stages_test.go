package index

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/golden"
)

// generationDigest describes the live generation by what a search reads —
// the SHA-256 of its chunk, BM25, vector and embedder files (meta.json
// holds the build time, docs.gob the temporary paths) — and the
// build's summary counts.
func generationDigest(t *testing.T, dir string, sum Summary) string {
	t.Helper()
	gen, _, err := readCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "documents %d pages %d chunks %d extracted %d reused %d retimed %d removed %d unchanged %t refit %t\n",
		sum.Documents, sum.Pages, sum.Chunks, sum.Extracted, sum.Reused, sum.Retimed, sum.Removed, sum.Unchanged, sum.Refit)
	for _, name := range []string{chunksBinFile, bm25File, vectorsFile, embedderFile} {
		data, err := os.ReadFile(filepath.Join(gen, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %x\n", name, sha256.Sum256(data))
	}
	return b.String()
}

// TestBuildGenerationsGolden pins what Build writes, byte for byte, over a
// first build, an incremental one (one source changed, one removed, one
// added, one touched) and an unchanged one: the split of Build into its
// stages (issue 22 item 6) must not move a byte.
// Both ways of an incremental build are pinned: the local model fitted
// again, and kept (BM25 composed, unchanged chunks keeping their vectors).
func TestBuildGenerationsGolden(t *testing.T) {
	for _, tt := range []struct {
		name    string
		refitAt float64
	}{{"refit", 0}, {"kept model", 10}} {
		t.Run(tt.name, func(t *testing.T) {
			out := buildGenerations(t, tt.refitAt)
			golden.Check(t, filepath.Join("testdata", "generations_"+strings.ReplaceAll(tt.name, " ", "_")+".golden"), []byte(out))
		})
	}
}

func buildGenerations(t *testing.T, refitAt float64) string {
	ctx := context.Background()
	root := t.TempDir()
	opt := testOptions(root)
	opt.Workers = 2
	opt.refitAt = refitAt
	writeCorpus(t, opt.DataDir, 9)
	when := time.Date(2024, 4, 1, 9, 0, 0, 0, time.Local)
	setTimes := func() {
		filepath.WalkDir(opt.DataDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				os.Chtimes(p, when, when)
			}
			return err
		})
	}
	setTimes()
	var out strings.Builder
	build := func(step string) {
		t.Helper()
		sum, err := Build(ctx, opt)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		fmt.Fprintf(&out, "## %s\n%s", step, generationDigest(t, opt.Dir, sum))
	}
	build("first")

	must(t, os.WriteFile(filepath.Join(opt.DataDir, "team1", "doc004.md"), []byte("# 変更\n\nバックアップの復旧手順：復旧ポイントを選定し、ハッシュ値を照合する。\n"), 0o644))
	must(t, os.Remove(filepath.Join(opt.DataDir, "team2", "doc005.md")))
	must(t, os.WriteFile(filepath.Join(opt.DataDir, "team0", "new.md"), []byte("# ログ保管\n\n接続記録は一年間保管する。\n"), 0o644))
	setTimes()
	later := when.Add(24 * time.Hour)
	must(t, os.Chtimes(filepath.Join(opt.DataDir, "team0", "doc003.md"), later, later))
	build("incremental")
	build("unchanged")
	return out.String()
}
