package vector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteForce is the reference: exact float32 scores of every vector, sorted
// by score descending and id ascending.
func bruteForce(f *Flat, q []float32, n int) []Hit {
	qv, _ := normalised(q)
	hits := make([]Hit, f.Len())
	for i := range hits {
		hits[i] = Hit{ID: i, Score: f.exact(qv, i)}
	}
	return topN(hits, n)
}

func randomVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// clustered returns vectors near a few centres, so many scores are close —
// the hard case for an approximate first pass.
func clustered(r *rand.Rand, n, dim, centres int, noise float64) [][]float32 {
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = randomVec(r, dim)
	}
	out := make([][]float32, n)
	for i := range out {
		c := cs[r.IntN(centres)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(noise*r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func mustFlat(t testing.TB, dim int, vecs [][]float32) *Flat {
	t.Helper()
	f, err := NewFlat(dim)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		id, err := f.Add(v)
		if err != nil {
			t.Fatal(err)
		}
		if id != i {
			t.Fatalf("Add returned id %d, want %d", id, i)
		}
	}
	return f
}

func TestSearchEqualsBruteForce(t *testing.T) {
	tests := []struct {
		name              string
		n, dim, centres   int
		noise             float64
		duplicates, zeros int
		k                 []int
	}{
		{name: "tiny", n: 5, dim: 3, centres: 2, noise: 0.5, k: []int{1, 5, 10}},
		{name: "uniform", n: 20000, dim: 64, centres: 20000, noise: 0, k: []int{1, 10, 100}},
		{name: "clustered tight", n: 20000, dim: 128, centres: 5, noise: 0.05, k: []int{1, 10, 50}},
		{name: "clustered odd dim", n: 9000, dim: 37, centres: 30, noise: 0.3, k: []int{10}},
		{name: "with ties and zeros", n: 12000, dim: 32, centres: 50, noise: 0.2, duplicates: 3000, zeros: 100, k: []int{10, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tt.n)))
			vecs := clustered(r, tt.n, tt.dim, tt.centres, tt.noise)
			for range tt.duplicates { // exact copies make exact score ties
				vecs = append(vecs, slices.Clone(vecs[r.IntN(len(vecs))]))
			}
			for range tt.zeros {
				vecs = append(vecs, make([]float32, tt.dim))
			}
			f := mustFlat(t, tt.dim, vecs)
			for qi := range 20 {
				q := vecs[r.IntN(len(vecs))]
				if qi%2 == 1 {
					q = randomVec(r, tt.dim)
				}
				for _, k := range tt.k {
					got, err := f.Search(q, k)
					if err != nil {
						t.Fatal(err)
					}
					want := bruteForce(f, q, k)
					if !slices.Equal(got, want) {
						t.Fatalf("query %d k=%d:\n got %v\nwant %v", qi, k, got, want)
					}
				}
			}
		})
	}
}

func TestSearchEdgeCases(t *testing.T) {
	f := mustFlat(t, 4, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 0, 0}})
	tests := []struct {
		name    string
		q       []float32
		n       int
		want    []Hit
		wantErr bool
	}{
		{name: "wrong dim", q: []float32{1, 0}, n: 1, wantErr: true},
		{name: "NaN", q: []float32{float32(math.NaN()), 0, 0, 0}, n: 1, wantErr: true},
		{name: "zero n", q: []float32{1, 0, 0, 0}, n: 0},
		{name: "negative n", q: []float32{1, 0, 0, 0}, n: -3},
		{name: "zero query ties by id", q: []float32{0, 0, 0, 0}, n: 2, want: []Hit{{0, 0}, {1, 0}}},
		{name: "ranked", q: []float32{2, 0, 0, 0}, n: 5, want: []Hit{{0, 1}, {2, 1 / math.Sqrt2}, {1, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Search(tt.q, tt.n)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].ID != tt.want[i].ID || math.Abs(got[i].Score-tt.want[i].Score) > 1e-6 {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestAddRejectsBadInput(t *testing.T) {
	if _, err := NewFlat(0); err == nil {
		t.Error("NewFlat(0) succeeded")
	}
	if _, err := NewFlat(MaxDim + 1); err == nil {
		t.Error("NewFlat(MaxDim+1) succeeded")
	}
	f, _ := NewFlat(2)
	for _, v := range [][]float32{{1}, {1, 2, 3}, {float32(math.Inf(1)), 0}, {float32(math.NaN()), 1}} {
		if _, err := f.Add(v); err == nil {
			t.Errorf("Add(%v) succeeded", v)
		}
	}
	if f.Len() != 0 {
		t.Errorf("Len = %d after rejected adds", f.Len())
	}
	in := []float32{3, 4}
	id, err := f.Add(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Vector(id); got[0] != 0.6 || got[1] != 0.8 {
		t.Errorf("stored %v, want normalised [0.6 0.8]", got)
	}
	if in[0] != 3 {
		t.Error("Add modified its argument")
	}
	if f.Vector(7) != nil || f.Vector(-1) != nil {
		t.Error("Vector of a missing id is not nil")
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 5000} {
		f := mustFlat(t, 48, clustered(r, n, 48, 10, 0.3))
		var buf bytes.Buffer
		wn, err := f.WriteTo(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if wn != int64(buf.Len()) || buf.Len() != headerSize+n*48*4+4 {
			t.Fatalf("n=%d: WriteTo reported %d, wrote %d bytes", n, wn, buf.Len())
		}
		g, err := ReadFlat(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if g.Len() != n || g.Dim() != 48 || !slices.Equal(g.data, f.data) {
			t.Fatalf("n=%d: round trip changed the store", n)
		}
		if n > 0 {
			q := randomVec(r, 48)
			a, _ := f.Search(q, 10)
			b, _ := g.Search(q, 10)
			if !slices.Equal(a, b) {
				t.Fatalf("search differs after reload: %v vs %v", a, b)
			}
		}
	}
}

func TestReadFlatRejectsCorruption(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	f := mustFlat(t, 8, clustered(r, 50, 8, 3, 0.3))
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	mutate := func(fn func(b []byte) []byte) []byte { return fn(slices.Clone(good)) }
	tests := []struct {
		name    string
		in      []byte
		corrupt bool // wraps ErrCorrupt (all but the version error)
	}{
		{"empty", nil, true},
		{"bad magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), true},
		{"future version", mutate(func(b []byte) []byte { b[8] = 9; return b }), false},
		{"zero dim", mutate(func(b []byte) []byte { b[12], b[13] = 0, 0; return b }), true},
		{"huge count", mutate(func(b []byte) []byte { b[23] = 0x7f; return b }), true},
		{"flipped data bit", mutate(func(b []byte) []byte { b[headerSize+17] ^= 1; return b }), true},
		{"flipped checksum", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), true},
		{"truncated", good[:len(good)-9], true},
		{"no checksum", good[:len(good)-4], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFlat(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatal("ReadFlat accepted corrupt input")
			}
			if errors.Is(err, ErrCorrupt) != tt.corrupt {
				t.Fatalf("errors.Is(err, ErrCorrupt) = %v for %v", !tt.corrupt, err)
			}
		})
	}
}

func FuzzReadFlat(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 3} {
		s := mustFlat(f, 4, clustered(r, n, 4, 2, 0.5))
		var buf bytes.Buffer
		if _, err := s.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Try the input as is and with its checksum repaired, so the fuzzer
		// reaches the validation behind the checksum.
		fixed := slices.Clone(data)
		if len(fixed) >= 4 {
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc32.Checksum(fixed[:len(fixed)-4], castagnoli))
		}
		for _, in := range [][]byte{data, fixed} {
			g, err := ReadFlat(bytes.NewReader(in))
			if err != nil {
				continue
			}
			// Whatever loads must be searchable and re-encode to the same bytes.
			if g.Len() > 0 {
				if _, err := g.Search(make([]float32, g.Dim()), 3); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if _, err := g.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), in[:buf.Len()]) {
				t.Fatal("re-encoding differs from the accepted input")
			}
		}
	})
}

func TestConcurrentSearchAndAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	vecs := clustered(r, 3000, 16, 10, 0.3)
	f := mustFlat(t, 16, vecs[:1000])
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, v := range vecs[1000:] {
			if _, err := f.Add(v); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 200 {
		hits, err := f.Search(vecs[i], 5)
		if err != nil || len(hits) != 5 {
			t.Fatalf("search during add: %v, %d hits", err, len(hits))
		}
	}
	<-done
	if f.Len() != 3000 {
		t.Fatalf("Len = %d", f.Len())
	}
}
