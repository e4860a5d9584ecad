package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/llmtest"
)

// benchQuestions are the rows of the batch benchmarks: four questions on
// each of the five runbooks of the demo corpus, each with its ground truth,
// reference page and checklist so that the evaluation runs.
var benchQuestions = []struct{ q, truth, doc, checklist string }{
	{"アカウントロックアウトのしきい値は何回ですか？", "無効なログオン10回でロックアウトされる", "account_lockout", "- 10回"},
	{"アカウントのロックアウト期間は何分ですか？", "30分で自動解除される", "account_lockout", "- 30分\n- 自動解除"},
	{"ロックアウト元のコンピューターを特定するにはどのイベントIDを確認しますか？", "セキュリティログのイベント ID 4740 を確認する", "account_lockout", "- 4740\n- セキュリティログ"},
	{"パスワードリセットの一時パスワードは何文字以上にしますか？", "16文字以上のランダム文字列で、次回ログオン時の変更を必須にする", "account_lockout", "- 16文字以上\n- 次回ログオン時の変更"},
	{"業務データベースのRPOはどれくらいですか？", "業務データベースのRPOは15分", "backup_restore", "- 15分"},
	{"重要システムのRTOは何時間ですか？", "重要システムのRTOは8時間", "backup_restore", "- 8時間"},
	{"バックアップを仮復元して検証するネットワークはどこですか？", "隔離された検証用ネットワーク（VLAN 999）に仮復元してフルスキャンする", "backup_restore", "- VLAN 999\n- フルスキャン"},
	{"業務データベースの復旧訓練はどのくらいの頻度で行いますか？", "半年に1回行い、RTOを達成できるか確認する", "backup_restore", "- 半年に1回\n- RTO"},
	{"インシデントを認知してからチケットを起票するまでの期限は？", "15分以内にチケット管理システムへ起票する", "incident_response", "- 15分以内\n- 起票"},
	{"誤検知かどうかは何分以内に判断しますか？", "30分以内に判断し、判断できない場合は真陽性として扱う", "incident_response", "- 30分以内\n- 真陽性"},
	{"S1のインシデントではCSIRT責任者への第一報はいつまでですか？", "検知から1時間以内に第一報、4時間以内に経営層へ報告する", "incident_response", "- 1時間以内\n- 4時間以内に経営層へ報告"},
	{"事後報告書は収束後いつまでに作成しますか？", "収束後10営業日以内に作成する", "incident_response", "- 10営業日以内"},
	{"認証ログのアーカイブ保管期間はどれくらいですか？", "認証ログのアーカイブ保管は1年", "log_retention", "- 1年"},
	{"監査証跡のアーカイブ保管期間は何年ですか？", "監査証跡のアーカイブ保管は7年", "log_retention", "- 7年"},
	{"保管期間内のログを例外的に削除するには誰の承認が必要ですか？", "情報セキュリティ部長とログを所管する部署の部長の両名の承認", "log_retention", "- 情報セキュリティ部長\n- 所管する部署の部長"},
	{"ログを収集する機器の時刻同期のずれはどこまで許容されますか？", "社内NTPサーバと同期し、ずれは1秒以内に保つ", "log_retention", "- NTP\n- 1秒以内"},
	{"マルウェア感染が疑われる端末の隔離は第一選択として何で行いますか？", "EDRのネットワーク封じ込めで隔離する", "malware_isolation", "- EDR\n- ネットワーク封じ込め"},
	{"端末の隔離状態が封じ込め済みになったことは何分以内に確認しますか？", "5分以内に確認する", "malware_isolation", "- 5分以内"},
	{"マルウェア感染端末の電源を切ってもよいですか？", "電源を切らず再起動もしない。メモリ上の痕跡が失われる", "malware_isolation", "- 電源を切らない\n- メモリ上の痕跡"},
	{"感染端末から取得した証拠の保管期間は何年ですか？", "証拠の保管期間は3年", "malware_isolation", "- 3年"},
}

// writeBenchInput writes the benchmark CSV and returns its row count.
func writeBenchInput(tb testing.TB, path string) int {
	tb.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{batch.ColQuestion, batch.ColGroundTruth, batch.ColReference, batch.ColPage, batch.ColChecklist})
	for _, r := range benchQuestions {
		w.Write([]string{r.q, r.truth, "database/runbooks/" + r.doc + "/page_001.md", "1", r.checklist})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return len(benchQuestions)
}

// The helpers of evalwire_test.go take *testing.T; these are their
// testing.TB forms for the benchmarks (same environment, same root command).

// outField returns the value after "label: " on a line of out.
func outField(tb testing.TB, out, label string) string {
	tb.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + `: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		tb.Fatalf("no %q line in:\n%s", label, out)
	}
	return m[1]
}

// benchWorkspace indexes the demo corpus (examples/data) offline in a
// fresh folder and makes it the working folder.
func benchWorkspace(tb testing.TB) string {
	tb.Helper()
	offlineEnv(tb)
	src, err := filepath.Abs("../../examples/data")
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS(src)); err != nil {
		tb.Fatal(err)
	}
	tb.Chdir(dir)
	if out := mustRun(tb, "index"); !strings.Contains(out, "indexed 7 documents") {
		tb.Fatalf("index output:\n%s", out)
	}
	return dir
}

// checkBatchResults asserts that one batch run answered and evaluated all
// n rows: n result rows in input order, none failed, every checklist
// judged, every Ref Recall a number.
func checkBatchResults(tb testing.TB, out string, n int) {
	tb.Helper()
	header, rows, _, err := csvx.ReadFile(outField(tb, out, "results"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(rows) != n {
		tb.Fatalf("results have %d rows, want %d", len(rows), n)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	for _, c := range []string{batch.ColQuestion, batch.ColAnswer, batch.ColRefRecall, batch.ColChecklistTP, batch.ColReason} {
		if _, ok := idx[c]; !ok {
			tb.Fatalf("results lack column %q: %v", c, header)
		}
	}
	for i, r := range rows {
		reason := r[idx[batch.ColReason]]
		if r[idx[batch.ColQuestion]] != benchQuestions[i].q {
			tb.Fatalf("row %d is %q, want %q (input order)", i+1, r[idx[batch.ColQuestion]], benchQuestions[i].q)
		}
		if strings.HasPrefix(reason, "error:") || strings.Contains(reason, "checklist not evaluated") {
			tb.Fatalf("row %d not answered or judged: %s", i+1, reason)
		}
		if r[idx[batch.ColAnswer]] == "" {
			tb.Fatalf("row %d has no answer", i+1)
		}
		if _, err := strconv.ParseFloat(r[idx[batch.ColRefRecall]], 64); err != nil {
			tb.Fatalf("row %d Ref Recall %q is not a number", i+1, r[idx[batch.ColRefRecall]])
		}
	}
	if !strings.Contains(out, fmt.Sprintf("answered %d rows (0 resumed, 0 failed, 0 without a question)", n)) {
		tb.Fatalf("batch summary line missing or rows failed:\n%s", out)
	}
}

// benchBatch runs `shirube ask bench.csv --workers 5 --no-optimize` once
// per iteration (each iteration is one whole batch) in the current
// workspace and reports questions/s. It returns the questions asked.
func benchBatch(b *testing.B) int {
	n := writeBenchInput(b, "bench.csv")
	iters := 0
	for b.Loop() {
		iters++
		out := mustRun(b, "ask", "bench.csv", "--workers", "5", "--no-optimize",
			"--logs", "logs", "--results", filepath.Join("results", strconv.Itoa(iters)))
		checkBatchResults(b, out, n)
	}
	b.ReportMetric(float64(iters*n)/b.Elapsed().Seconds(), "questions/s")
	return iters * n
}

// BenchmarkBatchOffline: extractive answers and the offline checklist judge.
func BenchmarkBatchOffline(b *testing.B) {
	benchWorkspace(b)
	benchBatch(b)
}

// BenchmarkBatchFakeLLM: answers and checklist verdicts come from a fake
// OpenAI-compatible server with 500 ms latency, through the real openai-go
// client. With 5 workers and c calls per question the ceiling is
// 5 / (0.5 s × c) questions/s.
func BenchmarkBatchFakeLLM(b *testing.B) {
	benchWorkspace(b)
	fake := &slowOpenAI{delay: 500 * time.Millisecond, key: "test"}
	srv := llmtest.OpenAI(b, fake.reply)
	b.Setenv("OPENAI_API_KEY", "test")
	b.Setenv("OPENAI_API_BASE", srv.BaseURL())

	asked := benchBatch(b)

	answers, judges := fake.answers.Load(), fake.judges.Load()
	if bad := fake.unexpected(); len(bad) > 0 {
		b.Fatalf("fake server got unexpected requests: %v", bad)
	}
	if answers == 0 || judges == 0 {
		b.Fatalf("fake server saw %d answer and %d judge requests; want both, or the figure is not an LLM run", answers, judges)
	}
	b.ReportMetric(float64(answers+judges)/float64(asked), "llm-calls/question")
	b.ReportMetric(float64(answers)/float64(asked), "answer-calls/question")
}

// slowOpenAI is the reply function of a fake OpenAI server (llmtest): a
// JSON-mode request (response_format json_object) is the checklist judge
// and gets a verdict marking every item present; any other request is the
// answer generator and gets an answer citing [1]. Every reply waits delay.
// Requests without the bearer key, without messages, or asking for a
// stream are answered 400 and recorded as unexpected.
type slowOpenAI struct {
	delay   time.Duration
	key     string
	answers atomic.Int64
	judges  atomic.Int64
	mu      sync.Mutex
	bad     []string
}

func (f *slowOpenAI) unexpected() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bad...)
}

func (f *slowOpenAI) reject(why string) llmtest.Reply {
	f.mu.Lock()
	f.bad = append(f.bad, why)
	f.mu.Unlock()
	return llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: why}
}

var checklistItem = regexp.MustCompile(`(?m)^\d+\. `)

// quoteEvidence returns the first sentence of evidence 1 in an answer
// prompt, as a faithful model would answer (so that claim verification
// keeps it), or a generic sentence when the prompt has no evidence.
func quoteEvidence(prompt string) string {
	_, rest, ok := strings.Cut(prompt, `<evidence n="1"`)
	if _, body, found := strings.Cut(rest, ">"); ok && found {
		body, _, _ = strings.Cut(body, "</evidence>")
		for _, line := range strings.Split(body, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if i := strings.Index(line, "。"); i >= 0 {
				line = line[:i+len("。")]
			}
			return line
		}
	}
	return "根拠資料に記載された手順に従って対応します。"
}

func (f *slowOpenAI) reply(r llmtest.Request) llmtest.Reply {
	switch {
	case r.Header.Get("Authorization") != "Bearer "+f.key:
		return f.reject("authorization " + r.Header.Get("Authorization"))
	case len(r.Messages) == 0:
		body, _ := json.Marshal(r.Body)
		return f.reject("body " + string(body))
	case r.Stream:
		return f.reject("streaming request")
	}
	user := r.Messages[len(r.Messages)-1].Text
	var text string
	if rf, _ := r.Body["response_format"].(map[string]any); rf != nil && rf["type"] == "json_object" {
		f.judges.Add(1)
		list, _, _ := strings.Cut(user, "\nAnswer:")
		var items []string
		for i := range checklistItem.FindAllStringIndex(list, -1) {
			items = append(items, fmt.Sprintf(`{"index":%d,"present":true}`, i+1))
		}
		text = `{"items":[` + strings.Join(items, ",") + `],"extra_points":[],"reason":"fake judge: every item present"}`
	} else {
		f.answers.Add(1)
		text = quoteEvidence(user) + " [1]"
	}
	return llmtest.Reply{Text: text, PromptTokens: 900, CompletionTokens: 40, Delay: f.delay}
}
