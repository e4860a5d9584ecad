package bench

import (
	"cmp"
	"context"
	"strings"

	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/retrieve"
)

// ZeroHitReport is the share of an index's real questions that its BM25 leg
// cannot match at all (issue #2: the zero-hit share per index, next to the
// per-benchmark zero_hit_rate).
type ZeroHitReport struct {
	LogsDir     string   `json:"logs"`
	Queries     int      `json:"queries"`
	ZeroHit     int      `json:"zero_hit"`
	ZeroHitRate float64  `json:"zero_hit_rate"`
	Examples    []string `json:"zero_hit_examples,omitempty"` // the first five
	Skipped     int      `json:"skipped_lines,omitempty"`     // log lines that were not entries
}

// LoggedQueries returns the distinct questions of the audit log in dir, in
// log order: the rewritten, stand-alone form of a follow-up (the query the
// search ran), else the question as asked. skipped counts lines that were
// not entries.
func LoggedQueries(ctx context.Context, dir string) (queries []string, skipped int, err error) {
	seen := map[string]bool{}
	skipped, err = auditlog.Read(ctx, dir, func(e auditlog.Entry) error {
		q := strings.TrimSpace(cmp.Or(e.RewrittenQuery, e.Query))
		if q != "" && !seen[q] {
			seen[q] = true
			queries = append(queries, q)
		}
		return nil
	})
	return queries, skipped, err
}

// ZeroHits runs queries through the BM25 leg of ix (either store) and
// counts those that match no chunk.
func ZeroHits(ctx context.Context, ix retrieve.Store, queries []string) (ZeroHitReport, error) {
	rep := ZeroHitReport{Queries: len(queries)}
	for _, q := range queries {
		hs, _, err := ix.LexicalHits(ctx, ix.Terms(q), 1)
		if err != nil {
			return rep, err
		}
		if len(hs) == 0 {
			rep.ZeroHit++
			if len(rep.Examples) < 5 {
				rep.Examples = append(rep.Examples, q)
			}
		}
	}
	if rep.Queries > 0 {
		rep.ZeroHitRate = round(float64(rep.ZeroHit) / float64(rep.Queries))
	}
	return rep, nil
}
