package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/eval/optimize"
	"github.com/shirube/shirube/internal/eval/pipeline"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
)

// adHocSettingFlags are flags named like a setting but defined by hand:
// their default differs from the setting's on purpose, or they are a
// benchmark's or batch's own option bound to a variable of the command.
var adHocSettingFlags = map[string]string{
	"diff-eval --data":    "default: the case file's corpus",
	"ask --workers":       "a CSV batch runs 5 questions at once",
	"batch --workers":     "a CSV batch runs 5 questions at once",
	"optimize --workers":  "parallel optimisation workers",
	"questions --workers": "parallel question generation",
	"beir --bm25-weight":  "the benchmark's fixed weight",
	"beir --fusion":       "the benchmark's fusion",
	"answers --k":         "the benchmark's k",
	"refusal --k":         "the benchmark's k",
	"scale --k":           "the benchmark's k",
	"qa --data":           "the benchmark's corpus",
	"qa --index":          "the benchmark's index",
	"agent --index":       "the benchmark's index",
	"agent --generator":   "bench_more.go: to move to settingFlag",
	"agent --provider":    "bench_more.go: to move to settingFlag",
	"agent --model":       "bench_more.go: to move to settingFlag",
}

// TestSettingFlagsComeFromTheTable: every flag of every command that sets
// a configuration value is defined from the settings table, so its name,
// default and variable cannot drift from what Load reads.
func TestSettingFlagsComeFromTheTable(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(fl *pflag.Flag) {
			if _, ok := config.SettingByFlag(fl.Name); !ok {
				return
			}
			if _, ok := adHocSettingFlags[c.Name()+" --"+fl.Name]; ok {
				return
			}
			if _, ok := fl.Annotations[settingAnnotation]; !ok {
				t.Errorf("%s --%s sets a configuration value but is not defined with settingFlag", c.CommandPath(), fl.Name)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}

// TestSettingFlagUnknownNamePanics: a misspelt setting flag fails loudly
// when the command tree is built.
func TestSettingFlagUnknownNamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("settingFlag accepted a name no setting has")
		}
	}()
	settingFlag(pflag.NewFlagSet("x", pflag.ContinueOnError), "chunk-szie")
}

// TestApplyFlags: flags given on the command line win over the loaded
// configuration; flags not given leave it alone; a value the setting
// refuses is an error naming the flag.
func TestApplyFlags(t *testing.T) {
	tests := []struct {
		args    []string
		check   func(config.Config) bool
		wantErr string
	}{
		{[]string{"--k", "7", "--fusion", "rrf", "--history", "2"}, func(c config.Config) bool {
			return c.K == 7 && c.Fusion == config.FusionRRF && c.MaxHistory == 2 && c.ChunkSize == 321
		}, ""},
		{[]string{"--bm25-weight", "0.3", "--scope", "a,b", "--scope", "c"}, func(c config.Config) bool {
			return c.BM25Weight == 0.3 && c.BM25WeightSet && strings.Join(c.Scope, "|") == "a|b|c"
		}, ""},
		{[]string{"--keep-unverified", "--verify", "lexical", "--provider", "anthropic", "--embedder", "openai"}, func(c config.Config) bool {
			return c.KeepUnverified && c.Verify == config.VerifyLexical && c.Provider == config.ProviderAnthropic && c.Embedder == config.EmbedderOpenAI
		}, ""},
		{[]string{"--llm-timeout", "90s"}, func(c config.Config) bool { return c.LLMTimeout.Seconds() == 90 }, ""},
		{nil, func(c config.Config) bool { return c.K == config.DefaultK && c.ChunkSize == 321 && !c.BM25WeightSet }, ""},
		{[]string{"--fusion", "sum"}, nil, `--fusion "sum" must be minmax or rrf`},
		{[]string{"--provider", "gemini"}, nil, "--provider"},
		{[]string{"--chunk-overlap", "400"}, nil, "overlap"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			cmd := &cobra.Command{Use: "x"}
			for _, name := range []string{"k", "fusion", "history", "bm25-weight", "scope", "keep-unverified", "verify", "provider", "embedder", "llm-timeout", "chunk-overlap"} {
				settingFlag(cmd.Flags(), name)
			}
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			cfg.ChunkSize = 321 // as if loaded from the environment
			err := applyFlags(cmd, &cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Errorf("config after %v: %+v", tt.args, cfg)
			}
		})
	}
}

// TestUserError: main renders every error once: "Error: …" for a plain
// one, an exitCode as it is (also when wrapped).
func TestUserError(t *testing.T) {
	if got := userError(errors.New("the index is missing")); got.code != 1 || got.msg != "Error: the index is missing" {
		t.Errorf("plain error: %+v", got)
	}
	ec := exitCode{code: 3, msg: "監査ログに書き込めませんでした"}
	if got := userError(fmt.Errorf("ask: %w", ec)); got != ec {
		t.Errorf("wrapped exitCode: %+v, want %+v", got, ec)
	}
	// An index that must be rebuilt: the command line adds the command,
	// the index package names none.
	damaged := fmt.Errorf("open index: chunks.bin is damaged: %w", index.ErrDamaged)
	if strings.Contains(damaged.Error(), "--rebuild") {
		t.Errorf("the domain error names a flag: %v", damaged)
	}
	if got := userError(damaged); !strings.HasSuffix(got.msg, "— run `shirube index --rebuild`") {
		t.Errorf("damaged index: %q, want the rebuild command", got.msg)
	}
	for _, tc := range []struct {
		err  error
		hint string
	}{
		{fmt.Errorf("open store: %w", pgstore.ErrNoGeneration), "— run `shirube index --store …` first"},
		{fmt.Errorf("walk: %w: notes.md", document.ErrNotAFolder), "— pass a folder with --data"},
		{fmt.Errorf("walk: %w", document.ErrDataDirMissing), "(--data)"},
		{fmt.Errorf("folder optimisation: boom (the results above are complete; %w to skip it)", pipeline.ErrSkipOptimize), "(--no-optimize)"},
		{fmt.Errorf("no answer: %w", judge.ErrInputEnded), "(--yes)"},
		{fmt.Errorf("optimize: rows: %w", optimize.ErrRowMismatch), "(--separate)"},
		{fmt.Errorf("undo: %w", optimize.ErrUndoDatabase), "(--undo --database DIR)"},
	} {
		if strings.Contains(tc.err.Error(), "--") {
			t.Errorf("the domain error names a flag: %v", tc.err)
		}
		if got := userError(tc.err); !strings.HasSuffix(got.msg, tc.hint) {
			t.Errorf("%v: %q, want the hint %q", tc.err, got.msg, tc.hint)
		}
	}
	// The configuration's own messages do not say "Error:" themselves.
	_, _, err := newChatModel(config.Default())
	if err == nil || strings.Contains(err.Error(), "Error:") || !strings.Contains(err.Error(), "--generator extractive") {
		t.Errorf("no LLM: %v, want a message without \"Error:\" that names --generator extractive", err)
	}
}
