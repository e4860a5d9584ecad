package reader

import (
	"math"
	"sort"
)

// Group is one question's candidates for the sentence model: a feature
// row per candidate and the index of the one that answers (the label).
type Group struct {
	X   [][]float64
	Pos int
}

// Example is one labelled row for the answerability model.
type Example struct {
	X []float64
	Y bool
}

// FitOptions tune the optimiser. Zero values take the defaults.
type FitOptions struct {
	Epochs int     // full-batch Adam steps; default 400
	Rate   float64 // Adam step size; default 0.05
	L2     float64 // ridge penalty on the standardised weights; default 1e-4
}

func (o FitOptions) withDefaults() FitOptions {
	if o.Epochs <= 0 {
		o.Epochs = 400
	}
	if o.Rate <= 0 {
		o.Rate = 0.05
	}
	if o.L2 <= 0 {
		o.L2 = 1e-4
	}
	return o
}

// standardiser returns the mean and standard deviation of every column of
// rows (a column that never varies gets std 1).
func standardiser(rows [][]float64, d int) (mean, std []float64) {
	mean, std = make([]float64, d), make([]float64, d)
	for _, r := range rows {
		for i := range d {
			mean[i] += r[i]
		}
	}
	n := float64(max(len(rows), 1))
	for i := range mean {
		mean[i] /= n
	}
	for _, r := range rows {
		for i := range d {
			dv := r[i] - mean[i]
			std[i] += dv * dv
		}
	}
	for i := range std {
		std[i] = math.Sqrt(std[i] / n)
		if std[i] < 1e-9 {
			std[i] = 1
		}
	}
	return mean, std
}

// adam is one full-batch Adam optimiser over a weight vector whose last
// element is the bias.
type adam struct {
	m, v []float64
	t    int
	rate float64
}

func newAdam(n int, rate float64) *adam {
	return &adam{m: make([]float64, n), v: make([]float64, n), rate: rate}
}

func (a *adam) step(w, g []float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	for i := range w {
		a.m[i] = b1*a.m[i] + (1-b1)*g[i]
		a.v[i] = b2*a.v[i] + (1-b2)*g[i]*g[i]
		w[i] -= a.rate * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + eps)
	}
}

// FitSentence trains the conditional logit: for each group, the softmax of
// the candidates' scores should put its mass on Pos. offset, when ≥ 0, is
// the column added to every score with weight 1 (the prior the other
// weights learn to correct).
func FitSentence(names []string, groups []Group, offset int, opt FitOptions) Linear {
	opt = opt.withDefaults()
	d := len(names)
	var all [][]float64
	for _, g := range groups {
		all = append(all, g.X...)
	}
	mean, std := standardiser(all, d)
	z := func(x []float64, i int) float64 {
		if i == offset {
			return 0
		}
		return (x[i] - mean[i]) / std[i]
	}
	w := make([]float64, d) // no bias: a softmax ignores it
	grad := make([]float64, d)
	opt2 := newAdam(d, opt.Rate)
	scores := make([]float64, 0, 64)
	for range opt.Epochs {
		clear(grad)
		for _, g := range groups {
			scores = scores[:0]
			mx := math.Inf(-1)
			for _, x := range g.X {
				s := 0.0
				if offset >= 0 {
					s = x[offset]
				}
				for i := range d {
					s += w[i] * z(x, i)
				}
				scores = append(scores, s)
				mx = max(mx, s)
			}
			sum := 0.0
			for k := range scores {
				scores[k] = math.Exp(scores[k] - mx)
				sum += scores[k]
			}
			for k, x := range g.X {
				p := scores[k] / sum
				if k == g.Pos {
					p -= 1
				}
				for i := range d {
					grad[i] += p * z(x, i)
				}
			}
		}
		n := float64(len(groups))
		for i := range grad {
			grad[i] = grad[i]/n + opt.L2*w[i]
		}
		opt2.step(w, grad)
	}
	return Linear{Names: names, Mean: mean, Std: std, W: w, Offset: offset}
}

// FitBinary trains logistic regression on examples.
func FitBinary(names []string, ex []Example, opt FitOptions) Linear {
	opt = opt.withDefaults()
	d := len(names)
	rows := make([][]float64, len(ex))
	for i, e := range ex {
		rows[i] = e.X
	}
	mean, std := standardiser(rows, d)
	w := make([]float64, d+1) // last: bias
	grad := make([]float64, d+1)
	opt2 := newAdam(d+1, opt.Rate)
	for range opt.Epochs {
		clear(grad)
		for _, e := range ex {
			s := w[d]
			for i := range d {
				s += w[i] * (e.X[i] - mean[i]) / std[i]
			}
			p := Sigmoid(s)
			if e.Y {
				p -= 1
			}
			for i := range d {
				grad[i] += p * (e.X[i] - mean[i]) / std[i]
			}
			grad[d] += p
		}
		n := float64(len(ex))
		for i := range grad {
			grad[i] /= n
			if i < d {
				grad[i] += opt.L2 * w[i]
			}
		}
		opt2.step(w, grad)
	}
	return Linear{Names: names, Mean: mean, Std: std, W: w[:d], Bias: w[d], Offset: -1}
}

// Accuracy is the share of groups whose best-scored candidate is the
// answer.
func Accuracy(l *Linear, groups []Group) float64 {
	if len(groups) == 0 {
		return 0
	}
	hit := 0
	for _, g := range groups {
		best, bs := -1, math.Inf(-1)
		for k, x := range g.X {
			if s := l.Score(x); s > bs {
				best, bs = k, s
			}
		}
		if best == g.Pos {
			hit++
		}
	}
	return float64(hit) / float64(len(groups))
}

// AUC is the area under the ROC curve of probabilities p for labels y
// (ties counted half).
func AUC(p []float64, y []bool) float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	var pos, neg, rankSum float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && p[idx[j]] == p[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks are 1-based
		for k := i; k < j; k++ {
			if y[idx[k]] {
				rankSum += avg
				pos++
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return 0
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}

// Bin is one bin of a reliability table: the predictions that fell in
// [Lo, Hi), their mean and the observed share of positives.
type Bin struct {
	Lo, Hi    float64
	N         int
	Predicted float64
	Observed  float64
}

// Calibration returns the reliability table of p against y in ten equal
// bins and the expected calibration error (the N-weighted mean gap).
func Calibration(p []float64, y []bool) ([]Bin, float64) {
	bins := make([]Bin, 10)
	for i := range bins {
		bins[i].Lo, bins[i].Hi = float64(i)/10, float64(i+1)/10
	}
	for i, v := range p {
		b := min(int(v*10), 9)
		bins[b].N++
		bins[b].Predicted += v
		if y[i] {
			bins[b].Observed++
		}
	}
	ece := 0.0
	for i := range bins {
		if n := float64(bins[i].N); n > 0 {
			bins[i].Predicted /= n
			bins[i].Observed /= n
			ece += n * math.Abs(bins[i].Predicted-bins[i].Observed)
		}
	}
	return bins, ece / float64(max(len(p), 1))
}
