// Package metrics computes the batch evaluation's metrics: checklist
// verification of an answer (TP/FP/FN/TN against the key points the
// question's checklist lists) and reference verification of the retrieved
// pages (against the pages the answer should come from), plus averages
// over a run. Origin: seed 000.
//
// Every ratio is a Ratio, which may be undefined (0/0). An undefined ratio
// is written as an empty CSV cell and is left out of averages, so that a row
// where a metric makes no sense does not drag the mean towards zero.
package metrics

import (
	"math"
	"strconv"
)

// Ratio is a metric that may be undefined. The zero value is undefined.
type Ratio struct {
	Value float64
	Valid bool
}

// Of returns num/den, undefined when den is zero.
func Of(num, den int) Ratio {
	if den == 0 {
		return Ratio{}
	}
	return Ratio{Value: float64(num) / float64(den), Valid: true}
}

// Defined returns a valid Ratio holding v.
func Defined(v float64) Ratio { return Ratio{Value: v, Valid: true} }

// Cell formats r for a CSV cell: "" when undefined, otherwise the value
// rounded to four decimals without trailing zeros ("1", "0.5", "0.6667").
func (r Ratio) Cell() string {
	if !r.Valid {
		return ""
	}
	return FormatFloat(r.Value)
}

// FormatFloat rounds v to four decimals and formats it without trailing
// zeros. It is the one number format of every CSV the evaluation writes.
func FormatFloat(v float64) string {
	v = math.Round(v*10000) / 10000
	if v == 0 {
		v = 0 // turn -0 into 0
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ParseRatio reads a cell written by Cell; "" (after trimming) is undefined.
func ParseRatio(cell string) (Ratio, error) {
	s := trimSpace(cell)
	if s == "" {
		return Ratio{}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Ratio{}, err
	}
	return Defined(v), nil
}

// f1 is the harmonic mean of precision and recall written with counts,
// 2TP/(2TP+FP+FN). It equals 2PR/(P+R) whenever both are defined and is
// still defined (as 0) when only one of them is, e.g. an answer that finds
// nothing. It is undefined only when TP, FP and FN are all zero.
func f1(tp, fp, fn int) Ratio { return Of(2*tp, 2*tp+fp+fn) }
