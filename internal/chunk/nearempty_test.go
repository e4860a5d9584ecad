package chunk

import (
	"slices"
	"testing"
)

func TestMergeNearEmpty(t *testing.T) {
	body := "本ガイドラインは、クラウドサービスの設定不備による情報漏えいを防ぐための対策をまとめたものである。"
	tests := []struct {
		name     string
		in, want []string
	}{
		{"one page stays, however short", []string{"休日"}, []string{"休日"}},
		{"a cover leads the next page",
			[]string{"設定ガイドライン\n２０２２年 10 月\n総務省\n", body},
			[]string{"", "設定ガイドライン\n２０２２年 10 月\n総務省\n\n" + body}},
		{"blank pages in between are passed over",
			[]string{"表紙の題名", "", "  \n", body},
			[]string{"", "", "", "表紙の題名\n\n" + body}},
		{"a near-empty last page stays", []string{body, "END\n← 目次へ"}, []string{body, "END\n← 目次へ"}},
		{"two near-empty pages in a row carry on together",
			[]string{"表紙", "Ⅰ. 序編", body},
			[]string{"", "", "表紙\n\nⅠ. 序編\n\n" + body}},
		{"pages of substance are untouched", []string{body, body}, []string{body, body}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := MergeNearEmpty(in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Error("input changed")
			}
		})
	}
}
