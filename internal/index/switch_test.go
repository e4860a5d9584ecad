package index

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// errKilled is what the crash hook returns: the build stops right there.
var errKilled = errors.New("killed")

// pageFiles lists the page database's files, relative to it.
func pageFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestSwitchKilledAtEveryStep kills a build that removes a source after
// each file system operation of its switch — every file of the new
// generation, its installation, CURRENT, the removal of old generations,
// each stale page — and then runs the next build (incremental, and with
// Rebuild): each time the index and the page database equal a clean
// build's, and the removed source never comes back as a database-only
// document.
func TestSwitchKilledAtEveryStep(t *testing.T) {
	ctx := context.Background()
	// setup is the state before the killed build: six sources indexed,
	// then one deleted and one changed.
	setup := func(t *testing.T) BuildOptions {
		opt := testOptions(t.TempDir())
		writeCorpus(t, opt.DataDir, 6)
		if _, err := Build(ctx, opt); err != nil {
			t.Fatal(err)
		}
		must(t, os.Remove(filepath.Join(opt.DataDir, "team1", "doc001.md")))
		touch(t, filepath.Join(opt.DataDir, "team2", "doc002.md"), "# 手順書 2\n\n## 概要\n\n改訂版。バックアップの保管期間は九十日とする。\n")
		return opt
	}

	clean := testOptions(t.TempDir())
	writeCorpus(t, clean.DataDir, 6)
	must(t, os.Remove(filepath.Join(clean.DataDir, "team1", "doc001.md")))
	touch(t, filepath.Join(clean.DataDir, "team2", "doc002.md"), "# 手順書 2\n\n## 概要\n\n改訂版。バックアップの保管期間は九十日とする。\n")
	if _, err := Build(ctx, clean); err != nil {
		t.Fatal(err)
	}
	wantSources := sources(t, clean.Dir)
	wantPages := pageFiles(t, clean.DatabaseDir)

	// The steps of one switch, named by an uninterrupted run.
	var steps []string
	opt := setup(t)
	opt.crash = func(step string) error { steps = append(steps, step); return nil }
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if len(steps) < 8 || !slices.Contains(steps, "remove database/team1/doc001/page_001.md") {
		t.Fatalf("switch steps %q: want the generation's files, CURRENT and the stale page", steps)
	}

	for i, step := range steps {
		for _, rebuild := range []bool{false, true} {
			name := step
			if rebuild {
				name += ", then --rebuild"
			}
			t.Run(name, func(t *testing.T) {
				opt := setup(t)
				n := 0
				opt.crash = func(string) error {
					if n == i {
						return errKilled
					}
					n++
					return nil
				}
				if _, err := Build(ctx, opt); !errors.Is(err, errKilled) {
					t.Fatalf("killed build: %v", err)
				}
				// Whatever the kill left is loadable.
				if _, err := Open(ctx, opt.Dir, OpenOptions{}); err != nil {
					t.Fatalf("after the kill the index does not open: %v", err)
				}
				opt.crash, opt.Rebuild = nil, rebuild
				if _, err := Build(ctx, opt); err != nil {
					t.Fatal(err)
				}
				if got := sources(t, opt.Dir); !maps.Equal(got, wantSources) {
					t.Errorf("sources %v, want %v", got, wantSources)
				}
				if got := pageFiles(t, opt.DatabaseDir); !slices.Equal(got, wantPages) {
					t.Errorf("page database %q, want %q", got, wantPages)
				}
				// And once more: nothing comes back later either.
				opt.Rebuild = false
				if _, err := Build(ctx, opt); err != nil {
					t.Fatal(err)
				}
				if got := sources(t, opt.Dir); !maps.Equal(got, wantSources) {
					t.Errorf("after one more build: sources %v, want %v", got, wantSources)
				}
			})
		}
	}
}
