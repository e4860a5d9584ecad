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
	// P95LatencyMs is the 95th percentile of the end-to-end time of a
	// question: retrieval, answer generation and claim verification (with
	// an LLM generator: the model calls). P95RetrievalMs is the retrieval
	// part alone (planning and every search round).
	P95LatencyMs   float64 `json:"p95_latency_ms"`
	P95RetrievalMs float64 `json:"p95_retrieval_ms"`
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
	// Adoption is seed 003's verdict for the balanced profile (nil for the
	// others): see Adopt.
	Adoption *Adoption `json:"adoption,omitempty"`
	// Records are the per-question records of the experiment protocol.
	Records []AgentRecord `json:"records"`
}

// AgentRecord is one question through one profile (seed 003's experiment
// protocol: "record per question").
type AgentRecord struct {
	Profile           string  `json:"profile"`
	Question          string  `json:"question"`
	Route             string  `json:"route"`
	Calls             int     `json:"calls"`
	Rounds            int     `json:"rounds"`
	RetrievalMs       float64 `json:"retrieval_ms"`
	EndToEndMs        float64 `json:"end_to_end_ms"` // retrieval + generation + verification
	Generator         string  `json:"generator"`
	SupportedRate     float64 `json:"answer_supported_rate"`
	CitationPrecision float64 `json:"citation_precision"`
	Facets            int     `json:"facets"`
	FacetsCovered     int     `json:"facets_covered"`
	Unknowns          int     `json:"unknowns"`
	Corrective        bool    `json:"corrective"`
}

// Seed 003's experiment protocol: at least ProtocolMinQuestions fixed
// questions, and the balanced profile is adopted when its answers are
// supported at AdoptSupportedRate and its citations precise at
// AdoptCitationPrecision.
const (
	ProtocolMinQuestions   = 20
	AdoptSupportedRate     = 0.90
	AdoptCitationPrecision = 0.95
	AdoptProfile           = "balanced"
)

// Adoption is the adoption verdict of a profile. Decided is false when the
// figures cannot decide it (extractive answers); Adopt is then false too.
type Adoption struct {
	Adopt   bool   `json:"adopt"`
	Decided bool   `json:"decided"`
	Reason  string `json:"reason"`
}

// Adopt applies seed 003's adoption rule to a report: answer_supported_rate
// ≥ 0.90 and citation_precision ≥ 0.95 → adopt. With extractive answers the
// verdict is undecided: an extractive answer quotes its evidence and cites
// the chunk it quotes, so both rates are 1 by construction and say nothing
// about the profile; only answers a model wrote can decide it.
func Adopt(r AgentReport) Adoption {
	if r.Generator == "" || r.Generator == "extractive" {
		return Adoption{Reason: fmt.Sprintf("undecided: the %s generator quotes its evidence, so answer_supported_rate and citation_precision are 1 by construction; run with an LLM generator (--generator llm) to decide", cmpOr(r.Generator, "extractive"))}
	}
	var why []string
	if r.SupportedRate < AdoptSupportedRate {
		why = append(why, fmt.Sprintf("answer_supported_rate %.3f < %.2f", r.SupportedRate, AdoptSupportedRate))
	}
	if r.CitationPrecision < AdoptCitationPrecision {
		why = append(why, fmt.Sprintf("citation_precision %.3f < %.2f", r.CitationPrecision, AdoptCitationPrecision))
	}
	if len(why) == 0 {
		return Adoption{Adopt: true, Decided: true, Reason: fmt.Sprintf("answer_supported_rate %.3f ≥ %.2f and citation_precision %.3f ≥ %.2f",
			r.SupportedRate, AdoptSupportedRate, r.CitationPrecision, AdoptCitationPrecision)}
	}
	return Adoption{Decided: true, Reason: strings.Join(why, "; ")}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ProtocolWarning is the warning for a question set smaller than the
// protocol's; "" when it is large enough.
func ProtocolWarning(n int) string {
	if n >= ProtocolMinQuestions {
		return ""
	}
	return fmt.Sprintf("only %d question(s): the agent benchmark's experiment protocol asks for at least %d fixed questions, so these KPIs and the adoption verdict are not conclusive", n, ProtocolMinQuestions)
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
		var lat, e2e stats.Latencies
		var calls, rounds, top5, top10, supported, precision, facets, covered, unknown, corrective, resolved float64
		for _, q := range questions {
			t0 := time.Now()
			res, err := agent.Run(ctx, q, agent.Options{Profile: p, Searcher: s, Tokenizer: tok, Search: base})
			retrieval := time.Since(t0)
			lat.Add(retrieval)
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
			total := time.Since(t0)
			e2e.Add(total)
			if err != nil {
				return nil, fmt.Errorf("profile %s, question %q: answer: %w", p, q, err)
			}
			rep.Generator = a.Generator
			rec := AgentRecord{Profile: p, Question: q, Route: res.Route, Calls: res.Calls, Rounds: res.Rounds,
				RetrievalMs: ms(retrieval), EndToEndMs: ms(total), Generator: a.Generator,
				Unknowns: len(res.Unknowns), Corrective: res.Corrective, Facets: len(res.Coverage)}
			if a.Verification != nil {
				supported += a.Verification.SupportedRate
				precision += a.Verification.CitationPrecision
				rec.SupportedRate, rec.CitationPrecision = a.Verification.SupportedRate, a.Verification.CitationPrecision
			}
			for _, c := range res.Coverage {
				facets++
				if c.Covered {
					covered++
					rec.FacetsCovered++
				}
			}
			if len(res.Unknowns) > 0 {
				unknown++
			}
			rep.Records = append(rep.Records, rec)
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
		rep.P95LatencyMs = ms(e2e.Summary().P95)
		rep.P95RetrievalMs = ms(lat.Summary().P95)
		if p == AdoptProfile {
			ad := Adopt(rep)
			rep.Adoption = &ad
		}
		out = append(out, rep)
	}
	return out, nil
}
