package bm25

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// build indexes docs given as space-separated terms.
func build(p Params, docs ...string) *Index {
	b := NewBuilder(p)
	for _, d := range docs {
		b.Add(strings.Fields(d))
	}
	return b.Build()
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// TestScoreByHand checks Search against the formula computed by hand.
func TestScoreByHand(t *testing.T) {
	ix := build(DefaultParams(),
		"a b c",   // 0: |d| = 3
		"a a d",   // 1: |d| = 3
		"e f g h", // 2: |d| = 4
		"b",       // 3: |d| = 1
	)
	n, avgdl := 4.0, 11.0/4
	idf := func(df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }
	tfPart := func(tf, dl float64) float64 {
		return tf * 2.2 / (tf + 1.2*(1-0.75+0.75*dl/avgdl))
	}
	want := []Hit{
		{1, idf(2) * tfPart(2, 3)},
		{0, idf(2) * tfPart(1, 3)},
	}
	got := ix.Search([]string{"a"}, 10)
	if len(got) != len(want) {
		t.Fatalf("Search(a) = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Doc != want[i].Doc || !near(got[i].Score, want[i].Score) {
			t.Errorf("hit %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Multi-term query: doc 0 matches a and b; doc 3 matches b only.
	q := []string{"a", "b", "zzz"}
	s0 := idf(2)*tfPart(1, 3) + idf(2)*tfPart(1, 3)
	if got := ix.Score(q, 0); !near(got, s0) {
		t.Errorf("Score(q, 0) = %v, want %v", got, s0)
	}
	if ub, want := ix.UpperBound(q), 2*idf(2)*2.2; !near(ub, want) {
		t.Errorf("UpperBound = %v, want %v", ub, want)
	}
	if got := ix.DocFreq("a"); got != 2 {
		t.Errorf("DocFreq(a) = %d, want 2", got)
	}
	if got := ix.DocFreq("zzz"); got != 0 {
		t.Errorf("DocFreq(zzz) = %d, want 0", got)
	}
	if ix.Len() != 4 || ix.VocabularySize() != 8 || !near(ix.AvgDocLen(), avgdl) {
		t.Errorf("Len, VocabularySize, AvgDocLen = %d, %d, %v", ix.Len(), ix.VocabularySize(), ix.AvgDocLen())
	}
}

func TestSearchEdgeCases(t *testing.T) {
	ix := build(DefaultParams(), "x y", "x y", "x y", "z")
	tests := []struct {
		name  string
		query []string
		n     int
		want  []int
	}{
		{"ties by ascending doc id", []string{"x"}, 10, []int{0, 1, 2}},
		{"top-n keeps the lowest ids on ties", []string{"y"}, 2, []int{0, 1}},
		{"n = 0", []string{"x"}, 0, nil},
		{"negative n", []string{"x"}, -1, nil},
		{"unknown term", []string{"nope"}, 5, nil},
		{"empty query", nil, 5, nil},
		{"empty term ignored", []string{"", "z"}, 5, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, h := range ix.Search(tt.query, tt.n) {
				got = append(got, h.Doc)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q, %d) = %v, want %v", tt.query, tt.n, got, tt.want)
			}
		})
	}
	var empty = NewBuilder(DefaultParams()).Build()
	if got := empty.Search([]string{"x"}, 3); got != nil {
		t.Errorf("empty index Search = %v", got)
	}
	if empty.UpperBound([]string{"x"}) != 0 {
		t.Error("empty index UpperBound != 0")
	}
}

func TestQueryTF(t *testing.T) {
	docs := []string{"a b", "b c", "c d"}
	once := build(DefaultParams(), docs...)
	p := DefaultParams()
	p.QueryTF = true
	weighted := build(p, docs...)
	q := []string{"a", "a", "b"}
	if got, want := once.Score(q, 0), once.Score([]string{"a", "b"}, 0); !near(got, want) {
		t.Errorf("distinct: Score(a a b) = %v, want Score(a b) = %v", got, want)
	}
	a, b := weighted.Score([]string{"a"}, 0), weighted.Score([]string{"b"}, 0)
	if got := weighted.Score(q, 0); !near(got, 2*a+b) {
		t.Errorf("QueryTF: Score(a a b) = %v, want 2·a + b = %v", got, 2*a+b)
	}
	if got, want := weighted.UpperBound(q), 2*weighted.UpperBound([]string{"a"})+weighted.UpperBound([]string{"b"}); !near(got, want) {
		t.Errorf("QueryTF: UpperBound = %v, want %v", got, want)
	}
}

func TestParams(t *testing.T) {
	bad := []Params{{K1: -1, B: 0.5}, {K1: 1, B: 1.5}, {K1: math.NaN(), B: 0.5}, {K1: math.Inf(1), B: 0}}
	for _, p := range bad {
		if p.Validate() == nil {
			t.Errorf("%+v validated", p)
		}
		if got := NewBuilder(p).Build().Params(); got.K1 != DefaultK1 || got.B != DefaultB {
			t.Errorf("NewBuilder(%+v) params = %+v, want defaults", p, got)
		}
	}
	if err := (Params{K1: 0, B: 0}).Validate(); err != nil {
		t.Errorf("k1 = 0, b = 0 rejected: %v", err)
	}
}

// randomIndex builds a random index for property tests.
func randomIndex(r *rand.Rand, docs, vocab int, p Params) (*Index, [][]string) {
	b := NewBuilder(p)
	var all [][]string
	for range docs {
		n := r.IntN(30)
		d := make([]string, n)
		for i := range d {
			d[i] = term(r.IntN(vocab))
		}
		all = append(all, d)
		b.Add(d)
	}
	return b.Build(), all
}

func term(i int) string { return string(rune('a'+i%26)) + string(rune('a'+i/26%26)) }

// TestSearchMatchesBruteForce compares heap top-n with scoring every document
// and sorting, and checks the UpperBound property.
func TestSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []Params{DefaultParams(), {K1: 0.9, B: 0.4, QueryTF: true}, {K1: 2, B: 0}} {
		ix, _ := randomIndex(r, 300, 60, p)
		for range 50 {
			q := make([]string, 1+r.IntN(5))
			for i := range q {
				q[i] = term(r.IntN(70)) // some terms unknown
			}
			var want []Hit
			for d := range ix.Len() {
				if s := ix.Score(q, d); s > 0 {
					want = append(want, Hit{d, s})
				}
			}
			slices.SortFunc(want, func(a, b Hit) int {
				if better(a, b) {
					return -1
				}
				return 1
			})
			want = want[:min(10, len(want))]
			got := ix.Search(q, 10)
			if len(got) != len(want) {
				t.Fatalf("%v: got %d hits, want %d", q, len(got), len(want))
			}
			ub := ix.UpperBound(q)
			for i := range got {
				if got[i].Doc != want[i].Doc || !near(got[i].Score, want[i].Score) {
					t.Fatalf("%v hit %d = %+v, want %+v", q, i, got[i], want[i])
				}
				if got[i].Score >= ub || got[i].Score <= 0 {
					t.Fatalf("%v: score %v outside (0, UpperBound %v)", q, got[i].Score, ub)
				}
			}
		}
	}
}

func TestBuilderReuse(t *testing.T) {
	b := NewBuilder(DefaultParams())
	b.Add([]string{"a"})
	first := b.Build()
	if id := b.Add([]string{"a", "b"}); id != 1 {
		t.Errorf("second Add id = %d, want 1", id)
	}
	if first.Len() != 1 || first.DocFreq("b") != 0 {
		t.Error("Build result changed by later Add")
	}
	if second := b.Build(); second.Len() != 2 || second.DocFreq("a") != 2 {
		t.Errorf("second Build: Len %d DocFreq(a) %d", second.Len(), second.DocFreq("a"))
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := Params{K1: 1.5, B: 0.6, QueryTF: true}
	ix, _ := randomIndex(r, 500, 200, p)
	var buf bytes.Buffer
	n, err := ix.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	got, err := ReadIndex(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.Params() != p || got.Len() != ix.Len() || got.VocabularySize() != ix.VocabularySize() {
		t.Fatalf("loaded index differs: %+v %d %d", got.Params(), got.Len(), got.VocabularySize())
	}
	for i := range 100 {
		q := []string{term(i), term(i + 7), term(i * 3)}
		if a, b := ix.Search(q, 20), got.Search(q, 20); !slices.Equal(a, b) {
			t.Fatalf("Search(%q) differs after round trip:\n%v\n%v", q, a, b)
		}
	}
	var again bytes.Buffer
	if _, err := got.WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("re-encoding a loaded index changed the bytes")
	}
}

func TestReadIndexRejectsCorruption(t *testing.T) {
	ix := build(DefaultParams(), "a b c", "a a d", "インシデント 対応")
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x41
		if _, err := ReadIndex(bytes.NewReader(bad)); err == nil {
			t.Errorf("flipped byte %d accepted", i)
		}
	}
	for n := range len(data) {
		if _, err := ReadIndex(bytes.NewReader(data[:n])); err == nil {
			t.Errorf("truncation to %d bytes accepted", n)
		}
	}
}

// withCRC appends a valid checksum, so decoding goes past the checksum check.
func withCRC(b []byte) []byte {
	var sum [4]byte
	c := crc32Sum(b)
	sum[0], sum[1], sum[2], sum[3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	return append(slices.Clone(b), sum[:]...)
}

func FuzzReadIndex(f *testing.F) {
	for _, docs := range [][]string{{"a b c", "a a d"}, {"x"}, {}} {
		var buf bytes.Buffer
		if _, err := build(DefaultParams(), docs...).WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(buf.Bytes()[:buf.Len()-4]) // body only: exercised via withCRC
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withCRC(data)} {
			ix, err := ReadIndex(bytes.NewReader(in))
			if err != nil {
				continue
			}
			// A successfully decoded index must be usable, verifiable
			// without panics, and re-encode to the same bytes.
			_ = ix.Verify()
			for _, tm := range ix.terms {
				ix.Search([]string{tm}, 3)
				ix.UpperBound([]string{tm})
			}
			var buf bytes.Buffer
			if _, err := ix.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), in) {
				t.Fatalf("re-encoding differs")
			}
		}
	})
}

// TestVerifyForgedPostings forges postings that pass the checksum: loading
// succeeds (postings are not decoded at load), Verify reports the damage and
// searching stays safe.
func TestVerifyForgedPostings(t *testing.T) {
	ix := build(DefaultParams(), "a b", "a c", "a d")
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[:buf.Len()-4]
	// The postings section comes just before the score bounds at the tail
	// of the body; term "a" comes first with postings (1,1)(1,1)(1,1). Make
	// the second delta jump past N.
	postStart := len(body) - len(ix.post) - len(ix.tmax) - len(ix.blocks)
	forged := slices.Clone(body)
	forged[postStart+2] = 0x7f
	got, err := ReadIndex(bytes.NewReader(withCRC(forged)))
	if err != nil {
		t.Fatalf("ReadIndex: %v", err)
	}
	if err := got.Verify(); err == nil {
		t.Error("Verify accepted forged postings")
	}
	if hits := got.Search([]string{"a"}, 10); len(hits) != 1 || hits[0].Doc != 0 {
		t.Errorf("Search over forged postings = %v, want only doc 0", hits)
	}
	if err := ix.Verify(); err != nil {
		t.Errorf("Verify of a built index: %v", err)
	}
}
