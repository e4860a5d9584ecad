package metrics

// Summary averages metrics over the rows of a run. A metric is averaged
// over the rows where it is defined; a metric never defined has an
// undefined mean. Metrics keep the order in which they were first added.
type Summary struct {
	order []string
	sum   map[string]float64
	n     map[string]int
}

// SummaryRow is one averaged metric.
type SummaryRow struct {
	Metric string
	Mean   Ratio // undefined when no row defined the metric
	Rows   int   // rows that contributed
}

// NewSummary returns an empty Summary.
func NewSummary() *Summary {
	return &Summary{sum: map[string]float64{}, n: map[string]int{}}
}

// Add records one row's value of metric; an undefined value only registers
// the metric's name.
func (s *Summary) Add(metric string, v Ratio) {
	if _, ok := s.n[metric]; !ok {
		s.order = append(s.order, metric)
		s.n[metric] = 0
	}
	if v.Valid {
		s.sum[metric] += v.Value
		s.n[metric]++
	}
}

// AddCount records one row's count (TP, FN, ...), always defined.
func (s *Summary) AddCount(metric string, v int) { s.Add(metric, Defined(float64(v))) }

// Rows returns the averages in first-added order.
func (s *Summary) Rows() []SummaryRow {
	out := make([]SummaryRow, 0, len(s.order))
	for _, m := range s.order {
		r := SummaryRow{Metric: m, Rows: s.n[m]}
		if r.Rows > 0 {
			r.Mean = Defined(s.sum[m] / float64(r.Rows))
		}
		out = append(out, r)
	}
	return out
}
