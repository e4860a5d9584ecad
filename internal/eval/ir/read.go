// Package ir evaluates ranked retrieval: it reads relevance judgements
// (qrels) and system rankings (runs) in the formats used by TREC and BEIR,
// and computes nDCG@k, MRR@k and Recall@k the way trec_eval and BEIR's
// pytrec_eval do, so that published figures reproduce exactly.
//
// # Conventions
//
//   - Ranking order: documents of a query are ranked by score descending,
//     ties broken by document id ascending (byte order). The rank column of a
//     TREC run file is ignored, because systems disagree on how to fill it.
//   - Relevant means relevance grade > 0. Grades ≤ 0 are judged non-relevant.
//   - nDCG uses linear gain (gain = grade) with a log2(rank+1) discount, as
//     trec_eval's ndcg_cut and pytrec_eval do (and hence BEIR's published
//     numbers). Exponential gain (2^grade − 1) is available as GainExponential;
//     for binary judgements the two are identical.
//   - Queries in the qrels without any relevant document are skipped: every
//     metric is undefined for them. They are counted in Result.Skipped.
//   - Queries in the qrels (with relevant documents) that are missing from the
//     run score 0 on every metric and stay in the mean; counted in
//     Result.Missing.
//   - Queries in the run but not in the qrels are ignored.
package ir

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Qrels holds relevance judgements: query id → document id → grade.
type Qrels map[string]map[string]int

// Run holds a system's retrieval scores: query id → document id → score.
// Use Ranking to obtain a query's documents in evaluation order.
type Run map[string]map[string]float64

// maxLine bounds one input line. Qrels and run lines are short; a longer line
// means the input is not what the caller thinks it is.
const maxLine = 1 << 20

// ReadQrels parses relevance judgements in either of two layouts, detected
// per line by the number of whitespace-separated fields:
//
//	qid iter docid grade      TREC qrels (4 fields; iter is ignored)
//	query-id corpus-id score  BEIR tsv (3 fields)
//
// A first line whose grade field is not a number is taken as a header
// (BEIR files start with "query-id\tcorpus-id\tscore") and skipped. Blank
// lines are skipped. If a (query, document) pair appears twice, the later
// grade wins. Errors carry the 1-based line number.
func ReadQrels(r io.Reader) (Qrels, error) {
	q := Qrels{}
	err := eachLine(r, func(n int, fields []string) error {
		var qid, docid, grade string
		switch len(fields) {
		case 3:
			qid, docid, grade = fields[0], fields[1], fields[2]
		case 4:
			qid, docid, grade = fields[0], fields[2], fields[3]
		default:
			return fmt.Errorf("want 4 fields (qid iter docid grade) or 3 (query-id corpus-id score), got %d", len(fields))
		}
		g, err := strconv.Atoi(grade)
		if err != nil {
			if _, ferr := strconv.ParseFloat(grade, 64); n == 1 && ferr != nil {
				return nil // header line
			}
			return fmt.Errorf("relevance grade %q is not an integer", grade)
		}
		docs := q[qid]
		if docs == nil {
			docs = map[string]int{}
			q[qid] = docs
		}
		docs[docid] = g
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read qrels: %w", err)
	}
	return q, nil
}

// ReadRun parses a TREC run: "qid Q0 docid rank score tag", whitespace
// separated, one retrieved document per line. The rank column is not used
// (see the package conventions); the score must be a finite-or-infinite
// number, never NaN. A document listed twice for the same query is an error,
// as in trec_eval.
func ReadRun(r io.Reader) (Run, error) {
	run := Run{}
	err := eachLine(r, func(n int, fields []string) error {
		if len(fields) != 6 {
			return fmt.Errorf("want 6 fields (qid Q0 docid rank score tag), got %d", len(fields))
		}
		qid, docid := fields[0], fields[2]
		s, err := strconv.ParseFloat(fields[4], 64)
		if err != nil || math.IsNaN(s) {
			return fmt.Errorf("score %q is not a number", fields[4])
		}
		docs := run[qid]
		if docs == nil {
			docs = map[string]float64{}
			run[qid] = docs
		}
		if _, dup := docs[docid]; dup {
			return fmt.Errorf("document %q listed twice for query %q", docid, qid)
		}
		docs[docid] = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	return run, nil
}

// OpenRun reads the TREC run at path, gunzipping it when the name ends in
// ".gz".
func OpenRun(path string) (Run, error) {
	var run Run
	err := withFile(path, func(r io.Reader) error {
		var err error
		run, err = ReadRun(r)
		return err
	})
	return run, err
}

// OpenQrels reads the qrels at path (TREC or BEIR layout), gunzipping it when
// the name ends in ".gz".
func OpenQrels(path string) (Qrels, error) {
	var q Qrels
	err := withFile(path, func(r io.Reader) error {
		var err error
		q, err = ReadQrels(r)
		return err
	})
	return q, err
}

// withFile opens path, transparently decompressing ".gz", and hands the
// stream to fn.
func withFile(path string, fn func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w (check the path)", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: not a valid gzip file: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	if err := fn(r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// eachLine calls fn with the whitespace-separated fields of every non-blank
// line, numbering lines from 1. A UTF-8 byte-order mark at the start is
// ignored.
func eachLine(r io.Reader, fn func(n int, fields []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if err := fn(n, fields); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than %d bytes; is this a qrels/run file?", n+1, maxLine)
		}
		return err
	}
	return nil
}

// Ranking returns the documents retrieved for qid in evaluation order: score
// descending, then document id ascending. It returns nil for an unknown
// query.
func (r Run) Ranking(qid string) []string {
	docs := r[qid]
	if len(docs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		si, sj := docs[ids[i]], docs[ids[j]]
		if si != sj {
			return si > sj
		}
		return ids[i] < ids[j]
	})
	return ids
}

// RunFromRankings builds a Run from ranked document lists, giving the
// document at 0-based position i the score len−i. Use it to evaluate a
// system that returns ordered ids rather than scores; Ranking then gives
// back each list unchanged (a document repeated in a list keeps its first,
// best position).
func RunFromRankings(rankings map[string][]string) Run {
	run := make(Run, len(rankings))
	for qid, ids := range rankings {
		docs := make(map[string]float64, len(ids))
		for i, id := range ids {
			if _, seen := docs[id]; !seen {
				docs[id] = float64(len(ids) - i)
			}
		}
		run[qid] = docs
	}
	return run
}

// WriteRun writes run in TREC format, queries in id order and documents in
// evaluation order, with 1-based ranks and the given tag (a tag containing
// whitespace is replaced by "run"). ReadRun reads the output back to an
// equal Run, provided ids contain no whitespace.
func WriteRun(ctx context.Context, w io.Writer, run Run, tag string) error {
	if tag == "" || strings.ContainsFunc(tag, unicode.IsSpace) {
		tag = "run"
	}
	qids := make([]string, 0, len(run))
	for qid := range run {
		qids = append(qids, qid)
	}
	sort.Strings(qids)
	bw := bufio.NewWriter(w)
	for _, qid := range qids {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, docid := range run.Ranking(qid) {
			score := strconv.FormatFloat(run[qid][docid], 'g', -1, 64)
			if _, err := fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", qid, docid, i+1, score, tag); err != nil {
				return fmt.Errorf("write run: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	return nil
}
