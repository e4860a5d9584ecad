package analysis

// ParseNumber reads a number written in kanji as Japanese text writes it
// (百二十三, 六十六, 十, or digit by digit as 二〇二四), or in ASCII or
// full-width digits. ok is false for an empty string or one holding anything
// else. Numbers beyond a billion, which no article, year or count in a
// document reaches, are capped so that crafted input cannot overflow.
func ParseNumber(s string) (n int, ok bool) {
	if s == "" {
		return 0, false
	}
	total, cur := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			cur = cur*10 + int(r-'0')
		case r >= '０' && r <= '９':
			cur = cur*10 + int(r-'０')
		case r == '十':
			total, cur = total+max(cur, 1)*10, 0
		case r == '百':
			total, cur = total+max(cur, 1)*100, 0
		case r == '千':
			total, cur = total+max(cur, 1)*1000, 0
		default:
			d, digit := kanjiDigit(r)
			if !digit {
				return 0, false
			}
			cur = cur*10 + d
		}
		if total > 1e9 || cur > 1e9 {
			return 1e9, true
		}
	}
	return total + cur, true
}

// kanjiDigit is the value of a kanji digit (〇 and 零 are 0).
func kanjiDigit(r rune) (int, bool) {
	switch r {
	case '〇', '零':
		return 0, true
	case '一':
		return 1, true
	case '二':
		return 2, true
	case '三':
		return 3, true
	case '四':
		return 4, true
	case '五':
		return 5, true
	case '六':
		return 6, true
	case '七':
		return 7, true
	case '八':
		return 8, true
	case '九':
		return 9, true
	}
	return 0, false
}
