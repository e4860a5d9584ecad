package answer

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shirube/shirube/internal/golden"
)

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

func TestRenderText(t *testing.T) {
	ctx := context.Background()
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	answerFor := func(q string) Answer {
		a, err := gen.Generate(ctx, q, runbook())
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	tests := []struct {
		name  string
		a     Answer
		flags Flags
	}{
		{"extractive.golden", answerFor("証跡を保全し、監査ログは何年保管する？"), Flags{}},
		{"unknowns.golden", answerFor("監査ログの保管期間と暗号化方式は？"), Flags{}},
		{"dangerous.golden", answerFor("インシデント発生時にログを削除してよいか？"), Flags{DangerousOperation: true}},
		{"insufficient.golden", answerFor("VPNの設定方法"), Flags{InsufficientEvidence: true}},
		{"ambiguous.golden", Answer{}, Flags{AmbiguousQuery: true}},
		{"llm.golden", Answer{
			Text:     "監査ログは1年間保管する [1]。\n期限後は承認を得て廃棄する [1]。",
			Evidence: []Evidence{{N: 1, File: "database/soc/runbook/page_007.md", Page: 7, Heading: "ログ管理 > 保管", Score: 0.7412, Excerpt: "監査ログは1年間保管する。\n保管期間を過ぎたログは..."}},
			Unknowns: []string{"暗号化方式", "廃棄の\n承認者"},
		}, Flags{}},
		{"no-heading-no-page.golden", Answer{
			Text:     "Audit logs are retained for one year. [1]",
			Evidence: []Evidence{{N: 1, File: "database/policy/page_001.md", Score: 1}},
		}, Flags{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.name, RenderText(tt.a, tt.flags))
		})
	}
}
