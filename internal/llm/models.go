package llm

import (
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
)

// Default models. Seed 002 §8.6 recommends gpt-4o-mini; seed 001 uses
// Claude Sonnet by default and lets --model pick haiku or opus.
const (
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultAnthropicModel = anthropic.ModelClaudeSonnet5_5
	// DefaultMaxTokens is the answer limit when neither the request nor
	// the client sets one (seed 001: 2000 max tokens for evaluations).
	DefaultMaxTokens = 2000
)

// anthropicAliases maps the short names of seed 001 (--model=haiku) to the
// newest model id of each family in anthropic-sdk-go v1.84.0.
var anthropicAliases = map[string]string{
	"haiku":  anthropic.ModelClaudeHaiku5_5,
	"sonnet": anthropic.ModelClaudeSonnet5_5,
	"opus":   anthropic.ModelClaudeOpus5_5,
}

// ResolveAnthropicModel turns an alias (haiku, sonnet, opus; any case)
// into a model id. Other names are returned unchanged so full ids such as
// "claude-haiku-4-5-20251001" work; "" gives DefaultAnthropicModel.
func ResolveAnthropicModel(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return DefaultAnthropicModel
	}
	if id, ok := anthropicAliases[strings.ToLower(name)]; ok {
		return id
	}
	return name
}

// Available names the provider to use given the configured keys: "openai"
// when an OpenAI key (or an OpenAI-compatible base URL) is set, else
// "anthropic" when an Anthropic key is set, else "".
func Available(openAIKey, openAIBase, anthropicKey string) string {
	switch {
	case strings.TrimSpace(openAIKey) != "" || strings.TrimSpace(openAIBase) != "":
		return "openai"
	case strings.TrimSpace(anthropicKey) != "":
		return "anthropic"
	}
	return ""
}
