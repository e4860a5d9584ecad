package questions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// fakeOpenAI starts a fake OpenAI chat-completions server. reply gets the
// system prompt and the user message and returns the assistant's content.
func fakeOpenAI(t *testing.T, reply func(system, user string) string) *llmtest.Server {
	t.Helper()
	return llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: reply(r.System, r.User), Model: "fake-model", PromptTokens: 10, CompletionTokens: 5}
	})
}

func newClient(t *testing.T, srv *llmtest.Server) *llm.OpenAI {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test", BaseURL: srv.BaseURL(), Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var pageHeader = regexp.MustCompile(`\[page (\d+)\]\n`)

// pageSentence returns the first line of at least 20 characters after the
// first "[page N]" header in a prompt: a ground truth taken from the page.
func pageSentence(user string) string {
	loc := pageHeader.FindStringIndex(user)
	if loc == nil {
		return ""
	}
	for _, l := range strings.Split(user[loc[1]:], "\n") {
		if l = strings.TrimSpace(l); len([]rune(l)) >= 20 && !strings.HasPrefix(l, "[page") {
			return l
		}
	}
	return ""
}

func TestGenerateLLM(t *testing.T) {
	data := t.TempDir()
	writeFile(t, filepath.Join(data, "a_travel.md"), "# 出張規程\n\n出張の申請は出発の5営業日前までにワークフローで提出する。\n\n宿泊費の上限は1泊12000円とする。\n")
	writeFile(t, filepath.Join(data, "b_broken.md"), "# 壊れた応答\n\nこのページへの応答は MALFORMED になるように作られたテスト用の文書です。\n")
	writeFile(t, filepath.Join(data, "c_invented.md"), "# 作り話\n\nこのページへの応答は INVENT により本文にない答えになるテスト用の文書です。\n")
	pdf, err := os.ReadFile(filepath.Join(examplesData, "manuals", "vpn_manual.pdf"))
	havePDF := err == nil
	if havePDF {
		writeFile(t, filepath.Join(data, "manuals", "vpn_manual.pdf"), string(pdf))
	}
	srv := fakeOpenAI(t, func(system, user string) string {
		switch {
		case strings.Contains(user, "MALFORMED"):
			return `{"questions": [{"question": "途中で切れた`
		case strings.Contains(user, "INVENT"):
			return `{"questions": [{"question": "首都は？", "ground_truth": "東京である。大阪ではない。京都でもない。", "checklist": ["東京"]}]}`
		}
		gt := pageSentence(user)
		var pages []int
		for _, m := range pageHeader.FindAllStringSubmatch(user, -1) {
			var n int
			fmt.Sscan(m[1], &n)
			pages = append(pages, n)
		}
		q := map[string]any{"question": "この内容について教えてください。", "ground_truth": gt, "checklist": []string{"- " + gt[:min(len(gt), 9)]}}
		if strings.Contains(system, "at least two") {
			q["pages"] = pages[:2]
		}
		out, _ := json.Marshal(map[string]any{"questions": []any{q}})
		return string(out)
	})

	var warns []string
	res, err := Generate(context.Background(), Options{
		DataDir: data, NoWrite: true, LLM: newClient(t, srv), Workers: 2,
		Warn: func(s string) { warns = append(warns, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	bySource := map[string][]Row{}
	for _, r := range res.Rows {
		bySource[r.Source] = append(bySource[r.Source], r)
	}
	a := bySource["a_travel.md"]
	if len(a) != 1 || a[0].Generator != "llm:fake-model" || a[0].References[0] != "database/a_travel/page_001.md" ||
		!strings.Contains(a[0].GroundTruth, "5営業日前") || len(a[0].Checklist) != 1 || strings.HasPrefix(a[0].Checklist[0], "-") {
		t.Errorf("a_travel.md rows = %+v", a)
	}
	if len(bySource["b_broken.md"]) != 0 || len(bySource["c_invented.md"]) != 0 {
		t.Errorf("malformed or invented answers became rows: %+v %+v", bySource["b_broken.md"], bySource["c_invented.md"])
	}
	wantWarn := func(file, reason string) {
		t.Helper()
		if !slices.ContainsFunc(warns, func(w string) bool { return strings.HasPrefix(w, file) && strings.Contains(w, reason) }) {
			t.Errorf("no warning about %s containing %q in %q", file, reason, warns)
		}
	}
	wantWarn("b_broken.md page 1: skipped", "JSON")
	wantWarn("c_invented.md page 1:", "not taken from the page text")
	for _, w := range warns {
		if strings.Contains(w, "\n") {
			t.Errorf("warning %q is not one line", w)
		}
	}
	if vpn := bySource["manuals/vpn_manual.pdf"]; havePDF {
		multi := 0
		for _, r := range vpn {
			if r.Kind == KindMulti {
				multi++
				if len(r.Pages) != 2 || len(r.References) != 2 {
					t.Errorf("multi-page row cites %v %v, want the two pages the model named", r.Pages, r.References)
				}
			}
		}
		if n := len(vpn) - multi; n != 4 || multi < 3 {
			t.Errorf("vpn_manual.pdf: %d page and %d multi-page rows, want 4 and ≥3", n, multi)
		}
	}
	neg := 0
	for _, r := range res.Rows {
		if r.Kind == KindNegative {
			neg++
			if r.Generator != GeneratorOffline || r.GroundTruth != RefusalText {
				t.Errorf("negative row %+v", r)
			}
		}
	}
	if neg == 0 {
		t.Error("no negative questions")
	}
}

func TestGenerateLLMUnreachableStops(t *testing.T) {
	srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: http.StatusUnauthorized, ErrorMessage: "bad key"}
	})
	data := t.TempDir()
	for i := range 8 {
		writeFile(t, filepath.Join(data, "docs", fmt.Sprintf("d%d.md", i)), "# 文書\n\nこの文書には質問を作るのに十分な長さの本文が書かれているテスト用の文章です。\n")
	}
	_, err := Generate(context.Background(), Options{DataDir: data, NoWrite: true, LLM: newClient(t, srv), Workers: 1})
	if err == nil {
		t.Fatal("no error although every request failed")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q is not one line", err)
	}
	if !errors.Is(err, errAllFailed) && !strings.Contains(err.Error(), "no questions") {
		t.Errorf("err = %v, want errAllFailed or 'no questions'", err)
	}
}
