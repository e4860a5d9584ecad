package embed

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

func TestCharNGrams(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"東京都、ＡＢ", 2, []string{"東京", "京都", "ab"}},
		{"東京都", 3, []string{"東京都"}},
		{"東京都", 4, []string{"東京都"}},
		{"ｶﾀｶﾅ", 2, []string{"カタ", "タカ", "カナ"}},
		{"Hello, World!", 3, []string{"hel", "ell", "llo", "wor", "orl", "rld"}},
		{"a b", 2, []string{"a", "b"}},
		{"　全角　空白　", 2, []string{"全角", "空白"}},
		{"①②", 1, []string{"1", "2"}},
		{"", 2, nil},
		{"abc", 0, nil},
		{"。、！", 2, []string{}},
		{"x\xffy", 2, []string{"x\ufffd", "\ufffdy"}}, // NFKC replaces invalid UTF-8
	}
	for _, tt := range tests {
		got := CharNGrams(tt.in, tt.n)
		if !slices.Equal(got, tt.want) {
			t.Errorf("CharNGrams(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func FuzzCharNGrams(f *testing.F) {
	for _, s := range []string{"東京都、ＡＢ", "Hello, World!", "x\xffy", "ｶﾀｶﾅ ①"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n%6 + 1
		if n < 1 {
			n += 6
		}
		for _, g := range CharNGrams(s, n) {
			if c := utf8.RuneCountInString(g); c < 1 || c > n {
				t.Fatalf("gram %q has %d runes, want 1..%d", g, c, n)
			}
			for _, r := range g {
				if utf8.ValidRune(r) && r != utf8.RuneError && isSeparator(r) {
					t.Fatalf("gram %q contains separator %q", g, r)
				}
			}
		}
	})
}

// lowRankCSR builds a dense n×v matrix (stored as CSR) with singular values
// decaying geometrically, plus a little noise — the shape of a term matrix's
// spectrum, where a randomized SVD should be near exact.
func lowRankCSR(r *rand.Rand, n, v, rank int) *csr {
	m := make([]float64, n*v)
	for t := range rank {
		s := 10 * math.Pow(0.75, float64(t))
		u := make([]float64, n)
		for i := range u {
			u[i] = r.NormFloat64() / math.Sqrt(float64(n))
		}
		for j := range v {
			vj := r.NormFloat64() / math.Sqrt(float64(v))
			for i := range n {
				m[i*v+j] += s * u[i] * vj
			}
		}
	}
	a := &csr{rows: n, cols: v, ptr: []int{0}}
	for i := range n {
		for j := range v {
			a.idx = append(a.idx, int32(j))
			a.vals = append(a.vals, float32(m[i*v+j]+1e-4*r.NormFloat64()))
		}
		a.ptr = append(a.ptr, len(a.idx))
	}
	return a
}

// TestRandomizedSVDMatchesExact checks singular values and the captured
// subspace against gonum's dense SVD.
func TestRandomizedSVDMatchesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a := lowRankCSR(r, 120, 300, 40)
	dense := mat.NewDense(a.rows, a.cols, nil)
	for i := range a.rows {
		for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
			dense.Set(i, int(a.idx[p]), float64(a.vals[p]))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(dense, mat.SVDThin) {
		t.Fatal("dense SVD failed")
	}
	want := svd.Values(nil)
	const k = 10
	got, err := randomizedSVD(context.Background(), a, k, 10, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range k {
		if rel := math.Abs(got.sigma[i]-want[i]) / want[i]; rel > 1e-4 {
			t.Errorf("σ%d = %.6f, exact %.6f (rel err %.2g)", i, got.sigma[i], want[i], rel)
		}
	}
	// Each computed right singular vector must lie in the span of the exact
	// top-k (squared projection ≈ 1).
	var v mat.Dense
	svd.VTo(&v)
	for tcol := range k {
		var proj float64
		for s := range k {
			var dot float64
			for j := range a.cols {
				dot += float64(got.vt.data[j*k+tcol]) * v.At(j, s)
			}
			proj += dot * dot
		}
		if proj < 0.9999 {
			t.Errorf("singular vector %d: squared projection on exact subspace %.5f", tcol, proj)
		}
	}
}

func toyCorpus() [][]string {
	texts := []string{
		"東京都は日本の首都である", "大阪府は西日本の中心都市", "京都府には寺院が多い",
		"富士山は日本一高い山である", "北海道は寒い地域で雪が多い", "沖縄県は暖かい地域である",
		"東京タワーと東京スカイツリー", "大阪城と通天閣は大阪の名所", "京都の寺院と神社",
		"雪の多い北海道の冬", "日本の山と富士山の高さ", "暖かい沖縄の海",
	}
	docs := make([][]string, len(texts))
	for i, s := range texts {
		docs[i] = jaFeatures(s)
	}
	return docs
}

func TestFitLocalBasics(t *testing.T) {
	ctx := context.Background()
	docs := toyCorpus()
	m, err := FitLocal(ctx, docs, LocalOptions{Dim: 256})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != len(docs) {
		t.Errorf("Dim = %d, want clamped to %d documents", m.Dim(), len(docs))
	}
	if m.Name() != "local-lsa-12" {
		t.Errorf("Name = %q", m.Name())
	}
	vecs, err := m.EmbedAll(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("doc %d: |v|² = %v", i, ss)
		}
		if !slices.Equal(v, m.Embed(docs[i])) {
			t.Errorf("EmbedAll and Embed differ for doc %d", i)
		}
	}
	// A query about Kyoto temples is nearest to a Kyoto document.
	q := m.Embed(jaFeatures("京都の寺院"))
	best, bestScore := -1, -2.0
	for i, v := range vecs {
		var s float64
		for j := range v {
			s += float64(v[j]) * float64(q[j])
		}
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	if best != 2 && best != 8 {
		t.Errorf("nearest document to 京都の寺院 is %d", best)
	}
	if z := m.Embed([]string{"未知の特徴"}); slices.ContainsFunc(z, func(x float32) bool { return x != 0 }) {
		t.Errorf("unknown features gave %v, want the zero vector", z)
	}
	if z := m.Embed(nil); len(z) != m.Dim() {
		t.Errorf("Embed(nil) has length %d", len(z))
	}
}

func TestFitLocalErrors(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		docs [][]string
		opt  LocalOptions
		want string
	}{
		{"empty corpus", ctx, nil, LocalOptions{}, "empty corpus"},
		{"no features", ctx, [][]string{{}, {}}, LocalOptions{}, "no feature"},
		{"min df too high", ctx, [][]string{{"a"}, {"b"}}, LocalOptions{MinDF: 2}, "at least 2 documents"},
		{"cancelled", cancelled, toyCorpus(), LocalOptions{}, "cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FitLocal(tt.ctx, tt.docs, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestFitLocalDeterministic: same corpus → bit-identical model, whatever the
// number of goroutines; and the model survives a round trip.
func TestFitLocalDeterministic(t *testing.T) {
	d := loadDataset(t, "jsquad-valid")
	docs := make([][]string, 200)
	for i := range docs {
		docs[i] = jaFeatures(d.texts[i])
	}
	ctx := context.Background()
	opt := LocalOptions{Dim: 32}
	fit := func(procs int) []byte {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		m, err := FitLocal(ctx, docs, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := fit(2), fit(2), fit(1)
	if !bytes.Equal(a, b) {
		t.Fatal("two fits of the same corpus differ")
	}
	if !bytes.Equal(a, c) {
		t.Fatal("fit depends on GOMAXPROCS")
	}

	var m Local
	if err := m.UnmarshalBinary(a); err != nil {
		t.Fatal(err)
	}
	again, _ := m.MarshalBinary()
	if !bytes.Equal(a, again) {
		t.Fatal("marshal(unmarshal(x)) != x")
	}
	orig, _ := FitLocal(ctx, docs, opt)
	for _, q := range d.queries[:50] {
		f := jaFeatures(q.text)
		if !slices.Equal(orig.Embed(f), m.Embed(f)) {
			t.Fatalf("query %q embeds differently after reload", q.text)
		}
	}
}

func TestUnmarshalLocalRejectsCorruption(t *testing.T) {
	m, err := FitLocal(context.Background(), toyCorpus(), LocalOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := m.MarshalBinary()
	for i := 0; i < len(good); i += max(1, len(good)/300) {
		bad := slices.Clone(good)
		bad[i] ^= 0x10
		var x Local
		if err := x.UnmarshalBinary(bad); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
	}
	for _, n := range []int{0, 7, 30, len(good) - 1} {
		var x Local
		if err := x.UnmarshalBinary(good[:n]); !errors.Is(err, ErrCorruptModel) {
			t.Errorf("truncated to %d: err = %v", n, err)
		}
	}
}

func FuzzUnmarshalLocal(f *testing.F) {
	m, err := FitLocal(context.Background(), toyCorpus()[:4], LocalOptions{Dim: 2})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := m.MarshalBinary()
	f.Add(good)
	f.Add([]byte(localMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Try the input as is and with its checksum repaired, so the fuzzer
		// reaches the parser behind the checksum.
		for _, in := range [][]byte{data, withCRC(data)} {
			var x Local
			if err := x.UnmarshalBinary(in); err != nil {
				continue
			}
			v := x.Embed(x.terms[:1])
			if len(v) != x.Dim() {
				t.Fatalf("embedding length %d, Dim %d", len(v), x.Dim())
			}
		}
	})
}

// withCRC replaces the last four bytes of b with the CRC-32C of the rest.
func withCRC(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	out := slices.Clone(b)
	binary.LittleEndian.PutUint32(out[len(out)-4:], crc32.Checksum(out[:len(out)-4], castagnoli))
	return out
}
