package analysis

import (
	"reflect"
	"testing"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"plain", "第一文です。第二文です。", []string{"第一文です。", "第二文です。"}},
		{"parenthesis holds a sentence", "個人データ（個人情報をいう。以下同じ。）を提供してはならない。次の文。",
			[]string{"個人データ（個人情報をいう。以下同じ。）を提供してはならない。", "次の文。"}},
		{"quotation holds a sentence", "「ログを消す。」と書かれている。次。", []string{"「ログを消す。」と書かれている。", "次。"}},
		{"closing bracket after the stop stays", "（以上。）続き。", []string{"（以上。）続き。"}},
		{"unclosed bracket is ignored", "「閉じない。次の文。", []string{"「閉じない。", "次の文。"}},
		{"stray closer", "a）b。c。", []string{"a）b。", "c。"}},
		{"FAQ marker opens its sentence", "Q. ログアウトすると終了してしまう。", []string{"Q. ログアウトすると終了してしまう。"}},
		{"full-width marker", "Ａ．offにしてください。次。", []string{"Ａ．offにしてください。", "次。"}},
		{"numbered step", "1. 攻撃を停止する。", []string{"1. 攻撃を停止する。"}},
		{"a word before the stop still ends", "See the FAQ. Next one.", []string{"See the FAQ.", "Next one."}},
		{"nested", "甲（乙「丙。」丁。）戊。己。", []string{"甲（乙「丙。」丁。）戊。", "己。"}},
		{"mismatched inner", "（a「b。）c。", []string{"（a「b。）c。"}},
		{"english", "See Fig. 3 for details. Then stop; go.", []string{"See Fig. 3 for details.", "Then stop;", "go."}},
		{"punctuation only dropped", "。。", nil},
		{"trailing quote kept", "彼は「はい。」", []string{"彼は「はい。」"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sentences(tt.line); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sentences(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

func FuzzSentences(f *testing.F) {
	for _, s := range []string{"第一文です。第二文（括弧。内）です。", "「a。", "a）b。", "x. y; z!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got := Sentences(line)
		// Every sentence is a piece of the line, in order, and nothing but
		// white space and punctuation-only fragments is lost.
		rest := line
		for _, s := range got {
			i := indexOf(rest, s)
			if i < 0 {
				t.Fatalf("sentence %q not found in order in %q", s, line)
			}
			rest = rest[i+len(s):]
		}
	})
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
