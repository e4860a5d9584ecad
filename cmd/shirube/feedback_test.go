package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/feedback"
)

// TestFeedbackExportRunsInEval: an answer rated 👎 comes back out of
// `shirube feedback export` as a case that `shirube eval` reads and runs —
// and fails while the assistant still gives the rejected answer.
func TestFeedbackExportRunsInEval(t *testing.T) {
	workspace(t, indexedFixture(t))
	const q = "アカウントロックアウトのしきい値は何回ですか？"
	var rep struct {
		Answer string `json:"answer"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ask", q, "--json", "--logs", "logs")), &rep); err != nil || rep.Answer == "" {
		t.Fatalf("ask --json: %v", err)
	}
	log := feedback.Open("logs")
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, r := range []feedback.Record{
		{Timestamp: now, Rating: feedback.Down, Comment: "回数が違う", RequestID: "r_1", SessionID: "s1", Query: q, Answer: rep.Answer,
			Evidence: []feedback.Evidence{{N: 1, File: "database/runbooks/account_lockout/page_001.md", Page: 1}}},
		{Timestamp: now, Rating: feedback.Up, RequestID: "r_2", SessionID: "s1", Query: "VPN の接続手順は？", Answer: "…"},
		{Timestamp: now.Add(time.Minute), Rating: feedback.Down, RequestID: "r_3", SessionID: "s2", Query: "VPN の接続手順は？", Answer: "…"},
		{Timestamp: now.Add(2 * time.Minute), Rating: feedback.Up, RequestID: "r_3", SessionID: "s2", Query: "VPN の接続手順は？", Answer: "…"}, // changed their mind
	} {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	out := mustRun(t, "feedback", "export", "--out", "fb.json", "--logs", "logs")
	if !strings.Contains(out, "wrote 1 case(s)") {
		t.Fatalf("export: %s", out)
	}
	b, _ := os.ReadFile("fb.json")
	if !strings.Contains(string(b), `"id": "feedback_r_1"`) || !strings.Contains(string(b), "回数が違う") {
		t.Errorf("exported dataset:\n%s", b)
	}
	stdout, stderr, err := run(t, "", "eval", "fb.json", "--logs", "logs", "--judge", "offline")
	if !strings.Contains(stdout, "feedback_r_1") || !strings.Contains(stdout, "0 of 1 cases passed") || err == nil {
		t.Errorf("eval of the exported case (want it read, run and failed while the rejected answer comes back): %v\n%s\n%s", err, stdout, stderr)
	}
	if _, _, err := run(t, "", "feedback", "export", "--logs", "logs"); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("export without --out: %v", err)
	}
	if _, _, err := run(t, "", "feedback", "export", "--out", "x.json", "--logs", "empty"); err == nil || !strings.Contains(err.Error(), "no feedback yet") {
		t.Errorf("export without feedback: %v", err)
	}
}
