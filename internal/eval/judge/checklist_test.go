package judge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/eval/metrics"
)

func TestParseChecklistReply(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		n       int
		want    metrics.Judgement
		wantErr string
	}{
		{
			name: "valid, out of order",
			raw:  `{"items":[{"index":2,"present":false},{"index":1,"present":true}],"extra_points":["x"," "],"reason":"ok\nfine"}`,
			n:    2,
			want: metrics.Judgement{Present: []bool{true, false}, Extra: []string{"x"}, Reason: "ok fine"},
		},
		{
			name: "fenced",
			raw:  "```json\n{\"items\":[{\"index\":1,\"present\":true}],\"extra_points\":[]}\n```",
			n:    1,
			want: metrics.Judgement{Present: []bool{true}},
		},
		{name: "not json", raw: "Item 1 is present.", n: 1, wantErr: "invalid JSON"},
		{name: "truncated", raw: `{"items":[{"index":1,`, n: 1, wantErr: "invalid JSON"},
		{name: "count", raw: `{"items":[{"index":1,"present":true}]}`, n: 2, wantErr: "1 verdicts for 2 items"},
		{name: "repeat", raw: `{"items":[{"index":1,"present":true},{"index":1,"present":true}]}`, n: 2, wantErr: "repeated"},
		{name: "range", raw: `{"items":[{"index":3,"present":true}]}`, n: 1, wantErr: "index 3"},
		{name: "missing present", raw: `{"items":[{"index":1}]}`, n: 1, wantErr: "present"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseChecklist(tt.raw, tt.n)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseChecklistReply(f *testing.F) {
	f.Add(`{"items":[{"index":1,"present":true}],"extra_points":["x"]}`, 1)
	f.Add("```json\n{}\n```", 0)
	f.Fuzz(func(t *testing.T, raw string, n int) {
		if n < 0 || n > 50 {
			return
		}
		j, err := ParseChecklist(raw, n)
		if err == nil && len(j.Present) != n {
			t.Fatalf("%d verdicts for %d items without error", len(j.Present), n)
		}
	})
}
