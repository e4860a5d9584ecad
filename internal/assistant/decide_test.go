package assistant

import (
	"context"
	"reflect"
	"testing"

	"github.com/shirube/shirube/internal/retrieve"
)

// TestDecide: the gate's decision names the check that refused.
func TestDecide(t *testing.T) {
	retention := []retrieve.Result{{Heading: "ログ管理 > 保存期間", Text: "監査ログは3年間保存する。保存先は専用のストレージとする。"}}
	for _, tt := range []struct {
		name    string
		query   string
		results []retrieve.Result
		best    float64
		want    Decision
	}{
		{"answered", "監査ログの保存期間は？", retention, 0.8, Decision{Action: ActionAnswer, Evidence: 0.8}},
		{"nothing found", "監査ログの保存期間は？", nil, 0, Decision{Action: ActionRefuse, Reason: ReasonNoResults}},
		{"weak evidence", "監査ログの保存期間は？", retention, 0.1, Decision{Action: ActionRefuse, Evidence: 0.1, Reason: ReasonThreshold}},
		{"asked kind absent", "監査ログは何件保存されていますか？", retention, 0.8, Decision{Action: ActionRefuse, Evidence: 0.8, Reason: missKind}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(context.Background(), nil, tt.query, tt.results, tt.best, 0.4); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decide(%q) = %+v, want %+v", tt.query, got, tt.want)
			}
		})
	}
}
