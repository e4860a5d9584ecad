// Package dataset reads the JSON case files of the evaluators: the
// assistant's test set (package evalset) and the differential case set
// (package diffeval). Each evaluator owns its case schema — which fields a
// case has and what makes one unusable — and this package owns what every
// case file shares:
//
//   - the file is a JSON object whose array field holds the cases; a file
//     that is not such an object is a fatal error (Decode);
//   - cases are read one by one: a case that cannot be used (it does not
//     decode, the evaluator's check rejects it, or its id repeats an
//     earlier one) is reported in one line that names it by position and
//     id and says what to fix, and is left out — the other cases still run
//     (Cases);
//   - reading the file names it and says what to pass when it is missing
//     (Load).
package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Load reads the case file at path and parses it with parse. kind names
// the file in errors ("eval dataset"); hint says what to pass when the file
// cannot be read. Problems are parse's per-case problems.
func Load[F any](path, kind, hint string, parse func([]byte) (F, []error, error)) (F, []error, error) {
	var zero F
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, nil, fmt.Errorf("read %s: %w (%s)", kind, err, hint)
	}
	f, problems, err := parse(data)
	if err != nil {
		return zero, nil, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	return f, problems, nil
}

// Decode reads the file-level object of a case file into head, a pointer
// to a struct whose field tagged array holds the cases as
// []json.RawMessage; cases points at that field. shape says what the file
// must look like when the array is missing.
func Decode(data []byte, head any, array string, cases *[]json.RawMessage, shape string) error {
	if err := json.Unmarshal(data, head); err != nil {
		return fmt.Errorf("not a JSON object with a %s array: %w", array, err)
	}
	if *cases == nil {
		return fmt.Errorf("no %q array: %s", array, shape)
	}
	return nil
}

// Cases decodes the raw cases in order. check validates a decoded case and
// may tidy it (trim its id, drop empty entries); id returns its id after
// check. A case that does not decode, that check rejects or whose id was
// seen before gives one problem, "<noun> #<position> (<id>) skipped:
// <why>", and is left out.
func Cases[T any](raw []json.RawMessage, noun string, check func(*T) error, id func(*T) string) ([]T, []error) {
	var out []T
	var problems []error
	seen := map[string]bool{}
	for i, rc := range raw {
		var c T
		var name string
		err := json.NewDecoder(bytes.NewReader(rc)).Decode(&c)
		if err != nil {
			name = probeID(rc)
			err = fmt.Errorf("cannot decode: %s", OneLine(err.Error()))
		} else {
			err = check(&c)
			name = id(&c)
			if err == nil && seen[name] {
				err = fmt.Errorf("duplicate id %q: give every case its own id", name)
			}
		}
		if err != nil {
			label := fmt.Sprintf("%s #%d", noun, i+1)
			if name != "" {
				label += fmt.Sprintf(" (%s)", name)
			}
			problems = append(problems, fmt.Errorf("%s skipped: %w", label, err))
			continue
		}
		seen[name] = true
		out = append(out, c)
	}
	return out, problems
}

// probeID is the id of a case that does not decode, when it has a string
// one, so that the problem can name it.
func probeID(rc json.RawMessage) string {
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(rc, &probe) == nil {
		if s, ok := probe.ID.(string); ok {
			return s
		}
	}
	return ""
}

// Scalar renders a JSON string or number (a version such as "1.0" or 1.0)
// as text; anything else is "".
func Scalar(m json.RawMessage) string {
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(m, &n) == nil {
		return n.String()
	}
	return ""
}

// OneLine collapses white space so a message fits on one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
