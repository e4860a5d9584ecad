package answer

import (
	"unicode"

	"github.com/shirube/shirube/internal/analysis"
)

// bigrams is a test tokenizer: NFKC, lower case, then character bigrams of
// each run of letters and digits (a one-rune run is its own term). Latin
// runs become whole words instead, as an analyser would make them.
type bigrams struct{}

func (bigrams) Terms(text string) []string {
	var out []string
	emit := func(run []rune) {
		switch {
		case len(run) == 0:
		case run[0] < unicode.MaxASCII:
			out = append(out, string(run))
		case len(run) == 1:
			out = append(out, string(run))
		default:
			for i := 0; i+1 < len(run); i++ {
				out = append(out, string(run[i:i+2]))
			}
		}
	}
	var run []rune
	ascii := false
	for _, r := range analysis.Normalize(text) {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		isASCII := r < unicode.MaxASCII
		if !ok || (len(run) > 0 && isASCII != ascii) {
			emit(run)
			run = run[:0]
		}
		if ok {
			run = append(run, r)
			ascii = isASCII
		}
	}
	emit(run)
	return out
}
