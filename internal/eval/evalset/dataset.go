// Package evalset runs the assistant's test set (origin: seed 002 §7): a
// JSON dataset of test
// cases is put to the assistant one case at a time, every answer is checked
// deterministically against the case's expectations, optionally scored on
// six axes by an LLM judge, and the run is held against the pass line
// (a case passes at 70 points; the run passes when at least 70 % of its
// cases pass — seed: 7 of 10). The results are written to
// eval/evaluation_results_YYYY-MM-DD.json, never overwriting an earlier run.
//
// # Dataset
//
// The dataset is seed 002 §7.1's eval_dataset.json:
//
//	{
//	  "version": "1.0",
//	  "created_at": "2024-12-29T13:00:00",
//	  "test_cases": [
//	    {
//	      "id": "test_001",
//	      "category": "normal",        // normal | insufficient_evidence | dangerous | ambiguous | conversation | composite
//	      "query": "ログインできない場合の対処法は？",
//	      "expected_citations": ["runbooks/account_lockout.md"],
//	      "expected_keywords": ["ログイン", "パスワード"],
//	      "should_not_contain": ["rm -rf"],
//	      "conversation_context": null, // or [{"role": "user", "content": "..."}, ...]
//	      "expected_flags": {"insufficient_evidence": false},
//	      "expected_response_contains": "...",
//	      "expected_warning": "⚠️ 承認・確認が必要"
//	    }
//	  ]
//	}
//
// Every field but id, category and query is optional. A case that cannot be
// used (unknown category, missing query, unknown flag name, bad role in the
// conversation, duplicate id, wrong JSON types) is reported in one line and
// left out; the other cases still run.
package evalset

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shirube/shirube/internal/eval/dataset"
	"github.com/shirube/shirube/internal/llm"
)

// Categories of test cases (seed 002 §7.1).
const (
	CategoryNormal               = "normal"
	CategoryInsufficientEvidence = "insufficient_evidence"
	CategoryDangerous            = "dangerous"
	CategoryAmbiguous            = "ambiguous"
	CategoryConversation         = "conversation"
	CategoryComposite            = "composite"
)

// Categories lists the valid categories in the seed's order.
var Categories = []string{
	CategoryNormal, CategoryInsufficientEvidence, CategoryDangerous,
	CategoryAmbiguous, CategoryConversation, CategoryComposite,
}

// Flag names usable in expected_flags; they are the JSON names of
// answer.Flags (seed 002 §6.1).
const (
	FlagInsufficientEvidence = "insufficient_evidence"
	FlagDangerousOperation   = "dangerous_operation"
	FlagAmbiguousQuery       = "ambiguous_query"
)

var flagNames = []string{FlagInsufficientEvidence, FlagDangerousOperation, FlagAmbiguousQuery}

// Dataset is a loaded eval_dataset.json.
type Dataset struct {
	Version   string `json:"version"`
	CreatedAt string `json:"created_at"`
	Cases     []Case `json:"test_cases"`
}

// Case is one test case. Empty or nil fields are not checked.
type Case struct {
	ID                       string          `json:"id"`
	Category                 string          `json:"category"`
	Query                    string          `json:"query"`
	ExpectedCitations        []string        `json:"expected_citations,omitempty"`
	ExpectedKeywords         []string        `json:"expected_keywords,omitempty"`
	ShouldNotContain         []string        `json:"should_not_contain,omitempty"`
	ConversationContext      []Turn          `json:"conversation_context,omitempty"`
	ExpectedFlags            map[string]bool `json:"expected_flags,omitempty"`
	ExpectedResponseContains string          `json:"expected_response_contains,omitempty"`
	ExpectedWarning          string          `json:"expected_warning,omitempty"`
}

// Turn is one earlier message of a conversation test.
type Turn struct {
	Role    string `json:"role"` // "user" or "assistant"
	Content string `json:"content"`
}

// History converts the case's conversation context into the history the
// Asker receives.
func (c Case) History() []llm.Message {
	if len(c.ConversationContext) == 0 {
		return nil
	}
	out := make([]llm.Message, len(c.ConversationContext))
	for i, t := range c.ConversationContext {
		out[i] = llm.Message{Role: t.Role, Content: t.Content}
	}
	return out
}

// Load reads the dataset at path. See Parse for the two kinds of error.
func Load(path string) (Dataset, []error, error) {
	return dataset.Load(path, "eval dataset", "pass the path of an eval_dataset.json, e.g. eval/eval_dataset.json", Parse)
}

// Parse decodes a dataset. The error is fatal: the data is not a JSON object
// or holds no test_cases array. Problems are per case, one line each, and
// name the case by id (or position) and what to fix; those cases are left
// out of Dataset.Cases.
func Parse(data []byte) (Dataset, []error, error) {
	var raw struct {
		Version   json.RawMessage   `json:"version"`
		CreatedAt json.RawMessage   `json:"created_at"`
		Cases     []json.RawMessage `json:"test_cases"`
	}
	if err := dataset.Decode(data, &raw, "test_cases", &raw.Cases, `write {"test_cases": [{"id": …, "category": …, "query": …}, …]} (see docs/EVALUATION.md for every field)`); err != nil {
		return Dataset{}, nil, err
	}
	ds := Dataset{Version: dataset.Scalar(raw.Version), CreatedAt: dataset.Scalar(raw.CreatedAt)}
	var problems []error
	ds.Cases, problems = dataset.Cases(raw.Cases, "test case", checkCase, func(c *Case) string { return c.ID })
	return ds, problems, nil
}

// checkCase validates one decoded case and trims its id.
func checkCase(c *Case) error {
	c.ID = strings.TrimSpace(c.ID)
	switch {
	case c.ID == "":
		return errors.New(`no "id": give the case a unique id such as "test_001"`)
	case !slices.Contains(Categories, c.Category):
		return fmt.Errorf("unknown category %q: use one of %s", c.Category, strings.Join(Categories, ", "))
	case strings.TrimSpace(c.Query) == "":
		return errors.New(`empty "query": write the question to ask`)
	}
	for name := range c.ExpectedFlags {
		if !slices.Contains(flagNames, name) {
			return fmt.Errorf("unknown flag %q in expected_flags: use %s", name, strings.Join(flagNames, ", "))
		}
	}
	for i, t := range c.ConversationContext {
		if t.Role != llm.RoleUser && t.Role != llm.RoleAssistant {
			return fmt.Errorf("conversation_context[%d] has role %q: use \"user\" or \"assistant\"", i, t.Role)
		}
	}
	return nil
}
