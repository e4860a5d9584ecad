package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/agent"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/evalset"
	"github.com/shirube/shirube/internal/eval/stats"
	"github.com/shirube/shirube/internal/retrieve"
)

// AgentReport is one profile's KPIs in `shirube bench agent`, after seed
// 003's experiment protocol: the same fixed question set through every
// profile, recording calls and latency.
type AgentReport struct {
	Profile   string `json:"profile"`
	Questions int    `json:"questions"`
	// AvgCalls is the mean number of searches per question (seed:
	// avg_cli_calls).
	AvgCalls float64 `json:"avg_calls"`
	// AvgRounds is the mean number of retrieval rounds.
	AvgRounds float64 `json:"avg_rounds"`
	// P95LatencyMs is the 95th percentile of the retrieval time.
	P95LatencyMs float64 `json:"p95_latency_ms"`
	// Top5Relevance is the mean absolute evidence score of the top 5
	// (seed: top5_relevance, measured by the evidence score instead of
	// human judgement).
	Top5Relevance float64 `json:"top5_relevance"`
	// Top10Relevance is the same over the top 10 (seed: top10_relevance).
	Top10Relevance float64 `json:"top10_relevance"`
	// SupportedRate and CitationPrecision check the answer written from
	// each profile's evidence (answer.VerifyClaims; seed:
	// answer_supported_rate, citation_precision). For an LLM answer they
	// describe the model's text before unverified claims were moved out.
	Generator         string  `json:"generator"`
	SupportedRate     float64 `json:"answer_supported_rate"`
	CitationPrecision float64 `json:"citation_precision"`
	// FacetCoverage is the share of facets with supporting evidence.
	FacetCoverage float64 `json:"facet_coverage"`
	// UnknownsRate is the share of questions that reported an unknown.
	UnknownsRate float64 `json:"unknowns_rate"`
	// CorrectiveRate is the share of questions whose corrective loop ran
	// (seed: corrective_trigger_rate).
	CorrectiveRate float64 `json:"corrective_trigger_rate"`
	// ResolutionRate is the share of corrective runs that ended with every
	// must-have facet covered (seed: ambiguity_resolution_rate).
	ResolutionRate float64        `json:"ambiguity_resolution_rate"`
	Routes         map[string]int `json:"routes"`
	Machine        Machine        `json:"machine"`
}

// LoadQuestions reads a fixed question set: an eval dataset (.json, the
// answerable categories) or a CSV with a Question column.
func LoadQuestions(path string) ([]string, error) {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		ds, _, err := evalset.Load(path)
		if err != nil {
			return nil, err
		}
		var qs []string
		for _, c := range ds.Cases {
			switch c.Category {
			case evalset.CategoryNormal, evalset.CategoryComposite, evalset.CategoryDangerous:
				qs = append(qs, c.Query)
			}
		}
		return qs, nil
	}
	header, rows, _, err := csvx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	col := csvx.MatchColumn(header, "Question", "query")
	if col < 0 {
		return nil, fmt.Errorf("%s has no Question column", path)
	}
	var qs []string
	for _, r := range rows {
		if col < len(r) && strings.TrimSpace(r[col]) != "" {
			qs = append(qs, r[col])
		}
	}
	return qs, nil
}

// Answerer writes an answer from retrieved evidence; answer.Extractive and
// answer.LLM satisfy it.
type Answerer interface {
	Generate(ctx context.Context, query string, results []retrieve.Result) (answer.Answer, error)
}

// Agent runs every question through each profile, answers it from the
// profile's evidence with gen (nil: the extractive generator) and reports
// the KPIs.
func Agent(ctx context.Context, s *retrieve.Searcher, questions []string, profiles []string, base retrieve.Options, gen Answerer) ([]AgentReport, error) {
	if len(questions) == 0 {
		return nil, fmt.Errorf("no questions to run")
	}
	tok := s.Index().Analyzer()
	if gen == nil {
		gen = answer.NewExtractive(tok, answer.ExtractiveOptions{})
	}
	var out []AgentReport
	for _, p := range profiles {
		rep := AgentReport{Profile: p, Routes: map[string]int{}, Machine: ThisMachine()}
		var lat stats.Latencies
		var calls, rounds, top5, top10, supported, precision, facets, covered, unknown, corrective, resolved float64
		for _, q := range questions {
			t0 := time.Now()
			res, err := agent.Run(ctx, q, agent.Options{Profile: p, Searcher: s, Tokenizer: tok, Search: base})
			lat.Add(time.Since(t0))
			if err != nil {
				return nil, fmt.Errorf("profile %s, question %q: %w", p, q, err)
			}
			rep.Questions++
			rep.Routes[res.Route]++
			calls += float64(res.Calls)
			rounds += float64(res.Rounds)
			top5 += res.Top5Relevance
			top10 += res.Top10Relevance
			a, err := gen.Generate(ctx, q, res.Evidence)
			if err != nil {
				return nil, fmt.Errorf("profile %s, question %q: answer: %w", p, q, err)
			}
			rep.Generator = a.Generator
			if a.Verification != nil {
				supported += a.Verification.SupportedRate
				precision += a.Verification.CitationPrecision
			}
			for _, c := range res.Coverage {
				facets++
				if c.Covered {
					covered++
				}
			}
			if len(res.Unknowns) > 0 {
				unknown++
			}
			if res.Corrective {
				corrective++
				if res.MustHaveHits >= len(res.Facets) {
					resolved++
				}
			}
		}
		n := float64(rep.Questions)
		rep.AvgCalls, rep.AvgRounds = round(calls/n), round(rounds/n)
		rep.Top5Relevance = round(top5 / n)
		rep.Top10Relevance = round(top10 / n)
		rep.SupportedRate, rep.CitationPrecision = round(supported/n), round(precision/n)
		if facets > 0 {
			rep.FacetCoverage = round(covered / facets)
		}
		rep.UnknownsRate, rep.CorrectiveRate = round(unknown/n), round(corrective/n)
		if corrective > 0 {
			rep.ResolutionRate = round(resolved / corrective)
		}
		rep.P95LatencyMs = ms(lat.Summary().P95)
		out = append(out, rep)
	}
	return out, nil
}
