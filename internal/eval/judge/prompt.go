package judge

import (
	"strings"
)

// PromptFile is the name of the optional prompt override. Run looks for it
// in Options.Dir (the working directory) first, then next to the
// executable.
const PromptFile = "evaluation_prompt.txt"

// DefaultPrompt is the built-in judge instruction, sent as the system
// prompt. It encodes the seed's scoring rules.
const DefaultPrompt = `You are an impartial judge of answers produced by a retrieval-augmented generation (RAG) system. Compare the RAG answer with the ground truth for the question and score three binary metrics. Each metric is 0 or 1; there is no partial credit.

- precision: 1 if the RAG answer contains no fabricated or false content (nothing that contradicts the ground truth and no invented facts), else 0.
- recall: 1 if the RAG answer captures the major components of the ground truth, else 0.
- accuracy: 1 if the RAG answer stays on topic and preserves the meaning of the ground truth, else 0.

Rules:
1. Judge semantic equivalence: accept reasonable paraphrases, synonyms, the same content in another language (Japanese or English), and numerical approximations (for example "about 3.5 million" for 3,482,000).
2. Length does not matter: do not penalise a verbose answer; score only whether its content is correct.
3. If both the RAG answer and the ground truth say that no information is available (for example "I don't know", "no information found", 「情報が見つかりません」), all three scores are 1.
4. An empty RAG answer is judged as it is.
5. Explain your decision in one or two sentences.

Reply with only this JSON object and nothing else:
{"precision": 0 or 1, "recall": 0 or 1, "accuracy": 0 or 1, "reasoning": "one or two sentences"}`

// Placeholders a custom prompt may contain. A prompt file without any of
// them is static text (as in the seed): it replaces DefaultPrompt as the
// system prompt and the question, ground truth and answer follow in the
// user message exactly as with the built-in prompt. A prompt file with at
// least one placeholder is a template: the placeholders are replaced and
// the result is sent as the user message, with no system prompt and no
// other text. Either way the judge must reply with the JSON object of
// DefaultPrompt.
const (
	PlaceholderQuestion    = "{question}"
	PlaceholderGroundTruth = "{ground_truth}"
	PlaceholderAnswer      = "{rag_answer}"
)

// Prompt is the judge instruction in use.
type Prompt struct {
	Text   string // DefaultPrompt or the file's text
	Source string // "built-in" or the file's path
}

// isTemplate reports whether the prompt has placeholders.
func (p Prompt) isTemplate() bool {
	return strings.Contains(p.Text, PlaceholderQuestion) ||
		strings.Contains(p.Text, PlaceholderGroundTruth) ||
		strings.Contains(p.Text, PlaceholderAnswer)
}

// Build returns the system prompt and user message for one question.
func (p Prompt) Build(q Question) (system, user string) {
	if p.isTemplate() {
		return "", strings.NewReplacer(
			PlaceholderQuestion, q.Question,
			PlaceholderGroundTruth, q.GroundTruth,
			PlaceholderAnswer, q.Answer,
		).Replace(p.Text)
	}
	var b strings.Builder
	b.WriteString("<question>\n")
	b.WriteString(q.Question)
	b.WriteString("\n</question>\n\n<ground_truth>\n")
	b.WriteString(q.GroundTruth)
	b.WriteString("\n</ground_truth>\n\n<rag_answer>\n")
	b.WriteString(q.Answer)
	b.WriteString("\n</rag_answer>")
	return p.Text, b.String()
}

// retryMessage is sent once after a reply that could not be read.
const retryMessage = `Your reply could not be read as the required JSON object. Reply again with only {"precision": 0 or 1, "recall": 0 or 1, "accuracy": 0 or 1, "reasoning": "one or two sentences"} and nothing else.`

// checkMessage is the initial connectivity check (max 100 tokens).
const checkMessage = "This is a connection test. Reply with the single word OK."
