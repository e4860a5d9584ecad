package guard

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shirube/shirube/internal/golden"
)

func TestDangerousKeywordsList(t *testing.T) {
	want := []string{
		"削除", "delete", "rm -rf", "drop", "truncate",
		"証跡", "消去", "format", "reset", "purge",
		"disable", "shutdown", "kill", "停止", "無効化",
		"clear", "remove", "erase", "wipe",
	}
	if !slices.Equal(DangerousKeywords, want) {
		t.Errorf("DangerousKeywords = %q, want seed 002's %q", DangerousKeywords, want)
	}
}

func TestMatchDangerous(t *testing.T) {
	tests := []struct {
		query, answer string
		want          []string
	}{
		{"ログファイルを削除する方法は？", "", []string{"削除"}},
		{"アカウントがロックされた場合の対処法は？", "パスワードをリセットします。", nil},
		{"VPNに接続できない", "", nil},
		{"", "rm -rf /var/log で証跡を消去します", []string{"rm -rf", "証跡", "消去"}},
		{"How do I DELETE old users?", "", []string{"delete"}},
		{"ＤＥＬＥＴＥ文の使い方", "", []string{"delete"}},    // full-width
		{"ｒｍ　－ｒｆ の危険性", "", []string{"rm -rf"}},    // full-width with ideographic space
		{"rm   -rf は使わない", "", []string{"rm -rf"}}, // extra spaces
		{"DROP TABLE users;", "", []string{"drop"}},
		{"サービスを停止して無効化する", "", []string{"停止", "無効化"}},
		{"password reset", "then wipe and kill the process, shutdown", []string{"reset", "shutdown", "kill", "wipe"}},
		{"deleted files", "", []string{"delete"}},
		{"ログをdeleteする", "", []string{"delete"}},
		{"disable", "Disable MFA", []string{"disable"}}, // each keyword once
		{"Clear the cache, remove temp files, erase the disk, purge the queue, truncate the log, format the drive", "",
			[]string{"truncate", "format", "purge", "clear", "remove", "erase"}},
		// false alarms inside longer English words are avoided
		{"information about skills and nuclear preset performance", "", nil},
		{"", "", nil},
	}
	for _, tt := range tests {
		got := MatchDangerous(tt.query, tt.answer)
		if !slices.Equal(got, tt.want) {
			t.Errorf("MatchDangerous(%q, %q) = %q, want %q", tt.query, tt.answer, got, tt.want)
		}
		if DetectDangerous(tt.query, tt.answer) != (len(tt.want) > 0) {
			t.Errorf("DetectDangerous(%q, %q) disagrees with MatchDangerous", tt.query, tt.answer)
		}
	}
}

func TestInsufficientEvidence(t *testing.T) {
	tests := []struct {
		best      float64
		n         int
		threshold float64
		want      bool
	}{
		{0.85, 4, DefaultEvidenceThreshold, false},
		{DefaultEvidenceThreshold, 4, DefaultEvidenceThreshold, false}, // not below
		{DefaultEvidenceThreshold - 0.01, 4, DefaultEvidenceThreshold, true},
		{0.9, 0, DefaultEvidenceThreshold, true}, // no results
		{0, 0, 0, true},
		{0.1, 1, 0, false},          // threshold 0: only "no results" counts
		{0.39, 3, -1, true},         // negative threshold → default
		{0.39, 3, math.NaN(), true}, // NaN threshold → default
		{math.NaN(), 3, 0.5, true},  // NaN score
		{0.7, 2, 0.8, true},
	}
	for _, tt := range tests {
		if got := InsufficientEvidence(tt.best, tt.n, tt.threshold); got != tt.want {
			t.Errorf("InsufficientEvidence(%v, %d, %v) = %v, want %v", tt.best, tt.n, tt.threshold, got, tt.want)
		}
	}
}

func TestDetectAmbiguous(t *testing.T) {
	tests := []struct {
		query string
		want  bool
	}{
		// too short
		{"", true},
		{"   ", true},
		{"なぜ？", true},
		{"VPN", true},
		{"ログイン", true},
		{"対処法は？", true},
		{"help", true},
		{"何？！", true},
		// interrogatives only
		{"どうすればいい？", true},
		{"何をすればいいですか", true},
		{"どうやってやるの？", true},
		{"どうしたらいいでしょうか", true},
		{"これはなぜですか？", true},
		{"いつですか？", true},
		{"What should I do?", true},
		{"How do I fix it?", true},
		{"why is that?", true},
		{"ＷＨＡＴ　ＩＳ　ＴＨＩＳ？", true},
		// missing specifics
		{"手順を教えてください", true},
		{"やり方を教えて", true},
		{"対処方法を知りたいです", true},
		{"その手順の詳細を教えて", true},
		{"エラーの対処法は？", true},
		{"please tell me the procedure", true},
		// a bare symptom naming one thing: seed 002 §5.3's own examples
		{"ログインできない", true},
		{"エラーが出た", true},
		// specific enough
		{"ログファイルを削除する方法は？", false},
		{"アカウントがロックされた場合の対処法は？", false},
		{"VPNに接続できない", false},
		{"ログインできない場合の対処法は？", false},
		{"Active Directoryへのログインができない。エラーコード: 0x80090308", false},
		{"パスワードのリセット手順", false},
		{"ファイアウォールの設定方法を教えて", false},
		{"How do I reset a password in Okta?", false},
		{"what is EDR", false},
		{"マルウェア感染時の初動対応は？", false},
		{"DNS設定", false},
		{"なぜVPNが切れるのか", false},
	}
	for _, tt := range tests {
		if got := DetectAmbiguous(tt.query); got != tt.want {
			t.Errorf("DetectAmbiguous(%q) = %v, want %v (content runes %d)", tt.query, got, tt.want, contentRunes(normalize(tt.query)))
		}
	}
}

func TestSplitWords(t *testing.T) {
	got := splitWords("vpnに接続 what's up?　ok")
	want := []string{"vpn", "に接続", "what's", "up", "ok"}
	if !slices.Equal(got, want) {
		t.Errorf("splitWords = %q, want %q", got, want)
	}
}

func TestTemplatesGolden(t *testing.T) {
	for name, text := range map[string]string{
		"banner.golden":                Banner,
		"confidential_notice.golden":   ConfidentialNotice,
		"insufficient_evidence.golden": InsufficientEvidenceResponse,
		"ambiguous_query.golden":       AmbiguousQueryResponse,
	} {
		golden.Check(t, filepath.Join("testdata", name), []byte(text))
	}
}

// FuzzGuards checks that no input makes the checks panic.
func FuzzGuards(f *testing.F) {
	for _, s := range []string{"", "ＤＥＬＥＴＥ", "どうすればいい？", "\xff\xfe", "rm -rf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = MatchDangerous(s, s)
		_ = DetectAmbiguous(s)
	})
}

func TestNamed(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"ログインできない場合の対処法は？", []string{"ログイン"}},
		{"ログインできない", []string{"ログイン"}},
		{"VPNに接続できない場合は？", []string{"vpn", "接続"}},
		{"アカウントロックアウトの解除手順は？", []string{"アカウントロックアウト", "解除"}},
		{"How do I fix the VPN error?", []string{"vpn"}},
		{"どうすればいいですか？", nil},
	} {
		if got := Named(tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("Named(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}
