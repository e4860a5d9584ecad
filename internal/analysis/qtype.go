package analysis

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AnswerKind is the kind of fact a question asks for.
type AnswerKind string

// Answer kinds. KindNone is a question that asks for no particular kind of
// fact (a yes/no question, an explanation).
const (
	KindNone       AnswerKind = ""
	KindQuantity   AnswerKind = "quantity"   // 何件・何％・いくら・どのくらい
	KindDate       AnswerKind = "date"       // いつ・いつまで・何日以内・期限
	KindWho        AnswerKind = "who"        // 誰・どこ・どの機関
	KindPenalty    AnswerKind = "penalty"    // 罰則・罰金
	KindDefinition AnswerKind = "definition" // 〜とは・定義
	KindCondition  AnswerKind = "condition"  // どういう場合・例外・ただし
	KindProcedure  AnswerKind = "procedure"  // 手順・方法・どうすれば
)

// AnswerType describes what a question asks for: its kind, and for
// quantities the counters a numeral must carry (件, 人, 日, ％ …; empty
// means any number). Find it with QuestionType.
type AnswerType struct {
	Kind     AnswerKind
	Counters []string
	// asked is set when the question asks with an interrogative (何, いつ,
	// どんな …) rather than for a yes or no: 「罰則はありますか」 is answered
	// by 「ない」 as well as by a penalty.
	asked bool
	// relative is set when the question asks for a day counted from
	// another (何日前まで, 何日以後の日): 「15日以後の日」 answers it, while a
	// question asking how long something takes (何日くらい, 何日間) is not
	// answered by such a day.
	relative bool
}

// Strict reports whether evidence without an expression of this type
// cannot answer the question: a question asking 何日 is not answered by a
// passage without a number of days, while 「誰」 or 「どういう場合」 can be
// answered in words no pattern anticipates.
func (t AnswerType) Strict() bool {
	return t.asked && (t.Kind == KindQuantity || t.Kind == KindDate || t.Kind == KindPenalty)
}

// interrogativeRe finds a word that asks for content rather than yes or no.
var interrogativeRe = regexp.MustCompile(`何|なに|なん|いつ|いくら|いくつ|どう|どんな|どの|どれ|どこ|どちら|誰|だれ|\b(?:what|when|which|who|how)\b`)

// counterSynonyms maps the counter a question uses after 何 to the
// counters an answer may use for it.
var counterSynonyms = map[string][]string{
	"件": {"件"}, "人": {"人", "名"}, "名": {"名", "人"}, "日": {"日"}, "日間": {"日"},
	"年": {"年"}, "年間": {"年"}, "か月": {"か月", "ヶ月", "カ月", "箇月", "ケ月", "ヵ月", "月"},
	"ヶ月": {"か月", "ヶ月", "カ月", "箇月", "ケ月", "ヵ月", "月"}, "カ月": {"か月", "ヶ月", "カ月", "箇月", "ケ月", "ヵ月", "月"},
	"箇月": {"か月", "ヶ月", "カ月", "箇月", "ケ月", "ヵ月", "月"}, "月": {"月"}, "時間": {"時間"}, "分": {"分"},
	"秒": {"秒"}, "歳": {"歳", "才"}, "回": {"回", "度"}, "倍": {"倍"}, "円": {"円"}, "%": {"%", "割", "パーセント", "分の"},
	"割": {"割", "%", "パーセント"}, "パーセント": {"%", "パーセント", "割"}, "文字": {"文字", "字", "桁"}, "桁": {"桁", "文字"},
	"種類": {"種類", "種"}, "社": {"社"}, "個": {"個"}, "台": {"台"}, "回目": {"回"}, "番目": {"位", "番"}, "位": {"位"},
	"条": {"条"}, "項": {"項"}, "号": {"号"}, "度": {"度", "回", "℃", "°"}, "週間": {"週"}, "週": {"週"}, "枚": {"枚"}, "ページ": {"ページ", "頁"},
	"時": {"時"}, "kg": {"kg", "キログラム"}, "g": {"g", "グラム"}, "mg": {"mg"}, "l": {"l", "リットル"}, "m": {"m", "メートル"},
}

// counterRe finds 何 + counter in a normalised question (何件, 何日以内,
// 何リットル). Longer counters come first so 何日間 is 日間, not 日.
var counterRe = regexp.MustCompile(`何(回目|番目|` + counters + `|[a-z]+|\p{Katakana}+)`)

// counters are the Japanese counters and units a numeral carries, longer
// ones first (日間 before 日).
const counters = `パーセント|ページ|週間|日間|年間|時間|か月|ヶ月|カ月|箇月|文字|種類|[件人名日年月分秒歳回倍円%割桁社個台条項号度週枚時位]`

var (
	quantityRe   = regexp.MustCompile(`いくら|いくつ|どのくらい|どれくらい|どのぐらい|どれぐらい|どれだけ|どの程度|どれほど|割合|何割|上限|最大(?:で|値|量)?は|最低(?:で|限)?は|how (?:many|much)`)
	dateRe       = regexp.MustCompile(`いつ|何年度|何月|期限|期日|何日以内|どのタイミング|when\b`)
	whoRe        = regexp.MustCompile(`誰|だれ|どこ(?:が|の|で|に|から|へ|です)|どの(?:機関|団体|組織|会議|部署|部門|省庁|省|大臣|役職|者|チーム|グループ|担当|会社|企業)|どちら|who\b|which (?:organi[sz]ation|agency)`)
	penaltyRe    = regexp.MustCompile(`罰則|罰金|懲役|罰|処罰|ペナルティ|penalt`)
	definitionRe = regexp.MustCompile(`(?:」|\p{Han}|\p{Katakana}|[a-z0-9])とは|定義|どういう(?:もの|者|こと|意味)|どのような(?:もの|者|こと)|どんな(?:もの|者)|何を(?:いう|指す)|意味|what (?:is|are|does)`)
	conditionRe  = regexp.MustCompile(`(?:どういう|どんな|どのような|どの)場合|例外|条件|場合に限|限られ`)
)

// QuestionType reports what a question asks for. The first kind that
// matches wins, in this order: quantity (with its counter), date, penalty,
// who, definition, condition, procedure.
func QuestionType(q string) AnswerType {
	// What a question quotes is not what it asks: 「生命は、いつ、どこで…」
	// という問い asks for no date.
	n := notWhenRe.ReplaceAllString(quotationRe.ReplaceAllString(Normalize(q), "「」"), "")
	n = manyRe.ReplaceAllString(n, "")
	t := questionType(n)
	t.asked = t.Kind != KindNone && interrogativeRe.MatchString(n)
	t.relative = relativeAskRe.MatchString(n)
	return t
}

// manyRe finds 何 + counter + も, which says "many" and asks nothing
// (何年も奉仕した, 何度も再利用する).
var manyRe = regexp.MustCompile(`何(?:年間|年|度|回|日|人|時間|か月|ヶ月|週間)も`)

// notWhenRe finds the adverbs built on いつ that ask for no date: いつも
// (always), いつでも (at any time), いつの間にか.
var notWhenRe = regexp.MustCompile(`いつ(?:でも|も|の間にか|の間に)`)

// relativeAskRe finds a question for a day counted from another.
var relativeAskRe = regexp.MustCompile(`何日\s*(?:以後|以降|後|前|を経過)`)

// relativeDayRe follows the 日 of a day counted from another: 「提出日から
// 15日以後の日」「十四日前の日」.
var relativeDayRe = regexp.MustCompile(`^日\s*(?:以後|以降|後|前|を経過した|を経過する)\s*の\s*日`)

// moneyRe finds a word for a sum of money in a question.
var moneyRe = regexp.MustCompile(`罰金|科料|過料|料金|費用|価格|値段|金額|額|手数料|予算|税|給与|給料|賃金|報酬|収入|所得|売上|利益|損失|GDP|gdp|コスト|代金|運賃|円`)

// currencies are the counters of an amount of money.
var currencies = []string{"円", "ドル", "ユーロ", "ポンド", "元", "ウォン", "ルピー", "フラン"}

// quotationRe finds a quotation inside a question.
var quotationRe = regexp.MustCompile(`「[^」]*」|『[^』]*』`)

// yearWhichRe follows a 何年 that asks which year (何年に, 西暦何年のこと,
// 何年から何年まで, 何年か。); any other 何年 asks how many years (何年保存,
// 何年以内, 何年かかる).
var yearWhichRe = regexp.MustCompile(`^(?:に|の|か(?:[^か]|$)|から|まで|です|でし|だ|頃|ごろ|代|現在|何|[?？。、]|$)`)

// unitRe is a katakana word that is a unit after 何 (何リットル, 何メートル);
// other katakana after 何 name a kind of thing (何ロープウェイ), not a count.
var unitRe = regexp.MustCompile(`^(?:リットル|ミリ|センチ|メートル|キロ|グラム|トン|ページ|パーセント|ポイント|ドル|ユーロ|ポンド|ウォン|元|バイト|ビット|ヘルツ|ワット|ボルト|アンペア|カロリー|ヘクタール|アール|マイル|インチ|フィート|ヤード|ノット|ケース|セット|パック|ダース|カ所|ヵ所|ケ所|ヶ所)`)

func questionType(n string) AnswerType {
	if m := counterRe.FindStringSubmatchIndex(n); m != nil && (!isKatakanaWord(n[m[2]:m[3]]) || unitRe.MatchString(n[m[2]:m[3]])) {
		c := n[m[2]:m[3]]
		rest := n[m[3]:]
		switch {
		case c == "月", c == "時":
			// 何月, and 何時 (いつ, or an hour): a date or time.
			return AnswerType{Kind: KindDate}
		case c == "年" && (strings.HasPrefix(rest, "度") || yearWhichRe.MatchString(rest)):
			// 何年度, and 何年 asking which year.
			return AnswerType{Kind: KindDate}
		case c == "日" && strings.HasSuffix(n[:m[0]], "月"):
			// 4月何日: a day of the calendar.
			return AnswerType{Kind: KindDate}
		}
		syn, ok := counterSynonyms[c]
		if !ok {
			syn = []string{c}
		}
		return AnswerType{Kind: KindQuantity, Counters: syn}
	}
	switch {
	case quantityRe.MatchString(n):
		if strings.Contains(n, "割合") || strings.Contains(n, "何割") {
			return AnswerType{Kind: KindQuantity, Counters: counterSynonyms["%"]}
		}
		if strings.Contains(n, "いくら") && moneyRe.MatchString(n) {
			// いくら of a sum of money (罰金, 費用, GDP): an amount in a currency.
			return AnswerType{Kind: KindQuantity, Counters: currencies}
		}
		return AnswerType{Kind: KindQuantity}
	case dateRe.MatchString(n):
		return AnswerType{Kind: KindDate}
	case penaltyRe.MatchString(n):
		return AnswerType{Kind: KindPenalty}
	case whoRe.MatchString(n):
		return AnswerType{Kind: KindWho}
	case definitionRe.MatchString(n):
		return AnswerType{Kind: KindDefinition}
	case conditionRe.MatchString(n):
		return AnswerType{Kind: KindCondition}
	case procedureRe.MatchString(n):
		return AnswerType{Kind: KindProcedure}
	}
	return AnswerType{}
}

// procedureRe matches a question that asks how to do something:
// 「…の手順は？」「…する方法」「どうすれば」「どのように」「どう隔離する」 (どう before
// a kanji or katakana verb, not どうして "why"), "how to".
var procedureRe = regexp.MustCompile(`手順|方法|やり方|仕方|段取り|どうすれば|どうやって|どのように|どう[\p{Han}\p{Katakana}]|\bhow (?:to|do|can|should)\b|\bprocedures?\b|\bsteps?\b`)

// IsProcedure reports whether a question asks how to do something.
func IsProcedure(q string) bool { return procedureRe.MatchString(Normalize(q)) }

const numeral = `(?:[0-9][0-9,.]*|[〇零一二三四五六七八九十百千万億兆]+|半)`

var (
	// anyQuantityRe finds a quantity of any unit: a figure and what
	// follows it, or a kanji numeral that opens a word (not 統一, 同一) and
	// carries a counter (not 一般, 一旦, 一部: words written with a
	// numeral, which count nothing).
	anyQuantityRe = regexp.MustCompile(`[0-9][0-9,.]*\s*(?:[^\s0-9,.。、]{1,4})|(?:^|[^\p{Han}\p{Katakana}])(?:[〇零一二三四五六七八九十百千万億兆]+|半)\s*(?:` + counters + `|つ)`)
	// adverbNumeralRe finds 十分 as the adverb or adjective (十分な, 十分に
	// — enough), not ten minutes.
	adverbNumeralRe = regexp.MustCompile(`十分(?:な|に|だ|です|である|と)`)
	dateExprRe      = regexp.MustCompile(numeral + `\s*(?:年|月|日|時|週|か月|ヶ月|カ月|箇月)|` + eraYearExpr + `|以内|期限|までに|まで(?:の|に|で|は)|以後|以降|以前|から起算|経過|直ちに|遅滞なく|速やかに|あらかじめ|の際|前まで|日前|当日|翌日|毎年|毎月|` + westernYear)
	penaltyExprRe   = regexp.MustCompile(`懲役|禁錮|禁固|罰金|科料|過料|拘禁刑|に処する|に処し`)
	whoExprRe       = regexp.MustCompile(`大臣|長官|知事|市町村長|消防長|署長|庁|省|局|署|会議|本部|機構|協会|委員会|団体|法人|機関|組合|センター|部門|内閣|国会|裁判所|議院|天皇|事業者|管理者|責任者|利用者|首長|[市町村]長|株式会社|運営|チーム|グループ|担当者|担当部署|会社|企業`)
	definitionExpr  = regexp.MustCompile(`をいう|とは|という|と定義|を指す|を意味|とする。|のことで`)
	conditionExpr   = regexp.MustCompile(`場合|とき|ただし|限り|除き|除く|条件|ときは|においては`)
)

// Satisfied reports whether normalised text holds an expression of the
// type: a numeral with one of the counters (or any unit), a date or
// deadline, a penalty, an organisation or role, a definition, a condition.
// KindNone and KindProcedure are satisfied by any text.
func (t AnswerType) Satisfied(norm string) bool {
	switch t.Kind {
	case KindQuantity:
		return t.quantityIn(norm)
	case KindDate:
		// A length of time (「1 年間の非推奨期間」) says how long, not when.
		return dateExprRe.MatchString(durationRe.ReplaceAllString(norm, ""))
	case KindPenalty:
		return penaltyExprRe.MatchString(norm)
	case KindWho:
		return whoExprRe.MatchString(norm)
	case KindDefinition:
		return definitionExpr.MatchString(norm)
	case KindCondition:
		return conditionExpr.MatchString(norm)
	}
	return true
}

// explicitDateRe finds a date written as one: a numeral with 年, 月 or
// 日, an era year, or a four-digit year — not a deadline said in words
// (経過, 速やかに, あらかじめ).
var explicitDateRe = regexp.MustCompile(numeral + `\s*(?:年|月|日)|` + eraYearExpr + `|` + westernYear)

// eraYearExpr is a year of a Japanese era (令和5, 平成元); westernYear a
// four-digit year of the twentieth or twenty-first century.
const (
	eraYearExpr = `(?:令和|平成|昭和|大正|明治)\s*(?:` + numeral + `|元)`
	westernYear = `\b(?:19|20)[0-9]{2}\b`
)

// ExplicitDate reports whether normalised text writes a date (see
// explicitDateRe); a length of time (1 年間) is none.
func ExplicitDate(norm string) bool {
	return explicitDateRe.MatchString(durationRe.ReplaceAllString(norm, ""))
}

// durationRe finds a length of time: a numeral with 年間, 日間, か月間,
// 週間 or 時間.
var durationRe = regexp.MustCompile(numeral + `\s*(?:年間|日間|(?:か|ヶ|カ|箇|ケ|ヵ)月間|週間|時間)`)

func (t AnswerType) quantityIn(norm string) bool {
	if len(t.Counters) == 0 {
		return anyQuantityRe.MatchString(adverbNumeralRe.ReplaceAllString(norm, ""))
	}
	// 何人 and 何社 also ask which people or which company (ポルトガル人,
	// フィリップス社).
	if (slices.Contains(t.Counters, "人") || slices.Contains(t.Counters, "社")) && namedRe.MatchString(norm) {
		return true
	}
	for _, loc := range numeralRe.FindAllStringIndex(norm, -1) {
		rest := strings.TrimLeft(norm[loc[1]:], " ")
		for _, c := range t.Counters {
			if strings.HasPrefix(rest, c) && !isDatePart(norm[:loc[0]], norm[loc[0]:loc[1]], c) &&
				(t.relative || !relativeDayRe.MatchString(rest)) {
				return true
			}
		}
	}
	return false
}

// isDatePart reports whether a numeral followed by counter c is part of a
// calendar date rather than a quantity: 「10月1日」 is no number of days,
// 「2024年」 and 「令和5年」 no number of years. before is the text before
// the numeral.
func isDatePart(before, num, c string) bool {
	before = strings.TrimRight(before, " ")
	switch c {
	case "日":
		return strings.HasSuffix(before, "月")
	case "年":
		if len(num) == 4 && num[0] >= '1' && num[0] <= '2' {
			return true // a year of the common era
		}
		for _, era := range []string{"令和", "平成", "昭和", "大正", "明治"} {
			if strings.HasSuffix(before, era) {
				return true
			}
		}
	case "月":
		return strings.HasSuffix(before, "年")
	}
	return false
}

var numeralRe = regexp.MustCompile(numeral)

// namedRe is a people or a company named in katakana: ポルトガル人,
// フィリップス社.
var namedRe = regexp.MustCompile(`[\p{Katakana}ー]{2,}(?:人|社)`)

// articleRe matches an article reference of Japanese legal text: 第十一条,
// 第六十六条の二, 第8条.
var articleRe = regexp.MustCompile(`第[〇一二三四五六七八九十百千0-9]+条(?:の[〇一二三四五六七八九十0-9]+)*`)

// Articles returns the article references in text, in order, without
// repeats.
func Articles(text string) []string {
	var out []string
	for _, a := range articleRe.FindAllString(text, -1) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Refers reports whether text refers to article a as a whole reference:
// 「第五十五条の規定」 refers to 第五十五条, 「第五十五条の二」 does not.
func Refers(text, a string) bool {
	for _, m := range articleRe.FindAllString(text, -1) {
		if m == a {
			return true
		}
	}
	return false
}

// quotedTermRe and definedTermRe find the term a definition question asks
// about: 「X」, or X とは / X という.
var (
	quotedTermRe  = regexp.MustCompile(`「([^」]{1,30})」`)
	definedTermRe = regexp.MustCompile(`([\p{Han}\p{Katakana}ー・a-z0-9]{2,30})(?:とは|という)`)
)

// DefinedTerm returns the term a definition question asks about — the
// quoted one when the question quotes one — or "".
func DefinedTerm(q string) string {
	n := Normalize(q)
	if m := quotedTermRe.FindStringSubmatch(n); m != nil {
		return m[1]
	}
	if m := definedTermRe.FindStringSubmatch(n); m != nil {
		return m[1]
	}
	return ""
}

// headingTitleRe matches what a heading may carry around the term it
// names: a section number before, and 「とは」「とは何か？」「の定義」「って何」
// after.
var headingTitleRe = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)*[.)]?\s*|第[0-9一二三四五六七八九十]+[章節条部編]\s*|[(][0-9]+[)]\s*)|(?:とは(?:何|なに)?(?:か|ですか)?|の定義|って何(?:ですか)?)?[?!。]*$`)

// HeadingTerm returns the term a heading names, normalised, without its
// section number and a 「とは何か？」: 「2.8 供給ソフトウェア」 and
// 「重大インシデントとは何か？」 name 供給ソフトウェア and 重大インシデント. A
// glossary set as headings, or an FAQ whose questions are headings,
// defines the term in the section's body without naming it again.
func HeadingTerm(h string) string {
	return strings.TrimSpace(headingTitleRe.ReplaceAllString(Normalize(strings.TrimSpace(h)), ""))
}

// Defines reports whether a normalised sentence defines term: it opens
// with the term (after an item number) followed by a space or 「とは」, as
// legal definitions and glossaries do (「六　行政指導　行政機関が…をいう。」,
// a glossary table's row 「| 多要素認証 | 意味: …」), or it says 「term」とは / 「term」をいう.
func Defines(norm, term string) bool {
	if term == "" {
		return false
	}
	t := strings.TrimLeft(norm, "〇一二三四五六七八九十0123456789()（）.、 　|")
	if rest, ok := strings.CutPrefix(t, term); ok && (rest == "" || strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "　") || strings.HasPrefix(rest, "とは") || strings.HasPrefix(rest, "(")) {
		return true
	}
	return strings.Contains(norm, "「"+term+"」とは") || strings.Contains(norm, "「"+term+"」という") || strings.Contains(norm, "「"+term+"」をいう")
}

// MentionsPenalty reports whether normalised text speaks of penalties at
// all — states one, or names them (罰則, 罰金, ペナルティ): 「本指針に罰則は
// ない」 answers a question about the penalty as well as a fine does.
func MentionsPenalty(norm string) bool {
	return penaltyRe.MatchString(norm) || penaltyExprRe.MatchString(norm)
}

// askedVerbRe finds the word a who/where question asks about: the kanji
// run right after the interrogative and its particle (「どこへ届け出る」→
// 届, 「どこが運営している」→ 運営, 「誰の許可を受ける」→ 許可, 「どの会議で決定」→
// 決定).
var askedVerbRe = regexp.MustCompile(`(?:誰|だれ|どこ|どちら|どの[\p{Han}\p{Katakana}ー]+)(?:が|に|へ|で|から|を|の|と|まで|より)?(?:は|も)?(\p{Han}+)`)

// AskedVerb returns the word a who or where question attaches to its
// interrogative (see askedVerbRe), or "".
func AskedVerb(q string) string {
	if m := askedVerbRe.FindStringSubmatch(Normalize(q)); m != nil {
		return m[1]
	}
	return ""
}

// NamesAgent reports whether a sentence names an organisation, authority
// or role (whoExprRe, or an upper-case acronym such as IPA or JPCERT/CC)
// that the question does not already name: the word around the match — its
// run of kanji and katakana — must not be one of the question's own words,
// so that 「防火管理者を定め…」 does not answer 「防火管理者を選任したら、どこへ
// 届け出る？」 while 「所轄消防長…に届け出なければならない」 does. A ministry's
// ordinance (省令, 府令) names no one.
func NamesAgent(text, question string) bool {
	q := Normalize(question)
	for _, a := range acronymRe.FindAllString(text, -1) {
		if !strings.Contains(q, strings.ToLower(a)) {
			return true
		}
	}
	norm := Normalize(text)
	for _, m := range whoExprRe.FindAllStringIndex(norm, -1) {
		if strings.HasPrefix(norm[m[1]:], "令") {
			continue
		}
		s, e := m[0], m[1]
		for s > 0 {
			r, n := utf8.DecodeLastRuneInString(norm[:s])
			if !isKanaKanjiWord(r) {
				break
			}
			s -= n
		}
		for e < len(norm) {
			r, n := utf8.DecodeRuneInString(norm[e:])
			if !isKanaKanjiWord(r) {
				break
			}
			e += n
		}
		if !strings.Contains(q, norm[s:e]) {
			return true
		}
	}
	return false
}

// acronymRe finds an upper-case acronym, the way organisations are often
// named (IPA, NIST, JPCERT/CC).
var acronymRe = regexp.MustCompile(`\b[A-Z][A-Z0-9]+(?:[/&][A-Z0-9]+)*\b`)

// isKanaKanjiWord reports whether r belongs to a kanji or katakana word.
func isKanaKanjiWord(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Katakana, r) || r == 'ー'
}

// DefinesByApposition reports whether a normalised sentence defines term
// in apposition rather than with 「とは」: 「term、すなわち、…」「term、つまり…」,
// or the abbreviation clause of legal text and guidelines,
// 「term（以下「…」という。）」 — the sentence then says what term is
// right after naming it.
func DefinesByApposition(norm, term string) bool {
	if term == "" {
		return false
	}
	for i := 0; ; {
		k := strings.Index(norm[i:], term)
		if k < 0 {
			return false
		}
		rest := strings.TrimLeft(norm[i+k+len(term):], "」』 ")
		for _, p := range []string{"、すなわち", "すなわち", "、つまり", "、即ち", "(以下"} {
			if strings.HasPrefix(rest, p) {
				return true
			}
		}
		i += k + len(term)
	}
}

// excludedRe finds what a question sets aside: 「（特に大規模なものを除く）」,
// 「…以外の」, 「…は除いて」 — the phrase back to the previous bracket or
// comma, with the excluding word.
var excludedRe = regexp.MustCompile(`[^、。,()「」『』]{1,30}?(?:を|は)?(?:除く|除いて|除き|以外)`)

// ExcludedPhrases returns the phrases of a question that name what it
// does not ask about (see excludedRe), normalised: their words describe
// the other case, so evidence that repeats them answers the wrong one.
func ExcludedPhrases(q string) []string {
	return excludedRe.FindAllString(Normalize(q), -1)
}

// isKatakanaWord reports whether s is written in katakana only.
func isKatakanaWord(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Katakana, r) && r != 'ー' {
			return false
		}
	}
	return s != ""
}
