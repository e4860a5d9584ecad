package bm25

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// zipfIndex builds a random corpus whose term frequencies follow a Zipf law
// (so frequent terms span many blocks and rare ones one), with document
// lengths varying around meanLen. dupEvery > 0 repeats every dupEvery-th
// document verbatim, so that equal scores (ties) are common.
func zipfIndex(r *rand.Rand, docs, vocab, meanLen, dupEvery int, p Params) (*Index, func() string) {
	z := rand.NewZipf(r, 1.1, 1.5, uint64(vocab-1))
	draw := func() string { return fmt.Sprintf("w%d", z.Uint64()) }
	b := NewBuilder(p)
	var prev []string
	for i := range docs {
		if dupEvery > 0 && i%dupEvery == 1 && prev != nil {
			b.Add(prev)
			continue
		}
		d := make([]string, 1+r.IntN(2*meanLen))
		for j := range d {
			d[j] = draw()
		}
		b.Add(d)
		prev = d
	}
	return b.Build(), draw
}

// sameHits reports whether two result lists are identical: same documents in
// the same order with bit-identical scores.
func sameHits(a, b []Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Doc != b[i].Doc || math.Float64bits(a[i].Score) != math.Float64bits(b[i].Score) {
			return false
		}
	}
	return true
}

// TestPrunedEqualsExhaustive is the property test of the pruned search: over
// many random corpora, parameters, queries and result sizes, it returns
// exactly what scoring every posting returns — the same documents in the
// same order (ties by ascending id) with bit-identical scores — on a built
// index, on the same index written and read back, and on a composed one.
func TestPrunedEqualsExhaustive(t *testing.T) {
	params := []Params{
		DefaultParams(),
		{K1: 0.9, B: 0.4, QueryTF: true},
		{K1: 2, B: 0},
		{K1: 1.2, B: 1},
		{K1: 0, B: 0.75},
	}
	ns := []int{1, 2, 3, 10, 100, 1000}
	corpora := 60
	if testing.Short() {
		corpora = 15
	}
	r := rand.New(rand.NewPCG(11, 12))
	queries, prunedDocs := 0, 0
	for c := range corpora {
		p := params[c%len(params)]
		docs := 1 + r.IntN(4000)
		vocab := 2 + r.IntN(3000)
		dup := 0
		if c%3 == 0 {
			dup = 2 + r.IntN(4)
		}
		ix, draw := zipfIndex(r, docs, vocab, 1+r.IntN(60), dup, p)
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		loaded, err := ReadIndex(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := loaded.Verify(); err != nil {
			t.Fatalf("corpus %d: Verify: %v", c, err)
		}
		for range 40 {
			q := make([]string, 1+r.IntN(30))
			for i := range q {
				q[i] = draw()
				if r.IntN(10) == 0 {
					q[i] = "unknown"
				}
			}
			n := ns[r.IntN(len(ns))]
			want := ix.search(q, n, exhaustive)
			for _, x := range []*Index{ix, loaded} {
				if got := x.search(q, n, auto); !sameHits(got, want) {
					t.Fatalf("corpus %d (%d docs, %+v), n = %d, query %q:\nauto %v\nall  %v", c, docs, p, n, q, got, want)
				}
				// Windows of 64 to 4,096 documents: many windows per
				// corpus, so skipped windows and cursors carried from
				// one window to the next are exercised too.
				for _, win := range []int{64, 192, 1024, window} {
					if got := x.searchWin(q, n, pruned, win); !sameHits(got, want) {
						t.Fatalf("corpus %d (%d docs, %+v), window %d, n = %d, query %q:\npruned %v\nall    %v", c, docs, p, win, n, q, got, want)
					}
				}
			}
			queries++
			if len(want) == n {
				prunedDocs++
			}
		}
	}
	t.Logf("%d queries, %d with a full top n", queries, prunedDocs)
}

// TestPrunedComposed checks the pruned search on an index composed from
// another (renumbered, some documents dropped, fresh ones merged): its
// bounds must be those of its own statistics.
func TestPrunedComposed(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for c := range 10 {
		base, draw := zipfIndex(r, 2000, 500, 30, 0, DefaultParams())
		added, _ := zipfIndex(r, 300, 500, 30, 0, DefaultParams())
		var from []int
		k := 0
		for d := range base.Len() {
			switch {
			case r.IntN(10) == 0: // dropped
			case r.IntN(10) == 0 && k < added.Len():
				from = append(from, -1)
				k++
			default:
				from = append(from, d)
			}
		}
		for ; k < added.Len(); k++ {
			from = append(from, -1)
		}
		ix, _, err := Compose(base, added, from)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Verify(); err != nil {
			t.Fatalf("compose %d: Verify: %v", c, err)
		}
		for range 50 {
			q := []string{draw(), draw(), draw(), draw(), draw()}
			for _, n := range []int{1, 10, 100} {
				if got, want := ix.searchWin(q, n, pruned, 256), ix.search(q, n, exhaustive); !sameHits(got, want) {
					t.Fatalf("compose %d, n = %d, query %q:\npruned %v\nall    %v", c, n, q, got, want)
				}
			}
		}
	}
}

// TestBlocksSkip checks the block table of a long posting list: entries at
// every blockSize-th posting, seeks that land on and between blocks.
func TestBlocksSkip(t *testing.T) {
	b := NewBuilder(DefaultParams())
	const docs = 1000
	for d := range docs {
		terms := []string{"x"}
		if d%3 == 0 {
			terms = append(terms, "every3")
		}
		for range d % 5 {
			terms = append(terms, "every3")
		}
		b.Add(terms)
	}
	ix := b.Build()
	id := ix.vocab["every3"]
	df := int(ix.df[id])
	if got, want := len(ix.termBlocks(id))/blockEntry, (df+blockSize-1)/blockSize; got != want {
		t.Fatalf("blocks = %d, want %d", got, want)
	}
	var docsOf []int
	postings(ix.post[ix.poffs[id]:ix.poffs[id+1]], docs, func(d, _ uint32) { docsOf = append(docsOf, int(d)) })
	for target := 0; target <= docs; target += 7 {
		c := cursor{post: ix.post[ix.poffs[id]:ix.poffs[id+1]], blk: ix.termBlocks(id), doc: -1}
		c.next(docs)
		c.seek(target, docs)
		want := docs
		for _, d := range docsOf {
			if d >= target {
				want = d
				break
			}
		}
		if c.doc != want {
			t.Fatalf("seek(%d) = %d, want %d", target, c.doc, want)
		}
	}
}

// TestBoundsFormat: the score bounds are persisted and checked. A version 1
// index (without bounds) is refused with a message that says to rebuild;
// forged bounds that pass the checksum load, and Verify reports them.
func TestBoundsFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	ix, _ := zipfIndex(r, 500, 50, 20, 0, DefaultParams())
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[:buf.Len()-4]

	old := bytes.Clone(body)
	old[4] = 1
	_, err := ReadIndex(bytes.NewReader(withCRC(old)))
	if err == nil || !errors.Is(err, ErrOldFormat) || errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "older shirube") {
		t.Errorf("version 1 index: err = %v, want ErrOldFormat (not ErrFormat) naming an older version", err)
	}

	if len(ix.blocks) == 0 {
		t.Fatal("no term has more than one block")
	}
	for _, off := range []int{len(body) - len(ix.blocks) - len(ix.tmax), len(body) - 1} {
		forged := bytes.Clone(body)
		forged[off] ^= 0x10
		got, err := ReadIndex(bytes.NewReader(withCRC(forged)))
		if err != nil {
			t.Fatalf("forged bound at %d: ReadIndex: %v", off, err)
		}
		if err := got.Verify(); err == nil {
			t.Errorf("forged bound at %d: Verify accepted it", off)
		}
	}
}

// TestRealPrunedEqualsExhaustive compares the pruned and exhaustive searches
// on real indexes and queries, in the files BenchmarkReal reads (BM25_BENCH).
// Skipped when unset.
func TestRealPrunedEqualsExhaustive(t *testing.T) {
	spec := os.Getenv("BM25_BENCH")
	if spec == "" {
		t.Skip("BM25_BENCH not set")
	}
	for _, prefix := range strings.Split(spec, ",") {
		data, err := os.ReadFile(prefix + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(prefix + ".queries")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(text)), "\n")
		for _, n := range []int{1, 10, 100, 1000} {
			for _, l := range lines {
				q := strings.Split(l, "\t")
				if got, want := ix.search(q, n, pruned), ix.search(q, n, exhaustive); !sameHits(got, want) {
					t.Fatalf("%s, n = %d, query %q: pruned and exhaustive differ", prefix, n, q)
				}
			}
		}
		t.Logf("%s: %d queries × n ∈ {1, 10, 100, 1000}: identical", prefix, len(lines))
	}
}
