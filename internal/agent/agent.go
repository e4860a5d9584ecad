// Package agent is the agentic retrieval loop of seed 003: facet planner →
// route select → seed recall → frontier expand → evidence pull → coverage
// check → corrective loop → verification → finalize (Answer / Evidence /
// Unknowns), under the fast / balanced / deep profiles.
//
// Everything runs offline: the planner splits the question with Japanese
// conjunctions and enumerations, must-have terms come from the index's
// analyser, and coverage is checked against the retrieved text.
package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// Searcher runs one search (satisfied by *retrieve.Searcher).
type Searcher interface {
	Search(ctx context.Context, query string, opt retrieve.Options) ([]retrieve.Result, retrieve.Info, error)
}

// rerankSearcher is a Searcher that also has the re-rank stage
// (retrieve.Searcher).
type rerankSearcher interface {
	SearchReranked(ctx context.Context, query string, opt retrieve.Options, m retrieve.Reranker) ([]retrieve.Result, retrieve.Info, bool, error)
}

// Stop reasons.
const (
	StopCoverage   = "coverage_satisfied" // top5 relevance and must-have hits reach the profile's thresholds
	StopMaxRounds  = "max_rounds"
	StopMaxCalls   = "max_calls"
	StopNoNew      = "no_new_evidence" // two searches in a row added no evidence
	StopNoQueries  = "no_queries"      // the corrective loop had nothing new to ask
	StopNoEvidence = "no_evidence"     // nothing retrieved at all (with no queries left)
)

// Options configure Run.
type Options struct {
	Profile   string    // fast, balanced (default) or deep
	Searcher  Searcher  // required
	Tokenizer Tokenizer // required: the index's analyser
	// K, when > 0, caps the returned evidence below the profile's
	// MaxEvidence (the CLI's --k); the lead is never cut.
	K int
	// Search carries the base search settings (BM25Weight, Fusion, Mode).
	// Its K is the plain search's size: the first search is the plain
	// search of the whole question (analysis.SearchQuery, the candidates
	// a K-sized search draws), and its top K lead the evidence in their
	// fused order (the lead). Every search fetches the profile's search
	// size.
	Search retrieve.Options
	// Reranker, when set and the Searcher can re-rank (retrieve.Searcher),
	// reorders the plain search of the whole question before its top K
	// lead the evidence — the same re-rank stage as the plain path.
	Reranker retrieve.Reranker
	// Planner, when set, decomposes the question with an LLM (one call,
	// not counted against the search budget); any failure falls back to the
	// offline planner and is reported in Result.PlannerError.
	Planner Completer
}

// Step is one search of the loop.
type Step struct {
	Round   int      `json:"round"`
	Phase   string   `json:"phase"` // seed_recall, corrective
	Query   string   `json:"query"`
	Results int      `json:"results"`
	New     int      `json:"new"` // chunks that entered the evidence set
	Top5    float64  `json:"top5_relevance"`
	Hits    int      `json:"must_have_hits"`
	Facets  []string `json:"facets,omitempty"` // facets the query was written for
}

// FacetCoverage is the verification of one facet.
type FacetCoverage struct {
	Facet   string   `json:"facet"`
	Covered bool     `json:"covered"`
	ChunkID string   `json:"chunk_id,omitempty"` // best supporting chunk
	Matched []string `json:"matched"`            // must-have terms found there
	Missing []string `json:"missing"`
}

// Result is the outcome of Run.
type Result struct {
	Profile  string            `json:"profile"`
	Route    string            `json:"route"`
	Facets   []Facet           `json:"facets"`
	Queries  []string          `json:"queries"` // every query searched, in order
	Rounds   int               `json:"rounds"`
	Calls    int               `json:"calls"`
	Budget   int               `json:"budget"`   // the profile's search budget (MaxCalls)
	Evidence []retrieve.Result `json:"evidence"` // best first, capped by the profile's MaxEvidence
	// Reranked: the re-ranker ordered the plain search of the whole
	// question (Options.Reranker).
	Reranked       bool            `json:"reranked,omitempty"`
	Top5Relevance  float64         `json:"top5_relevance"`
	Top10Relevance float64         `json:"top10_relevance"`
	MustHaveHits   int             `json:"must_have_hits"`
	Coverage       []FacetCoverage `json:"coverage"`
	Unknowns       []string        `json:"unknowns"` // facets without supporting evidence
	StopReason     string          `json:"stop_reason"`
	Corrective     bool            `json:"corrective"` // the corrective loop ran
	Trace          []Step          `json:"trace"`
	Planner        string          `json:"planner"` // offline or llm
	PlannerError   string          `json:"planner_error,omitempty"`
	// PlannerUsage and PlannerCostUSD are the LLM planner's tokens and
	// cost (zero offline), to be added to the answer's.
	PlannerUsage   llm.Usage `json:"planner_usage"`
	PlannerCostUSD float64   `json:"planner_cost_usd"`
	// Lead is what the plain search of the whole question (the first
	// search) reported: the fusion weight it used, for the audit log.
	Lead retrieve.Info `json:"-"`
}

// Run answers question's retrieval need within the profile's budgets.
func Run(ctx context.Context, question string, opt Options) (Result, error) {
	prof, err := ProfileNamed(opt.Profile)
	if err != nil {
		return Result{}, err
	}
	if opt.Searcher == nil || opt.Tokenizer == nil {
		return Result{}, errors.New("agent: Searcher and Tokenizer are required")
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return Result{}, errors.New("agent: the question is empty")
	}
	plan := PlanQuestion(question, opt.Tokenizer, prof.CandidateBudget)
	planner, perr := "offline", ""
	if opt.Planner != nil {
		p, err := PlanWithLLM(ctx, opt.Planner, question, opt.Tokenizer, prof.CandidateBudget)
		plan.Usage, plan.CostUSD = p.Usage, p.CostUSD
		if err != nil {
			perr = err.Error()
		} else {
			plan, planner = p, "llm"
		}
	}
	r := &runner{prof: prof, opt: opt, plan: plan, pool: map[string]retrieve.Result{}, asked: map[string]bool{}, norm: map[string]string{}, dates: map[string]string{},
		leadK: opt.Search.K}
	if r.leadK <= 0 {
		r.leadK = defaultLeadK
	}
	r.res = Result{Profile: prof.Name, Route: plan.Route, Facets: plan.Facets, Planner: planner, PlannerError: perr, Budget: prof.MaxCalls,
		PlannerUsage: plan.Usage, PlannerCostUSD: plan.CostUSD}
	if err := r.loop(ctx); err != nil {
		return r.finish(), err
	}
	if err := r.sweep(ctx); err != nil {
		return r.finish(), err
	}
	return r.finish(), nil
}

// defaultLeadK is the lead's size when Options.Search.K is not set (the
// plain search's default K).
const defaultLeadK = 4

type runner struct {
	prof Profile
	// lead is the plain search's top leadK, in its fused order: the first
	// evidence, whatever the facet and corrective searches find after.
	lead   []retrieve.Result
	leadK  int
	opt    Options
	plan   Plan
	res    Result
	pool   map[string]retrieve.Result // merged evidence by chunk id, best evidence score kept
	asked  map[string]bool
	streak int               // consecutive searches without new evidence
	norm   map[string]string // normalised text by chunk id
	dates  map[string]string // latest date written in the chunk, by chunk id
}

func (r *runner) searchK() int {
	k := r.prof.FirstK
	if r.plan.Route == RouteGlobal {
		k *= 2 // 対象範囲を広げる
	}
	return k
}

func (r *runner) loop(ctx context.Context) error {
	queries := r.plan.Queries
	phase := "seed_recall"
	for round := 1; round <= r.prof.MaxRounds; round++ {
		if len(queries) == 0 {
			r.res.StopReason = StopNoQueries
			return nil
		}
		r.res.Rounds = round
		if round > 1 {
			r.res.Corrective = true
		}
		for _, q := range queries {
			if r.res.Calls >= r.prof.MaxCalls {
				r.res.StopReason = StopMaxCalls
				return nil
			}
			if err := r.search(ctx, round, phase, q); err != nil {
				return err
			}
			// Within the corrective loop, stop as soon as coverage is
			// satisfied, or after two searches in a row that add nothing
			// (seed recall always runs whole).
			if round > 1 && r.satisfied() {
				r.res.StopReason = StopCoverage
				return nil
			}
			if round > 1 && r.streak >= 2 {
				r.res.StopReason = StopNoNew
				return nil
			}
		}
		if r.satisfied() {
			r.res.StopReason = StopCoverage
			return nil
		}
		if round > 1 && r.streak >= 2 {
			r.res.StopReason = StopNoNew
			return nil
		}
		if round == r.prof.MaxRounds {
			break
		}
		if r.res.Calls >= r.prof.MaxCalls {
			r.res.StopReason = StopMaxCalls
			return nil
		}
		queries = r.corrective()
		phase = "corrective"
	}
	r.res.StopReason = StopMaxRounds
	return nil
}

// search runs one query and merges its results into the pool.
func (r *runner) search(ctx context.Context, round int, phase, q string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sopt := r.opt.Search
	sopt.K = r.searchK()
	isLead := r.res.Calls == 0 && phase == "seed_recall"
	if isLead {
		// The plain search: what is asked, not how it is asked, over the
		// candidates a plain search of leadK draws, so that its head is
		// the plain path's ranking.
		q = analysis.SearchQuery(q)
		sopt.K = max(sopt.K, r.leadK)
		if sopt.Candidates <= 0 {
			sopt.Candidates = max(10*r.leadK, 100)
			if len(sopt.Scope) > 0 {
				sopt.Candidates *= 10
			}
		}
	}
	if phase == "facet_sweep" && len(r.pool) > 0 {
		// Novelty: the sweep spends its results on chunks not taken yet
		// (the pooled ones keep their best score). The corrective rounds
		// do not skip: their keyword queries would otherwise pull in
		// chunks that match only the rewritten query, whose evidence
		// scores outrank the whole question's (qa-ja-docs D51).
		sopt.SkipIDs = make(map[string]bool, len(r.pool))
		for id := range r.pool {
			sopt.SkipIDs[id] = true
		}
	}
	var results []retrieve.Result
	var info retrieve.Info
	var err error
	if rs, ok := r.opt.Searcher.(rerankSearcher); ok && isLead && r.opt.Reranker != nil {
		results, info, r.res.Reranked, err = rs.SearchReranked(ctx, q, sopt, r.opt.Reranker)
	} else {
		results, info, err = r.opt.Searcher.Search(ctx, q, sopt)
	}
	if isLead {
		r.res.Lead = info
	}
	r.res.Calls++
	r.asked[q] = true
	r.res.Queries = append(r.res.Queries, q)
	if err != nil {
		return fmt.Errorf("agent: search %q: %w", q, err)
	}
	before := r.bestIDs()
	if isLead {
		r.lead = r.newerFirst(results[:min(len(results), r.leadK)])
	}
	unseen := 0 // chunks not retrieved before
	for _, x := range results {
		old, ok := r.pool[x.ChunkID]
		if !ok {
			unseen++
		}
		if !ok || better(x, old) {
			r.pool[x.ChunkID] = x
		}
	}
	newCount := 0
	for id := range r.bestIDs() {
		if !before[id] {
			newCount++
		}
	}
	gain := newCount
	if phase == "facet_sweep" {
		// The sweep searches for facets still uncovered, whose support
		// may score below the evidence already kept: any chunk not
		// retrieved before is new evidence for them (seed 003's novelty).
		gain = unseen
	}
	if gain == 0 {
		r.streak++
	} else {
		r.streak = 0
	}
	cov := r.coverage()
	r.res.Trace = append(r.res.Trace, Step{
		Round: round, Phase: phase, Query: q, Results: len(results), New: newCount,
		Top5: r.top5(), Hits: hits(cov), Facets: r.facetsOf(q),
	})
	return nil
}

// updated is when x's document was last changed, as a sortable ISO 8601
// string: the source's modification time, or else the latest date written
// in the chunk (2024-04-01, 2024/4/1, 2024年4月1日, 令和6年4月1日).
func (r *runner) updated(x retrieve.Result) string {
	if x.UpdatedAt != "" {
		return x.UpdatedAt
	}
	d, ok := r.dates[x.ChunkID]
	if !ok {
		d = latestDate(x.Text)
		r.dates[x.ChunkID] = d
	}
	return d
}

// newerFirst reorders each run of tied hits — the same fused and evidence
// scores, as two copies of one text score — so that the newer document
// comes first (seed 003's updatedAt signal); hits that differ in score keep
// the search's order. It returns a new slice.
func (r *runner) newerFirst(hits []retrieve.Result) []retrieve.Result {
	out := append([]retrieve.Result(nil), hits...)
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Score == out[i].Score && out[j].EvidenceScore == out[i].EvidenceScore {
			j++
		}
		sort.SliceStable(out[i:j], func(a, b int) bool { return r.updated(out[i+a]) > r.updated(out[i+b]) })
		i = j
	}
	return out
}

// ahead orders the evidence: evidence score, newer document, fused score,
// chunk id.
func (r *runner) ahead(a, b retrieve.Result) bool {
	if a.EvidenceScore != b.EvidenceScore {
		return a.EvidenceScore > b.EvidenceScore
	}
	if ua, ub := r.updated(a), r.updated(b); ua != ub {
		return ua > ub
	}
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ChunkID < b.ChunkID
}

func better(a, b retrieve.Result) bool {
	if a.EvidenceScore != b.EvidenceScore {
		return a.EvidenceScore > b.EvidenceScore
	}
	return a.Score > b.Score
}

// ranked is the pool best first: evidence score (query match), then the
// newer document (seed 003's updatedAt signal: of two chunks that match
// equally, the more recent one is likelier current), then fused score,
// then id.
func (r *runner) ranked() []retrieve.Result {
	out := make([]retrieve.Result, 0, len(r.pool))
	for _, x := range r.pool {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return r.ahead(out[i], out[j]) })
	return out
}

// kept is the evidence set: the lead (the plain search's top hits, in
// their order); the verified supporting chunk of every facet for which it
// holds more of the facet's must-have terms than any lead hit, placed
// within the lead's size (before its lowest hits, never before its top
// hit) so that the top results show evidence for every part of the
// question; then the best of the rest (by evidence score), up to the
// evidence cap and at most as many as the lead holds. The facet and
// corrective searches only add evidence: none of the plain search's hits is
// dropped. The cap bounds what is added to the lead; only a facet's
// supporting chunk may go beyond it (a part of the question without
// evidence otherwise).
func (r *runner) kept() []retrieve.Result {
	limit := r.prof.MaxEvidence
	if r.opt.K > 0 && r.opt.K < limit {
		limit = r.opt.K
	}
	inLead := make(map[string]bool, len(r.lead))
	for _, x := range r.lead {
		inLead[x.ChunkID] = true
	}
	ranked := r.ranked()
	leadCov := r.coverageOf(r.lead)
	need := map[string]bool{}
	for i, c := range r.coverage() {
		if c.Covered && len(c.Matched) > len(leadCov[i].Matched) && !inLead[c.ChunkID] {
			need[c.ChunkID] = true
		}
	}
	var extra []retrieve.Result
	for _, x := range ranked {
		if need[x.ChunkID] {
			extra = append(extra, x)
		}
	}
	if len(r.lead) > 0 {
		// What is added stays within the lead's own size: every added
		// chunk is one more chance for the answer to quote a sentence
		// that shares the question's words but not its point (deep's 16
		// chunks lost two answers that 8 kept on qa-ja-docs).
		limit = min(limit, 2*len(r.lead))
	}
	limit = max(limit, len(r.lead)+len(extra))
	out := make([]retrieve.Result, 0, limit)
	// The support of a part of the question the lead leaves without
	// evidence goes within the lead's size, so that the top results show
	// evidence for every part: the lead's lowest hits follow it (its top
	// hit always stays first).
	m := max(min(len(r.lead), 1), len(r.lead)-len(extra))
	out = append(out, r.lead[:m]...)
	out = append(out, extra...)
	out = append(out, r.lead[m:]...)
	for _, x := range ranked {
		if len(out) >= limit {
			break
		}
		if !need[x.ChunkID] && !inLead[x.ChunkID] {
			out = append(out, x)
		}
	}
	return out
}

// bestIDs is the loop's working set, by which novelty is judged (a search
// that adds nothing to it adds no evidence): the supporting chunk of every
// covered facet and the best of the rest by evidence score, up to the
// evidence cap.
func (r *runner) bestIDs() map[string]bool {
	limit := r.prof.MaxEvidence
	if r.opt.K > 0 && r.opt.K < limit {
		limit = r.opt.K
	}
	m := map[string]bool{}
	for _, c := range r.coverage() {
		if c.Covered && len(m) < limit {
			m[c.ChunkID] = true
		}
	}
	for _, x := range r.ranked() {
		if len(m) >= limit {
			break
		}
		m[x.ChunkID] = true
	}
	return m
}

// top5 is the mean evidence score of the five best chunks retrieved.
func (r *runner) top5() float64 { return r.topN(5) }

// topN is the mean evidence score of the n best chunks retrieved (seed
// 003's top5_relevance and top10_relevance, judged by the evidence score).
func (r *runner) topN(n int) float64 {
	ranked := r.ranked()
	if len(ranked) > n {
		ranked = ranked[:n]
	}
	if len(ranked) == 0 {
		return 0
	}
	var sum float64
	for _, x := range ranked {
		sum += x.EvidenceScore
	}
	return round4(sum / float64(len(ranked)))
}

// coverage verifies every facet against the retrieved text: a facet is
// covered when one chunk holds at least two thirds of its must-have terms
// (all of them when it has one or two).
func (r *runner) coverage() []FacetCoverage { return r.coverageOf(r.ranked()) }

// coverageOf verifies every facet against the chunks given, best first.
func (r *runner) coverageOf(ranked []retrieve.Result) []FacetCoverage {
	norms := make([]string, len(ranked))
	for i, x := range ranked {
		n, ok := r.norm[x.ChunkID]
		if !ok {
			n = analysis.Normalize(x.Heading + "\n" + x.Text)
			r.norm[x.ChunkID] = n
		}
		norms[i] = n
	}
	out := make([]FacetCoverage, 0, len(r.plan.Facets))
	for _, f := range r.plan.Facets {
		c := FacetCoverage{Facet: f.Text, Missing: f.MustHave, Matched: []string{}}
		need := len(f.MustHave)
		if need > 2 {
			need = (2*need + 2) / 3
		}
		for i, n := range norms {
			var m, miss []string
			for _, t := range f.MustHave {
				if analysis.Present(n, t) {
					m = append(m, t)
				} else {
					miss = append(miss, t)
				}
			}
			if len(m) > len(c.Matched) {
				c.Matched, c.Missing, c.ChunkID = m, miss, ranked[i].ChunkID
			}
			if len(m) == len(f.MustHave) {
				break
			}
		}
		if c.Missing == nil {
			c.Missing = []string{}
		}
		c.Covered = len(f.MustHave) > 0 && len(c.Matched) >= need
		if !c.Covered && len(c.Matched) == 0 {
			c.ChunkID = ""
		}
		out = append(out, c)
	}
	return out
}

func hits(cov []FacetCoverage) int {
	n := 0
	for _, c := range cov {
		if c.Covered {
			n++
		}
	}
	return n
}

// mustHaveNeed is the profile's must-have threshold, capped at the number
// of facets (a one-facet question cannot have two hits).
func (r *runner) mustHaveNeed() int {
	return min(r.prof.MinMustHave, max(len(r.plan.Facets), 1))
}

func (r *runner) satisfied() bool {
	return r.top5() >= r.prof.MinTop5 && hits(r.coverage()) >= r.mustHaveNeed()
}

// corrective writes the next round's queries (frontier expansion driven by
// facets): for every uncovered facet its must-have terms, then its missing
// terms next to the best chunk's heading; when every facet is covered but
// relevance is low, keyword and heading-anchored variants of each facet.
// Queries already searched are skipped; at most the candidate budget.
func (r *runner) corrective() []string { return r.candidates(false) }

// candidates writes corrective queries; with onlyUncovered, for the
// uncovered facets alone (the facet sweep).
func (r *runner) candidates(onlyUncovered bool) []string {
	cov := r.coverage()
	var qs []string
	add := func(q string) {
		q = strings.TrimSpace(q)
		if q != "" && !r.asked[q] && len(qs) < r.prof.CandidateBudget {
			qs = appendNew(qs, q)
		}
	}
	ranked := r.ranked()
	heading := func(i int) string {
		if i < len(ranked) {
			return lastHeading(ranked[i].Heading)
		}
		return ""
	}
	lowRelevance := r.top5() < r.prof.MinTop5
	for _, pass := range []int{0, 1, 2, 3} {
		for i, f := range r.plan.Facets {
			c := cov[i]
			if c.Covered && (pass < 2 || onlyUncovered || !lowRelevance) {
				continue
			}
			switch pass {
			case 0: // the facet alone, then as keywords
				add(f.Text)
				add(strings.Join(f.MustHave, " "))
			case 1: // what is still missing, anchored on the facet's best chunk
				if len(c.Missing) > 0 && len(c.Matched) > 0 {
					add(strings.Join(c.Missing, " "))
				}
			case 2: // frontier: facet terms next to the headings retrieved so far
				for j := 0; j < 3; j++ {
					if h := heading(j); h != "" && !strings.Contains(h, f.Text) {
						add(h + " " + strings.Join(f.MustHave, " "))
					}
				}
			case 3: // narrower: each half of a long facet's terms
				if n := len(f.MustHave); n >= 4 {
					add(strings.Join(f.MustHave[:n/2], " "))
					add(strings.Join(f.MustHave[n/2:], " "))
				}
			}
		}
	}
	return qs
}

// sweep spends the search budget the loop left on facets still uncovered
// (a multi-part question whose other facets satisfied the thresholds
// before its rounds ran out): one round of their corrective queries at a
// time, until every facet is covered, the profile's max_rounds is reached
// (the sweep's rounds count like the loop's: it never adds one beyond), the
// budget is spent, nothing new is left to ask, or two searches in a row add
// no evidence. The fast profile (one round, no corrective loop) does not
// sweep.
func (r *runner) sweep(ctx context.Context) error {
	if r.prof.MaxRounds < 2 || len(r.pool) == 0 {
		return nil
	}
	r.streak = 0
	swept := false
	for r.res.Rounds < r.prof.MaxRounds && r.res.Calls < r.prof.MaxCalls && hits(r.coverage()) < len(r.plan.Facets) {
		qs := r.candidates(true)
		if len(qs) == 0 {
			break
		}
		swept = true
		r.res.Rounds++
		r.res.Corrective = true
		for _, q := range qs {
			if r.res.Calls >= r.prof.MaxCalls {
				r.res.StopReason = StopMaxCalls
				return nil
			}
			if err := r.search(ctx, r.res.Rounds, "facet_sweep", q); err != nil {
				return err
			}
			if hits(r.coverage()) == len(r.plan.Facets) {
				r.res.StopReason = StopCoverage
				return nil
			}
			if r.streak >= 2 {
				r.res.StopReason = StopNoNew
				return nil
			}
		}
	}
	if swept {
		if r.res.Calls >= r.prof.MaxCalls {
			r.res.StopReason = StopMaxCalls
		} else {
			r.res.StopReason = StopNoQueries
		}
	}
	return nil
}

// lastHeading is the innermost heading of a breadcrumb ("A > B > C").
func lastHeading(h string) string {
	if i := strings.LastIndex(h, ">"); i >= 0 {
		h = h[i+1:]
	}
	return strings.TrimSpace(strings.TrimLeft(h, "# "))
}

// facetsOf names the facets a query was written for.
func (r *runner) facetsOf(q string) []string {
	var out []string
	for _, f := range r.plan.Facets {
		if strings.Contains(q, f.Text) || strings.Contains(q, strings.Join(f.MustHave, " ")) {
			out = append(out, f.Text)
		}
	}
	return out
}

// finish verifies the facets and fills the output contract.
func (r *runner) finish() Result {
	res := r.res
	res.Evidence = r.kept()
	if res.Evidence == nil {
		res.Evidence = []retrieve.Result{}
	}
	res.Top5Relevance = r.top5()
	res.Top10Relevance = r.topN(10)
	res.Coverage = r.coverage()
	res.MustHaveHits = hits(res.Coverage)
	res.Unknowns = []string{}
	for _, c := range res.Coverage {
		if !c.Covered {
			res.Unknowns = append(res.Unknowns, c.Facet)
		}
	}
	if res.Queries == nil {
		res.Queries = []string{}
	}
	if res.Facets == nil {
		res.Facets = []Facet{}
	}
	if res.StopReason == "" && len(r.pool) == 0 {
		res.StopReason = StopNoEvidence
	}
	return res
}

func round4(x float64) float64 { return float64(int64(x*1e4+0.5)) / 1e4 }
