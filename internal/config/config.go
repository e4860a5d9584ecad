// Package config holds shirube's settings and resolves them from their
// sources. Precedence, highest first:
//
//	command-line flags > environment > .env file > defaults
//
// Every setting is declared once, in the table of settings.go: its
// variable, its flag, how it is parsed and how `shirube config` shows it.
// Load reads the variables; the command layer defines the flags from the
// same table and applies the ones set explicitly after Load. The defaults
// (chunk 500/50, k 4, BM25 weight 0.6, evidence threshold 0.40 (calibrated),
// 5 exchanges of history, gpt-4o-mini, text-embedding-3-small, ./data,
// ./logs) come from the product specification (seed 002 §8.6).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/joho/godotenv"
)

// Defaults of the settings.
const (
	DefaultDataDir      = "./data"
	DefaultDatabaseDir  = "./database"
	DefaultIndexDir     = "./.shirube"
	DefaultLogsDir      = "./logs"
	DefaultChunkSize    = 500
	DefaultChunkOverlap = 50
	// MinChunkSize and MaxChunkSize bound the chunk size Validate
	// accepts, around seed 002's 400–600: below, a chunk no longer holds
	// a procedure step with its heading; above, one chunk holds several
	// topics and its evidence score no longer says which answers.
	MinChunkSize             = 200
	MaxChunkSize             = 2000
	DefaultK                 = 4
	DefaultBM25Weight        = 0.6
	DefaultEvidenceThreshold = 0.40 // guard.DefaultEvidenceThreshold, calibrated
	// DefaultClaimCoverage is the share of a claim's content words its
	// evidence must contain (answer.DefaultClaimCoverage).
	DefaultClaimCoverage = 0.6
	// DefaultVerify re-checks with the model what the lexical check cannot
	// confirm.
	DefaultVerify         = VerifyLLM
	DefaultMaxHistory     = 5
	DefaultLLMModel       = "gpt-4o-mini"
	DefaultAnthropicModel = "sonnet"
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultMaxFileSize    = 100 << 20
	DefaultMaxTextSize    = 8 << 20 // document.DefaultMaxTextBytes
	DefaultFusion         = FusionMinMax
	DefaultEmbedder       = EmbedderLocal
	// DefaultLLMTimeout bounds each whole LLM call (llm.DefaultCallTimeout).
	DefaultLLMTimeout = 60 * time.Second
	// DefaultFileTimeout bounds the reading of one file (document.DefaultFileTimeout).
	DefaultFileTimeout = 60 * time.Second
	// DefaultOCRTimeout bounds one page's OCR (ocr.DefaultTimeout).
	DefaultOCRTimeout = 60 * time.Second
	// DefaultProfile is seed 003's recommended profile
	// (agent.DefaultProfile). Issue 22 item 7 measured it against the
	// plain path on both development sets: at least as good on key fact
	// and refusals, p95 within 100 ms (docs/BENCHMARKS.md).
	DefaultProfile = "balanced"
	// ProfilePlain is one hybrid search per question, no agentic loop.
	ProfilePlain = "plain"
)

// Config is the effective configuration of one run.
type Config struct {
	DataDir      string  // source documents (SHIRUBE_DATA)
	DatabaseDir  string  // per-page Markdown database (SHIRUBE_DATABASE)
	IndexDir     string  // persistent index (SHIRUBE_INDEX)
	LogsDir      string  // JSONL audit logs (SHIRUBE_LOGS)
	ChunkSize    int     // runes per chunk body (SHIRUBE_CHUNK_SIZE)
	ChunkOverlap int     // runes of overlap (SHIRUBE_CHUNK_OVERLAP)
	K            int     // results per query (SHIRUBE_K)
	BM25Weight   float64 // weight of the BM25 leg; vector weight is 1 − this (SHIRUBE_BM25_WEIGHT)
	// BM25WeightSet records that the user set BM25Weight (environment,
	// .env or --bm25-weight). When not, searches choose the weight per
	// query (retrieve.Options.AutoWeight) and BM25Weight only blends the
	// evidence score and fuses the legs of a neural-embedder index.
	BM25WeightSet bool
	Fusion        Fusion // minmax or rrf (SHIRUBE_FUSION)
	// EvidenceThreshold is the absolute evidence score below which the
	// answer is refused as insufficient evidence (SHIRUBE_EVIDENCE_THRESHOLD).
	EvidenceThreshold float64
	// ClaimCoverage is the verification threshold for LLM answers: a claim
	// whose cited evidence holds fewer of its content words is unverified
	// (SHIRUBE_CLAIM_COVERAGE).
	ClaimCoverage float64
	// Verify is how LLM answers are checked: "llm" (default: the lexical
	// check, then one model call on the claims it cannot confirm) or
	// "lexical" (no extra call) (SHIRUBE_VERIFY).
	Verify Verify
	// KeepUnverified leaves unverified claims in LLM answers instead of
	// moving them to Unknowns (SHIRUBE_KEEP_UNVERIFIED=1).
	KeepUnverified bool
	MaxHistory     int   // conversation exchanges kept (SHIRUBE_MAX_HISTORY)
	MaxFileSize    int64 // bytes; larger sources are skipped (SHIRUBE_MAX_FILE_SIZE)
	MaxTextSize    int64 // bytes of extracted text per file; larger ones are skipped; -1 no limit (SHIRUBE_MAX_TEXT_SIZE, 0 or less: no limit)
	// Profile selects the retrieval (SHIRUBE_PROFILE): fast, balanced
	// (DefaultProfile) or deep run seed 003's agentic loop (facets,
	// routes, corrective re-search); plain is one hybrid search per
	// question. "" means DefaultProfile.
	Profile string
	// Scope limits every search to these folders or documents (--scope;
	// retrieve.Options.Scope); empty searches everything.
	Scope []string

	Embedder       Embedder // local or openai (SHIRUBE_EMBEDDER)
	EmbeddingModel string   // OpenAI-compatible embedding model (SHIRUBE_EMBEDDING_MODEL)

	Generator     string   // extractive or llm; "" chooses llm when a key is set (SHIRUBE_GENERATOR)
	Reader        string   // learned or rules (SHIRUBE_READER)
	ReaderModel   string   // reader model file; "" = the shipped one (SHIRUBE_READER_MODEL)
	Provider      Provider // openai or anthropic; "" chooses by the key that is set (SHIRUBE_PROVIDER)
	LLMModel      string   // model id or alias (SHIRUBE_MODEL)
	OpenAIKey     string   // OPENAI_API_KEY
	OpenAIBase    string   // OPENAI_API_BASE
	AnthropicKey  string   // ANTHROPIC_API_KEY
	AnthropicBase string   // ANTHROPIC_BASE_URL
	Prices        string   // JSON price overrides, USD per 1M tokens (SHIRUBE_PRICES)

	// Store is "" for the embedded index in IndexDir, or a PostgreSQL DSN
	// (postgres://user@host/db?sslmode=…) for the database store
	// (SHIRUBE_STORE). It holds a password: print it with MaskDSN only.
	Store string
	// Audit is where the audit log goes: jsonl (LogsDir, default),
	// postgres (the store's audit_log table) or both (SHIRUBE_AUDIT).
	Audit string
	// Workers is how many documents `shirube index --store` ingests at once
	// in this process (SHIRUBE_WORKERS, default 1).
	Workers int
	// LLMTimeout bounds each whole LLM call — answer, verification
	// re-check, follow-up rewrite, planner, judge, question generation —
	// retries and a slowly streamed answer included (SHIRUBE_LLM_TIMEOUT,
	// --llm-timeout; a Go duration such as 90s or a number of seconds).
	LLMTimeout time.Duration
	// FileTimeout bounds the reading of one source file during an index
	// build — pdftotext and the other outside programs are killed with
	// their process group, the built-in PDF reader stops — and the file is
	// skipped (SHIRUBE_FILE_TIMEOUT, --file-timeout; default 60 s).
	FileTimeout time.Duration
	Token       string // bearer token for a non-loopback server (SHIRUBE_TOKEN)
	// AdminToken, when set, is the administrator's token (SHIRUBE_ADMIN_TOKEN):
	// only its holders see and send retrieval settings on the chat page.
	AdminToken string

	// OCR selects the PDF pages `shirube index` reads with Tesseract:
	// auto (default: pages without a usable text layer), always or never
	// (SHIRUBE_OCR, --ocr). Image files are read whenever it is not never.
	OCR string
	// OCRTimeout bounds one page's OCR; a slower page is skipped with a
	// note (SHIRUBE_OCR_TIMEOUT, --ocr-timeout, default 60 s).
	OCRTimeout time.Duration
	// OCRCache is the folder of cached OCR results, one per page image
	// (SHIRUBE_OCR_CACHE); empty means ocr-cache/ in the index folder.
	OCRCache string

	// DataAllow lists further folders `serve` may rebuild its index from
	// when the page asks (SHIRUBE_DATA_ALLOW, separated like PATH); no
	// other folder is ever read on a client's request.
	DataAllow []string
	// TrustProxy makes `serve` believe X-Forwarded-For from a reverse
	// proxy on this machine (a loopback peer) when it names the client
	// for the login throttle (SHIRUBE_TRUST_PROXY, --trust-proxy). Off,
	// any local process could pick a fresh name for every wrong token.
	TrustProxy bool
	// MaxConcurrent is how many searches and answers `serve` runs at once;
	// more wait up to a second for their turn, then get 503 with
	// Retry-After (SHIRUBE_MAX_CONCURRENT, --max-concurrent; 0 = the
	// number of cores).
	MaxConcurrent int
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		DataDir:           DefaultDataDir,
		DatabaseDir:       DefaultDatabaseDir,
		IndexDir:          DefaultIndexDir,
		LogsDir:           DefaultLogsDir,
		ChunkSize:         DefaultChunkSize,
		ChunkOverlap:      DefaultChunkOverlap,
		K:                 DefaultK,
		BM25Weight:        DefaultBM25Weight,
		Fusion:            DefaultFusion,
		EvidenceThreshold: DefaultEvidenceThreshold,
		Reader:            "decide",
		ClaimCoverage:     DefaultClaimCoverage,
		Verify:            DefaultVerify,
		MaxHistory:        DefaultMaxHistory,
		MaxFileSize:       DefaultMaxFileSize,
		MaxTextSize:       DefaultMaxTextSize,
		Embedder:          DefaultEmbedder,
		EmbeddingModel:    DefaultEmbeddingModel,
		Audit:             "jsonl",
		Workers:           1,
		LLMTimeout:        DefaultLLMTimeout,
		FileTimeout:       DefaultFileTimeout,
		OCR:               "auto",
		OCRTimeout:        DefaultOCRTimeout,
		Profile:           DefaultProfile,
	}
}

// AgentProfile is the agentic profile every question runs with, or ""
// for the plain path (one hybrid search).
func (c Config) AgentProfile() string {
	switch c.Profile {
	case ProfilePlain:
		return ""
	case "":
		return DefaultProfile
	}
	return c.Profile
}

// A Source looks up one variable, like os.LookupEnv.
type Source func(key string) (string, bool)

// Load resolves the configuration from the environment and the .env file at
// dotenvPath ("" or a missing file means none). Environment variables win
// over the file. Unparsable values are errors naming the variable.
func Load(env Source, dotenvPath string) (Config, error) {
	fileVars := map[string]string{}
	if dotenvPath != "" {
		vars, err := ReadDotenv(dotenvPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Config{}, err
		}
		fileVars = vars
	}
	lookup := func(key string) (string, bool) {
		if env != nil {
			if v, ok := env(key); ok && v != "" {
				return v, true
			}
		}
		v, ok := fileVars[key]
		return v, ok && v != ""
	}
	c := Default()
	var errs []error
	for _, st := range settings {
		if st.Env == "" {
			continue
		}
		v, ok := lookup(st.Env)
		if !ok && st.Alias != "" {
			v, ok = lookup(st.Alias)
		}
		if !ok {
			continue
		}
		if err := st.Set(&c, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q %v", st.Env, v, err))
		}
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %w", errors.Join(errs...))
	}
	return c, c.Validate()
}

// ParseTimeout reads a time limit: a Go duration ("90s", "2m") or a
// number of seconds ("90").
func ParseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0, errors.New("must be positive")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errors.New("not a positive duration — use seconds (90) or a duration (90s, 2m)")
	}
	return d, nil
}

// ReadDotenv parses a .env file. A UTF-8 byte-order mark (which godotenv
// rejects) is stripped first.
func ReadDotenv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	vars, err := godotenv.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w — fix the line or remove the file", path, err)
	}
	return vars, nil
}

// Validate checks ranges and enumerations.
func (c Config) Validate() error {
	var errs []error
	if c.ChunkSize < MinChunkSize || c.ChunkSize > MaxChunkSize {
		errs = append(errs, fmt.Errorf("chunk size %d is outside %d–%d characters: the design (seed 002) chunks at 400–600 (default %d); smaller chunks cut procedures apart and larger ones bury the evidence — set --chunk-size (SHIRUBE_CHUNK_SIZE) between %d and %d",
			c.ChunkSize, MinChunkSize, MaxChunkSize, DefaultChunkSize, MinChunkSize, MaxChunkSize))
	} else if c.ChunkOverlap < 0 || 2*c.ChunkOverlap > c.ChunkSize {
		errs = append(errs, fmt.Errorf("chunk overlap %d must be between 0 and half the chunk size (%d; default %d) — set --chunk-overlap (SHIRUBE_CHUNK_OVERLAP)", c.ChunkOverlap, c.ChunkSize/2, DefaultChunkOverlap))
	}
	if c.K < 1 || c.K > 100 {
		errs = append(errs, fmt.Errorf("k %d must be between 1 and 100", c.K))
	}
	if c.BM25Weight < 0 || c.BM25Weight > 1 {
		errs = append(errs, fmt.Errorf("BM25 weight %g must be between 0.0 and 1.0", c.BM25Weight))
	}
	if c.ClaimCoverage <= 0 || c.ClaimCoverage > 1 {
		errs = append(errs, fmt.Errorf("claim coverage %g must be above 0.0 and at most 1.0", c.ClaimCoverage))
	}
	if _, err := oneOf(string(c.Verify), VerifyLLM, VerifyLexical); err != nil {
		errs = append(errs, fmt.Errorf("verify %q %w", c.Verify, err))
	}
	if _, err := oneOf(string(c.Fusion), FusionMinMax, FusionRRF); err != nil {
		errs = append(errs, fmt.Errorf("fusion %q %w", c.Fusion, err))
	}
	if _, err := oneOf(string(c.Embedder), EmbedderLocal, EmbedderOpenAI); err != nil {
		errs = append(errs, fmt.Errorf("embedder %q %w", c.Embedder, err))
	}
	switch c.Generator {
	case "", "extractive", "llm":
	default:
		errs = append(errs, fmt.Errorf("generator %q must be extractive or llm", c.Generator))
	}
	if c.Provider != "" {
		if _, err := oneOf(string(c.Provider), ProviderOpenAI, ProviderAnthropic); err != nil {
			errs = append(errs, fmt.Errorf("provider %q %w", c.Provider, err))
		}
	}
	switch c.Profile {
	case "", ProfilePlain, "fast", "balanced", "deep":
	default:
		errs = append(errs, fmt.Errorf("profile %q must be plain, fast, balanced or deep", c.Profile))
	}
	switch c.Audit {
	case "jsonl", "postgres", "both":
		if c.Audit != "jsonl" && c.Store == "" {
			errs = append(errs, fmt.Errorf("audit %q needs a PostgreSQL store: set SHIRUBE_STORE", c.Audit))
		}
	default:
		errs = append(errs, fmt.Errorf("audit %q must be jsonl, postgres or both", c.Audit))
	}
	if c.Store != "" && !strings.HasPrefix(c.Store, "postgres://") && !strings.HasPrefix(c.Store, "postgresql://") {
		errs = append(errs, fmt.Errorf("store %s must be a PostgreSQL DSN (postgres://user@host/db?sslmode=disable), or empty for the embedded index", MaskDSN(c.Store)))
	}
	if c.MaxConcurrent < 0 {
		errs = append(errs, fmt.Errorf("max concurrent %d must not be negative (0: the number of cores)", c.MaxConcurrent))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers %d must be at least 1", c.Workers))
	}
	if c.FileTimeout <= 0 {
		errs = append(errs, fmt.Errorf("file timeout %s must be positive (e.g. 60s or 2m)", c.FileTimeout))
	}
	if c.OCRTimeout <= 0 {
		errs = append(errs, fmt.Errorf("OCR timeout %s must be positive (e.g. 60s or 2m)", c.OCRTimeout))
	}
	if c.LLMTimeout <= 0 {
		errs = append(errs, fmt.Errorf("LLM timeout %s must be positive (e.g. 60s or 2m)", c.LLMTimeout))
	}
	if c.MaxHistory < 0 {
		errs = append(errs, fmt.Errorf("max history %d must not be negative", c.MaxHistory))
	}
	return errors.Join(errs...)
}

// bm25WeightLine describes the BM25 weight for `shirube config`: the value
// when the user set one, else how searches choose it.
func (c Config) bm25WeightLine() string {
	v := strconv.FormatFloat(c.BM25Weight, 'g', -1, 64)
	if c.BM25WeightSet {
		return v
	}
	return v + " (not set: local embedder — 1.0 per query when BM25's best passage holds the query's words, else 0.8; openai embedder — " + v + ")"
}

// VectorWeight is 1 − BM25Weight, as the UI shows it.
func (c Config) VectorWeight() float64 { return 1 - c.BM25Weight }

// ProviderFor is the one rule that picks the provider of an LLM call: the
// configured provider (SHIRUBE_PROVIDER or the provider flag); else the
// provider whose key is set; when both keys are set, preferred; "" when
// neither is (no LLM). Every call uses LLMProvider (preferred: openai)
// except the binary answer judge, whose prompt and calibration were
// written for Claude and which prefers anthropic.
func (c Config) ProviderFor(preferred Provider) Provider {
	switch {
	case c.Provider != "":
		return c.Provider
	case c.OpenAIKey != "" && c.AnthropicKey != "":
		return preferred
	case c.OpenAIKey != "":
		return ProviderOpenAI
	case c.AnthropicKey != "":
		return ProviderAnthropic
	}
	return ""
}

// LLMProvider returns the provider that answers with an LLM (and rewrites
// follow-ups, re-checks claims, plans, generates questions, categorises
// pages): ProviderFor(ProviderOpenAI) — the configured one, else openai
// when OPENAI_API_KEY is set, else anthropic when ANTHROPIC_API_KEY is set,
// else "" (no LLM; answers are extractive).
func (c Config) LLMProvider() Provider { return c.ProviderFor(ProviderOpenAI) }

// EffectiveGenerator is the generator that will answer: the configured one,
// else llm when a key is set, else extractive.
func (c Config) EffectiveGenerator() string {
	if c.Generator != "" {
		return c.Generator
	}
	if c.LLMProvider() != "" {
		return "llm"
	}
	return "extractive"
}

// ErrNoLLM is CheckLLM's error when no provider's key is set.
var ErrNoLLM = errors.New("no LLM is configured. Set OPENAI_API_KEY (with OPENAI_API_BASE for Ollama, vLLM or LM Studio) or ANTHROPIC_API_KEY in the environment or in .env")

// CheckLLM returns a helpful error when an LLM is required but no key is
// set: ErrNoLLM, or a message naming the chosen provider's variable.
func (c Config) CheckLLM() error {
	switch c.LLMProvider() {
	case ProviderOpenAI:
		if c.OpenAIKey == "" {
			return errors.New("OPENAI_API_KEY is not set. Set it in the environment or in .env (and OPENAI_API_BASE for a compatible server such as Ollama or vLLM)")
		}
	case ProviderAnthropic:
		if c.AnthropicKey == "" {
			return errors.New("ANTHROPIC_API_KEY is not set. Set it in the environment or in .env")
		}
	default:
		return ErrNoLLM
	}
	return nil
}

// Mask hides a secret: "****" followed by at most its last 4 characters,
// and those only when the secret is at least 16 characters long (so that
// they are at most a quarter of it).
func Mask(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) < 16 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// MaskURL hides the credentials a URL may carry: the user name and
// password of user:pass@host, and the values of query parameters that
// look like secrets (key, token, secret, password, signature). A value
// that does not parse as a URL is masked whole when it holds an "@".
func MaskURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		if strings.Contains(s, "@") {
			return "****"
		}
		return s
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword("****", "****")
		} else {
			u.User = url.User("****")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			lk := strings.ToLower(k)
			for _, w := range []string{"key", "token", "secret", "pass", "sig", "auth"} {
				if strings.Contains(lk, w) {
					q[k] = []string{"****"}
					break
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	out := u.String()
	return strings.NewReplacer("%2A", "*").Replace(out)
}

// Lines renders the configuration as sorted "KEY=value" lines with secrets
// masked, for `shirube config`.
func (c Config) Lines() []string {
	out := []string{"SHIRUBE_VECTOR_WEIGHT=" + strconv.FormatFloat(c.VectorWeight(), 'g', 4, 64) + " (1 − BM25 weight)"}
	for _, st := range settings {
		if st.Env == "" {
			continue
		}
		show := st.show
		if show == nil {
			show = st.get
		}
		out = append(out, st.Env+"="+show(c))
	}
	sort.Strings(out)
	return out
}

// MaskDSN hides the secrets of a database connection string, so a DSN can
// be printed in messages, `shirube config` and logs: the password of the
// URL form postgres://user:secret@host/db, and every parameter whose name
// says it is a secret (password, sslpassword, …; dsnSecret) in the URL's
// query or in the keyword/value form — `password=secret`, `password =
// secret` and `password='a secret'` alike, as libpq reads them. A string
// that does not parse is masked whole.
func MaskDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Host != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "****")
		}
		q := u.Query()
		masked := false
		for k := range q {
			if dsnSecret(k) {
				q[k], masked = []string{"****"}, true
			}
		}
		if masked {
			u.RawQuery = q.Encode()
		}
		return strings.ReplaceAll(u.String(), "%2A%2A%2A%2A", "****")
	}
	if strings.Contains(dsn, "://") {
		return "****" // unparsable URL: show nothing of it
	}
	pairs, ok := keywordValues(dsn)
	if !ok {
		return "****"
	}
	out := make([]string, len(pairs))
	for i, p := range pairs {
		if dsnSecret(p[0]) {
			p[1] = "****"
		}
		out[i] = p[0] + "=" + p[1]
	}
	return strings.Join(out, " ")
}

// dsnSecret reports whether a connection parameter holds a secret.
func dsnSecret(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "password") || strings.Contains(n, "secret") || strings.Contains(n, "token")
}

// keywordValues splits a libpq keyword/value connection string into its
// pairs: white space around "=" is allowed, a value may be quoted with
// single quotes, with \' and \\ inside. Values are returned as written
// (quotes kept); ok is false when the string does not parse.
func keywordValues(s string) (pairs [][2]string, ok bool) {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	for {
		skip()
		if i == len(s) {
			return pairs, true
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
			i++
		}
		key := s[start:i]
		skip()
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, false
		}
		i++
		skip()
		start = i
		if i < len(s) && s[i] == '\'' {
			for i++; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return nil, false // unterminated quote
			}
			i++
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i, len(s))
		}
		pairs = append(pairs, [2]string{key, s[start:i]})
	}
}
