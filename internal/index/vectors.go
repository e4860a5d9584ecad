package index

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/shirube/shirube/internal/bm25"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/vector"
)

// fitSample caps the chunks the local embedder is fitted on (evenly spaced;
// every chunk is still embedded), and the fit uses one power iteration.
// Both were chosen by measurement (docs/BENCHMARKS.md): Markdown indexing
// went from 1,026 to 1,644 chunks/s on 2 cores, and vector-only nDCG@10 did
// not drop (JSQuAD 0.885 → 0.890, SciFact 0.529 → 0.555).
const fitSample = 4096

func localOptions() embed.LocalOptions {
	return embed.LocalOptions{PowerIters: 1, MaxSample: fitSample}
}

// refitDrift is the drift above which an incremental build fits the local
// embedder again instead of keeping the live model and the vectors of the
// chunks that did not change.
//
// Drift measures how far the corpus has moved from the one the model was
// fitted on, in document-frequency mass: the BM25 postings, Σ over terms of
// the number of chunks that contain the term. It is the postings of the
// chunks removed plus those of the chunks added since the fit, divided by
// the postings of the corpus at the fit:
//
//	drift = (removed + added) / mass at fit
//
// Editing one document counts it twice (its old chunks out, its new ones
// in). Refitting resets drift to 0. At 0.10 a 100k-chunk corpus takes
// about 5,000 changed chunks before a refit; until then new terms are
// still found by BM25 at once, and the vector leg sees them through the
// features the model already has.
const refitDrift = 0.10

// exactRefitChunks is the corpus size, in chunks, up to which every build
// that changes the corpus fits the local embedder again, whatever the
// drift: there an index's search results and answers do not depend on its
// history — an incremental build gives exactly what a fresh build of the
// same files gives (same chunks, BM25 statistics, model and vectors) — at
// a cost that stays in seconds: the fit reads at most fitSample chunks,
// and embedding every chunk again grows with the corpus. Measured on law
// corpora (docs/BENCHMARKS.md), one changed law took 2.1 CPU-seconds
// instead of 0.3 at 1,988 chunks and 5.1 instead of 0.6 at 10,853 (a full
// build: 3.5 and 7.4). Above it the drift rule keeps incremental builds of
// large corpora under a second, and a kept model means that vector scores,
// and so a few answers, may differ from a fresh build's until the next
// refit (`shirube index --rebuild` makes one).
const exactRefitChunks = 10000

// fitState is the local model's fit as docs.gob records it.
type fitState struct {
	Mass    int64 // BM25 postings of the corpus the model was fitted on
	Changed int64 // postings of the chunks removed and added since
}

// drift is fitState's drift (see refitDrift); 1 when nothing is known.
func (f fitState) drift() float64 {
	if f.Mass <= 0 {
		return 1
	}
	return float64(f.Changed) / float64(f.Mass)
}

// vectorLeg is the vector side of a generation.
type vectorLeg struct {
	flat  *vector.Flat
	local *embed.Local // nil for the openai embedder
	info  EmbedderInfo
	fit   fitState
	refit bool    // the local model was fitted in this build
	drift float64 // drift before this build decided (0 on a first build)
	// write, when set, writes vectors.bin instead of flat (an
	// incremental build streams the reused rows from the previous file).
	write func(io.Writer) error
}

// vectors returns what writes the leg's vectors.bin.
func (l vectorLeg) vectors() func(io.Writer) error {
	if l.write != nil {
		return l.write
	}
	return flatWriter(l.flat)
}

func flatWriter(f *vector.Flat) func(io.Writer) error {
	return func(w io.Writer) error { _, err := f.WriteTo(w); return err }
}

// streamVectors returns what writes the vectors of a generation whose
// chunk i is chunk from[i] of the previous one (rows) or, for from[i] < 0,
// the next of fresh: runs of reused rows are copied as they are stored,
// without decoding or normalising them again, so they stay bit-identical.
func streamVectors(rows vector.Rows, from []int, fresh [][]float32) func(io.Writer) error {
	return func(w io.Writer) error {
		rw, err := vector.NewRowWriter(w, rows.Dim, len(from))
		if err != nil {
			return err
		}
		k := 0
		for i := 0; i < len(from); {
			if from[i] < 0 {
				if err := rw.Add(fresh[k]); err != nil {
					return err
				}
				k, i = k+1, i+1
				continue
			}
			j := i + 1
			for j < len(from) && from[j] == from[j-1]+1 {
				j++
			}
			if err := rw.Copy(rows, from[i], from[i]+j-i); err != nil {
				return err
			}
			i = j
		}
		return rw.Close()
	}
}

// embedGeneration embeds the chunks of a new generation. from[i] is the
// previous generation's position of chunk i, or -1 for a fresh chunk;
// added indexes the fresh chunks' terms in order, lex all of them, and
// delta is how much of the term mass the build replaced.
//
// Reused chunks keep their vectors when the embedder is the same and — for
// the local one — the corpus has more than exactRefitChunks chunks and the
// drift since the fit stays at or below refitDrift; only the fresh chunks
// are embedded then, with the live model. Otherwise the local model is
// fitted on this corpus and every chunk is embedded, exactly as a fresh
// build would.
func embedGeneration(ctx context.Context, opt BuildOptions, old *Index, prevMeta Meta, fit fitState, chunks []chunk.Chunk, from []int, lex, added *bm25.Index, delta bm25.ComposeStats) (vectorLeg, error) {
	reused := 0
	freshIdx := make([]int, len(from)) // fresh chunk i is document freshIdx[i] of added
	for i, f := range from {
		if f >= 0 {
			reused++
		} else {
			freshIdx[i] = i - reused
		}
	}
	same := old != nil && old.rows != nil && prevMeta.Embedder.Kind == opt.Embedder &&
		(opt.Embedder != "openai" || prevMeta.Embedder.Model == opt.EmbeddingModel)
	if !same || reused == 0 || (opt.Embedder != "openai" && old.local == nil) {
		return embedAll(ctx, opt.Embedder, opt.EmbeddingModel, opt.Remote, chunks, lex, opt.model)
	}
	var freshAt []int // the chunks not reused, in order
	for i, f := range from {
		if f < 0 {
			freshAt = append(freshAt, i)
		}
	}
	if opt.Embedder == "openai" {
		texts := make([]string, len(freshAt))
		for k, i := range freshAt {
			texts[k] = chunks[i].Text
		}
		vecs, _, err := embedRemote(ctx, opt.EmbeddingModel, opt.Remote, texts)
		if err != nil {
			return vectorLeg{}, err
		}
		return vectorLeg{info: prevMeta.Embedder, fit: fit, write: streamVectors(*old.rows, from, vecs)}, nil
	}

	fit.Changed += delta.Removed + delta.Added
	d := fit.drift()
	refit := d > refitDrift || len(chunks) <= exactRefitChunks
	if opt.refitAt != 0 {
		refit = d > opt.refitAt
	}
	if refit {
		leg, err := embedAll(ctx, opt.Embedder, opt.EmbeddingModel, opt.Remote, chunks, lex, opt.model)
		leg.drift = d
		return leg, err
	}
	fwd := added.Forward(nil)
	vecs := make([][]float32, len(freshAt))
	parallelFor(len(freshAt), func(k int) {
		i := freshAt[k]
		vecs[k] = old.local.Embed(featuresOf(fwd.Terms(freshIdx[i], nil), chunks[i].Text))
	})
	return vectorLeg{local: old.local, info: localInfo(old.local), fit: fit, drift: d, write: streamVectors(*old.rows, from, vecs)}, nil
}

// embedAll embeds every chunk: the local model is fitted on this corpus
// (deterministically; its features are the terms lex indexes for each
// chunk plus the chunk's character n-grams), the remote one is called
// through its cache. A given local model (tests) is used instead of a fit.
func embedAll(ctx context.Context, kind, model string, remote TextEmbedder, chunks []chunk.Chunk, lex *bm25.Index, local *embed.Local) (vectorLeg, error) {
	if kind == "openai" {
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		vecs, info, err := embedRemote(ctx, model, remote, texts)
		if err != nil {
			return vectorLeg{}, err
		}
		flat, err := fillFlat(ctx, info.Dim, chunks, func(int, int) func(int) []float32 {
			return func(i int) []float32 { return vecs[i] }
		})
		return vectorLeg{flat: flat, info: info, refit: true}, err
	}
	// Features come back from the postings a block of chunks at a time:
	// the sample's for the fit, then each block's for embedding.
	features := func(fwd *bm25.Forward) func(i int) []string {
		return func(i int) []string { return featuresOf(fwd.Terms(i, nil), chunks[i].Text) }
	}
	if local == nil {
		sample := lex.Forward(embed.SampleIndexes(len(chunks), localOptions()))
		var err error
		if local, err = embed.FitLocalSample(ctx, len(chunks), features(sample), localOptions()); err != nil {
			return vectorLeg{}, fmt.Errorf("fit local embedder: %w", err)
		}
		// The fit's matrices (hundreds of MiB at 100k chunks) are garbage
		// now; free them before the vectors of every chunk are stored.
		debug.FreeOSMemory()
	}
	flat, err := fillFlat(ctx, local.Dim(), chunks, func(lo, hi int) func(int) []float32 {
		feat := features(lex.Forward(span(lo, hi)))
		return func(i int) []float32 { return local.Embed(feat(i)) }
	})
	return vectorLeg{flat: flat, local: local, info: localInfo(local), fit: fitState{Mass: lex.Postings()}, refit: true}, err
}

func localInfo(m *embed.Local) EmbedderInfo {
	return EmbedderInfo{Kind: "local", Model: "tfidf-svd", Dim: m.Dim()}
}

// embedRemote embeds texts with the remote embedder.
func embedRemote(ctx context.Context, model string, remote TextEmbedder, texts []string) ([][]float32, EmbedderInfo, error) {
	vecs, err := remote.EmbedTexts(ctx, texts)
	if err != nil {
		return nil, EmbedderInfo{}, fmt.Errorf("embed chunks: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, EmbedderInfo{}, fmt.Errorf("embed chunks: got %d vectors for %d texts", len(vecs), len(texts))
	}
	dim := 0
	if len(vecs) > 0 {
		dim = len(vecs[0])
	}
	return vecs, EmbedderInfo{Kind: "openai", Model: model, Dim: dim}, nil
}

// fillFlat stores a vector for every chunk, in order, a block at a time:
// block(lo, hi) returns what computes the vectors of chunks lo to hi-1,
// which run on all cores; only one block is held besides the store.
func fillFlat(ctx context.Context, dim int, chunks []chunk.Chunk, block func(lo, hi int) func(i int) []float32) (*vector.Flat, error) {
	flat, err := vector.NewFlat(dim)
	if err != nil {
		return nil, fmt.Errorf("vector store: %w", err)
	}
	const size = 8192
	buf := make([][]float32, size)
	for lo := 0; lo < len(chunks); lo += size {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+size, len(chunks))
		vec := block(lo, hi)
		parallelFor(hi-lo, func(i int) { buf[i] = vec(lo + i) })
		for i := range hi - lo {
			if _, err := flat.Add(buf[i]); err != nil {
				return nil, fmt.Errorf("vector of %s: %w", chunks[lo+i].ID, err)
			}
			buf[i] = nil
		}
	}
	return flat, nil
}

// span returns lo, lo+1, …, hi-1.
func span(lo, hi int) []int {
	out := make([]int, hi-lo)
	for i := range out {
		out[i] = lo + i
	}
	return out
}

// embedChunks embeds chunks whose analysed terms are given (EmbedCorpus):
// the local model is fitted on them exactly as a build fits it.
func embedChunks(ctx context.Context, kind, model string, remote TextEmbedder, terms [][]string, chunks []chunk.Chunk) ([][]float32, *embed.Local, EmbedderInfo, error) {
	if kind == "openai" {
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		vecs, info, err := embedRemote(ctx, model, remote, texts)
		return vecs, nil, info, err
	}
	feat := func(i int) []string { return featuresOf(terms[i], chunks[i].Text) }
	local, err := embed.FitLocalSample(ctx, len(chunks), feat, localOptions())
	if err != nil {
		return nil, nil, EmbedderInfo{}, fmt.Errorf("fit local embedder: %w", err)
	}
	vecs := make([][]float32, len(chunks))
	parallelFor(len(chunks), func(i int) { vecs[i] = local.Embed(feat(i)) })
	return vecs, local, localInfo(local), nil
}
