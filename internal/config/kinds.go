package config

import "fmt"

// The settings that take one of a few words are typed, so a misspelt
// comparison does not compile and a misspelt value is refused when it is
// read (environment, .env or flag) instead of falling through to a default.

// Embedder is how the vector leg embeds text.
type Embedder string

const (
	// EmbedderLocal is the offline model fitted on the corpus at index time.
	EmbedderLocal Embedder = "local"
	// EmbedderOpenAI is an OpenAI-compatible embeddings endpoint.
	EmbedderOpenAI Embedder = "openai"
)

// Fusion is how the BM25 and vector legs' scores are combined.
type Fusion string

const (
	// FusionMinMax scales each leg to 0–1 within the query and adds them
	// weighted (retrieve.FusionMinMax).
	FusionMinMax Fusion = "minmax"
	// FusionRRF is reciprocal rank fusion (retrieve.FusionRRF).
	FusionRRF Fusion = "rrf"
)

// Verify is how the claims of an LLM answer are checked against the
// evidence they cite.
type Verify string

const (
	// VerifyLLM runs the lexical check, then one model call on the claims
	// it cannot confirm.
	VerifyLLM Verify = "llm"
	// VerifyLexical runs the lexical check only (no extra call).
	VerifyLexical Verify = "lexical"
)

// Provider is the LLM service that answers, judges and plans.
type Provider string

const (
	// ProviderOpenAI is OpenAI or a compatible server (Ollama, vLLM,
	// LM Studio) through OPENAI_API_KEY / OPENAI_API_BASE.
	ProviderOpenAI Provider = "openai"
	// ProviderAnthropic is Anthropic's API through ANTHROPIC_API_KEY.
	ProviderAnthropic Provider = "anthropic"
)

// oneOf checks that v is one of the allowed words of a kind.
func oneOf[T ~string](v string, allowed ...T) (T, error) {
	for _, a := range allowed {
		if string(a) == v {
			return a, nil
		}
	}
	return T(v), fmt.Errorf("must be %s", wordList(allowed))
}

// wordList spells allowed words as "a, b or c".
func wordList[T ~string](words []T) string {
	s := ""
	for i, w := range words {
		switch {
		case i == 0:
		case i == len(words)-1:
			s += " or "
		default:
			s += ", "
		}
		s += string(w)
	}
	return s
}
