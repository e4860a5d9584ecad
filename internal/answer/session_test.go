package answer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shirube/shirube/internal/llm"
)

func TestSessionHistory(t *testing.T) {
	s := NewSession(SessionOptions{})
	for i := 1; i <= 7; i++ {
		s.Add(fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))
	}
	h := s.History()
	if len(h) != 2*MaxConversationHistory {
		t.Fatalf("%d messages, want %d", len(h), 2*MaxConversationHistory)
	}
	for i, m := range h {
		n := 3 + i/2 // exchanges 3..7 are kept
		want := llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("q%d", n)}
		if i%2 == 1 {
			want = llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("a%d", n)}
		}
		if m != want {
			t.Errorf("History()[%d] = %+v, want %+v", i, m, want)
		}
	}
	if got := NewSession(SessionOptions{MaxExchanges: 2}); func() int { got.Add("a", "b"); got.Add("c", "d"); got.Add("e", "f"); return len(got.History()) }() != 4 {
		t.Error("MaxExchanges not honoured")
	}
}

func TestSessionConcurrent(t *testing.T) {
	s := NewSession(SessionOptions{Tokenizer: bigrams{}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				s.Add(fmt.Sprintf("監査ログ%d-%d", i, j), "回答")
				if h := s.History(); len(h) > 2*MaxConversationHistory || len(h)%2 != 0 {
					t.Errorf("history of %d messages", len(h))
				}
				if _, err := s.Rewrite(context.Background(), "その期間は？"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(s.History()); n != 2*MaxConversationHistory {
		t.Errorf("%d messages after concurrent use", n)
	}
}

func TestIsFollowUp(t *testing.T) {
	tests := []struct {
		q    string
		want bool
	}{
		{"その手順の詳細を教えて", true},
		{"それはいつまで保管する？", true},
		{"上記の2番目は？", true},
		{"前述の設定を戻すには", true},
		{"さっきのログはどこにある", true},
		{"同じ手順でよい？", true},
		{"期限は？", true},
		{"What about it?", true},
		{"Is that mandatory?", true},
		{"インシデント発生時の初動対応手順は？", false},
		{"監査ログの保管期間と廃棄手順を教えてください", false},
		{"その他の連絡先一覧を見せてください", false},
		{"How long are audit logs retained?", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsFollowUp(tt.q); got != tt.want {
			t.Errorf("IsFollowUp(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestRewriteOffline(t *testing.T) {
	tests := []struct {
		prev, q, want string
	}{
		// Seed 002 §7.1 test_004: the subject of the previous question is
		// carried into the follow-up, which reads as a question of its own.
		{"ログインできない場合の対処法は？", "その手順の詳細を教えて", "ログインできない場合の対処法の手順の詳細を教えて"},
		{"インシデント発生時の初動対応手順は？", "その手順の詳細を教えて", "インシデント発生時の初動対応手順の詳細を教えて"},
		// The noun is in the previous turn, a statement: the phrase ending
		// with it replaces the reference.
		{"アカウントがロックアウトされた利用者からサービスデスクに連絡がありました。", "その利用者の本人確認はどのように行いますか？", "アカウントがロックアウトされた利用者の本人確認はどのように行いますか？"},
		{"監査ログの保管期間は？", "それはいつまで延長できる？", "監査ログの保管期間はいつまで延長できる？"},
		{"初動対応の手順一覧を教えて", "上記の2番目は？", "初動対応の手順一覧の2番目は？"},
		{"監査ログの保管期間は？", "期限は？", "監査ログの保管期間の期限は？"},
		{"バックアップの取得頻度について教えてください", "さっきの頻度は変更できる？", "バックアップの取得頻度は変更できる？"},
		// A statement without the noun: the key terms go in front.
		{"監査ログを確認しました。", "その期間は？", "監査ログを確認 その期間は？"},
		{"How long are audit logs retained?", "Is that mandatory?", "audit logs retained Is that mandatory?"},
		{"インシデント発生時の初動対応手順は？", "監査ログの保管期間は？", "監査ログの保管期間は？"},
		{"インシデント発生時の初動対応手順は？", "その他の連絡先一覧を見せてください", "その他の連絡先一覧を見せてください"},
		{"", "その手順の詳細を教えて", "その手順の詳細を教えて"},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			s := NewSession(SessionOptions{Tokenizer: bigrams{}})
			if tt.prev != "" {
				s.Add(tt.prev, "回答 [1]")
			}
			got, err := s.Rewrite(context.Background(), tt.q)
			if err != nil || got.Query != tt.want {
				t.Errorf("Rewrite(%q) after %q = %q, %v; want %q", tt.q, tt.prev, got.Query, err, tt.want)
			}
		})
	}
}

func TestAddHistory(t *testing.T) {
	s := NewSession(SessionOptions{})
	s.AddHistory([]llm.Message{
		{Role: llm.RoleUser, Content: "q1"}, {Role: llm.RoleAssistant, Content: "a1"},
		{Role: llm.RoleUser, Content: "q2"},
		{Role: llm.RoleUser, Content: "q3"}, {Role: llm.RoleAssistant, Content: "a3"},
	})
	got := s.History()
	want := []llm.Message{
		{Role: llm.RoleUser, Content: "q1"}, {Role: llm.RoleAssistant, Content: "a1"},
		{Role: llm.RoleUser, Content: "q2"}, {Role: llm.RoleAssistant, Content: ""},
		{Role: llm.RoleUser, Content: "q3"}, {Role: llm.RoleAssistant, Content: "a3"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("History = %v, want %v", got, want)
	}
}

func TestRewriteLLM(t *testing.T) {
	ctx := context.Background()
	fake := &fakeModel{reply: "書き換え: 「インシデント初動対応手順の詳細」\n説明は不要"}
	s := NewSession(SessionOptions{Tokenizer: bigrams{}, Rewriter: fake, Model: "gpt-4o-mini"})

	if got, err := s.Rewrite(ctx, "その手順の詳細を教えて"); err != nil || got.Query != "その手順の詳細を教えて" || len(fake.reqs) != 0 {
		t.Errorf("without history: %q, %v, %d calls", got.Query, err, len(fake.reqs))
	}

	s.Add("インシデント発生時の初動対応手順は？", "影響範囲を確認し報告する [1]。")
	got, err := s.Rewrite(ctx, "その手順の詳細を教えて")
	if err != nil || got.Query != "インシデント初動対応手順の詳細" {
		t.Errorf("Rewrite = %q, %v", got.Query, err)
	}
	// The call's tokens and cost come back, so the caller can count them.
	if got.Usage.TotalTokens != 120 || got.CostUSD != 0.000027 {
		t.Errorf("Rewrite usage = %+v $%g, want 120 tokens $0.000027", got.Usage, got.CostUSD)
	}
	req := fake.reqs[0]
	if req.System != RewriteSystemPrompt || req.Model != "gpt-4o-mini" || req.Temperature == nil || *req.Temperature != 0 {
		t.Errorf("request = %+v", req)
	}
	for _, want := range []string{"User: インシデント発生時の初動対応手順は？", "Assistant: 影響範囲を確認し報告する", "Latest question: その手順の詳細を教えて"} {
		if !strings.Contains(req.Messages[0].Content, want) {
			t.Errorf("prompt lacks %q:\n%s", want, req.Messages[0].Content)
		}
	}

	// An empty reply falls back to the offline rewrite.
	fake.reply = "  \n"
	if got, err := s.Rewrite(ctx, "その手順の詳細を教えて"); err != nil || got.Query != "インシデント発生時の初動対応手順の詳細を教えて" {
		t.Errorf("empty reply: %q, %v", got.Query, err)
	}

	// A failing model returns the offline rewrite and the error.
	fake.err = errors.New("rate limited")
	got, err = s.Rewrite(ctx, "その手順の詳細を教えて")
	if !errors.Is(err, fake.err) || got.Query != "インシデント発生時の初動対応手順の詳細を教えて" {
		t.Errorf("failing model: %q, %v", got.Query, err)
	}
}
