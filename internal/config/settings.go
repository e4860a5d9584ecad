package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Kind is the type of a setting's value, as its flag shows it in --help.
type Kind string

const (
	KindString   Kind = "string"
	KindInt      Kind = "int"
	KindFloat    Kind = "float"
	KindBool     Kind = "bool"
	KindDuration Kind = "duration"
	KindList     Kind = "strings" // comma-separated on a flag (repeatable)
)

// A Setting is one configuration value, declared once: the variable it is
// read from (environment, then .env), the flag that overrides it, how its
// text is parsed into the Config and how `shirube config` shows it. Load,
// the command layer's flags and Lines are all driven by the table of
// settings, so a setting cannot be loaded under one name and shown or
// flagged under another.
type Setting struct {
	Env   string // environment / .env variable; "" for a flag-only setting
	Alias string // a second variable read when Env is unset; "" for none
	Flag  string // command-line flag name; "" when there is no flag
	Kind  Kind
	Usage string // one-line help of the flag

	set  func(c *Config, v string) error
	get  func(c Config) string // the value, spelt as the variable takes it
	show func(c Config) string // what `shirube config` prints; nil: get
}

// Set parses v (as written in the variable or on the flag) into c. The
// error does not name the variable or flag: the caller knows which.
func (s Setting) Set(c *Config, v string) error { return s.set(c, strings.TrimSpace(v)) }

// Get is the setting's value in c, spelt as the variable takes it (the
// flag's default when c is Default()).
func (s Setting) Get(c Config) string { return s.get(c) }

// Settings is the table of every setting.
func Settings() []Setting { return settings }

// SettingByFlag returns the setting that the flag name sets.
func SettingByFlag(flag string) (Setting, bool) {
	for _, s := range settings {
		if s.Flag != "" && s.Flag == flag {
			return s, true
		}
	}
	return Setting{}, false
}

func text(env, flag, usage string, field func(*Config) *string) Setting {
	return Setting{Env: env, Flag: flag, Kind: KindString, Usage: usage,
		set: func(c *Config, v string) error { *field(c) = v; return nil },
		get: func(c Config) string { return *field(&c) }}
}

func secret(env string, mask func(string) string, field func(*Config) *string) Setting {
	s := text(env, "", "", field)
	s.show = func(c Config) string { return mask(*field(&c)) }
	return s
}

func whole(env, flag, usage string, field func(*Config) *int) Setting {
	return Setting{Env: env, Flag: flag, Kind: KindInt, Usage: usage,
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errors.New("is not a whole number")
			}
			*field(c) = n
			return nil
		},
		get: func(c Config) string { return strconv.Itoa(*field(&c)) }}
}

func number(env, flag, usage string, field func(*Config) *float64) Setting {
	return Setting{Env: env, Flag: flag, Kind: KindFloat, Usage: usage,
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return errors.New("is not a number")
			}
			*field(c) = f
			return nil
		},
		get: func(c Config) string { return strconv.FormatFloat(*field(&c), 'g', -1, 64) }}
}

func bytesLimit(env, hint string, field func(*Config) *int64, noLimit bool) Setting {
	return Setting{Env: env, Kind: KindInt,
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("is not a whole number of bytes" + hint)
			}
			if noLimit && n <= 0 {
				n = -1 // no limit, as the extractor spells it
			}
			*field(c) = n
			return nil
		},
		get: func(c Config) string { return strconv.FormatInt(*field(&c), 10) }}
}

func word[T ~string](env, flag, usage string, field func(*Config) *T, allowed ...T) Setting {
	return Setting{Env: env, Flag: flag, Kind: KindString, Usage: usage,
		set: func(c *Config, v string) error {
			if v == "" {
				*field(c) = ""
				return nil
			}
			w, err := oneOf(v, allowed...)
			if err != nil {
				return err
			}
			*field(c) = w
			return nil
		},
		get: func(c Config) string { return string(*field(&c)) }}
}

// settings is the table. Defaults live in Default; the flag's default is
// the setting's value there.
var settings = []Setting{
	text("SHIRUBE_DATA", "data", "folder of source documents (.pdf .md .html .txt)", func(c *Config) *string { return &c.DataDir }),
	{Env: "SHIRUBE_DATA_ALLOW", Kind: KindList,
		set: func(c *Config, v string) error {
			if v != "" {
				c.DataAllow = filepath.SplitList(v)
			}
			return nil
		},
		get: func(c Config) string { return strings.Join(c.DataAllow, string(filepath.ListSeparator)) }},
	text("SHIRUBE_DATABASE", "database", "per-page Markdown database to write", func(c *Config) *string { return &c.DatabaseDir }),
	text("SHIRUBE_INDEX", "index", "index directory", func(c *Config) *string { return &c.IndexDir }),
	text("SHIRUBE_LOGS", "logs", "audit log folder (query_YYYY-MM-DD.jsonl)", func(c *Config) *string { return &c.LogsDir }),
	whole("SHIRUBE_CHUNK_SIZE", "chunk-size", "chunk size in characters", func(c *Config) *int { return &c.ChunkSize }),
	whole("SHIRUBE_CHUNK_OVERLAP", "chunk-overlap", "chunk overlap in characters", func(c *Config) *int { return &c.ChunkOverlap }),
	whole("SHIRUBE_K", "k", "number of results", func(c *Config) *int { return &c.K }),
	{Env: "SHIRUBE_BM25_WEIGHT", Flag: "bm25-weight", Kind: KindFloat, Usage: "weight of the BM25 leg (vector weight is 1 − this)",
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return errors.New("is not a number")
			}
			c.BM25Weight, c.BM25WeightSet = f, true
			return nil
		},
		get:  func(c Config) string { return strconv.FormatFloat(c.BM25Weight, 'g', -1, 64) },
		show: Config.bm25WeightLine},
	word("SHIRUBE_FUSION", "fusion", "score fusion: minmax or rrf", func(c *Config) *Fusion { return &c.Fusion }, FusionMinMax, FusionRRF),
	{Flag: "scope", Kind: KindList, Usage: "search only these folders or documents (relative to the data folder or the page database; repeat or comma-separate)",
		set: func(c *Config, v string) error {
			c.Scope = nil
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					c.Scope = append(c.Scope, p)
				}
			}
			return nil
		},
		get: func(c Config) string { return strings.Join(c.Scope, ",") }},
	number("SHIRUBE_EVIDENCE_THRESHOLD", "evidence-threshold", "refuse when the best absolute evidence score is below this", func(c *Config) *float64 { return &c.EvidenceThreshold }),
	number("SHIRUBE_CLAIM_COVERAGE", "claim-coverage", "LLM answers: share of a claim's content words its cited evidence must hold, else the claim is unverified", func(c *Config) *float64 { return &c.ClaimCoverage }),
	{Env: "SHIRUBE_KEEP_UNVERIFIED", Flag: "keep-unverified", Kind: KindBool, Usage: "LLM answers: keep unverified claims in the answer (default: move them to Unknowns)",
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return errors.New("is not true or false (1/0)")
			}
			c.KeepUnverified = b
			return nil
		},
		get: func(c Config) string { return strconv.FormatBool(c.KeepUnverified) }},
	{Env: "SHIRUBE_TRUST_PROXY", Flag: "trust-proxy", Kind: KindBool, Usage: "serve: believe X-Forwarded-For from a reverse proxy on this machine (set it only behind such a proxy)",
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return errors.New("is not true or false (1/0)")
			}
			c.TrustProxy = b
			return nil
		},
		get: func(c Config) string { return strconv.FormatBool(c.TrustProxy) }},
	word("SHIRUBE_VERIFY", "verify", "LLM answers: llm (lexical check, then one model call on the claims it cannot confirm) or lexical (no extra call)", func(c *Config) *Verify { return &c.Verify }, VerifyLLM, VerifyLexical),
	whole("SHIRUBE_MAX_CONCURRENT", "max-concurrent", "serve: searches and answers run at once, the rest wait up to 1 s then get 503 (0 = number of cores)", func(c *Config) *int { return &c.MaxConcurrent }),
	whole("SHIRUBE_MAX_HISTORY", "history", "exchanges of conversation history to keep", func(c *Config) *int { return &c.MaxHistory }),
	bytesLimit("SHIRUBE_MAX_FILE_SIZE", "", func(c *Config) *int64 { return &c.MaxFileSize }, false),
	bytesLimit("SHIRUBE_MAX_TEXT_SIZE", fmt.Sprintf(" (default %d; 0 or less: no limit)", DefaultMaxTextSize), func(c *Config) *int64 { return &c.MaxTextSize }, true),
	word("SHIRUBE_PROFILE", "profile", "retrieval: balanced (default), fast or deep run the agentic loop (facets, routes, corrective re-search); plain = one hybrid search", func(c *Config) *string { return &c.Profile }, ProfilePlain, "fast", "balanced", "deep"),
	word("SHIRUBE_READER", "reader", "the learned reader (trained on JaQuAD): learned (it picks the answer sentences and judges answerability), decide (it only judges answerability) or rules (hand-written relevance and gates only)", func(c *Config) *string { return &c.Reader }, "learned", "decide", "rules"),
	text("SHIRUBE_READER_MODEL", "reader-model", "reader model file (default: the model shipped in the binary)", func(c *Config) *string { return &c.ReaderModel }),
	word("SHIRUBE_EMBEDDER", "embedder", "vector leg: local (offline, corpus-fitted) or openai", func(c *Config) *Embedder { return &c.Embedder }, EmbedderLocal, EmbedderOpenAI),
	text("SHIRUBE_EMBEDDING_MODEL", "", "", func(c *Config) *string { return &c.EmbeddingModel }),
	func() Setting {
		s := word("SHIRUBE_GENERATOR", "generator", "extractive or llm (default: llm when an API key is set, else extractive)", func(c *Config) *string { return &c.Generator }, "extractive", "llm")
		s.show = Config.EffectiveGenerator
		return s
	}(),
	func() Setting {
		s := word("SHIRUBE_PROVIDER", "provider", "openai or anthropic (default: openai when OPENAI_API_KEY is set, else anthropic when ANTHROPIC_API_KEY is)", func(c *Config) *Provider { return &c.Provider }, ProviderOpenAI, ProviderAnthropic)
		s.show = func(c Config) string { return string(c.LLMProvider()) }
		return s
	}(),
	text("SHIRUBE_MODEL", "model", "model id or alias (haiku, sonnet, opus for Anthropic; default gpt-4o-mini / sonnet)", func(c *Config) *string { return &c.LLMModel }),
	secret("OPENAI_API_KEY", Mask, func(c *Config) *string { return &c.OpenAIKey }),
	func() Setting {
		s := secret("OPENAI_API_BASE", MaskURL, func(c *Config) *string { return &c.OpenAIBase })
		s.Alias = "OPENAI_BASE_URL"
		return s
	}(),
	secret("ANTHROPIC_API_KEY", Mask, func(c *Config) *string { return &c.AnthropicKey }),
	secret("ANTHROPIC_BASE_URL", MaskURL, func(c *Config) *string { return &c.AnthropicBase }),
	{Env: "SHIRUBE_LLM_TIMEOUT", Flag: "llm-timeout", Kind: KindDuration, Usage: "limit on each whole LLM call, retries and streaming included",
		set: func(c *Config, v string) error {
			d, err := ParseTimeout(v)
			if err != nil {
				return err
			}
			c.LLMTimeout = d
			return nil
		},
		get: func(c Config) string { return c.LLMTimeout.String() }},
	{Env: "SHIRUBE_FILE_TIMEOUT", Flag: "file-timeout", Kind: KindDuration, Usage: "limit on reading one source file (pdftotext and other programs are killed, the file is skipped)",
		set: func(c *Config, v string) error {
			d, err := ParseTimeout(v)
			if err != nil {
				return err
			}
			c.FileTimeout = d
			return nil
		},
		get: func(c Config) string { return c.FileTimeout.String() }},
	word("SHIRUBE_OCR", "ocr", "PDF pages read by OCR (Tesseract): auto (no usable text layer), always or never; image files are read unless never", func(c *Config) *string { return &c.OCR }, "auto", "always", "never"),
	{Env: "SHIRUBE_OCR_TIMEOUT", Flag: "ocr-timeout", Kind: KindDuration, Usage: "limit on one page's OCR; a slower page is skipped with a note",
		set: func(c *Config, v string) error {
			d, err := ParseTimeout(v)
			if err != nil {
				return err
			}
			c.OCRTimeout = d
			return nil
		},
		get: func(c Config) string { return c.OCRTimeout.String() }},
	text("SHIRUBE_OCR_CACHE", "", "", func(c *Config) *string { return &c.OCRCache }),
	text("SHIRUBE_PRICES", "", "", func(c *Config) *string { return &c.Prices }),
	secret("SHIRUBE_TOKEN", Mask, func(c *Config) *string { return &c.Token }),
	secret("SHIRUBE_ADMIN_TOKEN", Mask, func(c *Config) *string { return &c.AdminToken }),
	func() Setting {
		s := text("SHIRUBE_STORE", "store", "PostgreSQL store DSN postgres://user@host/db?sslmode=… instead of the index directory (prefer the variable: flags show in ps)", func(c *Config) *string { return &c.Store })
		s.show = func(c Config) string { return MaskDSN(c.Store) }
		return s
	}(),
	word("SHIRUBE_AUDIT", "audit", "audit log: jsonl (the logs folder), postgres (the store's audit_log table) or both", func(c *Config) *string { return &c.Audit }, "jsonl", "postgres", "both"),
	whole("SHIRUBE_WORKERS", "workers", "with a PostgreSQL store: documents ingested at once by this process (other processes may join the build)", func(c *Config) *int { return &c.Workers }),
}
