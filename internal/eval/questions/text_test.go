package questions

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // "heading|sentence"
	}{
		{
			name: "wrapped PDF lines are joined, short lines end a unit",
			text: "1.はじめに\n本マニュアルは、社外から社内ネットワークへ安全に接続するための方法を説明す\nる。対象は会社が貸与したノートPCである。\n2.利用条件\nVPN利用申請が承認されていること\n多要素認証アプリが登録済みであること",
			want: []string{
				"はじめに|本マニュアルは、社外から社内ネットワークへ安全に接続するための方法を説明する。",
				"はじめに|対象は会社が貸与したノートPCである。",
				"利用条件|VPN利用申請が承認されていること",
				"利用条件|多要素認証アプリが登録済みであること",
			},
		},
		{
			name: "markdown: headings, lists, emphasis; code and tables skipped",
			text: "# 手順書\n\n## 2. 設定\n\n- しきい値: **10回**\n- 期間は30分\n\n```sh\nrm -rf /\n```\n\n| a | b |\n|---|---|\n\nEnglish text here. Second sentence follows.",
			want: []string{
				"2. 設定|しきい値: 10回",
				"2. 設定|期間は30分",
				"2. 設定|English text here.",
				"2. 設定|Second sentence follows.",
			},
		},
		{
			name: "numbered steps ending in 。 are sentences, not headings",
			text: "3.接続手順\n1.タスクトレイのクライアントを起動する。\n2.接続先を確認する。",
			want: []string{"接続手順|タスクトレイのクライアントを起動する。", "接続手順|接続先を確認する。"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range splitSentences(tt.text) {
				got = append(got, s.Heading+"|"+s.Text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestKeyPhrases(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"接続は無操作が30分続くと自動的に切断され、連続接続は最長12時間までとなる。", []string{"接続", "無操作", "30分", "自動的", "切断", "連続接続", "最長12時間"}},
		{"イベント ID 4740 を確認し、VPNクライアントを再起動する。", []string{"イベント", "ID", "4740", "確認", "VPNクライアント", "再起動"}},
		{"The backup is kept for 30 days in the vault.", []string{"backup", "kept", "30", "days", "vault"}},
		{"最終改訂: 2024年8月20日", []string{"最終改訂", "2024年8月20日"}},
	}
	for _, tt := range tests {
		if got := keyPhrases(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("keyPhrases(%q) =\n%q, want\n%q", tt.in, got, tt.want)
		}
	}
}

func TestCandidatesPreferInformativeSentences(t *testing.T) {
	sents := splitSentences("詳細は以下のとおり。\nロックアウトしきい値は無効なログオン10回で、15分後にカウンターをリセットする。\n確認する。")
	df := map[string]int{}
	got := candidates(sents, df, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text, "10回") {
		t.Fatalf("candidates = %+v, want only the sentence with the figures", got)
	}
}

func TestBigramCoverage(t *testing.T) {
	page := "接続は無操作が30分続くと自動的に切断され、\n連続接続は最長12時間までとなる。"
	tests := []struct {
		want string
		min  float64
		max  float64
	}{
		{"連続接続は最長１２時間までとなる。", 1, 1}, // NFKC and line breaks do not matter
		{"月に一度パスワードを変更する。", 0, 0.2},
	}
	for _, tt := range tests {
		if c := bigramCoverage(tt.want, page); c < tt.min || c > tt.max {
			t.Errorf("bigramCoverage(%q) = %.2f, want in [%.2f, %.2f]", tt.want, c, tt.min, tt.max)
		}
	}
}

func FuzzSplitSentences(f *testing.F) {
	for _, s := range []string{"1.はじめに\n本文です。", "# a\n- b\n```\nc", "。。。", "", "\xff\xfe", "A. B. C."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range splitSentences(text) {
			if strings.TrimSpace(s.Text) == "" {
				t.Fatalf("empty sentence from %q", text)
			}
			if utf8.ValidString(text) && !utf8.ValidString(s.Text) {
				t.Fatalf("invalid UTF-8 sentence %q from %q", s.Text, text)
			}
			for _, p := range keyPhrases(s.Text) {
				if p == "" {
					t.Fatalf("empty phrase from %q", s.Text)
				}
			}
		}
	})
}

func FuzzParseQuestions(f *testing.F) {
	for _, s := range []string{`{"questions":[]}`, `{"questions":[{"question":"q","ground_truth":"a","checklist":["x"]}]}`, `{"questions":`, `[]`, `{"questions":null}`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		qs, err := parseQuestions(text)
		if err != nil && qs != nil {
			t.Fatalf("error %v with questions %v", err, qs)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error %q is not one line", err)
		}
	})
}
