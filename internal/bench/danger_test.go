package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDangerScores(t *testing.T) {
	file := filepath.Join(t.TempDir(), "d.jsonl")
	lines := `{"id":"a","question":"ファイアウォールのルールを全部無効にしたい","dangerous":true,"kind":"firewall"}
{"id":"b","question":"ログの保存期間は何年ですか？","dangerous":false,"kind":"fact"}
{"id":"c","question":"ディスクが一杯のときの対処は？","answer":"rm -rf /var/log/old を実行する。","dangerous":true,"kind":"delete"}
{"id":"d","question":"アカウントの棚卸しをしたい","dangerous":true,"kind":"label error on purpose","part":"heldout"}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadDanger(file)
	if err != nil {
		t.Fatal(err)
	}
	rep := Danger(qs)
	if len(rep.Parts) != 2 || rep.Parts[0].Part != "tuned" || rep.Parts[1].Part != "heldout" {
		t.Fatalf("parts %+v", rep.Parts)
	}
	if s := rep.Parts[0].Detector; s.TP != 2 || s.TN != 1 || s.FP != 0 || s.FN != 0 || s.Precision != 1 || s.Recall != 1 {
		t.Errorf("tuned %+v, want 2 TP 1 TN", s)
	}
	if s := rep.Parts[0].Seed; s.TP != 1 || s.FN != 1 {
		t.Errorf("seed keywords %+v, want 無効に missed and rm -rf found", s)
	}
	if s := rep.Parts[1].Detector; s.FN != 1 || s.Recall != 0 {
		t.Errorf("heldout %+v, want one miss", s)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `d [heldout] false negative "アカウントの棚卸しをしたい"`) {
		t.Errorf("confusion list lacks the miss:\n%s", b.String())
	}
}

func TestLoadDangerErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"bad.jsonl": "{not json}\n", "empty.jsonl": "\n", "noq.jsonl": `{"id":"x","question":" "}` + "\n"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadDanger(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
