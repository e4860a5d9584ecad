package vector_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/vector"
)

// TestSearchEqualsBruteForceOnRealEmbeddings indexes Local embeddings of the
// JSQuAD corpus and checks every 25th question's top 20 against exhaustive
// float32 scoring (ties by id).
func TestSearchEqualsBruteForceOnRealEmbeddings(t *testing.T) {
	dir := "../../../shared/datasets/jsquad-valid"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("dataset not available: %v", err)
	}
	features := func(s string) []string { return embed.CharNGrams(s, 2) }
	var docs [][]string
	readJSONL(t, filepath.Join(dir, "corpus.jsonl"), func(m map[string]string) {
		docs = append(docs, features(m["title"]+"\n"+m["text"]))
	})
	var queries [][]string
	readJSONL(t, filepath.Join(dir, "queries.jsonl"), func(m map[string]string) {
		queries = append(queries, features(m["text"]))
	})
	ctx := context.Background()
	model, err := embed.FitLocal(ctx, docs, embed.LocalOptions{Dim: 128})
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := model.EmbedAll(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	// Replicate the corpus so the store is larger than one candidate pool
	// and full of exact ties (copies), the hardest case for the int8 pass.
	f, _ := vector.NewFlat(model.Dim())
	for range 4 {
		for _, v := range vecs {
			if _, err := f.Add(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	stored := make([][]float32, f.Len())
	for id := range stored {
		stored[id] = f.Vector(id)
	}
	for qi := 0; qi < len(queries); qi += 25 {
		q := model.Embed(queries[qi])
		got, err := f.Search(q, 20)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]vector.Hit, f.Len())
		for id := range want {
			v := stored[id]
			var s float64
			for j := range v {
				s += float64(q[j]) * float64(v[j])
			}
			want[id] = vector.Hit{ID: id, Score: s}
		}
		slices.SortFunc(want, func(a, b vector.Hit) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return a.ID - b.ID
		})
		want = want[:20]
		for i := range got {
			// Scores may differ in the last bit (summation order), ids may not.
			if got[i].ID != want[i].ID || abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("query %d rank %d: got %+v, want %+v", qi, i, got[i], want[i])
			}
		}
	}
}

// TestInt8FirstPassRecallOnRealEmbeddings measures the int8 first pass on
// the local embeddings (256 dimensions, as `shirube index` builds them) of
// the JSQuAD corpus replicated 4× (4,580 rows, each with three exact
// copies): the share of the exact top 100 already in its candidate pool —
// measured 1.000, asserted ≥ 0.99 — and that the final result, after the
// exact re-scoring, equals exhaustive search.
func TestInt8FirstPassRecallOnRealEmbeddings(t *testing.T) {
	dir := "../../../shared/datasets/jsquad-valid"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("dataset not available: %v", err)
	}
	features := func(s string) []string { return embed.CharNGrams(s, 2) }
	var docs, queries [][]string
	readJSONL(t, filepath.Join(dir, "corpus.jsonl"), func(m map[string]string) {
		docs = append(docs, features(m["title"]+"\n"+m["text"]))
	})
	readJSONL(t, filepath.Join(dir, "queries.jsonl"), func(m map[string]string) {
		queries = append(queries, features(m["text"]))
	})
	ctx := context.Background()
	model, err := embed.FitLocal(ctx, docs, embed.LocalOptions{Dim: 256})
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := model.EmbedAll(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := vector.NewFlat(model.Dim())
	for range 4 {
		for _, v := range vecs {
			if _, err := f.Add(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	const k = 100
	found, total, rescored, nq := 0, 0, 0, 0
	for qi := 0; qi < len(queries); qi += 20 {
		q := model.Embed(queries[qi])
		got, inPool, extra, err := vector.SearchFirstPass(f, q, k)
		if err != nil {
			t.Fatal(err)
		}
		want := exhaustive(f, q, k)
		for i := range want {
			if got[i].ID != want[i].ID || abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("query %d rank %d: got %+v, want %+v", qi, i, got[i], want[i])
			}
		}
		found += inPool
		total += len(want)
		rescored += extra
		nq++
	}
	recall := float64(found) / float64(total)
	t.Logf("int8 first pass: recall@%d %.4f over %d queries, %.1f rows re-scored beyond the pool per query", k, recall, nq, float64(rescored)/float64(nq))
	if recall < 0.99 {
		t.Fatalf("int8 first-pass recall@%d = %.4f, measured 1.000", k, recall)
	}
}

// exhaustive is the reference: every stored vector scored in float64,
// sorted by score descending and id ascending.
func exhaustive(f *vector.Flat, q []float32, n int) []vector.Hit {
	var qn float64
	for _, x := range q {
		qn += float64(x) * float64(x)
	}
	qn = math.Sqrt(qn)
	qv := make([]float32, len(q))
	for j, x := range q {
		qv[j] = float32(float64(x) / qn)
	}
	want := make([]vector.Hit, f.Len())
	for id := range want {
		v := f.Vector(id)
		var s0, s1, s2, s3 float64
		for j := 0; j+4 <= len(v); j += 4 {
			s0 += float64(qv[j]) * float64(v[j])
			s1 += float64(qv[j+1]) * float64(v[j+1])
			s2 += float64(qv[j+2]) * float64(v[j+2])
			s3 += float64(qv[j+3]) * float64(v[j+3])
		}
		want[id] = vector.Hit{ID: id, Score: (s0 + s1) + (s2 + s3)}
	}
	slices.SortFunc(want, func(a, b vector.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.ID - b.ID
	})
	return want[:n]
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func readJSONL(t *testing.T, path string, fn func(map[string]string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := map[string]string{}
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		for k, v := range raw {
			if s, ok := v.(string); ok {
				m[k] = s
			}
		}
		fn(m)
	}
}
