package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shirube/shirube/internal/llm"
)

// Completer is the chat model an optional LLM planner uses (satisfied by the
// project's llm clients).
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

const plannerSystem = `You decompose a question for a Japanese document search engine.
Reply with one JSON object: {"route": "direct" | "multi_hop" | "global", "facets": [{"type": "intent" | "target" | "artifact" | "time", "text": "..."}, ...]}.
route: direct = one fact about one subject; multi_hop = several subjects, conditions or a comparison; global = an organisation-wide summary, list or policy.
facets: the independent parts of the question that each need their own evidence, as short Japanese search phrases in the question's own words (1 to 5). type: intent = what the asker wants to do or know, target = the system, product or organisation concerned, artifact = the document, form, setting or command sought, time = a date, period or deadline. Do not answer the question.`

// PlanWithLLM asks c for the route and facets and fills must-have terms and
// queries as PlanQuestion does. On any error or unusable reply it returns
// the offline plan with the error, so callers can always proceed.
func PlanWithLLM(ctx context.Context, c Completer, question string, tok Tokenizer, budget int) (Plan, error) {
	offline := PlanQuestion(question, tok, budget)
	if c == nil {
		return offline, nil
	}
	temp := 0.0
	resp, err := c.Complete(ctx, llm.Request{
		System:      plannerSystem,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: question}},
		MaxTokens:   300,
		Temperature: &temp,
		JSON:        true,
	})
	if err != nil {
		return offline, fmt.Errorf("LLM planner: %w", err)
	}
	offline.Usage, offline.CostUSD = resp.Usage, resp.CostUSD
	var out struct {
		Route  string       `json:"route"`
		Facets []typedFacet `json:"facets"`
	}
	text := strings.TrimSpace(resp.Text)
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return offline, fmt.Errorf("LLM planner: reply is not JSON: %w", err)
	}
	switch out.Route {
	case RouteDirect, RouteMultiHop, RouteGlobal:
	default:
		return offline, fmt.Errorf("LLM planner: route %q", out.Route)
	}
	p := Plan{Route: out.Route, Usage: resp.Usage, CostUSD: resp.CostUSD}
	seen := map[string]bool{}
	for _, tf := range out.Facets {
		f := cleanFacet(strings.TrimSpace(tf.Text))
		terms := mustHave(tok, f)
		key := strings.Join(terms, "\x00")
		if len(terms) == 0 || seen[key] || len(p.Facets) >= 5 {
			continue
		}
		seen[key] = true
		typ := ""
		if slices.Contains(FacetTypes, tf.Type) {
			typ = tf.Type
		}
		p.Facets = append(p.Facets, Facet{Text: f, MustHave: terms, Type: typ})
	}
	if len(p.Facets) == 0 {
		return offline, fmt.Errorf("LLM planner: no usable facets")
	}
	p.Queries = []string{strings.TrimSpace(question)}
	if len(p.Facets) > 1 || p.Facets[0].Text != cleanFacet(question) {
		for _, f := range p.Facets {
			if len(p.Queries) >= max(budget, 1) {
				break
			}
			p.Queries = appendNew(p.Queries, f.Text)
		}
	}
	return p, nil
}

// typedFacet is one facet of the planner's reply: an object with a type
// and a text, or (from models that ignore the type) a bare string.
type typedFacet struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (f *typedFacet) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = typedFacet{Text: s}
		return nil
	}
	type plain typedFacet
	return json.Unmarshal(b, (*plain)(f))
}
