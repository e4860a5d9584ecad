package vector

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDotsInt8KernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 21))
	for _, stride := range []int{32, 64, 96, 256, 288, 1536} {
		for _, rows := range []int{1, 3, 17} {
			u := make([]int16, stride)
			c := make([]int8, rows*stride)
			for j := range u {
				u[j] = int16(r.IntN(65535) - 32767)
			}
			for j := range c {
				c[j] = int8(r.IntN(255) - 127)
			}
			// Extremes: the largest products, in both signs.
			u[0], c[0] = 32767, 127
			u[1], c[1] = -32767, 127
			u[stride-1], c[stride-1] = -32767, -127
			want := make([]int32, rows)
			for i := range rows {
				var s int64
				for j := range stride {
					s += int64(u[j]) * int64(c[i*stride+j])
				}
				want[i] = int32(s)
			}
			for name, k := range kernels() {
				got := make([]int32, rows)
				k(u, c, stride, got)
				if !slices.Equal(got, want) {
					t.Fatalf("%s stride %d rows %d: got %v, want %v", name, stride, rows, got, want)
				}
			}
		}
	}
}

func TestQuantiseRowBound(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 22))
	for _, dim := range []int{1, 7, 256, 3072} {
		for range 50 {
			row, _ := normalised(randomVec(r, dim))
			if r.IntN(5) == 0 { // a spike: coarse steps for the rest
				row[r.IntN(dim)] *= 40
				row, _ = normalised(row)
			}
			out := make([]int8, codeStride(dim))
			s, e, norm := quantiseRow(row, out)
			var rr, cc float64
			for j, x := range row {
				d := float64(x) - float64(s)*float64(out[j])
				rr += d * d
				cc += float64(out[j]) * float64(out[j])
			}
			if math.Sqrt(rr) > float64(e) {
				t.Fatalf("dim %d: residual %g above the bound %g", dim, math.Sqrt(rr), e)
			}
			if math.Abs(math.Sqrt(cc)-norm) > 1e-9 {
				t.Fatalf("dim %d: code norm %g, reported %g", dim, math.Sqrt(cc), norm)
			}
			for _, c := range out[dim:] {
				if c != 0 {
					t.Fatal("padding is not zero")
				}
			}
		}
	}
}

// TestQuantQueryCannotOverflow checks the scale rule of quantQuery on the
// worst case: flat vectors (every component equal) at 3072 dimensions,
// where the plain int16 scale would overflow the kernel's int32 sums.
func TestQuantQueryCannotOverflow(t *testing.T) {
	const dim = 3072
	flat := make([]float32, dim)
	for j := range flat {
		flat[j] = float32(1 / math.Sqrt(dim))
	}
	c := codes{stride: codeStride(dim)}
	c.appendRow(flat)
	u := make([]int16, c.stride)
	tq, resid := quantQuery(flat, u, c.maxNorm)
	var s int64
	for j := range dim {
		s += int64(u[j]) * int64(c.data[j])
	}
	if s > kernelBound {
		t.Fatalf("dot %d exceeds the kernel bound %d", s, kernelBound)
	}
	out := make([]int32, 1)
	dotsInt8(u, c.data, c.stride, out)
	if int64(out[0]) != s {
		t.Fatalf("kernel %d, exact %d", out[0], s)
	}
	if est := float64(out[0]) * float64(tq) * float64(c.scale[0]); math.Abs(est-1) > float64(c.err[0])+resid*(1+float64(c.err[0]))+quantSlack {
		t.Fatalf("estimate %g of a unit self-product is outside its bound", est)
	}
}

// TestQuantUpperBoundHolds checks the inequality the int8 pass rests on:
// every row's upper bound is at least its exact score.
func TestQuantUpperBoundHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 23))
	for _, dim := range []int{5, 64, 256} {
		vecs := clustered(r, 3000, dim, 20, 0.2)
		vecs = append(vecs, make([]float32, dim))
		f := mustFlat(t, dim, vecs)
		for qi := range 10 {
			q, _ := normalised(vecs[r.IntN(len(vecs))])
			if qi%2 == 1 {
				q, _ = normalised(randomVec(r, dim))
			}
			u := make([]int16, f.codes.stride)
			tq, resid := quantQuery(q, u, f.codes.maxNorm)
			upper := make([]float32, f.n)
			var c collector
			c.reset(10)
			f.scanQuant(u, tq, resid, 0, f.n, nil, upper, &c)
			for id := range f.n {
				if e := f.exact(q, id); float64(upper[id]) < e {
					t.Fatalf("dim %d row %d: upper bound %g below exact score %g", dim, id, upper[id], e)
				}
			}
		}
	}
}

// TestSearchPathsAgree runs every store through both first passes, int8
// and float32, and checks both against exhaustive exact search.
func TestSearchPathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 24))
	vecs := clustered(r, 6000, 96, 40, 0.25)
	for range 500 {
		vecs = append(vecs, slices.Clone(vecs[r.IntN(len(vecs))]))
	}
	f := mustFlat(t, 96, vecs)
	for qi := range 30 {
		q := vecs[r.IntN(len(vecs))]
		if qi%3 == 1 {
			q = randomVec(r, 96)
		}
		want := bruteForce(f, q, 100)
		for _, min := range []int{0, math.MaxInt} {
			f.quantMin = min
			got, st, err := f.search(q, 100)
			if err != nil {
				t.Fatal(err)
			}
			if st.quant != (min == 0) {
				t.Fatalf("quantMin %d: int8 pass ran = %v", min, st.quant)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("query %d quantMin %d:\n got %v\nwant %v", qi, min, got, want)
			}
		}
	}
}

// TestLoadedStoreBuildsCodes checks that a loaded store answers with the
// float32 pass before its codes exist, builds them after its first large
// search, and then answers identically through the int8 pass — also when
// rows are added meanwhile.
func TestLoadedStoreBuildsCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 25))
	vecs := clustered(r, 5000, 40, 30, 0.3)
	f := mustFlat(t, 40, vecs)
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFlat(&buf)
	if err != nil {
		t.Fatal(err)
	}
	g.quantMin = 0
	q := randomVec(r, 40)
	first, st, err := g.search(q, 50)
	if err != nil {
		t.Fatal(err)
	}
	if st.quant {
		t.Fatal("a freshly loaded store searched int8 codes it cannot have built yet")
	}
	g.mu.RLock()
	started := g.codes != nil
	g.mu.RUnlock()
	if started {
		t.Fatal("the first search of a loaded store built its codes; a one-shot search should not pay for them")
	}
	for _, v := range clustered(r, 300, 40, 3, 0.3) {
		if _, err := g.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	g.ensureCodes()
	if g.codes == nil || len(g.codes.scale) != g.Len() {
		t.Fatalf("codes cover %v rows of %d", g.codes, g.Len())
	}
	for _, qq := range [][]float32{q, randomVec(r, 40), g.Vector(5100)} {
		got, st, err := g.search(qq, 50)
		if err != nil {
			t.Fatal(err)
		}
		if !st.quant {
			t.Fatal("the int8 pass did not run once the codes were built")
		}
		if want := bruteForce(g, qq, 50); !slices.Equal(got, want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	}
	if want := bruteForce(g, q, 50); !slices.Equal(first[:10], bruteForce(f, q, 10)) || len(want) != 50 {
		t.Fatal("the float32 pass of the loaded store differs from the original's")
	}
}
