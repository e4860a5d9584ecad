package embed

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// csr is a sparse matrix in compressed sparse row form: the nonzeros of row
// i are cols[ptr[i]:ptr[i+1]] with values vals[ptr[i]:ptr[i+1]].
type csr struct {
	rows, cols int
	ptr        []int
	idx        []int32
	vals       []float32
}

// dense is a row-major float64 matrix; row i is data[i*c:(i+1)*c].
type dense struct {
	r, c int
	data []float64
}

func newDense(r, c int) dense { return dense{r, c, make([]float64, r*c)} }

func (d dense) general() blas64.General {
	return blas64.General{Rows: d.r, Cols: d.c, Stride: d.c, Data: d.data}
}

// dense32 is a row-major float32 matrix. The sparse products run in float32:
// gonum's SIMD saxpy moves twice the values per instruction and half the
// bytes of float64, and LSA needs no more precision than that.
type dense32 struct {
	r, c int
	data []float32
}

func newDense32(r, c int) dense32 { return dense32{r, c, make([]float32, r*c)} }

func (d dense32) row(i int) []float32 { return d.data[i*d.c : (i+1)*d.c] }

func (d dense32) to64() dense {
	out := newDense(d.r, d.c)
	for i, v := range d.data {
		out.data[i] = float64(v)
	}
	return out
}

func (d dense) to32() dense32 {
	out := newDense32(d.r, d.c)
	for i, v := range d.data {
		out.data[i] = float32(v)
	}
	return out
}

// axpy is y += alpha·x over equal-length slices.
func axpy(alpha float32, x, y []float32) {
	blas32.Axpy(alpha, blas32.Vector{N: len(x), Inc: 1, Data: x}, blas32.Vector{N: len(y), Inc: 1, Data: y})
}

// split runs fn over [0, n) in contiguous ranges on up to GOMAXPROCS
// goroutines. Every output element is computed by exactly one call in a
// fixed order, so results do not depend on the number of goroutines.
func split(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/64))
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// mul returns A·B for sparse A (n×V) and dense B (V×l): each output row
// gathers the rows of B named by the nonzeros of the same row of A.
func (a *csr) mul(b dense32) dense32 {
	out := newDense32(a.rows, b.c)
	split(a.rows, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := out.row(i)
			for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
				axpy(a.vals[p], b.row(int(a.idx[p])), dst)
			}
		}
	})
	return out
}

// mulT returns Aᵀ·B for sparse A (n×V) and dense B (n×l). Rows of A scatter
// into the output, so the work is split by output column bands instead of
// rows: each goroutine owns a band and visits the nonzeros in the same
// order, which keeps the result deterministic.
func (a *csr) mulT(b dense32) dense32 {
	out := newDense32(a.cols, b.c)
	split(b.c, func(c0, c1 int) {
		for i := range a.rows {
			src := b.row(i)[c0:c1]
			for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
				j := int(a.idx[p])
				axpy(a.vals[p], src, out.data[j*out.c+c0:j*out.c+c1])
			}
		}
	})
	return out
}

// orthonormalise replaces the columns of y (n×l, n ≥ l) by an orthonormal
// basis of their span, using Householder QR (LAPACK dgeqrf + dorgqr).
func orthonormalise(y dense) {
	g := y.general()
	tau := make([]float64, y.c)
	work := []float64{0}
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(g, tau, work, len(work))
	work = []float64{0}
	lapack64.Orgqr(g, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Orgqr(g, tau, work, len(work))
}

// svdResult holds the top right singular vectors (V×k, row-major, one row
// per feature) and singular values of a sparse matrix.
type svdResult struct {
	vt    dense32 // V×k: column t is the t-th right singular vector
	sigma []float64
}

// randomizedSVD computes the top k singular triplets of a (n×V) with the
// randomized range finder of Halko, Martinsson and Tropp (2011, alg. 4.4):
//
//	Ω  ← V×l Gaussian (fixed seed), l = k + oversample
//	Y  ← A·Ω, then `power` times: Q ← orth(Y); Y ← A·(Aᵀ·Q)
//	Q  ← orth(Y)                       (n×l, spans the top left singular space)
//	Z  ← Aᵀ·Q                          (V×l, Zᵀ = B = QᵀA)
//	C  ← Qᵀ·(A·Z) = B·Bᵀ               (l×l)
//	C  = W·Λ·Wᵀ  ⇒  σ = √λ, right singular vectors V = Z·W·Σ⁻¹ = Aᵀ·(Q·W·Σ⁻¹)
//
// Every orth is a Householder QR re-orthonormalisation of an n×l matrix,
// which keeps the power iteration stable; the V side (often the larger) is
// never factorised. Sparse products are float32; QR, C and its
// eigendecomposition are float64.
func randomizedSVD(ctx context.Context, a *csr, k, oversample, power int, seed uint64) (svdResult, error) {
	l := min(k+oversample, a.rows, a.cols)
	k = min(k, l)
	if k < 1 {
		return svdResult{}, errors.New("matrix is empty")
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	omega := newDense32(a.cols, l)
	for i := range omega.data {
		omega.data[i] = float32(rng.NormFloat64())
	}
	y := a.mul(omega).to64()
	for range power {
		if err := ctx.Err(); err != nil {
			return svdResult{}, err
		}
		orthonormalise(y)
		y = a.mul(a.mulT(y.to32())).to64()
	}
	if err := ctx.Err(); err != nil {
		return svdResult{}, err
	}
	orthonormalise(y)
	q := y
	az := a.mul(a.mulT(q.to32())).to64()

	// C = Qᵀ·(A·Z), symmetrised against rounding.
	c := newDense(l, l)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, q.general(), az.general(), 0, c.general())
	for i := range l {
		for j := i + 1; j < l; j++ {
			m := (c.data[i*l+j] + c.data[j*l+i]) / 2
			c.data[i*l+j], c.data[j*l+i] = m, m
		}
	}
	lam := make([]float64, l)
	work := []float64{0}
	sym := blas64.Symmetric{N: l, Stride: l, Data: c.data, Uplo: blas.Upper}
	lapack64.Syev(lapack.EVCompute, sym, lam, work, -1)
	work = make([]float64, int(work[0]))
	if ok := lapack64.Syev(lapack.EVCompute, sym, lam, work, len(work)); !ok {
		return svdResult{}, errors.New("eigendecomposition did not converge")
	}
	top := math.Sqrt(max(lam[l-1], 0))
	if math.IsNaN(top) || math.IsInf(top, 0) {
		return svdResult{}, errors.New("singular values are not finite")
	}
	// Syev returns ascending eigenvalues with eigenvectors in the columns of
	// c; take the top k, largest first, as W (l×k) scaled by 1/σ.
	sigma := make([]float64, k)
	w := newDense(l, k)
	for t := range k {
		src := l - 1 - t
		s := math.Sqrt(max(lam[src], 0))
		sigma[t] = s
		inv := 0.0
		if s > 1e-9*top && s > 0 {
			inv = 1 / s
		}
		for i := range l {
			w.data[i*k+t] = c.data[i*l+src] * inv
		}
	}
	// V = Z·W·Σ⁻¹ = Aᵀ·(Q·W·Σ⁻¹): a sparse product costs nnz·k, far less
	// than the dense V×l×k one when documents are short.
	p := newDense(a.rows, k)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, q.general(), w.general(), 0, p.general())
	vt := a.mulT(p.to32())

	// Fix each singular vector's sign (its largest-magnitude entry positive,
	// the first such entry on ties) so the model does not depend on
	// arbitrary eigensolver signs. One row-major pass finds every column's.
	best := make([]float32, k)
	neg := make([]bool, k)
	for j := range a.cols {
		for t, v := range vt.row(j) {
			if m := abs32(v); m > best[t] {
				best[t], neg[t] = m, v < 0
			}
		}
	}
	for j := range a.cols {
		row := vt.row(j)
		for t := range row {
			if neg[t] {
				row[t] = -row[t]
			}
		}
	}
	return svdResult{vt: vt, sigma: sigma}, nil
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }
