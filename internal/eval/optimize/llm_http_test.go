package optimize

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// newProposerServer starts a fake OpenAI chat completions server. It
// answers each request with reply(question), where question is the
// "Question: ..." line of the proposer's prompt, and checks the API key.
func newProposerServer(t *testing.T, reply func(question string) string) *llmtest.Server {
	t.Helper()
	return llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
		q := ""
		if line, ok := strings.CutPrefix(r.User, "Question: "); ok {
			q, _, _ = strings.Cut(line, "\n")
		}
		return llmtest.Reply{Text: reply(q), Model: "gpt-test-proposer", PromptTokens: 300, CompletionTokens: 20}
	})
}

func newProposerClient(t *testing.T, srv *llmtest.Server) *llm.OpenAI {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), MaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error {
			t.Error("the client retried; no reply of the fake is retryable")
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	httpMissedA = "database/runbooks/log_retention/page_001.md"
	httpMissedB = "database/ネットワーク/vpn/page_002.md"
	httpQA      = "インシデント発生時にログの保存期間を確認したい"
	httpQB      = "VPNのタイムアウトは何分？"
)

// newSOCTree builds a small SOC database under a temp root.
func newSOCTree(t *testing.T) string {
	return writeTree(t, map[string]string{
		httpMissedA: "# ログ保存期間\n監査ログは1年間保存する。",
		httpMissedB: "# VPN\n無操作が30分続くと切断される。",
		"database/インシデント対応/概要/page_001.md":     "# インシデント対応の概要",
		"database/runbooks/backup/page_003.md": "# バックアップ",
	})
}

// TestLLMProposerOverHTTP drives LLMProposer through the real OpenAI client
// against a fake chat completions server.
func TestLLMProposerOverHTTP(t *testing.T) {
	t.Run("valid proposal is copied and aliased", func(t *testing.T) {
		root := newSOCTree(t)
		scopeDir := filepath.Join(root, "database")
		wantTree, _, err := ListTree(scopeDir, DefaultTreeDepth, treeLimit)
		if err != nil {
			t.Fatal(err)
		}
		srv := newProposerServer(t, func(string) string {
			return `{"folder":"インシデント対応/初動","reason":"初動対応でログ保存期間を確認する"}`
		})
		input := writeResults(t, t.TempDir(), [][]string{{httpQA, httpMissedA, "database/runbooks/backup/page_003.md", "0", "n1"}})
		var log strings.Builder
		res, err := Run(t.Context(), Options{Input: input, Root: root, Workers: 1, Log: &log, Now: fixedNow,
			Proposer: LLMProposer{LLM: newProposerClient(t, srv), Model: "gpt-test-proposer"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0].Status != "optimized" {
			t.Fatalf("rows %+v\nlog: %s", res.Rows, log.String())
		}
		if at := res.Rows[0].Attempts; len(at) != 1 || at[0].Folder != "インシデント対応/初動" || at[0].Reason != "初動対応でログ保存期間を確認する" {
			t.Errorf("attempts %+v", at)
		}
		const copyPath = "database/インシデント対応/初動/page_001.md"
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(copyPath)))
		if err != nil || string(got) != "# ログ保存期間\n監査ログは1年間保存する。" {
			t.Errorf("copy %s = %q, %v", copyPath, got, err)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(httpMissedA))); err != nil {
			t.Errorf("original page gone: %v", err)
		}
		h, rows := readCSV(t, res.Output)
		if h[len(h)-1] != "Optimized Reference Document" {
			t.Errorf("header %q", h)
		}
		if want := httpMissedA + "|" + copyPath; rows[0][len(h)-1] != want {
			t.Errorf("Optimized = %q; want %q", rows[0][len(h)-1], want)
		}
		if res.Manifest == "" {
			t.Error("no manifest for the created copy")
		}

		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests; want 1", len(reqs))
		}
		req := reqs[0]
		if req.Model != "gpt-test-proposer" || req.Body["temperature"] != 0.0 {
			t.Errorf("model %v, temperature %v", req.Model, req.Body["temperature"])
		}
		if rf, _ := req.Body["response_format"].(map[string]any); rf["type"] != "json_object" {
			t.Errorf("response_format = %v; want json_object", req.Body["response_format"])
		}
		if req.System != proposeSystem {
			t.Errorf("system prompt = %q", req.System)
		}
		user := req.User
		for _, want := range []string{
			"Question: " + httpQA + "\n",
			"Pages not found:\n- " + httpMissedA + "\n",
			"Existing folders:\n" + wantTree,
			"インシデント対応/ (0 pages)\n  概要/ (1 pages)\n",
			"runbooks/ (0 pages)\n  backup/ (1 pages)\n  log_retention/ (1 pages)\n",
		} {
			if !strings.Contains(user, want) {
				t.Errorf("prompt lacks %q:\n%s", want, user)
			}
		}
	})

	t.Run("path escapes are rejected", func(t *testing.T) {
		outside := t.TempDir()
		for _, folder := range []string{"../../etc", filepath.ToSlash(filepath.Join(outside, "stolen")), "/etc/shirube"} {
			t.Run(folder, func(t *testing.T) {
				root := newSOCTree(t)
				// The parent of root's parent is where "../../etc" from
				// the scope would land.
				escape := filepath.Join(filepath.Dir(root), "etc")
				before := treeOf(t, root, ".")
				srv := newProposerServer(t, func(string) string {
					b, _ := json.Marshal(map[string]string{"folder": folder, "reason": "外に置く"})
					return string(b)
				})
				input := writeResults(t, t.TempDir(), [][]string{{httpQA, httpMissedA, "", "0", "n1"}})
				var log strings.Builder
				res, err := Run(t.Context(), Options{Input: input, Root: root, Workers: 1, Log: &log, Now: fixedNow,
					Proposer: LLMProposer{LLM: newProposerClient(t, srv)}})
				if err != nil {
					t.Fatal(err)
				}
				if n := srv.Calls(); n != 1 {
					t.Errorf("%d requests; want 1", n)
				}
				st := res.Rows[0].Status
				wantWhy := "leaves the scope"
				if !strings.HasPrefix(folder, "..") {
					wantWhy = "is absolute"
				}
				if !strings.HasPrefix(st, "skipped: rejected: ") || !strings.Contains(st, wantWhy) || strings.Contains(st, "\n") {
					t.Errorf("status %q; want a one-line rejection saying %q", st, wantWhy)
				}
				if log.String() != "row 1: "+st+"\n" {
					t.Errorf("log %q; want the one line %q", log.String(), "row 1: "+st)
				}
				if after := treeOf(t, root, "."); !reflect.DeepEqual(after, before) {
					t.Errorf("root changed:\n%v\nwant\n%v", after, before)
				}
				if _, err := os.Stat(escape); err == nil {
					t.Errorf("%s was created", escape)
				}
				if es, _ := os.ReadDir(outside); len(es) != 0 {
					t.Errorf("files written outside the scope: %v", es)
				}
				if res.Manifest != "" {
					t.Errorf("manifest kept although nothing was created: %s", res.Manifest)
				}
				h, rows := readCSV(t, res.Output)
				if rows[0][len(h)-1] != httpMissedA {
					t.Errorf("Optimized = %q; want the original reference", rows[0][len(h)-1])
				}
			})
		}
	})

	t.Run("malformed reply skips the row and the run continues", func(t *testing.T) {
		root := newSOCTree(t)
		wantTree, _, err := ListTree(filepath.Join(root, "database"), DefaultTreeDepth, treeLimit)
		if err != nil {
			t.Fatal(err)
		}
		srv := newProposerServer(t, func(q string) string {
			if q == httpQA {
				return "ログの保存期間の質問なので、インシデント対応フォルダが良いと思います。"
			}
			return `{"folder":"ネットワーク/リモートアクセス","reason":"VPNはリモートアクセス"}`
		})
		input := writeResults(t, t.TempDir(), [][]string{
			{httpQA, httpMissedA, "", "0", "n1"},
			{httpQB, httpMissedB, "", "0", "n2"},
		})
		var log strings.Builder
		res, err := Run(t.Context(), Options{Input: input, Root: root, Workers: 1, Log: &log, Now: fixedNow,
			Proposer: LLMProposer{LLM: newProposerClient(t, srv)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 2 {
			t.Fatalf("rows %+v", res.Rows)
		}
		st := res.Rows[0].Status
		if !strings.HasPrefix(st, "skipped: folder proposal: ") || !strings.Contains(st, "did not return a JSON object") || strings.Contains(st, "\n") {
			t.Errorf("row 1 status %q; want a one-line skip for the non-JSON reply", st)
		}
		if !strings.Contains(log.String(), "row 1: "+st+"\n") {
			t.Errorf("log lacks the skip line:\n%s", log.String())
		}
		if res.Rows[1].Status != "optimized" {
			t.Errorf("row 2 status %q; want optimized", res.Rows[1].Status)
		}
		if _, err := os.Stat(filepath.Join(root, "database", "ネットワーク", "リモートアクセス", "page_002.md")); err != nil {
			t.Errorf("row 2 copy missing: %v", err)
		}
		h, rows := readCSV(t, res.Output)
		c := len(h) - 1
		if rows[0][c] != httpMissedA {
			t.Errorf("row 1 Optimized = %q; want the original", rows[0][c])
		}
		if want := httpMissedB + "|database/ネットワーク/リモートアクセス/page_002.md"; rows[1][c] != want {
			t.Errorf("row 2 Optimized = %q; want %q", rows[1][c], want)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests; want 2", len(reqs))
		}
		for i, req := range reqs {
			// Row 1 changed nothing, so both prompts show the tree as it was.
			if u := req.User; !strings.Contains(u, "Existing folders:\n"+wantTree) || !strings.Contains(u, "ネットワーク/ (0 pages)\n  vpn/ (1 pages)\n") {
				t.Errorf("request %d prompt lacks the tree:\n%s", i+1, u)
			}
		}
	})
}

// TestLLMProposerRepeatingAFailedFolder: a model that proposes the same
// folder on every RL attempt. The folder fails once (the copy is rolled
// back); proposing it again costs no attempt — no copy, no re-ask, no
// re-index — and after maxRepeats repeats the row stops, instead of
// spending all five attempts on one folder (issue 22).
func TestLLMProposerRepeatingAFailedFolder(t *testing.T) {
	root := newSOCTree(t)
	srv := newProposerServer(t, func(string) string { return `{"folder": "インシデント対応", "reason": "same again"}` })
	input := writeResults(t, t.TempDir(), [][]string{{httpQA, httpMissedA, "database/runbooks/backup/page_003.md", "0", ""}})
	asker := &fsAsker{root: root, folder: "never"}
	var log strings.Builder
	res, err := Run(t.Context(), Options{Input: input, Root: root, Proposer: LLMProposer{LLM: newProposerClient(t, srv)},
		EnableRL: true, MaxAttempts: 5, Asker: asker, Reindexer: &countReindexer{}, Log: &log, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Status != "not improved" || len(r.Attempts) != 1 || asker.calls != 1 {
		t.Errorf("status %q, %d attempt(s), %d re-ask(s); want one attempt on the folder, then the repeats refused\nlog:\n%s", r.Status, len(r.Attempts), asker.calls, log.String())
	}
	if n := srv.Calls(); n != 1+maxRepeats {
		t.Errorf("%d proposals asked; want %d (the first, then %d repeats)", n, 1+maxRepeats, maxRepeats)
	}
	if !strings.Contains(log.String(), "was already tried") {
		t.Errorf("the log does not say the folder was already tried:\n%s", log.String())
	}
}

// TestCopiesStayOutOfDocumentFolders: with the data folder known, a
// proposed folder that is another document's page folder (or lies in it)
// is refused, so a lockout page never becomes runbooks/backup/page_001_2.md.
func TestCopiesStayOutOfDocumentFolders(t *testing.T) {
	root := newSOCTree(t)
	data := filepath.Join(root, "data")
	for _, f := range []string{"runbooks/log_retention.md", "runbooks/backup.md", "ネットワーク/vpn.pdf"} {
		p := filepath.Join(data, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	srv := newProposerServer(t, func(string) string { return `{"folder": "runbooks/backup", "reason": "backup pages"}` })
	input := writeResults(t, t.TempDir(), [][]string{{httpQA, httpMissedA, "database/runbooks/backup/page_003.md", "0", ""}})
	res, err := Run(t.Context(), Options{Input: input, Root: root, DataDir: data, Proposer: LLMProposer{LLM: newProposerClient(t, srv)}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; !strings.Contains(r.Status, "is the page folder of the document runbooks/backup") {
		t.Errorf("status %q; want the document folder refused", r.Status)
	}
	if _, err := os.Stat(filepath.Join(root, "database", "runbooks", "backup", "page_001.md")); err == nil {
		t.Error("the page was copied into another document's folder")
	}
	// The proposer was told to avoid every document folder.
	if reqs := srv.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0].User, "runbooks/backup") {
		t.Errorf("the prompt does not list the document folders to avoid")
	}
}
