package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) Source {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	dotenv := filepath.Join(dir, ".env")
	// A UTF-8 BOM, which godotenv alone rejects.
	body := "\xef\xbb\xbfSHIRUBE_K=7\nSHIRUBE_BM25_WEIGHT=0.3\nOPENAI_API_KEY=sk-file-123456789\n"
	if err := os.WriteFile(dotenv, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		env    map[string]string
		path   string
		check  func(Config) bool
		expect string
	}{
		{"defaults", nil, "", func(c Config) bool {
			return c.K == 4 && c.BM25Weight == 0.6 && !c.BM25WeightSet && c.ChunkSize == 500 && c.ChunkOverlap == 50 && c.EvidenceThreshold == 0.40 && c.ClaimCoverage == 0.6 && !c.KeepUnverified && c.Verify == "llm" && c.MaxHistory == 5 && c.DataDir == "./data" && c.MaxTextSize == 8<<20
		}, "seed 002 §8.6 defaults"},
		{"dotenv with BOM", nil, dotenv, func(c Config) bool {
			return c.K == 7 && c.BM25Weight == 0.3 && c.BM25WeightSet && c.OpenAIKey == "sk-file-123456789"
		}, ".env values, the weight marked as set"},
		{"weight set in the environment", map[string]string{"SHIRUBE_BM25_WEIGHT": "0.6"}, "", func(c Config) bool { return c.BM25Weight == 0.6 && c.BM25WeightSet }, "0.6, marked as set"},
		{"env beats dotenv", map[string]string{"SHIRUBE_K": "9"}, dotenv, func(c Config) bool { return c.K == 9 && c.BM25Weight == 0.3 }, "environment wins"},
		{"claim verification settings", map[string]string{"SHIRUBE_CLAIM_COVERAGE": "0.8", "SHIRUBE_KEEP_UNVERIFIED": "1"}, "", func(c Config) bool { return c.ClaimCoverage == 0.8 && c.KeepUnverified }, "coverage 0.8, keep unverified"},
		{"text cap", map[string]string{"SHIRUBE_MAX_TEXT_SIZE": "1048576"}, "", func(c Config) bool { return c.MaxTextSize == 1<<20 }, "1 MiB"},
		{"text cap off", map[string]string{"SHIRUBE_MAX_TEXT_SIZE": "0"}, "", func(c Config) bool { return c.MaxTextSize == -1 }, "-1 (no limit)"},
		{"missing dotenv is fine", nil, filepath.Join(dir, "nope.env"), func(c Config) bool { return c.K == 4 }, "defaults"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(envOf(tt.env), tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("got %+v, want %s", c, tt.expect)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SHIRUBE_K": "four"}, "SHIRUBE_K"},
		{map[string]string{"SHIRUBE_BM25_WEIGHT": "1.5"}, "between 0.0 and 1.0"},
		{map[string]string{"SHIRUBE_FUSION": "sum"}, "minmax or rrf"},
		{map[string]string{"SHIRUBE_CHUNK_OVERLAP": "600"}, "overlap"},
		{map[string]string{"SHIRUBE_KEEP_UNVERIFIED": "maybe"}, "SHIRUBE_KEEP_UNVERIFIED"},
		{map[string]string{"SHIRUBE_CLAIM_COVERAGE": "0"}, "claim coverage"},
		{map[string]string{"SHIRUBE_VERIFY": "judge"}, "llm or lexical"},
		{map[string]string{"SHIRUBE_MAX_TEXT_SIZE": "8MB"}, "SHIRUBE_MAX_TEXT_SIZE"},
	}
	for _, tt := range tests {
		_, err := Load(envOf(tt.env), "")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%v) error = %v, want mention of %q", tt.env, err, tt.want)
		}
	}
}

// TestProfileDefault: seed 003's balanced profile is the default (issue 22
// item 7); plain is the one-search path, reachable by name.
func TestProfileDefault(t *testing.T) {
	tests := []struct {
		env, profile, agent string
	}{
		{"", "balanced", "balanced"},
		{"plain", "plain", ""},
		{"fast", "fast", "fast"},
		{"deep", "deep", "deep"},
	}
	for _, tt := range tests {
		c, err := Load(envOf(map[string]string{"SHIRUBE_PROFILE": tt.env}), "")
		if err != nil {
			t.Fatalf("SHIRUBE_PROFILE=%q: %v", tt.env, err)
		}
		if c.Profile != tt.profile || c.AgentProfile() != tt.agent {
			t.Errorf("SHIRUBE_PROFILE=%q: profile %q, agent profile %q; want %q and %q", tt.env, c.Profile, c.AgentProfile(), tt.profile, tt.agent)
		}
	}
	if got := (Config{}).AgentProfile(); got != DefaultProfile {
		t.Errorf("an unset profile runs %q, want %q", got, DefaultProfile)
	}
	if _, err := Load(envOf(map[string]string{"SHIRUBE_PROFILE": "thorough"}), ""); err == nil || !strings.Contains(err.Error(), "plain") {
		t.Errorf("unknown profile: error %v, want the choices named", err)
	}
}

func TestGeneratorSelection(t *testing.T) {
	c := Default()
	if g := c.EffectiveGenerator(); g != "extractive" {
		t.Errorf("no key: generator %q, want extractive", g)
	}
	if err := c.CheckLLM(); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("CheckLLM without key = %v, want a message naming OPENAI_API_KEY", err)
	}
	c.AnthropicKey = "sk-ant-xyz-0123456789"
	if c.EffectiveGenerator() != "llm" || c.LLMProvider() != "anthropic" {
		t.Errorf("anthropic key: generator %q provider %q", c.EffectiveGenerator(), c.LLMProvider())
	}
	c.OpenAIKey = "sk-openai-0123456789"
	if c.LLMProvider() != "openai" {
		t.Errorf("both keys: provider %q, want openai", c.LLMProvider())
	}
}

func TestLinesMaskSecrets(t *testing.T) {
	c := Default()
	c.OpenAIKey = "sk-secretsecretsecret1234"
	c.Token = "tok-abcdefghijkl"
	joined := strings.Join(c.Lines(), "\n")
	if strings.Contains(joined, "secretsecret") || strings.Contains(joined, "abcdefghijkl") {
		t.Fatalf("secret leaked:\n%s", joined)
	}
	if !strings.Contains(joined, "OPENAI_API_KEY=****1234") {
		t.Errorf("masked key missing:\n%s", joined)
	}
}

// TestMask: at most the last 4 characters of a secret are shown, and none
// of a short one; credentials in URLs are hidden.
func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"short":                     "****",
		"123456789":                 "****",
		"tok-abcdefghijk":           "****",
		"tok-abcdefghijkl":          "****ijkl",
		"sk-secretsecretsecret1234": "****1234",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"http://localhost:11434/v1":                        "http://localhost:11434/v1",
		"https://alice:s3cretpass@proxy.example/v1":        "https://****:****@proxy.example/v1",
		"https://token123@proxy.example/v1":                "https://****@proxy.example/v1",
		"https://gw.example/v1?api-key=abcd1234&region=jp": "https://gw.example/v1?api-key=****&region=jp",
	} {
		if got := MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
	c := Default()
	c.OpenAIBase = "https://alice:s3cretpass@proxy.example/v1"
	c.AnthropicBase = "https://bob:hunter22@gw.example/"
	joined := strings.Join(c.Lines(), "\n")
	for _, leak := range []string{"s3cretpass", "alice", "hunter22", "bob"} {
		if strings.Contains(joined, leak) {
			t.Errorf("config shows %q:\n%s", leak, joined)
		}
	}
}

// TestLLMTimeout: SHIRUBE_LLM_TIMEOUT takes seconds or a duration; bad
// values are errors naming the variable.
func TestLLMTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultLLMTimeout, "90": 90 * time.Second, "2m": 2 * time.Minute, "1.5": 1500 * time.Millisecond} {
		env := map[string]string{"SHIRUBE_LLM_TIMEOUT": v}
		c, err := Load(func(k string) (string, bool) { x, ok := env[k]; return x, ok }, "")
		if err != nil || c.LLMTimeout != want {
			t.Errorf("SHIRUBE_LLM_TIMEOUT=%q: %v, %v; want %v", v, c.LLMTimeout, err, want)
		}
	}
	for _, v := range []string{"soon", "0", "-5s"} {
		env := map[string]string{"SHIRUBE_LLM_TIMEOUT": v}
		_, err := Load(func(k string) (string, bool) { x, ok := env[k]; return x, ok }, "")
		if err == nil || !strings.Contains(err.Error(), "SHIRUBE_LLM_TIMEOUT") {
			t.Errorf("SHIRUBE_LLM_TIMEOUT=%q accepted: %v", v, err)
		}
	}
}

func TestMaskDSN(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"postgres://shirube@db.internal/shirube?sslmode=require", "postgres://shirube@db.internal/shirube?sslmode=require"},
		{"postgres://shirube:s3cret@db:5432/shirube?sslmode=disable", "postgres://shirube:****@db:5432/shirube?sslmode=disable"},
		{"postgres://u@h/db?password=s3cret", "postgres://u@h/db?password=****"},
		{"host=db user=u password=s3cret dbname=x", "host=db user=u password=**** dbname=x"},
		{"postgres://u:s3cret@[bad", "****"},
		{"postgres://u@h/db?sslmode=verify-full&sslpassword=s3cret", "postgres://u@h/db?sslmode=verify-full&sslpassword=****"},
		{"host=db sslpassword=s3cret", "host=db sslpassword=****"},
		{"host=db password = s3cret dbname=x", "host=db password=**** dbname=x"},
		{"host=db password= s3cret", "host=db password=****"},
		{"host=db password='s3cret and more' user=u", "host=db password=**** user=u"},
		{`password='it\'s s3cret'`, "password=****"},
		{"host=db password='s3cret", "****"},
		{"s3cret", "****"},
	} {
		got := MaskDSN(tc.in)
		if got != tc.want {
			t.Errorf("MaskDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("MaskDSN(%q) leaks the password", tc.in)
		}
	}
}

// TestSettingsTable: every setting read from a variable is shown by
// `shirube config` once, reads back what it was given, and has a flag name
// no other setting has.
func TestSettingsTable(t *testing.T) {
	lines := Default().Lines()
	flags := map[string]bool{}
	for _, st := range Settings() {
		if st.Flag != "" {
			if flags[st.Flag] {
				t.Errorf("flag --%s declared twice", st.Flag)
			}
			flags[st.Flag] = true
			if got, ok := SettingByFlag(st.Flag); !ok || got.Env != st.Env {
				t.Errorf("SettingByFlag(%q) = %q, %v", st.Flag, got.Env, ok)
			}
		}
		if st.Env == "" {
			continue
		}
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, st.Env+"=") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s shown %d times by Lines", st.Env, n)
		}
		c := Default()
		v := st.Get(c)
		if err := st.Set(&c, v); err != nil {
			t.Errorf("%s: its own default %q is refused: %v", st.Env, v, err)
		}
		if got := st.Get(c); got != v {
			t.Errorf("%s: set %q, read back %q", st.Env, v, got)
		}
	}
	if _, ok := SettingByFlag("chunk-szie"); ok {
		t.Error("SettingByFlag found a misspelt flag")
	}
}

// TestTypedKinds: a word setting refuses a misspelt word when it is read,
// naming the words it takes.
func TestTypedKinds(t *testing.T) {
	for env, want := range map[string]string{
		"SHIRUBE_EMBEDDER": "local or openai",
		"SHIRUBE_PROVIDER": "openai or anthropic",
		"SHIRUBE_PROFILE":  "fast, balanced or deep",
		"SHIRUBE_AUDIT":    "jsonl, postgres or both",
	} {
		_, err := Load(envOf(map[string]string{env: "opneai"}), "")
		if err == nil || !strings.Contains(err.Error(), env) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=opneai: %v, want an error naming %s and %q", env, err, env, want)
		}
	}
	c, err := Load(envOf(map[string]string{"SHIRUBE_EMBEDDER": "openai", "SHIRUBE_FUSION": "rrf", "SHIRUBE_VERIFY": "lexical", "SHIRUBE_PROVIDER": "anthropic", "OPENAI_BASE_URL": "http://localhost:11434/v1"}), "")
	if err != nil || c.Embedder != EmbedderOpenAI || c.Fusion != FusionRRF || c.Verify != VerifyLexical || c.Provider != ProviderAnthropic || c.OpenAIBase != "http://localhost:11434/v1" {
		t.Errorf("typed values: %+v, %v", c, err)
	}
}

// TestProviderFor: one rule picks every LLM call's provider — the
// configured one, else the one whose key is set, else (both set) the
// caller's preference.
func TestProviderFor(t *testing.T) {
	tests := []struct {
		provider        Provider
		openai, anthrop string
		preferred, want Provider
	}{
		{"", "", "", ProviderOpenAI, ""},
		{"", "sk-o", "", ProviderAnthropic, ProviderOpenAI},
		{"", "", "sk-a", ProviderOpenAI, ProviderAnthropic},
		{"", "sk-o", "sk-a", ProviderOpenAI, ProviderOpenAI},
		{"", "sk-o", "sk-a", ProviderAnthropic, ProviderAnthropic},
		{ProviderOpenAI, "sk-o", "sk-a", ProviderAnthropic, ProviderOpenAI},
		{ProviderAnthropic, "", "", ProviderOpenAI, ProviderAnthropic},
	}
	for _, tt := range tests {
		c := Default()
		c.Provider, c.OpenAIKey, c.AnthropicKey = tt.provider, tt.openai, tt.anthrop
		if got := c.ProviderFor(tt.preferred); got != tt.want {
			t.Errorf("%+v: ProviderFor(%s) = %q, want %q", tt, tt.preferred, got, tt.want)
		}
	}
}
