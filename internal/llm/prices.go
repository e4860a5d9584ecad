package llm

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
)

// Price is the list price of a model in US dollars per one million tokens.
//
// Seed 002 §8.6 labels TOKEN_PRICES "USD per 1K tokens" but gives
// gpt-4o-mini 0.150 / 0.600, which are OpenAI's real prices per 1M tokens
// (per 1K they would be 1,000 times too high). shirube keeps the numbers
// and uses the correct unit: per 1M tokens.
type Price struct {
	Prompt     float64 `json:"prompt"`     // input tokens
	Completion float64 `json:"completion"` // output tokens
}

// Prices maps a model id to its price. Look-ups also match ids that carry
// a date suffix (gpt-4o-mini-2024-07-18, claude-haiku-4-5-20251001).
type Prices map[string]Price

// DefaultPrices returns a fresh copy of the built-in price table (list
// prices when written; override them with ParsePrices when they change).
// Claude 5 family prices are assumed equal to the 4.x prices of the same
// family, as no official figure was at hand.
func DefaultPrices() Prices {
	return Prices{
		"gpt-4o-mini":            {0.15, 0.60},
		"gpt-4o":                 {2.50, 10.00},
		"gpt-4.1":                {2.00, 8.00},
		"gpt-4.1-mini":           {0.40, 1.60},
		"gpt-4.1-nano":           {0.10, 0.40},
		"text-embedding-3-small": {0.02, 0},
		"text-embedding-3-large": {0.13, 0},
		"text-embedding-ada-002": {0.10, 0},

		"claude-haiku-4-5":  {1, 5},
		"claude-haiku-5-5":  {1, 5},
		"claude-sonnet-4-5": {3, 15},
		"claude-sonnet-4-6": {3, 15},
		"claude-sonnet-5":   {3, 15},
		"claude-sonnet-5-5": {3, 15},
		"claude-opus-4-5":   {5, 25},
		"claude-opus-4-6":   {5, 25},
		"claude-opus-4-7":   {5, 25},
		"claude-opus-4-8":   {5, 25},
		"claude-opus-5":     {5, 25},
		"claude-opus-5-5":   {5, 25},
	}
}

// ParsePrices reads price overrides as JSON in the shape of seed 002's
// TOKEN_PRICES, in USD per 1M tokens:
//
//	{"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}}
//
// The result is DefaultPrices with the given entries added or replaced.
func ParsePrices(data string) (Prices, error) {
	var over map[string]Price
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&over); err != nil {
		return nil, fmt.Errorf(`llm: reading price table: %w (expected {"model": {"prompt": USD per 1M tokens, "completion": USD per 1M tokens}})`, err)
	}
	p := DefaultPrices()
	for model, price := range over {
		if model == "" || price.Prompt < 0 || price.Completion < 0 {
			return nil, fmt.Errorf("llm: price table entry %q: model id must be set and prices must not be negative", model)
		}
		p[model] = price
	}
	return p, nil
}

// With returns a copy of p with over added or replaced.
func (p Prices) With(over Prices) Prices {
	out := maps.Clone(p)
	if out == nil {
		out = Prices{}
	}
	maps.Copy(out, over)
	return out
}

// dateSuffix matches the snapshot date providers append to model ids.
var dateSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8})$`)

// Lookup returns the price of model, trying the id without a date suffix
// when the exact id is unknown.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	pr, ok := p[dateSuffix.ReplaceAllString(model, "")]
	return pr, ok
}

// Cost returns the price of u in USD for model, or 0 when the model is
// not in the table (local models through Ollama and the like are free).
func (p Prices) Cost(model string, u Usage) float64 {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0
	}
	return (float64(u.PromptTokens)*pr.Prompt + float64(u.CompletionTokens)*pr.Completion) / 1e6
}

// Cost returns the price of u in USD for model from DefaultPrices.
func Cost(model string, u Usage) float64 {
	return DefaultPrices().Cost(model, u)
}
