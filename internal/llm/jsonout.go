package llm

import (
	"encoding/json"
	"errors"
	"strings"
)

// jsonInstruction is added to the system prompt of a Request with JSON set.
// OpenAI's json_object mode also requires the word "JSON" in the prompt.
const jsonInstruction = "Respond with a single JSON object only: no prose and no code fences."

// ErrNotJSON reports that a JSON request got something else back. Callers
// that can re-ask (a judge, a proposer) retry on it.
var ErrNotJSON = errors.New("the model did not return a JSON object — retry, or use a model that follows JSON instructions")

// withJSONInstruction appends jsonInstruction to system.
func withJSONInstruction(system string) string {
	if strings.TrimSpace(system) == "" {
		return jsonInstruction
	}
	return system + "\n\n" + jsonInstruction
}

// extractJSON returns the JSON object in text. Models that were only asked
// for JSON (Anthropic, local models) sometimes wrap it in ```json fences or
// a sentence; extractJSON takes the span from the first '{' to the last '}'
// and checks that it is valid JSON.
func extractJSON(text string) (string, error) {
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) && strings.HasPrefix(t, "{") {
		return t, nil
	}
	i, j := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}')
	if i < 0 || j < i {
		return "", ErrNotJSON
	}
	obj := t[i : j+1]
	if !json.Valid([]byte(obj)) {
		return "", ErrNotJSON
	}
	return obj, nil
}
