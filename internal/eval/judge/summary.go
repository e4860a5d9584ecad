package judge

import (
	"fmt"
	"io"
	"strconv"

	"github.com/shirube/shirube/internal/csvx"
)

// Row is the outcome for one question, as written to the results CSV.
type Row struct {
	Key         string `json:"key"`
	Number      string `json:"number"`
	Question    string `json:"question"`
	GroundTruth string `json:"ground_truth"`
	Answer      string `json:"answer"`
	Verdict
	// Consensus describes the 3-vote consensus when hedging triggered it,
	// e.g. "3-vote (hedge: borderline) P 2/3, R 3/3, A 1/3"; "" otherwise.
	Consensus string `json:"consensus,omitempty"`
	// Error is set when the question could not be judged; the metrics are
	// then meaningless and the row is left out of the scores.
	Error string `json:"error,omitempty"`
}

// Summary is the aggregate of a run.
type Summary struct {
	Total     int // questions evaluated (rows)
	Scored    int // rows without Error; the denominator of the three scores
	Errors    int
	Precision int // rows with precision 1
	Recall    int
	Accuracy  int
	Consensus int // rows decided by the 3-vote consensus
}

// Summarize counts rows.
func Summarize(rows []Row) Summary {
	s := Summary{Total: len(rows)}
	for _, r := range rows {
		if r.Error != "" {
			s.Errors++
			continue
		}
		s.Scored++
		s.Precision += r.Precision
		s.Recall += r.Recall
		s.Accuracy += r.Accuracy
		if r.Consensus != "" {
			s.Consensus++
		}
	}
	return s
}

// percent formats n/d as a whole percent the way Python's "{:.0f}" does
// (Go's %.0f also rounds half to even); 0% when d is 0.
func percent(n, d int) string {
	if d == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}

// SummaryLines returns the "#SUMMARY:" header rows of the results file. The
// first four are exactly the seed's:
//
//	#SUMMARY: Total Questions: 50
//	#SUMMARY: Precision: 43/50 (86%)
//	#SUMMARY: Recall: 38/50 (76%)
//	#SUMMARY: Accuracy: 41/50 (82%)
//
// Scores are out of the questions judged without error; when some failed,
// the denominators are smaller than Total Questions and an "Errors" line
// says so. The judge that ran and the random seed follow.
func SummaryLines(s Summary, judge string, seed uint64) []string {
	lines := []string{
		fmt.Sprintf("#SUMMARY: Total Questions: %d", s.Total),
		fmt.Sprintf("#SUMMARY: Precision: %d/%d (%s)", s.Precision, s.Scored, percent(s.Precision, s.Scored)),
		fmt.Sprintf("#SUMMARY: Recall: %d/%d (%s)", s.Recall, s.Scored, percent(s.Recall, s.Scored)),
		fmt.Sprintf("#SUMMARY: Accuracy: %d/%d (%s)", s.Accuracy, s.Scored, percent(s.Accuracy, s.Scored)),
	}
	if s.Errors > 0 {
		lines = append(lines, fmt.Sprintf("#SUMMARY: Errors: %d (not judged; left out of the scores above)", s.Errors))
	}
	lines = append(lines,
		fmt.Sprintf("#SUMMARY: Consensus Evaluations: %d", s.Consensus),
		"#SUMMARY: Judge: "+judge,
		fmt.Sprintf("#SUMMARY: Random Seed: %d", seed),
	)
	return lines
}

// Columns returns the header of the per-question rows.
func Columns() []string {
	return []string{"Question Number", "Question", "Ground Truth", "RAG Answer", "Precision", "Recall", "Accuracy", "Reasoning", "Consensus", "Error"}
}

// WriteResults writes the results file: the summary lines, the header, then
// one row per question (metrics empty on error rows).
func WriteResults(w io.Writer, rows []Row, judge string, seed uint64) error {
	return csvx.Write(w, SummaryLines(Summarize(rows), judge, seed), Columns(), records(rows))
}

// records are the CSV rows of the results file.
func records(rows []Row) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		p, rc, a := strconv.Itoa(r.Precision), strconv.Itoa(r.Recall), strconv.Itoa(r.Accuracy)
		if r.Error != "" {
			p, rc, a = "", "", ""
		}
		out[i] = []string{r.Number, r.Question, r.GroundTruth, r.Answer, p, rc, a, r.Reasoning, r.Consensus, r.Error}
	}
	return out
}
