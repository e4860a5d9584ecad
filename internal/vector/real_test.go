package vector_test

import (
	"bufio"
	"context"
	"encoding/json"
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
