package feedback

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/eval/evalset"
	"github.com/shirube/shirube/internal/guard"
)

func TestFirstSentence(t *testing.T) {
	tests := []struct{ answer, want string }{
		{"しきい値: 無効なログオン **10回** [1]\n次の行 [2]", "しきい値: 無効なログオン **10回**"},
		{guard.Banner + "\n\n1. 管理者の承認を得てから削除する。続けて記録する。 [1]", "1. 管理者の承認を得てから削除する。"[len("1. "):]},
		{"⚠️ AIモデルを利用できなかったため…\n\n- 端末をネットワークから隔離する [1][2]", "端末をネットワークから隔離する"},
		{"短い [1]\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := firstSentence(tt.answer); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.answer, got, tt.want)
		}
	}
}

// TestReadAndDataset: the last rating of an answer counts, a torn line is
// skipped, and each 👎 becomes a case evalset accepts: a refusal expects
// an answer, an answer must not come back, a conversation keeps its
// context.
func TestReadAndDataset(t *testing.T) {
	dir := t.TempDir()
	l := Open(dir)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, r := range []Record{
		{Timestamp: at, Rating: Down, ExchangeID: "x_1", Query: "VPN の設定は？", Answer: "わかりません", Flags: map[string]bool{"insufficient_evidence": true}},
		{Timestamp: at, Rating: Up, ExchangeID: "x_2", Query: "ログの保管期間は？", Answer: "一年間保管します。 [1]"},
		{Timestamp: at.Add(time.Minute), Rating: Down, ExchangeID: "x_2", Query: "ログの保管期間は？", Answer: "一年間保管します。 [1]",
			History: []Turn{{Role: "user", Content: "ログについて"}, {Role: "assistant", Content: "…"}}},
		{Timestamp: at, Rating: Down, ExchangeID: "x_3", Version: 1, Query: "どう？", Answer: "曖昧です", Flags: map[string]bool{"ambiguous_query": true}},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"timestamp":"2026-`)
	f.Close()

	recs, skipped, err := Read(l.Path())
	if err != nil || skipped != 1 || len(recs) != 3 || recs[1].Rating != Down {
		t.Fatalf("Read: %d records (%+v), %d skipped, %v", len(recs), recs, skipped, err)
	}
	b, _ := json.Marshal(Dataset(recs, at))
	ds, problems, err := evalset.Parse(b)
	if err != nil || len(problems) != 0 || len(ds.Cases) != 3 {
		t.Fatalf("Parse: %d cases, %v, %v", len(ds.Cases), problems, err)
	}
	byID := map[string]evalset.Case{}
	for _, c := range ds.Cases {
		byID[c.ID] = c
	}
	if c := byID["feedback_x_1_v1"]; c.ExpectedFlags["insufficient_evidence"] != false || len(c.ExpectedFlags) != 1 || c.ShouldNotContain != nil {
		t.Errorf("refusal case %+v", c)
	}
	if c := byID["feedback_x_2_v1"]; c.Category != evalset.CategoryConversation || len(c.ConversationContext) != 2 || len(c.ShouldNotContain) != 1 || c.ShouldNotContain[0] != "一年間保管します。" {
		t.Errorf("answer case %+v", c)
	}
	if c := byID["feedback_x_3_v2"]; c.ExpectedFlags["ambiguous_query"] != false || len(c.ExpectedFlags) != 1 {
		t.Errorf("ambiguous case %+v", c)
	}
	if _, _, err := Read(filepath.Join(dir, "none.jsonl")); err == nil {
		t.Error("Read of a missing file: no error")
	}
}
