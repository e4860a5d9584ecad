package answer

import (
	"strings"

	"github.com/shirube/shirube/internal/analysis"
)

// refusalPhrases are the ways an answer says the documents do not hold
// what was asked, NFKC-normalised and lower-cased. The insufficient-
// evidence template, the phrasings models use in Japanese (「…の記載が
// ありません」「分かりません」「情報がありません」) and in English.
var refusalPhrases = []string{
	"該当する手順が見つかりませんでした",
	"記載がありません", "記載はありません", "記載されていません", "記述がありません", "記述はありません",
	"情報がありません", "情報はありません", "情報が見つかりません", "情報が見つかりませんでした",
	"分かりません", "わかりません", "判りません",
	"見当たりません", "見つかりませんでした",
	"含まれていません", "触れられていません",
	"回答できません", "お答えできません", "答えられません", "お答えすることができません", "回答することができません",
	"i cannot answer", "i can't answer", "i can not answer", "i don't know", "i do not know",
	"no information", "not enough information", "not mentioned", "does not mention", "do not mention",
	"does not contain", "do not contain",
}

// IsRefusal reports whether text declines to answer: it contains one of
// the common refusal phrasings (refusalPhrases) after NFKC normalisation
// and lower-casing. 「提供された資料には、社員食堂の営業時間についての記載
// がありません。」 is a refusal; 「保管期間は1年です。」 is not.
func IsRefusal(text string) bool {
	t := strings.ReplaceAll(analysis.Normalize(text), "’", "'")
	for _, p := range refusalPhrases {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}
