package chunk

import (
	"strings"
	"testing"
)

func BenchmarkSplit(b *testing.B) {
	md := strings.Repeat("# 見出し\n"+strings.Repeat("インシデント対応の初動を確認する。", 40)+"\n## 小見出し\n本文です。\n", 20)
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		if _, err := Split(md, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
