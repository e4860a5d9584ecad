// Package diffeval is the differential evaluation (origin: seed 004's
// evaluation criteria v0.1): a
// differential test that puts one question set to two RAG configurations —
// by default the same law pages ingested as extracted plain text (A) and
// converted to Markdown (B) — and reports how much B changes three
// metrics: evidence hit rate, hallucination rate and answer stability.
//
// # Case file
//
// A case file is JSON:
//
//	{
//	  "version": "0.1",
//	  "corpus": "../shared/datasets/law-html-ja",   // informative: what the indexes were built from
//	  "must_not_contain": ["一般的に", ...],         // optional; default DefaultMustNotContain
//	  "cases": [
//	    {
//	      "id": "pl-001",
//	      "question": "製造物責任法第三条は何を定めていますか",
//	      "expected_keywords": ["損害を賠償する責めに任ずる"],
//	      "must_not_contain": ["..."],               // optional; default the file's list
//	      "source": "製造物責任法 第三条"              // optional, informative
//	    }
//	  ]
//	}
//
// id, question and at least one expected keyword are required. A case
// without them (or with a duplicate id) is reported in one line and left
// out; the others still run. An explicit empty must_not_contain ([])
// disables the hallucination check for that case.
//
// # Rules (v0.1)
//
// Matching is plain byte-wise substring search: no normalisation, no
// synonyms, no case folding (seed §6). For each case, configuration and run:
//
//   - Answer detection: a run has no detectable answer when the Asker
//     failed, the answer is empty, the reply is a refusal (the
//     insufficient-evidence or ambiguity guard answered; also recognised by
//     their template text), or the requested model was not used (the LLM
//     failed and the extractive fallback answered: scoring that answer
//     would credit the model with text it never wrote). Such a run is
//     SKIPPED. Every run records the generator that produced it, and each
//     configuration's summary counts its runs per generator; the judge is
//     always the deterministic keyword match (JudgeKeywords).
//   - Evidence hit (§4.1): every expected keyword occurs in the answer text.
//     Only the answer is searched — the seed asks whether the answer
//     contains the law's primary information, not whether retrieval found
//     it.
//   - Hallucination (§4.2): some must_not_contain phrase occurs in the
//     answer.
//
// Over the runs of one case and configuration:
//
//   - SKIPPED when no run detected an answer (seed §5: inconclusive, not a
//     failure). Skipped cases are left out of every rate but the skip rate.
//   - Evidence hit when the runs with a hit are a strict majority of the
//     runs with an answer.
//   - Hallucination when any run with an answer hallucinated (the seed
//     calls a phrase a FAIL).
//   - Stability (§4.3) is the share of all runs whose keyword-presence
//     vector (which expected keywords the answer contains; "no answer" is
//     a vector of its own) equals the most common one. It is stable when
//     at least StableThreshold (0.8: with 5 runs, at most one deviates).
//   - PASS when it hits, does not hallucinate and is stable; else FAIL.
package diffeval

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/shirube/shirube/internal/eval/dataset"
)

// DefaultMustNotContain are the phrases of seed 004 §4.2 that mark an
// answer resting on general knowledge rather than the law. The seed writes
// the second as 「〜と言われています」, where 〜 stands for whatever is said;
// the phrase matched is what follows it.
var DefaultMustNotContain = []string{
	"一般的に",
	"と言われています",
	"参考までに",
	"プライベート資料に該当情報が見当たらなかったため",
}

// CaseFile is a loaded case file.
type CaseFile struct {
	Version        string   `json:"version"`
	Description    string   `json:"description,omitempty"`
	Corpus         string   `json:"corpus,omitempty"`
	MustNotContain []string `json:"must_not_contain,omitempty"`
	Cases          []Case   `json:"cases"`
}

// Case is one question.
type Case struct {
	ID               string   `json:"id"`
	Question         string   `json:"question"`
	ExpectedKeywords []string `json:"expected_keywords"`
	MustNotContain   []string `json:"must_not_contain"` // after loading: the effective list
	Source           string   `json:"source,omitempty"`
}

// LoadCases reads a case file. See ParseCases.
func LoadCases(path string) (CaseFile, []error, error) {
	return dataset.Load(path, "diff-eval cases", "pass a case file such as eval/law_html_ja_cases.json", ParseCases)
}

// ParseCases decodes a case file. The error is fatal (not a JSON object
// with a cases array); problems name single cases, one line each, which are
// left out. Each returned case carries its effective must_not_contain list.
func ParseCases(data []byte) (CaseFile, []error, error) {
	var raw struct {
		Version        json.RawMessage   `json:"version"`
		Description    string            `json:"description"`
		Corpus         string            `json:"corpus"`
		MustNotContain []string          `json:"must_not_contain"`
		Cases          []json.RawMessage `json:"cases"`
	}
	if err := dataset.Decode(data, &raw, "cases", &raw.Cases, "see the package documentation of diffeval for the schema"); err != nil {
		return CaseFile{}, nil, err
	}
	cf := CaseFile{Version: dataset.Scalar(raw.Version), Description: raw.Description, Corpus: raw.Corpus, MustNotContain: raw.MustNotContain}
	var problems []error
	cf.Cases, problems = dataset.Cases(raw.Cases, "case", checkCase, func(c *Case) string { return c.ID })
	defaults := raw.MustNotContain
	if defaults == nil {
		defaults = DefaultMustNotContain
	}
	for i := range cf.Cases {
		if cf.Cases[i].MustNotContain == nil {
			cf.Cases[i].MustNotContain = defaults
		}
	}
	return cf, problems, nil
}

// checkCase validates one decoded case: it trims the id and drops empty
// keywords and phrases.
func checkCase(c *Case) error {
	c.ID = strings.TrimSpace(c.ID)
	switch {
	case c.ID == "":
		return errors.New(`no "id": give the case a unique id`)
	case strings.TrimSpace(c.Question) == "":
		return errors.New(`empty "question"`)
	}
	var kws []string
	for _, k := range c.ExpectedKeywords {
		if k != "" {
			kws = append(kws, k)
		}
	}
	if len(kws) == 0 {
		return errors.New(`no "expected_keywords": list words copied verbatim from the article`)
	}
	c.ExpectedKeywords = kws
	if c.MustNotContain != nil {
		phrases := []string{}
		for _, p := range c.MustNotContain {
			if p != "" {
				phrases = append(phrases, p)
			}
		}
		c.MustNotContain = phrases
	}
	return nil
}
