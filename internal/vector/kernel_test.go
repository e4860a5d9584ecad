package vector

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExactDotsMatchExact checks that the exact kernels (the dispatched
// one, AVX2 where the CPU has it, and the portable one) give Flat.exact's
// scores bit for bit, for dimensions with and without a tail and for
// batches with and without a remainder of four rows.
func TestExactDotsMatchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 31))
	for _, dim := range []int{1, 3, 4, 5, 8, 12, 37, 64, 256, 1536} {
		vecs := clustered(r, 40, dim, 3, 0.5)
		vecs = append(vecs, make([]float32, dim)) // a zero row
		f := mustFlat(t, dim, vecs)
		for _, nids := range []int{1, 2, 3, 4, 5, 8, 9, 41} {
			q, _ := normalised(randomVec(r, dim))
			q64 := make([]float64, dim)
			for j, x := range q {
				q64[j] = float64(x)
			}
			ids := make([]int32, nids)
			for i := range ids {
				ids[i] = int32(r.IntN(f.n))
			}
			for name, k := range map[string]func([]float64, []float32, []int32, []float64){
				"dispatch": exactDots, "generic": exactDotsGeneric,
			} {
				got := make([]float64, nids)
				k(q64, f.data, ids, got)
				for i, id := range ids {
					if want := f.exact(q, int(id)); math.Float64bits(got[i]) != math.Float64bits(want) {
						t.Fatalf("%s dim %d row %d: %v, want %v", name, dim, id, got[i], want)
					}
				}
			}
		}
	}
}

// TestDotsF32WithinBound checks the float32 first-pass kernels against the
// exact scores: every estimate lies within the rounding bound the search
// relies on.
func TestDotsF32WithinBound(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 32))
	for _, dim := range []int{3, 8, 16, 24, 37, 256, 1536} {
		vecs := clustered(r, 23, dim, 2, 0.3)
		f := mustFlat(t, dim, vecs)
		q, _ := normalised(vecs[0])
		eps := roundingBound(dim)
		for _, rows := range []int{1, 3, 4, 5, 17, 23} {
			for name, k := range map[string]func(q, rows, out []float32){"dispatch": dotsF32, "generic": dotsF32Generic} {
				out := make([]float32, rows)
				k(q, f.data[:rows*dim], out)
				for i := range rows {
					if e := f.exact(q, i); math.Abs(float64(out[i])-e) > eps {
						t.Fatalf("%s dim %d row %d of %d: %v, exact %v, bound %g", name, dim, i, rows, out[i], e, eps)
					}
				}
			}
		}
	}
}

// TestSelectTop checks quickselect against sorting, with many equal
// scores among the candidates.
func TestSelectTop(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 33))
	for _, n := range []int{1, 2, 5, 17, 18, 100, 533} {
		for _, distinct := range []int{1, 3, 1000} {
			es := make([]entry, n)
			for i := range es {
				es[i] = entry{float32(r.IntN(distinct)), int32(i)}
			}
			want := scoresDesc(es)
			for _, k := range []int{1, n / 2, n - 1, n} {
				if k < 1 {
					continue
				}
				got := slices.Clone(es)
				selectTop(got, k)
				if !slices.Equal(scoresDesc(got[:k]), want[:k]) {
					t.Fatalf("n %d distinct %d k %d: kept %v, want %v", n, distinct, k, scoresDesc(got[:k]), want[:k])
				}
				ids := func(es []entry) []int32 {
					var out []int32
					for _, e := range es {
						out = append(out, e.id)
					}
					slices.Sort(out)
					return out
				}
				if !slices.Equal(ids(got), ids(es)) {
					t.Fatalf("n %d k %d: entries lost or duplicated", n, k)
				}
			}
		}
	}
}

func scoresDesc(es []entry) []float32 {
	s := make([]float32, len(es))
	for i, e := range es {
		s[i] = e.score
	}
	slices.Sort(s)
	slices.Reverse(s)
	return s
}

// TestCollectorKeepsBest offers long streams to a collector and checks
// that, after a final compaction, it holds the best scores.
func TestCollectorKeepsBest(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 34))
	for _, n := range []int{10, 132, 1000, 20000} {
		for _, keep := range []int{1, 7, 132} {
			var c collector
			c.reset(keep)
			all := make([]entry, n)
			for i := range all {
				all[i] = entry{float32(r.IntN(500)), int32(i)}
				if i%3 == 0 {
					all[i].score = float32(i) // a rising run
				}
				c.offer(all[i].score, all[i].id)
			}
			if len(c.buf) > keep {
				c.compact()
			}
			want := scoresDesc(all)[:min(keep, n)]
			if got := scoresDesc(c.buf); !slices.Equal(got, want) {
				t.Fatalf("n %d keep %d: kept %v, want %v", n, keep, got, want)
			}
		}
	}
}

// TestSearchPathsAgreeAtPeersSizes checks the paths a search can take at
// the sizes of the peers benchmark and beyond (one and several workers):
// the float32 and the int8 first pass must both give exhaustive exact
// search's result.
func TestSearchPathsAgreeAtPeersSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("large stores")
	}
	for _, tt := range []struct {
		n, dim, centres int
		noise           float64
	}{
		{1145, 256, 30, 0.6},
		{5183, 256, 30, 0.6},
		{40000, 32, 100, 0.3},
	} {
		r := rand.New(rand.NewPCG(35, uint64(tt.n)))
		vecs := clustered(r, tt.n, tt.dim, tt.centres, tt.noise)
		for range tt.n / 20 {
			vecs = append(vecs, slices.Clone(vecs[r.IntN(len(vecs))]))
		}
		f := mustFlat(t, tt.dim, vecs)
		for qi := range 12 {
			q := vecs[r.IntN(len(vecs))]
			if qi%3 == 1 {
				q = randomVec(r, tt.dim)
			}
			for _, k := range []int{1, 10, 100} {
				want := bruteForce(f, q, k)
				for _, min := range []int{0, math.MaxInt} {
					f.quantMin = min
					got, err := f.Search(q, k)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("n %d query %d k %d quantMin %d:\n got %v\nwant %v", tt.n, qi, k, min, got, want)
					}
				}
			}
		}
	}
}

// TestTopByHistogram checks that the histogram selection returns at least
// the k highest estimates, whatever their spread (all equal, a few
// distinct values, a long tail).
func TestTopByHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 36))
	var hist [histBuckets]int32
	for _, n := range []int{1, 2, 10, 1145, 5000} {
		for _, kind := range []string{"equal", "few", "normal", "tail"} {
			est := make([]float32, n)
			for i := range est {
				switch kind {
				case "few":
					est[i] = float32(r.IntN(3))
				case "normal":
					est[i] = float32(r.NormFloat64())
				case "tail":
					est[i] = float32(math.Exp(5 * r.Float64()))
				}
			}
			want := slices.Clone(est)
			slices.Sort(want)
			slices.Reverse(want)
			for _, k := range []int{1, n / 3, n} {
				if k < 1 {
					continue
				}
				got := topByHistogram(est, k, nil, &hist)
				if len(got) < k {
					t.Fatalf("%s n %d k %d: %d entries", kind, n, k, len(got))
				}
				kept := scoresDesc(got)
				if !slices.Equal(kept[:k], want[:k]) {
					t.Fatalf("%s n %d k %d: best kept %v, want %v", kind, n, k, kept[:k], want[:k])
				}
				for _, e := range got {
					if est[e.id] != e.score {
						t.Fatalf("%s: entry %v does not match its estimate %v", kind, e, est[e.id])
					}
				}
			}
		}
	}
}

// TestSortHits compares sortHits with the library sort, with many equal
// scores.
func TestSortHits(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 37))
	for _, n := range []int{0, 1, 2, 12, 13, 100, 132, 1000} {
		for _, distinct := range []int{1, 4, 1 << 30} {
			hs := make([]Hit, n)
			for i, id := range r.Perm(n) {
				hs[i] = Hit{ID: id, Score: float64(r.IntN(distinct)) / 7}
			}
			want := slices.Clone(hs)
			slices.SortFunc(want, compareHits)
			sortHits(hs)
			if !slices.Equal(hs, want) {
				t.Fatalf("n %d distinct %d: got %v, want %v", n, distinct, hs, want)
			}
		}
	}
}

// TestQuantEstMatchesGeneric checks the int8 pass's estimate kernel
// against the portable loop: the same estimates bit for bit and the same
// upper bounds (up to a fused multiply-add the compiler may use).
func TestQuantEstMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 38))
	for _, n := range []int{0, 1, 7, 8, 9, 255, 256} {
		dots := make([]int32, n)
		scale, errs := make([]float32, n), make([]float32, n)
		for i := range n {
			dots[i] = int32(r.IntN(1<<28)) - 1<<27
			scale[i] = float32(r.Float64() / 127)
			errs[i] = float32(r.Float64() / 100)
		}
		tq, k1, k0 := float32(1.0/32767), float32(1.0003), float32(0.0003)
		est, up := make([]float32, n), make([]float32, n)
		west, wup := make([]float32, n), make([]float32, n)
		quantEst(dots, scale, errs, tq, k1, k0, est, up)
		quantEstGeneric(dots, scale, errs, tq, k1, k0, west, wup)
		for i := range n {
			if math.Float32bits(est[i]) != math.Float32bits(west[i]) {
				t.Fatalf("n %d row %d: estimate %v, want %v", n, i, est[i], west[i])
			}
			if d := math.Abs(float64(up[i] - wup[i])); d > 1e-6 {
				t.Fatalf("n %d row %d: bound %v, want %v", n, i, up[i], wup[i])
			}
		}
	}
}

// TestZeroQueryOnLargerStores checks the all-equal case of each first
// pass: a zero query scores 0 against every row, so the result is the
// first n ids.
func TestZeroQueryOnLargerStores(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 39))
	for _, n := range []int{1145, 5183, 40000} {
		f := mustFlat(t, 32, clustered(r, n, 32, 10, 0.3))
		q := make([]float32, 32)
		for _, min := range []int{0, math.MaxInt} {
			f.quantMin = min
			got, err := f.Search(q, 100)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteForce(f, q, 100); !slices.Equal(got, want) {
				t.Fatalf("n %d quantMin %d:\n got %v\nwant %v", n, min, got, want)
			}
		}
	}
}
