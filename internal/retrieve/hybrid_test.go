package retrieve

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
)

func testIndex(t *testing.T) *index.Index {
	t.Helper()
	texts := []string{
		"アカウントロックアウトの解除手順。利用者の本人確認を行い、ADでロックを解除する。",
		"マルウェアに感染した端末はネットワークから隔離する。LANケーブルを抜き、Wi-Fiを切る。",
		"ログの保管期間は1年とする。保管期間内のログは削除してはならない。",
		"バックアップからの復旧手順。復旧ポイントを選び、リストアを実施する。",
		"VPN接続マニュアル。接続できない場合はエラーコードを確認する。",
		"Backup restore procedure: choose a restore point and run the restore job.",
	}
	return textIndex(t, texts...)
}

func TestSearchModesAndFusion(t *testing.T) {
	s := New(testIndex(t))
	ctx := context.Background()
	tests := []struct {
		query string
		opt   Options
		top   string
	}{
		{"マルウェア感染端末の隔離", Options{K: 3, BM25Weight: 0.6}, "d1_0"},
		{"マルウェア感染端末の隔離", Options{K: 3, BM25Weight: 0.6, Fusion: FusionRRF}, "d1_0"},
		{"マルウェア感染端末の隔離", Options{K: 3, Mode: "bm25"}, "d1_0"},
		{"ログの保管期間", Options{K: 3, BM25Weight: 0.6}, "d2_0"},
		{"restore point", Options{K: 3, BM25Weight: 0.6}, "d5_0"},
	}
	for _, tt := range tests {
		res, info, err := s.Search(ctx, tt.query, tt.opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].ChunkID != tt.top {
			t.Errorf("%q %+v: top %v, want %s", tt.query, tt.opt, res, tt.top)
			continue
		}
		if len(res) > tt.opt.K {
			t.Errorf("%d results, want ≤ %d", len(res), tt.opt.K)
		}
		if info.ZeroHit {
			t.Errorf("%q: zero hit", tt.query)
		}
		for i, r := range res {
			for _, v := range []float64{r.Score, r.BM25Score, r.VectorScore, r.EvidenceScore} {
				if v < 0 || v > 1 || math.IsNaN(v) {
					t.Errorf("score out of range: %+v", r)
				}
			}
			if i > 0 && r.Score > res[i-1].Score {
				t.Errorf("results not sorted: %v", res)
			}
		}
	}
}

func TestMinMaxFormula(t *testing.T) {
	s := New(testIndex(t))
	res, _, err := s.Search(context.Background(), "バックアップの復旧手順", Options{K: 6, BM25Weight: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		want := round4(r.BM25Score*0.6 + r.VectorScore*0.4)
		if math.Abs(r.Score-want) > 2e-4 {
			t.Errorf("%s: score %v, want bm25·0.6 + vector·0.4 = %v", r.ChunkID, r.Score, want)
		}
	}
	if res[0].BM25Score != 1 {
		t.Errorf("the best BM25 candidate should normalise to 1, got %v", res[0].BM25Score)
	}
}

func TestEvidenceIsAbsolute(t *testing.T) {
	s := New(testIndex(t))
	ctx := context.Background()
	on, _, _ := s.Search(ctx, "ログの保管期間は？", Options{K: 1, BM25Weight: 0.6})
	off, _, _ := s.Search(ctx, "社員食堂の今週のメニュー", Options{K: 1, BM25Weight: 0.6})
	if len(on) == 0 || on[0].EvidenceScore < 0.5 {
		t.Fatalf("on-topic evidence too low: %v", on)
	}
	if len(off) > 0 && off[0].EvidenceScore >= 0.5 {
		t.Fatalf("off-topic evidence too high: %v", off)
	}
}

func TestExcludeAndErrors(t *testing.T) {
	s := New(testIndex(t))
	ctx := context.Background()
	res, _, err := s.Search(ctx, "マルウェア感染端末の隔離", Options{K: 6, Exclude: func(i int) bool { return i == 1 }})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ChunkID == "d1_0" {
			t.Fatal("excluded chunk returned")
		}
	}
	// An empty query has nothing to rank by: an error, not arbitrary chunks.
	for _, q := range []string{"", " \t\n　"} {
		if res, _, err := s.Search(ctx, q, Options{K: 3}); !errors.Is(err, ErrEmptyQuery) || len(res) != 0 {
			t.Errorf("Search(%q) = %d results, %v; want ErrEmptyQuery", q, len(res), err)
		}
	}
	for _, opt := range []Options{{BM25Weight: 1.5}, {Fusion: "sum"}, {Mode: "fuzzy"}} {
		if _, _, err := s.Search(ctx, "x", opt); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
}

func TestScopeAndSkipIDs(t *testing.T) {
	s := New(testIndex(t))
	ctx := context.Background()
	q := "バックアップからの復旧手順"
	all, _, err := s.Search(ctx, q, Options{K: 6})
	if err != nil || len(all) < 2 || all[0].ChunkID != "d3_0" {
		t.Fatalf("unscoped: %v, %v", ids(all), err)
	}
	cases := []struct {
		name string
		opt  Options
		want []string // every result's chunk id is one of these
	}{
		{"folder", Options{K: 6, Scope: []string{"d5"}}, []string{"d5_0"}},
		{"folder with the database prefix and a slash", Options{K: 6, Scope: []string{"./database/d5/"}}, []string{"d5_0"}},
		{"document", Options{K: 6, Scope: []string{"d2/page_001.md", "d3"}}, []string{"d2_0", "d3_0"}},
		{"skip ids", Options{K: 6, SkipIDs: map[string]bool{"d3_0": true}}, []string{"d0_0", "d1_0", "d2_0", "d4_0", "d5_0"}},
	}
	for _, tc := range cases {
		res, _, err := s.Search(ctx, q, tc.opt)
		if err != nil || len(res) == 0 {
			t.Errorf("%s: %v, %v", tc.name, ids(res), err)
			continue
		}
		for _, r := range res {
			if !slices.Contains(tc.want, r.ChunkID) {
				t.Errorf("%s: %s returned, want only %v", tc.name, r.ChunkID, tc.want)
			}
		}
	}
	if c := (chunk.Chunk{File: "database/runbooks/backup/page_001.md", Source: "runbooks/backup.md"}); !InScope(c, []string{"runbooks"}) || !InScope(c, []string{"runbooks/backup.md"}) || InScope(c, []string{"run"}) {
		t.Error("InScope: folder, source document or a partial name")
	}
}

func ids(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ChunkID)
	}
	return out
}

// TestNoEvidenceRanksTheSame checks that skipping the evidence score changes
// nothing but the evidence score.
func TestNoEvidenceRanksTheSame(t *testing.T) {
	s := New(testIndex(t))
	ctx := context.Background()
	for _, opt := range []Options{
		{K: 6, BM25Weight: 0.6},
		{K: 6, BM25Weight: 0.6, AutoWeight: true},
		{K: 6, Mode: "bm25"},
		{K: 6, BM25Weight: 0.3, Fusion: FusionRRF},
	} {
		for _, q := range []string{"マルウェア感染端末の隔離", "ログの保管期間", "restore point"} {
			want, _, err := s.Search(ctx, q, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.NoEvidence = true
			got, _, err := s.Search(ctx, q, opt)
			opt.NoEvidence = false
			if err != nil {
				t.Fatal(err)
			}
			evidence := false
			for i := range want {
				evidence = evidence || want[i].EvidenceScore > 0
				want[i].EvidenceScore = 0
			}
			if !evidence {
				t.Fatalf("%q %+v: no result has evidence to skip", q, opt)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q %+v: NoEvidence changed the results:\n got %v\nwant %v", q, opt, got, want)
			}
		}
	}
}
