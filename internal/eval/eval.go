// Package eval holds what every evaluator shares: the one model call they
// make. The evaluators themselves live in the packages below it, one per
// concept:
//
//   - dataset: reading the JSON case files (the assistant's test set, the
//     differential case set) forgivingly, one problem per line; each case
//     schema stays with the evaluator whose checks give it its meaning
//     (evalset, diffeval);
//   - judge: every judge of an answer — binary precision/recall/accuracy
//     (LLM with hedging consensus, or lexical), the six-axis rubric and the
//     checklist judge — with the shared retry on unreadable replies;
//   - checkpoint: the append-only progress journal that lets an interrupted
//     run resume without asking or judging anything twice;
//   - metrics: checklist and reference metrics of one answer;
//   - batch: a question CSV answered in parallel, each answer scored and
//     the run summarised; optimize: the folder-structure optimisation that
//     copies missed pages into better-named folders; pipeline: the two in
//     sequence with the index refresh, as `shirube batch` runs them;
//   - questions, convert, evalset, diffeval, ir, beir, stats: generating
//     questions, turning JSON answers into CSV, the test-set run, the
//     differential run, IR metrics, BEIR loading and latency statistics.
package eval

import (
	"context"

	"github.com/shirube/shirube/internal/llm"
)

// Completer is the one model call the evaluators make: the judges, the
// question generator and the folder proposer. llm.OpenAI and llm.Anthropic
// satisfy it. It is declared once here rather than in each evaluator
// because they all consume the same call in the same way; a Completer that
// also has a Model() string method names the model for reports.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}
