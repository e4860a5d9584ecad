// Package embed turns text into dense vectors for the vector leg of hybrid
// retrieval.
//
// Local is the default: a latent semantic model fitted on the corpus at
// index time (TF-IDF over caller-supplied features, reduced by randomized
// truncated SVD). It needs no weights and no network, and it is
// deterministic: the same corpus always gives a bit-identical model. OpenAI
// calls any OpenAI-compatible /v1/embeddings endpoint, with a content-hash
// cache so unchanged chunks are never embedded twice.
package embed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Scaling says how the coordinates of a Local embedding are weighted by the
// singular values σ of their component before normalisation.
type Scaling int

const (
	// ScaleSqrt multiplies by σ^(−1/2), halfway between plain LSA and
	// whitening. It was best or near best on both JSQuAD and SciFact.
	ScaleSqrt Scaling = iota
	// ScaleNone is plain LSA: document vectors are rows of U·Σ, so the top
	// components (often generic, frequent-feature directions) dominate.
	ScaleNone
	// ScaleWhiten multiplies by σ^(−1): document vectors are rows of U and
	// every component counts equally.
	ScaleWhiten
)

// exponent returns p for the weight σ^(−p).
func (s Scaling) exponent() float64 {
	switch s {
	case ScaleNone:
		return 0
	case ScaleWhiten:
		return 1
	}
	return 0.5
}

// LocalOptions configures FitLocal. The zero value gives the defaults.
type LocalOptions struct {
	// Dim is the embedding dimension (default 256). It is clamped to the
	// number of fitted documents and features.
	Dim int
	// MinDF drops features found in fewer documents (default: 2 when the
	// fitting sample has at least 500 documents, else 1). Rare features cost
	// model size and carry little shared meaning.
	MinDF int
	// MaxFeatures caps the vocabulary, keeping the features with the highest
	// document frequency (default 1<<16). The model holds MaxFeatures×Dim
	// float32 values (64 MiB at the defaults).
	MaxFeatures int
	// MaxSample caps the documents the model is fitted on (default 16384).
	// Larger corpora are sampled evenly; every document is still embedded.
	MaxSample int
	// Oversample is the number of extra random directions in the range finder
	// (default 10) and PowerIters the number of power iterations (default 2).
	Oversample, PowerIters int
	// Scaling weights the SVD components (default ScaleSqrt).
	Scaling Scaling
	// Seed fixes the random test matrix (default 1).
	Seed uint64
}

func (o LocalOptions) withDefaults(docs int) LocalOptions {
	if o.Dim <= 0 {
		o.Dim = 256
	}
	if o.MaxSample <= 0 {
		o.MaxSample = 16384
	}
	if o.MinDF <= 0 {
		o.MinDF = 1
		if min(docs, o.MaxSample) >= 500 {
			o.MinDF = 2
		}
	}
	if o.MaxFeatures <= 0 {
		o.MaxFeatures = 1 << 16
	}
	if o.Oversample <= 0 {
		o.Oversample = 10
	}
	if o.PowerIters < 0 {
		o.PowerIters = 0
	} else if o.PowerIters == 0 {
		o.PowerIters = 2
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Local is a fitted latent semantic embedder. It is immutable after FitLocal
// or UnmarshalBinary and safe for concurrent use.
type Local struct {
	dim   int
	terms []string         // vocabulary, most frequent first
	ids   map[string]int32 // term → index into terms
	idf   []float32        // smooth idf per term
	proj  []float32        // len(terms)×dim row-major: projection with σ weighting folded in
	sigma []float32        // singular values, largest first (informational)
	opts  LocalOptions     // options used for fitting (informational)
}

// FitLocal fits a Local model on docs, where each document is the list of
// its features (analysed word terms, character n-grams — anything the caller
// will also extract from queries). Repeated features count as term frequency.
// Weights are sublinear TF-IDF, 1+ln(tf) times smooth idf
// ln((1+N)/(1+df))+1, rows L2-normalised before the SVD.
//
// It fails if no document has a feature that survives MinDF.
func FitLocal(ctx context.Context, docs [][]string, opt LocalOptions) (*Local, error) {
	return FitLocalSample(ctx, len(docs), func(i int) []string { return docs[i] }, opt)
}

// SampleIndexes returns the documents, out of n, that a fit with opt reads:
// all of them up to MaxSample, else MaxSample evenly spaced ones.
func SampleIndexes(n int, opt LocalOptions) []int {
	opt = opt.withDefaults(n)
	m := min(n, opt.MaxSample)
	out := make([]int, m)
	for i := range out {
		out[i] = int(int64(i) * int64(n) / int64(m))
	}
	return out
}

// FitLocalSample is FitLocal over a corpus of n documents that it reads
// through doc, calling it only for the documents of SampleIndexes: a
// caller that derives features on demand (from an inverted index, say)
// never holds the features of the whole corpus at once.
func FitLocalSample(ctx context.Context, total int, doc func(i int) []string, opt LocalOptions) (*Local, error) {
	if total == 0 {
		return nil, errors.New("embed: cannot fit a local model on an empty corpus; index some documents first")
	}
	idx := SampleIndexes(total, opt)
	opt = opt.withDefaults(total)
	sample := make([][]string, len(idx))
	for i, d := range idx {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("embed: fit cancelled: %w", err)
			}
		}
		sample[i] = doc(d)
	}

	// Document frequencies over the sample; last is the 1-based index of the
	// last document that counted the feature.
	type count struct{ df, last int32 }
	counts := make(map[string]count)
	for i, d := range sample {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("embed: fit cancelled: %w", err)
			}
		}
		for _, f := range d {
			if c := counts[f]; c.last != int32(i+1) {
				counts[f] = count{c.df + 1, int32(i + 1)}
			}
		}
	}
	type termDF struct {
		term string
		df   int32
	}
	kept := make([]termDF, 0, len(counts))
	for t, c := range counts {
		if int(c.df) >= opt.MinDF {
			kept = append(kept, termDF{t, c.df})
		}
	}
	// Order features by document frequency (then by term, for determinism).
	// Frequent features then have neighbouring rows in the V-side matrices,
	// which keeps the hot rows in cache during the sparse products and Embed.
	slices.SortFunc(kept, func(a, b termDF) int {
		return cmp.Or(cmp.Compare(b.df, a.df), cmp.Compare(a.term, b.term))
	})
	if len(kept) > opt.MaxFeatures {
		kept = kept[:opt.MaxFeatures]
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("embed: no feature occurs in at least %d documents; the corpus is too small or the features are empty", opt.MinDF)
	}

	m := &Local{
		terms: make([]string, len(kept)),
		ids:   make(map[string]int32, len(kept)),
		idf:   make([]float32, len(kept)),
		opts:  opt,
	}
	n := float64(len(sample))
	for i, t := range kept {
		m.terms[i] = t.term
		m.ids[t.term] = int32(i)
		m.idf[i] = float32(math.Log((1+n)/(1+float64(t.df))) + 1)
	}

	// The TF-IDF matrix of the sample, rows L2-normalised.
	a := &csr{rows: len(sample), cols: len(kept), ptr: make([]int, 1, len(sample)+1)}
	var buf []weighted
	for _, d := range sample {
		buf = m.weights(d, buf[:0])
		var ss float64
		for _, w := range buf {
			ss += w.w * w.w
		}
		inv := 0.0
		if ss > 0 {
			inv = 1 / math.Sqrt(ss)
		}
		for _, w := range buf {
			a.idx = append(a.idx, w.id)
			a.vals = append(a.vals, float32(w.w*inv))
		}
		a.ptr = append(a.ptr, len(a.idx))
	}
	if len(a.idx) == 0 {
		return nil, errors.New("embed: no document has any feature; check that the analyser produced terms")
	}

	svd, err := randomizedSVD(ctx, a, opt.Dim, opt.Oversample, opt.PowerIters, opt.Seed)
	if err != nil {
		return nil, fmt.Errorf("embed: fit local model: %w", err)
	}
	k := len(svd.sigma)
	m.dim = k
	m.sigma = make([]float32, k)
	scale := make([]float64, k)
	for t, s := range svd.sigma {
		m.sigma[t] = float32(s)
		if s > 0 {
			scale[t] = math.Pow(s, -opt.Scaling.exponent())
		}
	}
	m.proj = make([]float32, len(kept)*k)
	for j := range kept {
		row := svd.vt.row(j)
		for t := range k {
			m.proj[j*k+t] = float32(float64(row[t]) * scale[t])
		}
	}
	return m, nil
}

// weighted is one vocabulary feature of a text with its TF-IDF weight.
type weighted struct {
	id int32
	w  float64
}

// weights appends the sublinear TF-IDF weights of the in-vocabulary features
// of doc to buf, in vocabulary order.
func (m *Local) weights(doc []string, buf []weighted) []weighted {
	ids := make([]int32, 0, len(doc))
	for _, f := range doc {
		if id, ok := m.ids[f]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		tf := float64(j - i)
		buf = append(buf, weighted{ids[i], (1 + math.Log(tf)) * float64(m.idf[ids[i]])})
		i = j
	}
	return buf
}

// Dim returns the embedding dimension.
func (m *Local) Dim() int { return m.dim }

// Features returns the vocabulary size.
func (m *Local) Features() int { return len(m.terms) }

// Name identifies the model family and dimension, e.g. "local-lsa-256".
func (m *Local) Name() string { return fmt.Sprintf("local-lsa-%d", m.dim) }

// Embed returns the L2-normalised embedding of a text given its features
// (extracted exactly as for FitLocal). A text with no known feature gets the
// zero vector, which scores 0 against everything.
func (m *Local) Embed(features []string) []float32 {
	out := make([]float32, m.dim)
	for _, w := range m.weights(features, nil) {
		axpy(float32(w.w), m.proj[int(w.id)*m.dim:int(w.id+1)*m.dim], out)
	}
	var ss float64
	for _, v := range out {
		ss += float64(v) * float64(v)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		clear(out)
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for t, v := range out {
		out[t] = float32(float64(v) * inv)
	}
	return out
}

// EmbedAll embeds many texts in parallel; out[i] is Embed(docs[i]).
func (m *Local) EmbedAll(ctx context.Context, docs [][]string) ([][]float32, error) {
	out := make([][]float32, len(docs))
	var (
		mu       sync.Mutex
		firstErr error
	)
	split(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if (i-lo)%256 == 0 {
				if err := ctx.Err(); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
			}
			out[i] = m.Embed(docs[i])
		}
	})
	if firstErr != nil {
		return nil, fmt.Errorf("embed: cancelled: %w", firstErr)
	}
	return out, nil
}
