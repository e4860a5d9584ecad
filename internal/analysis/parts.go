package analysis

import (
	"strings"
	"unicode"
)

// Parts cuts a question into the parts it asks about at Japanese enumerations and conjunctions:
// 「及び」「および」「並びに」「また」, list commas, and 「と」「や」 right after
// a noun (a character that is not hiragana), except 「とは」「として」「という」
// 「とする」.
func Parts(q string) []string {
	rs := []rune(q)
	var parts []string
	var cur []rune
	flush := func() {
		if s := strings.TrimSpace(string(cur)); s != "" {
			parts = append(parts, s)
		}
		cur = cur[:0]
	}
	hasPrefix := func(i int, s string) bool {
		return strings.HasPrefix(string(rs[i:]), s)
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		prevNoun := len(cur) > 0 && !isHiraganaRune(cur[len(cur)-1]) && !unicode.IsSpace(cur[len(cur)-1]) && !unicode.IsPunct(cur[len(cur)-1])
		switch {
		case hasPrefix(i, "および") || hasPrefix(i, "並びに"):
			flush()
			i += 2
			continue
		case hasPrefix(i, "及び"):
			flush()
			i++
			continue
		case hasPrefix(i, "また") && (len(cur) == 0 || i+2 < len(rs) && (rs[i+2] == '、' || rs[i+2] == ',')):
			flush()
			i++
			continue
		case r == '、' || r == ',' || r == '，' || r == '。' || r == '？' || r == '?' || r == '\n' || r == ';' || r == '；':
			if r == '、' || r == ',' || r == '，' {
				// A comma lists nouns (「A、B」); after a subordinate
				// clause (「…場合、」), after a word in hiragana (a
				// verb or particle: 「…を数えると、」「…が壊れ、」
				// 「…によると、」) or between digits (「6,000円」) it
				// continues one sentence.
				if endsWithAnyOf(string(cur), clauseEnds) || len(cur) > 0 && isHiraganaRune(cur[len(cur)-1]) ||
					len(cur) > 0 && unicode.IsDigit(cur[len(cur)-1]) && i+1 < len(rs) && unicode.IsDigit(rs[i+1]) {
					cur = append(cur, r)
					continue
				}
			}
			flush()
			continue
		case (r == 'と' || r == 'や') && prevNoun && i+1 < len(rs):
			// 「AとB」「AやB」 list nouns: a noun follows. Before hiragana
			// it is a particle or a verb's stem (「とは」「として」
			// 「増やす」), and と before a verb quotes (「何日と定める」).
			if isHiraganaRune(rs[i+1]) || r == 'と' && startsVerbRunes(rs[i+1:]) {
				break
			}
			flush()
			continue
		case r == ' ' || r == '　':
			// "A vs B"
			if hasPrefix(i, " vs ") || hasPrefix(i, " VS ") {
				flush()
				i += 3
				continue
			}
		}
		cur = append(cur, r)
	}
	flush()
	return parts
}

// clauseEnds end a subordinate clause: a 「、」 after them does not start
// a new part.
var clauseEnds = []string{"場合", "際", "時", "とき", "ため", "後", "前", "ので", "から", "けど", "なら", "ば", "て", "で", "は", "が", "も"}

// startsVerbRunes reports whether rs opens with one kanji followed by
// hiragana (「定める」「言う」): a verb, not a noun of a list.
func startsVerbRunes(rs []rune) bool {
	return len(rs) >= 2 && unicode.Is(unicode.Han, rs[0]) && isHiraganaRune(rs[1])
}

func endsWithAnyOf(s string, ends []string) bool {
	for _, e := range ends {
		if strings.HasSuffix(s, e) {
			return true
		}
	}
	return false
}

func isHiraganaRune(r rune) bool { return unicode.Is(unicode.Hiragana, r) }
