package retrieve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/index"
)

// overlapStore makes the BM25 leg wait until the vector leg has started:
// a Search that ran the legs one after another would never get past it.
type overlapStore struct {
	*index.Index
	denseStarted chan struct{}
}

func (s overlapStore) DenseHits(ctx context.Context, q []float32, n int) ([]index.Hit, error) {
	close(s.denseStarted)
	return s.Index.DenseHits(ctx, q, n)
}

func (s overlapStore) LexicalHits(ctx context.Context, terms []string, n int) ([]index.Hit, float64, error) {
	select {
	case <-s.denseStarted:
	case <-time.After(10 * time.Second):
		return nil, 0, errors.New("the vector leg did not start while BM25 ran")
	}
	return s.Index.LexicalHits(ctx, terms, n)
}

// TestLegsRunSideBySide: the vector leg runs while the BM25 leg does, and
// the results are those of the plain index.
func TestLegsRunSideBySide(t *testing.T) {
	ix := testIndex(t)
	opt := Options{K: 3, BM25Weight: 0.6}
	want, _, err := New(ix).Search(context.Background(), "猫の目", opt)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := New(overlapStore{Index: ix, denseStarted: make(chan struct{})}).Search(context.Background(), "猫の目", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rank %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
}
