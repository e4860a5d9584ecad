package retrieve

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
)

// synonymMap is a Synonyms over a fixed table.
type synonymMap map[string][]string

func (m synonymMap) Synonyms(w string) []string { return m[w] }
func (m synonymMap) Longest() int               { return 8 }

var testSynonyms = synonymMap{
	"ログイン":  {"サインイン", "ログオン"},
	"対処法":   {"対処方法"},
	"マニュアル": {"手引き"},
}

// textIndex indexes each text as a one-chunk document d<i>.
func textIndex(t *testing.T, texts ...string) *index.Index {
	t.Helper()
	var cs []chunk.Chunk
	for i, s := range texts {
		cs = append(cs, chunk.Chunk{ID: fmt.Sprintf("d%d_0", i), File: fmt.Sprintf("database/d%d/page_001.md", i), Page: 1, Text: s})
	}
	ix, err := index.FromChunks(context.Background(), cs, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestExpansion(t *testing.T) {
	ix := textIndex(t, "無効なログオンが10回続くとロックされる。", "記録は1年間保管する。")
	s := New(ix).WithSynonyms(testSynonyms)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"ログインできない", []string{"サインイン", "ログオン"}},
		// A compound written as one word is looked up whole (対処 + 法),
		// and a synonym's terms the question holds are not added again.
		{"ログインの対処法", []string{"サインイン", "ログオン", "方法"}},
		// Words the question does not write side by side are not joined.
		{"対処の法", nil},
		{"バックアップの手順", nil},
	} {
		got := s.Expansion(tc.query, ix.Terms(tc.query))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Expansion(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
	if got := New(ix).Expansion("ログインできない", ix.Terms("ログインできない")); got != nil {
		t.Errorf("a searcher without synonyms expanded to %q", got)
	}
}

// A passage that names the asked thing only by a synonym is found; one
// that holds the question's own word still ranks first.
func TestSearchWithSynonyms(t *testing.T) {
	ix := textIndex(t,
		"アカウントのロックアウト。無効なログオンが10回続くとロックされる。",
		"バックアップからの復旧手順。",
		"ログイン画面の表示設定。",
		"ログの保管期間は1年とする。",
	)
	ctx := context.Background()
	opt := Options{K: 4, Mode: "bm25"}
	plain, info, err := New(ix).Search(ctx, "ログオン", opt)
	if err != nil || len(info.Expansion) != 0 {
		t.Fatalf("plain search: %v, expansion %q", err, info.Expansion)
	}
	if ids(plain)[0] != "d0_0" {
		t.Fatalf("plain search of ログオン = %v", ids(plain))
	}
	s := New(ix).WithSynonyms(testSynonyms)
	res, info, err := s.Search(ctx, "ログイン", opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Expansion, []string{"サインイン", "ログオン"}) {
		t.Errorf("Info.Expansion = %q", info.Expansion)
	}
	if got := ids(res); len(got) < 2 || got[0] != "d2_0" || got[1] != "d0_0" {
		t.Errorf("search of ログイン with synonyms = %v, want the exact match d2_0 first, then the synonym's d0_0", got)
	}
	if res[0].BM25Score != 1 || !(res[1].BM25Score > 0 && res[1].BM25Score < 1) {
		t.Errorf("BM25 scores %v, %v: the synonym's passage should score below the exact match", res[0].BM25Score, res[1].BM25Score)
	}
	// Without synonyms the ログオン passage comes after the log retention
	// one: both share only the character pair ログ with the question.
	res, _, err = New(ix).Search(ctx, "ログイン", opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res); slices.Index(got, "d0_0") < slices.Index(got, "d3_0") {
		t.Errorf("without synonyms the search ranked %v", got)
	}
}

// Mentions lists one chunk per document that names the word or a
// synonym of it — as a word: ログ in ログ保管 is no ログイン.
func TestMentions(t *testing.T) {
	ix := textIndex(t,
		"アカウントのロックアウト。無効なログオンが10回続くとロックされる。",
		"ログの保管期間は1年とする。ログインの記録も含む。",
		"ログの保管場所。",
		"バックアップからの復旧手順。",
	)
	ctx := context.Background()
	s := New(ix).WithSynonyms(testSynonyms)
	got, err := s.Mentions(ctx, []string{"ログイン"}, 5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := ids(got); !slices.Equal(ids, []string{"d1_0", "d0_0"}) {
		t.Fatalf("Mentions(ログイン) = %v, want the exact word's d1_0, then the synonym's d0_0", ids)
	}
	if got[0].Score != 1 || !(got[1].Score > 0 && got[1].Score < 1) {
		t.Errorf("scores %v, %v", got[0].Score, got[1].Score)
	}
	if got, _ := s.Mentions(ctx, []string{"ログイン"}, 1, Options{}); len(got) != 1 {
		t.Errorf("n = 1 gave %d", len(got))
	}
	if got, _ := s.Mentions(ctx, []string{"ログイン"}, 5, Options{Scope: []string{"database/d0"}}); len(got) != 1 || got[0].ChunkID != "d0_0" {
		t.Errorf("in scope d0: %v", ids(got))
	}
	if got, _ := New(ix).Mentions(ctx, []string{"ログイン"}, 5, Options{}); len(got) != 1 {
		t.Errorf("without synonyms: %v, want the exact word's chunk only", ids(got))
	}
	if got, err := s.Mentions(ctx, nil, 5, Options{}); err != nil || got != nil {
		t.Errorf("no words: %v, %v", got, err)
	}
}
