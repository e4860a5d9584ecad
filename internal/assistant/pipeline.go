package assistant

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// answer fills rep for the question rep.Query. It is the answering
// pipeline, one stage a line; each stage is a method below, and each
// leaves what it decided in rep (and so in `ask --json`, the API and the
// audit log):
//
//  1. rewrite:  a follow-up becomes a stand-alone question (rep.RewrittenQuery)
//  2. clarify:  a question too vague to search is asked back (rep.Decision "clarify")
//  3. danger:   what the question asks to do is judged before anything is
//     searched or streamed (rep.Danger, Request.OnDanger)
//  4. retrieve: the hybrid search or the agentic strategy, with the
//     procedure look-ahead, definitions and legal cross-references
//     (rep.SearchResults, rep.Trace); within it, re-rank: the learned
//     re-ranker reorders the plain search's best results (rep.Reranked)
//  5. decide:   the evidence score, the rule gates and the learned reader
//     judge whether the evidence answers (rep.Decision: answer or refuse,
//     the score, the answerability, the reason)
//  6. generate: the extractive reader or the LLM writes the answer from
//     the evidence, its claims verified against what they cite
//     (rep.Answer, rep.Evidence, rep.Unknowns, rep.Verification)
//     ask back: a question that names one thing only, which the reader
//     finds not answered by the evidence its answer quotes, is asked back
//     with the clarification template and the documents that name that
//     thing (rep.Decision "clarify", reason ReasonVague)
//  7. flag:     an operation the answer quotes joins the danger flag
//
// s is the searcher (the generation) the question is answered from.
func (a *Assistant) answer(ctx context.Context, s *retrieve.Searcher, req Request, sopt *retrieve.Options, rep *Reply) error {
	effective, history := a.rewrite(ctx, req, rep)
	rep.Outcome = auditlog.OutcomeAnswered
	if a.clarify(effective, rep) {
		return nil
	}
	danger := a.dangerOfQuestion(req, effective, rep)
	ev, err := a.retrieve(ctx, s, effective, sopt, rep)
	if err != nil {
		return err
	}
	rep.Decision = a.decide(ctx, ev.searcher, effective, ev.results, ev.best, *sopt)
	if ev.lead != nil {
		// The audit log records the weight the strategy's search of the
		// whole question used, as the plain path's does.
		sopt.BM25Weight = ev.lead.BM25Weight
	}
	if d := rep.Decision; d.Action == ActionPartial {
		// The supported parts are answered; the others are named.
		err := a.write(ctx, strings.Join(d.Supported, "、"), ev, history, req.OnDelta, rep)
		if err != nil {
			return err
		}
		rep.Unknowns = append([]string{MissingPartsNote + strings.Join(d.Missing, "、")}, rep.Unknowns...)
	} else if rep.Decision.Action == ActionRefuse {
		rep.Flags.InsufficientEvidence = true
		rep.Answer = guard.InsufficientEvidenceResponse
		rep.Generator = "guard"
	} else {
		// A question that names one thing only is held back from the
		// stream until askBack has seen whether its answer answers.
		onDelta, hold := req.OnDelta, a.opt.Reader != nil && len(guard.Named(effective)) <= 1
		if hold {
			onDelta = nil
		}
		if err := a.write(ctx, effective, ev, history, onDelta, rep); err != nil {
			return err
		}
		if hold && !a.askBack(ctx, ev.searcher, effective, *sopt, rep) && req.OnDelta != nil {
			req.OnDelta(rep.Answer)
		}
	}
	a.flagAnswer(danger, effective, rep)
	return nil
}

// evidence is what the retrieve stage found.
type evidence struct {
	searcher *retrieve.Searcher
	results  []retrieve.Result // best first; beyond K the look-ahead and follow-ups
	best     float64           // the best evidence score of the top K
	unknowns []string          // parts of the question a strategy found nothing for
	lead     *retrieve.Info    // a strategy's search of the whole question, when it reports one
}

// rewrite is stage 1: the question to search and answer (a follow-up
// rewritten to stand alone) and the conversation's history.
func (a *Assistant) rewrite(ctx context.Context, req Request, rep *Reply) (effective string, history []llm.Message) {
	query := rep.Query
	history = req.History
	effective = query
	conv := req.Conversation
	if conv != nil {
		history = conv.History()
	} else if len(history) > 0 {
		conv = a.conversationFrom(history)
	}
	if conv != nil {
		rw, err := conv.Rewrite(ctx, query)
		if err != nil {
			a.opt.Warn(fmt.Sprintf("follow-up rewritten offline, the model was not available: %s", llm.Reason(err)))
		}
		rep.TokenUsage = addUsage(rep.TokenUsage, rw.Usage)
		rep.CostUSD += rw.CostUSD
		if q := strings.TrimSpace(rw.Query); q != "" && q != query {
			effective = q
			rep.RewrittenQuery = q
		}
	}
	return effective, history
}

// clarify is stage 2: a question too vague to search is answered with the
// clarification template.
func (a *Assistant) clarify(effective string, rep *Reply) bool {
	if !guard.DetectAmbiguous(effective) {
		return false
	}
	rep.Flags.AmbiguousQuery = true
	rep.Decision = Decision{Action: ActionClarify, Reason: ReasonAmbiguous}
	rep.Answer = guard.AmbiguousQueryResponse
	rep.Generator = "guard"
	return true
}

// dangerOfQuestion is stage 3: the danger flag decided from what the
// question asks to do, before anything is searched or generated, so that
// the banner can lead the streamed answer.
func (a *Assistant) dangerOfQuestion(req Request, effective string, rep *Reply) guard.Danger {
	danger := assessQuestion(rep.Query, effective)
	rep.Flags.DangerousOperation = danger.Dangerous
	if danger.Dangerous {
		rep.Danger = &danger
	}
	if req.OnDanger != nil {
		req.OnDanger(danger)
	}
	return danger
}

// retrieve is stage 4: the evidence for the question.
func (a *Assistant) retrieve(ctx context.Context, s *retrieve.Searcher, effective string, sopt *retrieve.Options, rep *Reply) (evidence, error) {
	ev := evidence{searcher: s}
	var err error
	wide := *sopt
	if a.opt.ProcedureLookahead > 1 && analysis.IsProcedure(effective) {
		// A procedure's steps often sit in a long section that ranks
		// below shorter ones mentioning the same words: the generator
		// looks further down for the section whose heading names the
		// procedure. The gate and the reported results stay the top K.
		wide.K = a.opt.ProcedureLookahead * sopt.K
	}
	if a.opt.Retrieve != nil {
		// A retrieval strategy gets the question as asked (a planner
		// reads it whole) and the plain search's settings (the agent's
		// evidence opens with the plain search's hits).
		var got Retrieval
		got, err = a.opt.Retrieve(ctx, s, effective, *sopt)
		if err == nil {
			got.Results = s.CrossReferences(ctx, effective, got.Results, *sopt)
		}
		ev.results, ev.unknowns = got.Results, got.Unknowns
		rep.Trace = got.Trace
		rep.TokenUsage = addUsage(rep.TokenUsage, got.Usage)
		rep.CostUSD += got.CostUSD
		ev.lead = got.Lead
		ev.best = gate(ctx, s, effective, got, *sopt)
		if err == nil && wide.K > sopt.K {
			// The procedure look-ahead: the plain search's further hits
			// follow the strategy's evidence.
			var more []retrieve.Result
			if more, _, err = s.Search(ctx, analysis.SearchQuery(effective), wide); err == nil {
				ev.results = appendNewResults(ev.results, more)
			}
		}
		if err == nil {
			ev.results = append(ev.results, a.followUps(ctx, s, effective, ev.results, *sopt)...)
		}
	} else {
		var info retrieve.Info
		// The search is for what is asked, not for how it is asked
		// (「…を教えてください」).
		ev.results, info, err = a.searchReranked(ctx, s, analysis.SearchQuery(effective), wide, rep)
		if err == nil {
			ev.results = append(ev.results, a.followUps(ctx, s, effective, ev.results, *sopt)...)
		}
		if err == nil {
			// A penalty is stated where the law refers back to the
			// article asked about (see retrieve.CrossReferences).
			ev.results = s.CrossReferences(ctx, effective, ev.results, *sopt)
		}
		// The audit log records the weight this search used (chosen per
		// query unless the user set one).
		sopt.BM25Weight = info.BM25Weight
		for i, r := range ev.results {
			if i < sopt.K {
				ev.best = max(ev.best, r.EvidenceScore)
			}
		}
	}
	if err != nil {
		return ev, fmt.Errorf("search: %w", err)
	}
	rep.SearchResults = ev.results
	if len(ev.results) > sopt.K {
		rep.SearchResults = ev.results[:sopt.K]
	}
	return ev, nil
}

// searchReranked is the plain search and its re-rank stage: with a
// re-ranker, the search goes retrieve.RerankDepth deep, the re-ranker
// reorders those results and the best opt.K are kept (rep.Reranked).
func (a *Assistant) searchReranked(ctx context.Context, s *retrieve.Searcher, query string, opt retrieve.Options, rep *Reply) ([]retrieve.Result, retrieve.Info, error) {
	res, info, reranked, err := s.SearchReranked(ctx, query, opt, a.opt.Reranker)
	rep.Reranked = reranked
	return res, info, err
}

// decide is stage 5: does the evidence answer the question? The evidence
// score's threshold and the rule gates (Refuses) decide; with a learned
// reader, its answerability must also reach the reader's threshold. A
// question of several parts (analysis.Parts: 「AとBを
// 教えて」) that fails as a whole is decided part by part: when some parts
// pass, it is answered for them and the others are named (partial).
func (a *Assistant) decide(ctx context.Context, s *retrieve.Searcher, q string, results []retrieve.Result, best float64, opt retrieve.Options) Decision {
	d := a.decideWhole(ctx, s, q, results, best, opt.K)
	if d.Action != ActionRefuse || d.Reason == ReasonNoResults {
		return d
	}
	parts := analysis.Parts(q)
	if len(parts) < 2 {
		return d
	}
	top := results[:min(opt.K, len(results))]
	var supported, missing []string
	for _, p := range parts {
		p = analysis.SearchQuery(p) // the part, not the request phrase (「…を教えて」)
		scored := slices.Clone(top)
		s.Rescore(ctx, p, scored, opt)
		pb := 0.0
		for _, r := range scored {
			pb = max(pb, r.EvidenceScore)
		}
		if a.decideWhole(ctx, s, p, scored, pb, opt.K).Action == ActionAnswer {
			supported = append(supported, p)
		} else {
			missing = append(missing, p)
		}
	}
	if len(supported) == 0 || len(missing) == 0 {
		return d
	}
	d.Action, d.Supported, d.Missing = ActionPartial, supported, missing
	return d
}

// MissingPartsNote opens the Unknowns line of a partial answer, before the
// parts of the question the evidence does not answer.
const MissingPartsNote = "根拠文書に記載がない点: "

// confidentFactor is how far above its refusal threshold the reader's
// answerability must be for it to answer evidence whose score is below the
// evidence threshold: the smallest of 2, 2.5 and 3 with which JSQuAD's
// article-held-out refusal stays ≥ 85 % (`shirube bench refusal`: 84.7,
// 85.5, 86.0 %; docs/BENCHMARKS.md, "Eighth session").
const confidentFactor = 2.5

// Confident reports whether the reader's answerability is high enough to
// answer evidence that scored below the evidence threshold: at least
// confidentFactor times its own refusal threshold.
func Confident(answerability, threshold float64) bool {
	return threshold > 0 && answerability >= confidentFactor*threshold
}

// decideWhole decides for the question as one.
func (a *Assistant) decideWhole(ctx context.Context, s *retrieve.Searcher, q string, results []retrieve.Result, best float64, k int) Decision {
	d := decide(ctx, s, q, results, best, a.opt.EvidenceThreshold)
	if a.opt.Reader == nil || len(results) == 0 {
		return d
	}
	rd := a.opt.Reader.Read(q, results[:min(k, len(results))])
	d.Answerability = rd.Answerability
	if d.Action == ActionRefuse && d.Reason == ReasonThreshold && Confident(rd.Answerability, rd.Threshold) {
		// The evidence score is a floor set by hand; the reader, when it
		// is confident that the passages answer, lifts it. The near-miss
		// checks still apply.
		if r := Refuses(ctx, s, q, results); r == "" {
			d.Action, d.Reason = ActionAnswer, ""
		} else {
			d.Reason = r
		}
	}
	if d.Action == ActionAnswer && rd.Answerability < rd.Threshold {
		d.Action, d.Reason = ActionRefuse, ReasonNotAnswerable
	}
	return d
}

// write is stage 6: the generator's answer from the evidence, with its
// verification (see generate for model failures).
func (a *Assistant) write(ctx context.Context, effective string, ev evidence, history []llm.Message, onDelta func(string), rep *Reply) error {
	ans, err := a.generate(ctx, effective, ev.results, history, onDelta, rep)
	if err != nil {
		return err
	}
	rep.Answer = ans.Text
	if rep.Notice != "" {
		rep.Answer = rep.Notice + "\n\n" + ans.Text
	}
	rep.Evidence = nonNil(ans.Evidence)
	rep.SearchResults = withCited(rep.SearchResults, ev.results, rep.Evidence)
	rep.Unknowns = nonNilS(append(ans.Unknowns, ev.unknowns...))
	rep.TokenUsage = addUsage(rep.TokenUsage, ans.Usage)
	rep.CostUSD += ans.CostUSD
	rep.Generator = ans.Generator
	rep.RemovedCitations = ans.RemovedCitations
	rep.Verification = ans.Verification
	a.verifyAnswers(effective, ev.results, rep)
	return nil
}

// verifyAnswers adds to the verification whether the evidence the answer
// cites answers the question, as the learned reader judges it: the check
// line is green only when the quotes exist in their sources and answer
// what was asked.
func (a *Assistant) verifyAnswers(q string, results []retrieve.Result, rep *Reply) {
	if a.opt.Reader == nil || rep.Verification == nil || len(rep.Evidence) == 0 {
		return
	}
	var cited []retrieve.Result
	for _, r := range results {
		if slices.ContainsFunc(rep.Evidence, func(e answer.Evidence) bool { return e.File == r.File && e.Heading == r.Heading }) {
			cited = append(cited, r)
		}
	}
	if len(cited) == 0 {
		return
	}
	rd := a.opt.Reader.Read(q, cited)
	ok := rd.Answerability >= rd.Threshold
	v := *rep.Verification
	v.Answers = &ok
	rep.Verification = &v
}

// MaxMentions is the number of documents a question asked back lists.
const MaxMentions = 5

// askBack is the end of stage 6 for a question that names at most one
// thing (guard.Named: 「ログインできない場合の対処法は？」 names ログイン):
// when the learned reader finds that the evidence the answer quotes does
// not answer it, the answer is not given. The question is asked back with
// seed 002's clarification template (§5.3, whose example is this very
// 「ログインできない」: which system, which operation, which error), followed
// by the documents that name the thing or one of its synonyms
// (retrieve.Searcher.Mentions), each cited, so the user can say which one
// is meant. It reports whether it asked back.
func (a *Assistant) askBack(ctx context.Context, s *retrieve.Searcher, q string, opt retrieve.Options, rep *Reply) bool {
	v := rep.Verification
	if v == nil || v.Answers == nil || *v.Answers || rep.Notice != "" {
		return false
	}
	named := guard.Named(q)
	docs, err := s.Mentions(ctx, named, MaxMentions, opt)
	if err != nil {
		a.opt.Warn(fmt.Sprintf("asked back without the documents that name %q: %v", named, err))
		docs = nil
	}
	rep.Decision.Action, rep.Decision.Reason = ActionClarify, ReasonVague
	rep.Flags.AmbiguousQuery = true
	rep.Answer = guard.AmbiguousQueryResponse
	rep.Evidence = []answer.Evidence{}
	if len(docs) > 0 {
		var b strings.Builder
		b.WriteString(guard.AmbiguousQueryResponse + "\n\n" + guard.MentionsNote(named[0]))
		var words []string
		for _, w := range named {
			terms := s.Index().Terms(w)
			words = append(append(words, terms...), s.Expansion(w, terms)...)
		}
		for i, r := range docs {
			fmt.Fprintf(&b, "\n- %s（%s） [%d]", r.Heading, r.Source, i+1)
			rep.Evidence = append(rep.Evidence, answer.Evidence{N: i + 1, File: r.File, Page: r.Page, Heading: r.Heading, Score: r.Score, Excerpt: answer.Excerpt(naming(r.Text, words))})
		}
		rep.Answer = b.String()
	}
	rep.Unknowns = []string{}
	rep.Verification = nil
	rep.Generator = "guard"
	return true
}

// naming is the first sentence of text that holds one of words (the
// first sentence when none does).
func naming(text string, words []string) string {
	var first string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "- ")
		for _, sent := range analysis.Sentences(line) {
			if first == "" {
				first = sent
			}
			norm := analysis.Normalize(sent)
			for _, w := range words {
				if !strings.HasPrefix(w, analysis.NGramPrefix) && strings.Contains(norm, w) {
					return sent
				}
			}
		}
	}
	return first
}

// flagAnswer is stage 7: the answer may quote an operation the question
// did not ask for (a step that deletes, a command that stops a service).
func (a *Assistant) flagAnswer(danger guard.Danger, effective string, rep *Reply) {
	if !rep.Flags.InsufficientEvidence {
		danger = guard.AssessAnswer(danger, effective, rep.Answer)
	}
	if danger.Dangerous {
		rep.Flags.DangerousOperation = true
		rep.Danger = &danger
		rep.Answer = guard.Banner + "\n\n" + rep.Answer
	}
}
