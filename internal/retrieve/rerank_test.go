package retrieve

import (
	"context"
	"slices"
	"testing"
)

// byColumn is a re-ranker that scores one feature column.
type byColumn int

func (c byColumn) Score(x []float64) float64 { return x[c] }

func TestRerankFeatures(t *testing.T) {
	ctx := context.Background()
	s := New(testIndex(t))
	res, _, err := s.Search(ctx, "ログの保管期間は何年ですか", Options{K: 6, BM25Weight: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.RerankFeatures(ctx, "ログの保管期間は何年ですか", res)
	if err != nil {
		t.Fatal(err)
	}
	names := RerankFeatureNames()
	col := func(n string) int { return slices.Index(names, n) }
	if len(rows) != len(res) {
		t.Fatalf("%d rows for %d results", len(rows), len(res))
	}
	for i, x := range rows {
		if len(x) != len(names) {
			t.Fatalf("row %d: %d columns, %d names", i, len(x), len(names))
		}
	}
	// The log passage holds every word and a period of years.
	top := rows[0]
	if res[0].ChunkID != "d2_0" || top[col("cover")] != 1 || top[col("kind_present")] != 1 || top[col("cover_gap")] != 0 || top[col("log_rank")] != 0 {
		t.Errorf("top %s features %v", res[0].ChunkID, top)
	}
	for i, x := range rows[1:] {
		if x[col("cover_window")] > top[col("cover_window")] || x[col("bigram")] >= top[col("bigram")] {
			t.Errorf("result %d (%s) covers the question better than the answer: %v", i+1, res[i+1].ChunkID, x)
		}
	}
}

func TestRerank(t *testing.T) {
	ctx := context.Background()
	s := New(testIndex(t))
	q := "バックアップの復旧手順"
	res, _, err := s.Search(ctx, q, Options{K: 6, BM25Weight: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	// Scored by log_rank the order turns around: the re-ranker decides.
	got, err := s.Rerank(ctx, q, res, byColumn(slices.Index(RerankFeatureNames(), "log_rank")))
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(res)
	slices.Reverse(want)
	if !slices.Equal(ids(got), ids(want)) {
		t.Errorf("re-ranked %v, want %v", ids(got), ids(want))
	}
	// A query without Japanese and a nil model keep the search's order.
	en, _, err := s.Search(ctx, "backup restore", Options{K: 6, BM25Weight: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q   string
		in  []Result
		res Reranker
	}{{"backup restore", en, byColumn(3)}, {q, res, nil}} {
		got, err := s.Rerank(ctx, tt.q, tt.in, tt.res)
		if err != nil || !slices.Equal(ids(got), ids(tt.in)) {
			t.Errorf("%q: %v, want the search's %v (%v)", tt.q, ids(got), ids(tt.in), err)
		}
	}
}

// TestPromoteDefiningSections: for a definition question, the section
// titled by the asked term comes first, whatever its score; other
// questions keep their order.
func TestPromoteDefiningSections(t *testing.T) {
	in := []Result{
		{ChunkID: "a", Heading: "ガイド > 3.1 検証資料", Text: "供給ソフトウェア内の既知の脆弱性を検出する方法"},
		{ChunkID: "b", Heading: "ガイド > インシデントの重大度", Text: "重大度の定義"},
		{ChunkID: "c", Heading: "ガイド > 2.8 供給ソフトウェア", Text: "組織が第三者に対して配布するソフトウェア。"},
		{ChunkID: "d", Heading: "重大インシデントとは何か？", Text: "複数のチームによる対応を必要とするインシデントを指します。"},
	}
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"ガイドでいう「供給ソフトウェア」とは何を指しますか？", []string{"c", "a", "b", "d"}},
		{"「重大インシデント」とは、どういうインシデントのことですか？", []string{"d", "a", "b", "c"}},
		{"供給ソフトウェアの脆弱性はどう検出しますか？", []string{"a", "b", "c", "d"}},
	} {
		got := slices.Clone(in)
		promoteDefiningSections(tt.q, got)
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("%q: %v, want %v", tt.q, ids(got), tt.want)
		}
	}
}
