package analysis

import (
	"reflect"
	"testing"
)

func TestCalendarRefs(t *testing.T) {
	y := func(n int) CalendarRef { return CalendarRef{UnitYear, n} }
	q := func(n int) CalendarRef { return CalendarRef{UnitQuarter, n} }
	m := func(n int) CalendarRef { return CalendarRef{UnitMonth, n} }
	for _, tt := range []struct {
		text string
		want []CalendarRef
	}{
		{"2024 年第 2 四半期（4 月～6 月）の報告", []CalendarRef{y(2024), q(2), m(4), m(6)}},
		{"２０２４年第３四半期（７〜９月）", []CalendarRef{y(2024), q(3), m(7), m(9)}},
		{"令和5年10月1日から適用する。", []CalendarRef{y(2023), m(10)}},
		{"平成十三年四月一日から施行する。", []CalendarRef{y(2001), m(4)}},
		{"令和元年度の予算", []CalendarRef{y(2019)}},
		{"公開日 2023/8/28", []CalendarRef{y(2023), m(8)}},
		{"4月から6月までの件数", []CalendarRef{m(4), m(6)}},
		{"3か月以内に届け出る。六月以下の懲役に処する。", nil},
		{"第二四半期と第2四半期", []CalendarRef{q(2)}},
		{"100件、3,000円、第5条", nil},
	} {
		if got := CalendarRefs(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CalendarRefs(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestCalendarRefSpellings(t *testing.T) {
	for _, tt := range []struct {
		r    CalendarRef
		want []string
	}{
		{CalendarRef{UnitYear, 2024}, []string{"2024年", "令和6年"}},
		{CalendarRef{UnitYear, 2001}, []string{"2001年", "平成13年"}},
		{CalendarRef{UnitYear, 1960}, []string{"1960年", "昭和35年"}},
		{CalendarRef{UnitQuarter, 3}, []string{"第3四半期"}},
		{CalendarRef{UnitMonth, 9}, []string{"9月"}},
	} {
		if got := tt.r.Spellings(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v.Spellings() = %q, want %q", tt.r, got, tt.want)
		}
		for _, sp := range tt.r.Spellings() {
			if got := CalendarRefs(sp); !reflect.DeepEqual(got, []CalendarRef{tt.r}) {
				t.Errorf("CalendarRefs(%q) = %v, want %v", sp, got, tt.r)
			}
		}
	}
}

func TestLocatorNouns(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"申告書のどの欄に記入すればよいですか？", []string{"欄"}},
		{"やめたいときは、どの届出書を出せばよいですか？", []string{"届出書"}},
		{"どの様式を使いますか", []string{"様式"}},
		{"設定はどの画面から変更できますか", []string{"画面"}},
		{"どの機関が所管していますか", nil},
		{"どの書類を添付しますか", nil}, // 住民票, 印鑑証明書: members have names of their own
		{"どういう順番で並べますか", nil},
		{"申請書などの書類は必要ですか", nil}, // などの is no determiner
	} {
		if got := LocatorNouns(tt.q); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("LocatorNouns(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestAskedPredicate(t *testing.T) {
	for _, tt := range []struct {
		q, want string
	}{
		{"その製品の修正版はいつリリースされましたか？", "リリースされましたか"},
		{"規程は、直近ではいつ改正されましたか", "改正されましたか"},
		{"いつまでに、どこへ届け出ますか", ""},
		{"部品をどういう順番で組み立てる決まりですか？", "で組み立てる決まりですか"},
		{"違反するとどんな罰則やペナルティがありますか", "がありますか"},
		{"いつまでにどの届出書を提出すればよいですか", "を提出すればよいですか"},
		{"保存期間は何日ですか", ""},
		{"会議などの場で決めますか", ""},
		{"いつでも解約できますか", ""},
		{"いつも利用している画面はどれですか", ""},
	} {
		if got := AskedPredicate(tt.q); got != tt.want {
			t.Errorf("AskedPredicate(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestIsFramingWord(t *testing.T) {
	for term, want := range map[string]bool{"記載": true, "紹介": true, "規定": true, "予定": true, "改正": false, "リリース": false} {
		if got := IsFramingWord(term); got != want {
			t.Errorf("IsFramingWord(%q) = %v, want %v", term, got, want)
		}
	}
}

func TestMentionsPenalty(t *testing.T) {
	for text, want := range map[string]bool{
		"この指針に従わない場合の罰則はない。":   true,
		"違反した者は、十万円以下の過料に処する。": true,
		"ペナルティは設けていない。":        true,
		"事業者は年に一度点検を行う。":       false,
	} {
		if got := MentionsPenalty(Normalize(text)); got != want {
			t.Errorf("MentionsPenalty(%q) = %v, want %v", text, got, want)
		}
	}
}
