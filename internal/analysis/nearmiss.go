package analysis

import (
	"regexp"
	"strconv"
	"strings"
)

// What a question pins down beyond its topic: the period it is about, the
// field or form it asks to name, the event whose date it asks, a term it
// quotes. Evidence on the right topic that holds none of it is the near miss
// the evidence gate refuses (see assistant.nearMiss).

// CalendarUnit is the unit of a CalendarRef.
type CalendarUnit string

// Calendar units.
const (
	UnitYear    CalendarUnit = "year"    // 2024年, 令和6年, 2024年度, 2024/8/28
	UnitQuarter CalendarUnit = "quarter" // 第3四半期
	UnitMonth   CalendarUnit = "month"   // 7月, 7〜9月 (7 and 9), 2024/8/28
)

// CalendarRef is a year, quarter or month a text names. Era years are
// counted in the common era (令和6年 is 2024), and a fiscal year as its
// year.
type CalendarRef struct {
	Unit CalendarUnit
	N    int
}

const calNum = `([0-9]{1,4}|[〇零一二三四五六七八九十]{1,4}|元)`

var (
	eraYearRe = regexp.MustCompile(`(令和|平成|昭和)` + calNum + `年`)
	ceYearRe  = regexp.MustCompile(`((?:19|20)[0-9]{2})(?:年|/([0-9]{1,2})/)`)
	quarterRe = regexp.MustCompile(`第` + calNum + `四半期`)
	// monthRe is N月 or a range N〜M月, not a number of months (3か月,
	// 六月以内) — the character before must not be a numeral or a counter's
	// か・ヶ.
	monthRe = regexp.MustCompile(`(?:^|[^かヶカ箇ケヵ0-9〇零一二三四五六七八九十])` + calNum + `(?:(?:[~〜～-]|から)` + calNum + `)?月`)
	// durationAfter follows a number of months in legal text (六月以下の懲役,
	// 三月以内).
	durationAfter = []string{"以内", "以下", "以上", "未満", "間", "を経過", "を超"}
)

// eraBase is the year before an era's first year.
var eraBase = map[string]int{"令和": 2018, "平成": 1988, "昭和": 1925}

// CalendarRefs returns the years, quarters and months text names, each
// once, in order of appearance. The text is normalised and white space is
// removed first, so 「2024 年第 2 四半期（4 月～6 月）」 gives 2024, quarter 2,
// months 4 and 6.
func CalendarRefs(text string) []CalendarRef {
	n := Compact(text)
	var out []CalendarRef
	add := func(u CalendarUnit, v int) {
		r := CalendarRef{u, v}
		for _, x := range out {
			if x == r {
				return
			}
		}
		out = append(out, r)
	}
	for _, m := range eraYearRe.FindAllStringSubmatch(n, -1) {
		if v, ok := eraYear(m[2]); ok {
			add(UnitYear, eraBase[m[1]]+v)
		}
	}
	for _, m := range ceYearRe.FindAllStringSubmatch(n, -1) {
		y, _ := strconv.Atoi(m[1])
		add(UnitYear, y)
		if m[2] != "" {
			if mo, _ := strconv.Atoi(m[2]); mo >= 1 && mo <= 12 {
				add(UnitMonth, mo)
			}
		}
	}
	for _, m := range quarterRe.FindAllStringSubmatch(n, -1) {
		if v, ok := ParseNumber(m[1]); ok && v >= 1 && v <= 4 {
			add(UnitQuarter, v)
		}
	}
	for _, loc := range monthRe.FindAllStringSubmatchIndex(n, -1) {
		rest := n[loc[1]:]
		duration := false
		for _, d := range durationAfter {
			if strings.HasPrefix(rest, d) {
				duration = true
				break
			}
		}
		if duration {
			continue
		}
		for _, g := range [][2]int{{loc[2], loc[3]}, {loc[4], loc[5]}} {
			if g[0] < 0 {
				continue
			}
			if v, ok := ParseNumber(n[g[0]:g[1]]); ok && v >= 1 && v <= 12 {
				add(UnitMonth, v)
			}
		}
	}
	return out
}

// Spellings returns the ways a document writes r, to search for it: 2024
// as 2024年 and 令和6年, the third quarter as 第3四半期, September as 9月.
func (r CalendarRef) Spellings() []string {
	switch r.Unit {
	case UnitYear:
		out := []string{strconv.Itoa(r.N) + "年"}
		for _, era := range []string{"令和", "平成", "昭和"} {
			if y := r.N - eraBase[era]; y >= 1 && (era != "平成" || r.N <= 2019) && (era != "昭和" || r.N <= 1989) {
				out = append(out, era+strconv.Itoa(y)+"年")
				break
			}
		}
		return out
	case UnitQuarter:
		return []string{"第" + strconv.Itoa(r.N) + "四半期"}
	case UnitMonth:
		return []string{strconv.Itoa(r.N) + "月"}
	}
	return nil
}

// Compact is Normalize with all white space removed: text extracted from
// PDF pages puts spaces between numbers and counters (「2024 年 4 月」) and
// inside words at line ends.
func Compact(s string) string {
	return strings.Join(strings.Fields(Normalize(s)), "")
}

// eraYear reads the year of an era year: a numeral, or 元 for the first.
func eraYear(s string) (int, bool) {
	if s == "元" {
		return 1, true
	}
	return ParseNumber(s)
}

// determinerRe finds an interrogative determiner and the class noun it
// asks for (どの欄, どういう順番, どんな罰則やペナルティ, 何の法律). A
// determiner inside など・ほど (などの, ほどの) is not one.
var determinerRe = regexp.MustCompile(`(?:^|[^なほ])(?:どの|どういう|どんな|どのような|どういった|何の|なんの|どのくらいの|どれくらいの|どの程度の)((?:[\p{Han}\p{Katakana}ー]+(?:や|・|及び|又は|または))*[\p{Han}\p{Katakana}ー]+)`)

// locatorRe is a class noun naming a place in a document or on a screen
// — a field, a form, a document, a table, a button — whose instances are
// named with it (「付記事項」欄, 第1号様式, 登録取消届出書, 別表第二).
// A superclass whose members go by names of their own (書類, ファイル,
// フォルダ: 住民票, config.yaml) is not one.
var locatorRe = regexp.MustCompile(`(?:欄|様式|書式|用紙|帳票|別表|別紙|画面|ボタン|メニュー|タブ|フォーム|\p{Han}書)$`)

// LocatorNouns returns the class nouns of the question's determiners that
// name a place in a document or on a screen: 「どの欄に付記すればよいですか」
// gives 欄, 「どの届出書を出せばよいですか」 届出書. An answer names one of
// them, and Japanese names end in their class (「付記事項」欄, 登録取消届出書).
func LocatorNouns(q string) []string {
	var out []string
	for _, m := range determinerRe.FindAllStringSubmatch(Compact(q), -1) {
		head := locatorRe.FindString(m[1])
		if strings.HasSuffix(head, "書") {
			// A document: its last three characters (届出書, 申告書).
			r := []rune(m[1])
			head = string(r[max(0, len(r)-3):])
		}
		if head != "" {
			out = append(out, head)
		}
	}
	return out
}

// whenRe finds いつ with the particles that make it a start or a deadline.
var whenRe = regexp.MustCompile(`いつ(?:から|まで(?:に)?|ごろ|頃)?`)

// AskedPredicate returns the part of a question that says what happened or
// is done to the thing asked about, when the question asks for a date or
// for a member of a class: the rest of the clause after いつ
// (「修正版はいつリリースされましたか」→「リリースされましたか」) or after a
// determiner and its class noun (「どういう順番で記載するルールに…」→「で記載
// するルールに…」), other determiner phrases left out; "" for other
// questions. A passage can only date an event it mentions, and only name
// the member of a class that does what the question says.
func AskedPredicate(q string) string {
	n := notWhenRe.ReplaceAllString(Compact(q), "")
	start := -1
	if loc := whenRe.FindStringIndex(n); loc != nil {
		start = loc[1]
	} else if loc := determinerRe.FindStringIndex(n); loc != nil {
		start = loc[1]
	}
	if start < 0 {
		return ""
	}
	end := len(n)
	if i := strings.IndexAny(n[start:], "?？。、,"); i >= 0 {
		end = start + i
	}
	return strings.TrimSpace(determinerRe.ReplaceAllString(n[start:end], " "))
}

// framingWords are the nouns with which a question frames what it asks
// rather than name what happened: how a document says it (「紹介されて
// いますか」「記載されていますか」「どう規定していますか」 — the document does
// not use them of itself) and modality (「公開される予定ですか」「届出が必要
// ですか」).
var framingWords = map[string]bool{
	"記載": true, "記述": true, "紹介": true, "説明": true, "規定": true, "明記": true,
	"言及": true, "掲載": true, "解説": true,
	"予定": true, "想定": true, "必要": true, "可能": true,
}

// IsFramingWord reports whether an analysed term frames a question (記載,
// 紹介, 予定, 必要 …) rather than naming what it asks about.
func IsFramingWord(term string) bool { return framingWords[term] }
