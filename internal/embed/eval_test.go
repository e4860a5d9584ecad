package embed

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/ir"
)

// This file measures Local on the shared retrieval datasets: vector-only
// nDCG@10 with cosine ranking over the whole corpus.

const datasets = "../../../shared/datasets"

type dataset struct {
	ids     []string
	texts   []string // title + "\n" + text
	queries []query
}

type query struct {
	id, text string
	rel      map[string]int
}

// loadDataset reads a BEIR dataset (internal/eval/beir); only queries with
// relevant documents are kept.
func loadDataset(t testing.TB, name string) *dataset {
	t.Helper()
	dir := filepath.Join(datasets, name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("dataset %s not available: %v", name, err)
	}
	ds, err := beir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataset{}
	for _, doc := range ds.Corpus {
		d.ids = append(d.ids, doc.ID)
		d.texts = append(d.texts, strings.TrimSpace(doc.Title+"\n"+doc.Text))
	}
	for _, q := range ds.EvalQueries() {
		d.queries = append(d.queries, query{q.ID, q.Text, ds.Qrels[q.ID]})
	}
	return d
}

// ndcg10 is nDCG@10 with gain 2^rel − 1 (internal/eval/ir).
func ndcg10(ranked []string, rel map[string]int) float64 {
	return ir.NDCG(ranked, rel, 10, ir.GainExponential)
}

// featurizer turns a text into Local features for one measurement setting.
type featurizer func(string) []string

// jaFeatures: character bigrams and trigrams.
func jaFeatures(s string) []string {
	return append(CharNGrams(s, 2), CharNGrams(s, 3)...)
}

// jaBigrams: character bigrams only.
func jaBigrams(s string) []string { return CharNGrams(s, 2) }

// enWords is a tiny English tokenizer: lower-cased runs of letters and
// digits, minus a few stop words.
func enWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !enStop[w] {
			out = append(out, w)
		}
	}
	return out
}

var enStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be by for from has have in is it its of on or that the this to was were which with we our not no") {
		m[w] = true
	}
	return m
}()

// enFeatures: word tokens plus character n-grams of length n.
func enFeatures(ns ...int) featurizer {
	return func(s string) []string {
		out := enWords(s)
		for _, n := range ns {
			out = append(out, CharNGrams(s, n)...)
		}
		return out
	}
}

type evalResult struct {
	ndcg    float64
	fitTime time.Duration
	fitCPU  time.Duration // process CPU time during the fit: robust to a busy machine
	embTime time.Duration
	docs    int
}

// evaluate fits Local on the corpus and returns mean nDCG@10 over queries.
func evaluate(t testing.TB, d *dataset, feat featurizer, opt LocalOptions) evalResult {
	t.Helper()
	ctx := context.Background()
	docs := make([][]string, len(d.texts))
	for i, s := range d.texts {
		docs[i] = feat(s)
	}
	start := time.Now()
	c0 := cpuTime()
	m, err := FitLocal(ctx, docs, opt)
	if err != nil {
		t.Fatal(err)
	}
	fit := time.Since(start)
	fitCPU := cpuTime() - c0
	start = time.Now()
	vecs, err := m.EmbedAll(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	emb := time.Since(start)
	var sum float64
	scores := make([]float64, len(vecs))
	order := make([]int, len(vecs))
	for _, q := range d.queries {
		qv := m.Embed(feat(q.text))
		for i, v := range vecs {
			var s float64
			for j := range v {
				s += float64(v[j]) * float64(qv[j])
			}
			scores[i] = s
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			if scores[a] != scores[b] {
				if scores[a] > scores[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(d.ids[a], d.ids[b])
		})
		ranked := make([]string, 10)
		for i := range ranked {
			ranked[i] = d.ids[order[i]]
		}
		sum += ndcg10(ranked, q.rel)
	}
	return evalResult{ndcg: sum / float64(len(d.queries)), fitTime: fit, fitCPU: fitCPU, embTime: emb, docs: len(docs)}
}

// TestLocalQuality holds the default settings, with the features
// recommended to the index (character bigrams for Japanese; words plus
// character trigrams for English), to the measured vector-only nDCG@10
// minus a small margin, so a regression in fitting shows up.
func TestLocalQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("fits models on real datasets")
	}
	tests := []struct {
		name  string
		feat  featurizer
		floor float64
	}{
		{"jsquad-valid", jaBigrams, 0.86}, // measured 0.878
		{"scifact", enFeatures(3), 0.54},  // measured 0.559
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loadDataset(t, tt.name)
			r := evaluate(t, d, tt.feat, LocalOptions{})
			t.Logf("%s: nDCG@10 %.4f (fit %v wall %v cpu, embed %v, %d docs, %d queries)", tt.name, r.ndcg, r.fitTime, r.fitCPU, r.embTime, r.docs, len(d.queries))
			if r.ndcg < tt.floor {
				t.Errorf("nDCG@10 = %.4f, below the floor %.2f", r.ndcg, tt.floor)
			}
		})
	}
}

// TestLocalSweep reports nDCG@10 for alternative settings. It is slow, so it
// runs only with SHIRUBE_EMBED_SWEEP=1.
func TestLocalSweep(t *testing.T) {
	if os.Getenv("SHIRUBE_EMBED_SWEEP") == "" {
		t.Skip("set SHIRUBE_EMBED_SWEEP=1 to run the settings sweep")
	}
	type setting struct {
		name string
		feat featurizer
		opt  LocalOptions
	}
	sweeps := map[string][]setting{
		"jsquad-valid": {
			{"bi+tri d256", jaFeatures, LocalOptions{Scaling: ScaleNone}},
			{"bi+tri d256 power1", jaFeatures, LocalOptions{PowerIters: 1, Scaling: ScaleNone}},
			{"bi+tri d128", jaFeatures, LocalOptions{Dim: 128, Scaling: ScaleNone}},
			{"bi+tri d384", jaFeatures, LocalOptions{Dim: 384, Scaling: ScaleNone}},
			{"bi+tri d256 σ^-½", jaFeatures, LocalOptions{Scaling: ScaleSqrt}},
			{"bi+tri d256 σ^-1", jaFeatures, LocalOptions{Scaling: ScaleWhiten}},
			{"bi+tri d256 mindf1", jaFeatures, LocalOptions{MinDF: 1, Scaling: ScaleNone}},
			{"uni+bi+tri d256", func(s string) []string { return append(CharNGrams(s, 1), jaFeatures(s)...) }, LocalOptions{Scaling: ScaleNone}},
			{"bi d256", jaBigrams, LocalOptions{Scaling: ScaleNone}},
			{"bi d256 σ^-½", jaBigrams, LocalOptions{Scaling: ScaleSqrt}},
			{"bi d256 σ^-1", jaBigrams, LocalOptions{Scaling: ScaleWhiten}},
			{"bi d384 σ^-½", jaBigrams, LocalOptions{Dim: 384, Scaling: ScaleSqrt}},
			{"bi d384 σ^-1", jaBigrams, LocalOptions{Dim: 384, Scaling: ScaleWhiten}},
		},
		"scifact": {
			{"words+c3+c4 d256", enFeatures(3, 4), LocalOptions{Scaling: ScaleNone}},
			{"words+c3+c4 d256 power1", enFeatures(3, 4), LocalOptions{PowerIters: 1, Scaling: ScaleNone}},
			{"words+c3+c4 d256 sample2048", enFeatures(3, 4), LocalOptions{MaxSample: 2048, Scaling: ScaleNone}},
			{"words+c3+c4 d128", enFeatures(3, 4), LocalOptions{Dim: 128, Scaling: ScaleNone}},
			{"words+c3+c4 d384", enFeatures(3, 4), LocalOptions{Dim: 384, Scaling: ScaleNone}},
			{"words+c3+c4 d256 σ^-½", enFeatures(3, 4), LocalOptions{Scaling: ScaleSqrt}},
			{"words+c3+c4 d256 σ^-1", enFeatures(3, 4), LocalOptions{Scaling: ScaleWhiten}},
			{"words d256", enFeatures(), LocalOptions{Scaling: ScaleNone}},
			{"words+c4+c5 d256", enFeatures(4, 5), LocalOptions{Scaling: ScaleNone}},
			{"words+c3 d256", enFeatures(3), LocalOptions{Scaling: ScaleNone}},
			{"words+c3 d256 σ^-½", enFeatures(3), LocalOptions{Scaling: ScaleSqrt}},
			{"words+c3 d384 σ^-½", enFeatures(3), LocalOptions{Dim: 384, Scaling: ScaleSqrt}},
			{"words+c3 d384 σ^-1", enFeatures(3), LocalOptions{Dim: 384, Scaling: ScaleWhiten}},
		},
	}
	if only := os.Getenv("SHIRUBE_EMBED_SWEEP_ONLY"); only != "" {
		for name, ss := range sweeps {
			sweeps[name] = slices.DeleteFunc(ss, func(s setting) bool { return !strings.Contains(only, "|"+s.name+"|") })
		}
	}
	for _, name := range []string{"jsquad-valid", "scifact"} {
		d := loadDataset(t, name)
		for _, s := range sweeps[name] {
			r := evaluate(t, d, s.feat, s.opt)
			t.Logf("%-13s %-30s nDCG@10 %.4f  fit %6.2fs wall %6.2fs cpu (%5.0f docs/cpu-s)  embed-all %5.2fs", name, s.name, r.ndcg,
				r.fitTime.Seconds(), r.fitCPU.Seconds(), float64(r.docs)/r.fitCPU.Seconds(), r.embTime.Seconds())
		}
	}
}
