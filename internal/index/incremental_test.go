package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// lawTexts copies the real laws of ../shared/datasets/law-html-ja into dir.
func lawTexts(t *testing.T, dir string) []string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "shared", "datasets", "law-html-ja", "text")
	entries, err := os.ReadDir(src)
	if err != nil || len(entries) < 4 {
		t.Skipf("law texts not available: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, "law"+string(rune('a'+i))+".txt")
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// searchAll returns what both legs find for each query, with the scores,
// and every chunk's identity and text: two indexes that agree on it answer
// every search the same.
func searchAll(t *testing.T, ix *Index, queries []string) []any {
	t.Helper()
	var out []any
	for i := range ix.Len() {
		c := ix.Chunk(i)
		out = append(out, c.ID, c.File, c.Text, c.Heading)
	}
	for _, q := range queries {
		terms := ix.Terms(q)
		hs, ub := ix.Lexical(terms, 20)
		v, err := ix.EmbedQuery(context.Background(), q, terms)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, q, hs, ub, ix.Dense(v, 20))
	}
	return out
}

// TestIncrementalEqualsFullBuild changes one law, removes one and adds a
// new document, then builds incrementally. Without a refit (the live
// model kept, unchanged chunks keeping their vectors, BM25 updated in
// place) every search equals that of a full rebuild with the same model;
// with a refit it equals a plain full rebuild.
func TestIncrementalEqualsFullBuild(t *testing.T) {
	queries := []string{"罰則", "届出をしなければならない者", "第三条の規定", "手順書 障害対応", "政令で定める", "INC-0001"}
	for _, tt := range []struct {
		name    string
		refitAt float64
		refit   bool
	}{
		{"kept model", 10, false},
		{"refit", -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			opt := testOptions(root)
			laws := lawTexts(t, opt.DataDir)
			if _, err := Build(ctx, opt); err != nil {
				t.Fatal(err)
			}
			// One law changes, one disappears, a runbook arrives.
			f, err := os.OpenFile(laws[1], os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("\n第九十九条　この法律に違反した者は、罰則として過料に処する。\n")
			f.Close()
			if err := os.Remove(laws[2]); err != nil {
				t.Fatal(err)
			}
			writeCorpus(t, filepath.Join(opt.DataDir, "runbooks"), 2)

			opt.refitAt = tt.refitAt
			sum, err := Build(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Extracted != 3 || sum.Removed != 1 || sum.Refit != tt.refit || sum.Drift <= 0 {
				t.Fatalf("incremental build: %+v", sum)
			}
			inc, err := Open(ctx, opt.Dir, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}

			// The reference: everything extracted again from the same data
			// folder into a fresh database and index.
			ref := testOptions(filepath.Join(root, "ref"))
			ref.DataDir = opt.DataDir
			if !tt.refit {
				ref.model = inc.local
			}
			rs, err := Build(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if rs.Chunks != sum.Chunks || rs.Documents != sum.Documents {
				t.Fatalf("full build %+v, incremental %+v", rs, sum)
			}
			full, err := Open(ctx, ref.Dir, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := searchAll(t, inc, queries), searchAll(t, full, queries)
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("item %d: incremental %v, full build %v", i, got[i], want[i])
				}
			}
			if !tt.refit && !reflect.DeepEqual(inc.local, full.local) {
				t.Error("the kept model differs")
			}
			// The reused chunks' vectors were copied as stored and the
			// kept model's file linked: both files are the full build's.
			if !tt.refit {
				sameModelFiles(t, opt.Dir, ref.Dir)
			}
		})
	}
}

// fakeRemote embeds a text as a vector derived from its bytes and records
// how many texts it was asked for.
type fakeRemote struct{ texts int }

func (f *fakeRemote) EmbedTexts(_ context.Context, texts []string) ([][]float32, error) {
	f.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 8)
		for k, b := range []byte(s) {
			v[k%8] += float32(b%17) - 8
		}
		out[i] = v
	}
	return out, nil
}

// TestIncrementalRemoteVectors: with the openai embedder an incremental
// build asks the remote only for the changed document's chunks and writes
// the vectors file a full build writes.
func TestIncrementalRemoteVectors(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	opt := testOptions(root)
	opt.Embedder, opt.EmbeddingModel = "openai", "fake"
	remote := &fakeRemote{}
	opt.Remote = remote
	writeCorpus(t, opt.DataDir, 6)
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(opt.DataDir, "team1", "doc004.md")
	f, err := os.OpenFile(changed, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n## 追記\n\n障害報告書を翌営業日までに提出する。\n")
	f.Close()
	remote.texts = 0
	sum, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	inc, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fresh := 0
	for i := range inc.Len() {
		if inc.Chunk(i).Source == "team1/doc004.md" {
			fresh++
		}
	}
	if sum.Extracted != 1 || fresh == 0 || remote.texts != fresh {
		t.Fatalf("incremental build %+v asked the remote for %d texts, the changed document has %d chunks", sum, remote.texts, fresh)
	}

	ref := testOptions(filepath.Join(root, "ref"))
	ref.DataDir, ref.Embedder, ref.EmbeddingModel, ref.Remote = opt.DataDir, "openai", "fake", &fakeRemote{}
	if _, err := Build(ctx, ref); err != nil {
		t.Fatal(err)
	}
	ig, _, _ := readCurrent(opt.Dir)
	fg, _, _ := readCurrent(ref.Dir)
	a, err := os.ReadFile(filepath.Join(ig, vectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(fg, vectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("vectors.bin of the incremental build differs from the full build's")
	}
}

// TestSameIndexWhateverHistory: an index built up by incremental builds
// — a runbook missing and one law longer at first, then the runbook added
// and the law restored — equals a fresh build of the same files: the same
// chunks, BM25 hits and scores, local model and vectors. Each change is
// far below refitDrift, so only the size rule (exactRefitChunks) makes the
// builds refit; a kept model would have been fitted on the first state.
func TestSameIndexWhateverHistory(t *testing.T) {
	ctx := context.Background()
	queries := []string{"罰則", "届出をしなければならない者", "第三条の規定", "手順書 障害対応", "政令で定める", "INC-0001", "ログ保管の手順"}
	root := t.TempDir()
	opt := testOptions(root)
	laws := lawTexts(t, opt.DataDir)
	writeCorpus(t, filepath.Join(opt.DataDir, "runbooks"), 3)
	runbook := filepath.Join(opt.DataDir, "runbooks", "team1", "doc001.md")
	law, err := os.ReadFile(laws[1])
	if err != nil {
		t.Fatal(err)
	}

	// The reference: a fresh build of the final files.
	ref := testOptions(filepath.Join(root, "ref"))
	ref.DataDir = opt.DataDir
	if _, err := Build(ctx, ref); err != nil {
		t.Fatal(err)
	}
	full, err := Open(ctx, ref.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The history: the runbook away and the law longer, then each put back.
	book, err := os.ReadFile(runbook)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(runbook); err != nil {
		t.Fatal(err)
	}
	longer := append(append([]byte{}, law...), "\n第九十九条　この法律に違反した者は、罰則として過料に処する。\n"...)
	if err := os.WriteFile(laws[1], longer, 0o644); err != nil {
		t.Fatal(err)
	}
	opt.DatabaseDir = filepath.Join(root, "history", "database")
	opt.Dir = filepath.Join(root, "history", "index")
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name, file string
		data       []byte
	}{
		{"runbook added", runbook, book},
		{"law restored", laws[1], law},
	} {
		if err := os.WriteFile(step.file, step.data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := Build(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Extracted != 1 || !sum.Refit || sum.Drift <= 0 || sum.Drift > refitDrift || sum.Chunks > exactRefitChunks {
			t.Fatalf("%s: %+v", step.name, sum)
		}
	}
	inc, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, want := searchAll(t, inc, queries), searchAll(t, full, queries)
	if len(got) != len(want) {
		t.Fatalf("%d items, fresh build %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("item %d: incremental %v, fresh build %v", i, got[i], want[i])
		}
	}
	sameModelFiles(t, opt.Dir, ref.Dir)
}

// sameModelFiles checks that the current generations of two index
// folders hold byte-identical vectors and embedder files.
func sameModelFiles(t *testing.T, dir, ref string) {
	t.Helper()
	ig, _, _ := readCurrent(dir)
	fg, _, _ := readCurrent(ref)
	for _, name := range []string{vectorsFile, embedderFile} {
		a, err := os.ReadFile(filepath.Join(ig, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(fg, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s of %s differs from the fresh build's", name, dir)
		}
	}
}
