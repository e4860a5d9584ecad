package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestComposeEqualsBuild: an index composed from an old one (documents
// dropped, kept, reordered) and freshly added documents scores exactly like
// one built from scratch over the same sequence.
func TestComposeEqualsBuild(t *testing.T) {
	old := []string{"a b c a", "b d", "c c e", "f a", "g h h"}
	fresh := []string{"a x x", "z d", "b"}
	tests := []struct {
		name string
		from []int // base document, or -1 for the next fresh one
	}{
		{"keep all, append", []int{0, 1, 2, 3, 4, -1, -1, -1}},
		{"replace one in place", []int{0, 1, -1, 3, 4}},
		{"drop and insert", []int{-1, 1, -1, 4, -1}},
		{"only fresh", []int{-1, -1, -1}},
		{"reordered", []int{3, 0, -1, 2}},
	}
	queries := [][]string{{"a"}, {"b", "d"}, {"x", "c"}, {"h", "z", "a"}, {"e"}, {"q"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seq []string
			var added []string
			k := 0
			for _, f := range tt.from {
				if f < 0 {
					seq = append(seq, fresh[k])
					added = append(added, fresh[k])
					k++
				} else {
					seq = append(seq, old[f])
				}
			}
			want := build(DefaultParams(), seq...)
			got, st, err := Compose(build(DefaultParams(), old...), build(DefaultParams(), added...), tt.from)
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != want.Len() || got.VocabularySize() != want.VocabularySize() || got.AvgDocLen() != want.AvgDocLen() || got.Postings() != want.Postings() {
				t.Fatalf("len %d/%d vocab %d/%d avgdl %v/%v postings %d/%d", got.Len(), want.Len(), got.VocabularySize(), want.VocabularySize(), got.AvgDocLen(), want.AvgDocLen(), got.Postings(), want.Postings())
			}
			if st.Added != build(DefaultParams(), added...).Postings() {
				t.Errorf("Added = %d", st.Added)
			}
			for _, q := range queries {
				if g, w := got.Search(q, 10), want.Search(q, 10); !reflect.DeepEqual(g, w) {
					t.Errorf("Search(%v) = %v, want %v", q, g, w)
				}
				if g, w := got.UpperBound(q), want.UpperBound(q); g != w {
					t.Errorf("UpperBound(%v) = %v, want %v", q, g, w)
				}
			}
			fw, ff := got.Forward(nil), want.Forward(nil)
			if got.Len() > 1 {
				part := got.Forward([]int{got.Len() - 1})
				if g, w := part.Terms(got.Len()-1, nil), fw.Terms(got.Len()-1, nil); !reflect.DeepEqual(g, w) || len(part.Terms(0, nil)) != 0 {
					t.Errorf("Forward of the last document = %v, want %v and nothing else", g, w)
				}
			}
			for d := range want.Len() {
				g, w := fw.Terms(d, nil), ff.Terms(d, nil)
				if !sameBag(g, w) || !sameBag(w, strings.Fields(seq[d])) {
					t.Errorf("Forward doc %d = %v, want %v", d, g, w)
				}
			}
		})
	}
	if _, _, err := Compose(build(DefaultParams(), old...), nil, []int{0, 0}); err == nil {
		t.Error("a base document named twice was accepted")
	}
	if _, _, err := Compose(build(DefaultParams(), old...), build(DefaultParams(), fresh...), []int{0, -1}); err == nil {
		t.Error("unplaced added documents were accepted")
	}
}

func sameBag(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// TestComposeVerbatimSameBytes: copying the unchanged encoded postings of
// a monotone composition gives byte for byte the index that re-encoding
// every posting gives, whatever was dropped, replaced or inserted (gaps of
// several varint bytes included).
func TestComposeVerbatimSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	doc := func() []string {
		var ts []string
		for range 1 + rng.IntN(12) {
			// Skewed: common terms have small gaps, rare ones gaps > 127.
			ts = append(ts, fmt.Sprintf("t%d", int(rng.ExpFloat64()*20)))
			if rng.IntN(4) == 0 {
				ts = append(ts, ts[len(ts)-1]) // tf > 1
			}
		}
		return ts
	}
	const n = 3000
	bb := NewBuilder(DefaultParams())
	for range n {
		bb.Add(doc())
	}
	base := bb.Build()
	tests := []struct {
		name string
		from func() []int
	}{
		{"replace one in the middle", func() []int {
			f := span(n)
			f[1500] = -1
			return f
		}},
		{"drop a range, insert more", func() []int {
			f := append(span(700), -1, -1, -1)
			for d := 900; d < n; d++ {
				f = append(f, d)
			}
			return f
		}},
		{"drop the first, append", func() []int { return append(span(n)[1:], -1, -1) }},
		{"drop scattered", func() []int {
			var f []int
			for d := range n {
				if d%97 != 0 {
					f = append(f, d)
				}
			}
			return append([]int{-1}, f...)
		}},
		{"unchanged", func() []int { return span(n) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := tt.from()
			ab := NewBuilder(DefaultParams())
			for _, f := range from {
				if f < 0 {
					ab.Add(doc())
				}
			}
			added := ab.Build()
			got, gst, err := compose(base, added, from, true)
			if err != nil {
				t.Fatal(err)
			}
			want, wst, err := compose(base, added, from, false)
			if err != nil {
				t.Fatal(err)
			}
			var gb, wb bytes.Buffer
			got.WriteTo(&gb)
			want.WriteTo(&wb)
			if !bytes.Equal(gb.Bytes(), wb.Bytes()) || gst != wst {
				t.Fatalf("verbatim compose differs: %d bytes %+v, re-encoded %d bytes %+v", gb.Len(), gst, wb.Len(), wst)
			}
		})
	}
}

func span(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
