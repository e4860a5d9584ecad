package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/retrieve"
)

// TestAskScopeAndTrace: the API's ask body takes a scope that reaches the
// search, and the answer carries the retrieval trace (also written to the
// audit log).
func TestAskScopeAndTrace(t *testing.T) {
	var scopes [][]string
	trace := &assistant.Trace{Profile: "balanced", Route: "direct", Planner: "offline",
		Facets:   []assistant.TraceFacet{{Text: "マルウェア感染端末の隔離", Covered: true}},
		Rounds:   []assistant.TraceRound{{Round: 1, Phase: "seed_recall", Searches: []string{qMalware}}},
		Searches: 1, SearchBudget: 16, StopReason: "coverage_satisfied"}
	f := newFixture(t, fixtureOptions{retriever: func(ctx context.Context, s *retrieve.Searcher, q string, opt retrieve.Options) (assistant.Retrieval, error) {
		scopes = append(scopes, opt.Scope)
		rs, _, err := s.Search(ctx, q, opt)
		return assistant.Retrieval{Results: rs, Trace: trace}, err
	}})
	rep := f.askJSON(t, `{"question":`+jq(qMalware)+`,"scope":["runbooks"]}`)
	if len(scopes) != 1 || len(scopes[0]) != 1 || scopes[0][0] != "runbooks" {
		t.Fatalf("scopes seen %v", scopes)
	}
	for _, r := range rep.SearchResults {
		if !strings.Contains(r.Source+r.File, "runbooks/") {
			t.Errorf("result outside the scope: %s", r.File)
		}
	}
	if rep.Trace == nil || rep.Trace.StopReason != "coverage_satisfied" || rep.Trace.SearchBudget != 16 || len(rep.Trace.Rounds) != 1 {
		t.Errorf("trace %+v", rep.Trace)
	}
	es, err := auditlog.ReadAll(context.Background(), f.logs)
	if err != nil || len(es) != 1 {
		t.Fatalf("audit %d lines, %v", len(es), err)
	}
	var logged assistant.Trace
	if err := json.Unmarshal(es[0].Trace, &logged); err != nil || logged.Profile != "balanced" || logged.Searches != 1 {
		t.Errorf("audit trace %s: %v", es[0].Trace, err)
	}
	// A scope with no document in it: nothing to answer from.
	rep = f.askJSON(t, `{"question":`+jq(qMalware)+`,"scope":["manuals"]}`)
	for _, r := range rep.SearchResults {
		if !strings.Contains(r.Source+r.File, "manuals/") {
			t.Errorf("result outside the scope manuals: %s", r.File)
		}
	}
}
