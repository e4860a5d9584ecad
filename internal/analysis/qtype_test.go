package analysis

import (
	"slices"
	"testing"
)

func TestQuestionType(t *testing.T) {
	tests := []struct {
		q       string
		kind    AnswerKind
		counter string // one of the counters, for quantities
		strict  bool
	}{
		{"累計で何件になりましたか？", KindQuantity, "件", true},
		{"常時何人以上の労働者を使用する事業場ですか", KindQuantity, "名", true},
		{"最低何日間保存しますか", KindQuantity, "日", true},
		{"全体の何％を占めますか", KindQuantity, "割", true},
		{"罰金はいくらですか", KindQuantity, "円", true}, // a sum of money
		{"感染者はいくらか", KindQuantity, "", true},   // an amount in any unit
		{"範囲はいくつからいくつまでですか", KindQuantity, "", true},
		{"古細菌が提案されたのは何年？", KindDate, "", true},
		{"西暦何年のことですか", KindDate, "", true},
		{"何年から何年まで大統領を務めたか", KindDate, "", true},
		{"記録は何年保存しますか", KindQuantity, "年", true}, // how many years
		{"何年以内に更新しますか", KindQuantity, "年", true},
		{"何時頃から演奏されるようになったか", KindDate, "", true},
		{"世界最長の何ロープウェイが開通したか", KindNone, "", false}, // a name, not a unit
		{"タンクは何リットルまで入りますか", KindQuantity, "リットル", true},
		{"何回変更しているか", KindQuantity, "度", true},
		{"何年代に民営化された？", KindDate, "", true},
		{"4月何日に発布された", KindDate, "", true},
		{"何年も奉仕したあとの称号は何というか", KindNone, "", false}, // 何年も says "for years"
		{"沸点は何度くらい？", KindQuantity, "℃", true},
		{"「いつ、どこで」という問いに答えたのは何か", KindNone, "", false}, // the quotation's いつ is not asked
		{"どのくらいまでなら含まれていてよいですか", KindQuantity, "", true},
		{"いつまでに届け出ればよいですか", KindDate, "", true},
		{"何年度以降ですか", KindDate, "", true},
		{"どんな罰則がありますか", KindPenalty, "", true},
		{"罰則のようなものはありますか", KindPenalty, "", false}, // yes or no
		{"誰から許可を受けますか", KindWho, "", false},
		{"公表はどのチームに任されていますか", KindWho, "", false},
		{"どの会議で決定されたものですか", KindWho, "", false},
		{"「事業者」とは、どういう者のことですか", KindDefinition, "", false},
		{"一時的に置いておくことはできますか", KindNone, "", false}, // 「ことは」 is no definition
		{"同意なしに提供できるのはどんな場合ですか", KindCondition, "", false},
		{"アカウントロックアウトの解除手順は？", KindProcedure, "", false},
		{"本人確認は必要ですか", KindNone, "", false},
		{"いつでも解約できますか", KindNone, "", false}, // いつでも asks for no date
		{"いつもの手順で復旧できますか", KindProcedure, "", false},
	}
	for _, tt := range tests {
		got := QuestionType(tt.q)
		if got.Kind != tt.kind || got.Strict() != tt.strict || tt.counter != "" && !slices.Contains(got.Counters, tt.counter) {
			t.Errorf("QuestionType(%q) = %+v strict %v; want %s with %q, strict %v", tt.q, got, got.Strict(), tt.kind, tt.counter, tt.strict)
		}
	}
}

func TestAnswerTypeSatisfied(t *testing.T) {
	tests := []struct {
		q, text string
		want    bool
	}{
		{"何件ですか", "累計は 208,034 件になりました", true},
		{"何件ですか", "登録件数が多かった製品を示す", false},
		{"何日以内ですか", "十日以内の期間、仮に貯蔵する", true},
		{"何日と定められていますか", "標準的な期間を定めるよう努める", false},
		{"通常何日くらいかかりますか", "令和５年１０月１日から登録を受ける", false}, // a date, not days
		{"何日以内ですか", "公示の日から三十日以上でなければならない", true},
		{"通常何日くらいかかりますか", "提出日から 15 日以後の日を登録希望日とする", false}, // a day counted from another is a day, not a length of time
		{"提出日から何日以後の日を書きますか", "提出日から 15 日以後の日を登録希望日とする", true},
		{"何日前までに届け出ますか", "工事開始の日の十四日前までに届け出る", true},
		{"何年保存しますか", "2024 年に登録した", false},
		{"何年保存しますか", "記録を 3 年間保存する", true},
		{"古細菌が提案されたのは何年？", "1977 年にウーズらが提案した", true}, // which year
		{"何人が15世紀に到来した？", "15 世紀にポルトガル人が到来した", true}, // which people
		{"沸点は何度くらい？", "沸点は 30℃ 位である", true},
		{"罰金はいくらですか", "百万円以下の罰金", true},
		{"GDPはいくらか", "GDP は 100 億ドルである", true}, // an amount in any unit
		{"何人以上ですか", "常時五十人以上の労働者", true},
		{"いつサポートが終了しましたか", "1 年間の非推奨期間を経て終了しました", false}, // how long, not when
		{"いつサポートが終了しましたか", "2020 年 11 月 13 日に終了しました", true},
		{"いつまでに報告しますか", "発生から 24 時間以内に報告する", true},
		{"範囲はいくつからいくつまでですか", "| TCP | 30000-32767 | NodePort |", true},
		{"公表はどのチームに任されていますか", "委任先: マーケティングチーム", true},
		{"何歳以上ですか", "参議院議員の任期は六年とし", false},
		{"何％ですか", "レベル 2 以上が 89.6% を占めています", true},
		{"いつから適用されていますか", "平成 13 年 4 月 1 日から適用し", true},
		{"いつまでですか", "届出書を提出する", false},
		{"いつまで使える措置ですか", "適用期限のない恒久的な措置となります", true}, // no end date is an answer
		{"どんな罰則がありますか", "三年以下の懲役又は三百万円以下の罰金に処する", true},
		{"どんな罰則がありますか", "製造し、又は使用してはならない", false},
		// A quantity of any unit: words written with a kanji numeral
		// count nothing.
		{"どのくらいの期間有効ですか", "認証を一旦は実施し、統一した運用とする", false},
		{"どのくらいの帯域が必要ですか", "十分な通信帯域の確保を行う", false},
		{"どのくらいの帯域が必要ですか", "一般の利用者が一部の機能を使う", false},
		{"どのくらいの期間有効ですか", "取得日から 18 ヶ月間有効である", true},
		{"どのくらいかかりますか", "三日ほどかかる", true},
		{"どのくらいかかりますか", "十分で終わる", true},
	}
	for _, tt := range tests {
		if got := QuestionType(tt.q).Satisfied(Normalize(tt.text)); got != tt.want {
			t.Errorf("%q satisfied by %q = %v, want %v", tt.q, tt.text, got, tt.want)
		}
	}
}

func TestDefinitionsAndArticles(t *testing.T) {
	if got := DefinedTerm("行政手続法でいう「行政指導」とは、どういうものですか？"); got != "行政指導" {
		t.Errorf("DefinedTerm = %q", got)
	}
	if got := DefinedTerm("クラウドとは何ですか"); got != "クラウド" {
		t.Errorf("DefinedTerm = %q", got)
	}
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"六　行政指導　行政機関がその任務の範囲内において…をいう。", true},
		{"この法律において「行政指導」とは、…をいう。", true},
		{"行政指導指針（同一の行政目的を…）", false},
		{"当該行政指導の趣旨を示す。", false},
		{"| 行政指導 | 意味: 行政機関がその任務の範囲内において…", true}, // a glossary table's row
		{"| 指針 | 意味: 行政指導に共通してその内容となるべき事項", false},
	} {
		if got := Defines(Normalize(tt.text), "行政指導"); got != tt.want {
			t.Errorf("Defines(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if got := Articles("第五十五条の規定及び第六十六条の二、第五十五条"); len(got) != 2 || got[0] != "第五十五条" || got[1] != "第六十六条の二" {
		t.Errorf("Articles = %q", got)
	}
	if !Refers("第五十五条の規定に違反した者", "第五十五条") || Refers("第五十五条の二の規定", "第五十五条") || Refers("第百五十五条", "第五十五条") {
		t.Error("Refers must match whole article references only")
	}
}

func TestAskedVerb(t *testing.T) {
	tests := []struct{ q, want string }{
		{"保安責任者を選んだら、どこへ届け出ますか？", "届"},
		{"このサイトはどこが運営していますか", "運営"},
		{"誰の許可を受けますか", "許可"},
		{"どの会議で決定されたものですか", "決定"},
		{"いつまでに提出しますか", ""},
	}
	for _, tt := range tests {
		if got := AskedVerb(tt.q); got != tt.want {
			t.Errorf("AskedVerb(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestNamesAgent(t *testing.T) {
	const q = "保安責任者を選んだら、どこへ届け出ますか？"
	tests := []struct {
		text string
		want bool
	}{
		{"事業者は、保安責任者を選び、必要な業務を行わせなければならない。", true}, // 事業者 is not the question's word
		{"保安責任者を選び、保安上必要な業務を行わせなければならない。", false},  // only the question's own role
		{"その旨を所轄の監督署長に届け出なければならない。", true},
		{"経済産業省令で定めるところにより届け出る。", false},   // an ordinance names no one
		{"ABC、XYZ/DEF が共同で運営しています。", true}, // acronyms
		{"届出の様式は別に定める。", false},
	}
	for _, tt := range tests {
		if got := NamesAgent(tt.text, q); got != tt.want {
			t.Errorf("NamesAgent(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestDefinesByApposition(t *testing.T) {
	tests := []struct {
		sent, term string
		want       bool
	}{
		{"各課は、共同利用優先原則、すなわち、共用の設備を第一候補として検討する。", "共同利用優先原則", true},
		{"「共同利用優先原則」、つまり共用の設備を先に検討する考え方である。", "共同利用優先原則", true},
		{"共用の設備を使う事業者(以下「利用者」という。)は、届け出る。", "共用の設備を使う事業者", true},
		{"共同利用優先原則を具体化し、各課が検討する。", "共同利用優先原則", false},
		{"すなわち、共用の設備を第一候補とする。", "共同利用優先原則", false},
	}
	for _, tt := range tests {
		if got := DefinesByApposition(Normalize(tt.sent), tt.term); got != tt.want {
			t.Errorf("DefinesByApposition(%q, %q) = %v, want %v", tt.sent, tt.term, got, tt.want)
		}
	}
}

func TestExcludedPhrases(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"計画届が必要な工事（特に大規模なものを除く）を始める場合、どこへ届け出ますか？", []string{"特に大規模なものを除く"}},
		{"本店以外の事務所では、誰が責任者になりますか", []string{"本店以外"}},
		{"計画はいつまでに届け出ますか", nil},
	}
	for _, tt := range tests {
		if got := ExcludedPhrases(tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("ExcludedPhrases(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestExplicitDate(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"(掲載期間:2023年8月)", true},
		{"令和5年10月1日から適用する", true},
		{"2024 年に登録した", true},
		{"掲載期間の経過したペーパーは削除します", false}, // a deadline in words
		{"遅滞なく届け出る", false},
		{"1 年間の非推奨期間を経て終了した", false}, // a length of time
	} {
		if got := ExplicitDate(Normalize(tt.text)); got != tt.want {
			t.Errorf("ExplicitDate(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
