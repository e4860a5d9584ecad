package analysis

import "testing"

func TestParseNumber(t *testing.T) {
	for _, tt := range []struct {
		s  string
		n  int
		ok bool
	}{
		{"十", 10, true},
		{"六十六", 66, true},
		{"百二十", 120, true},
		{"千二百三", 1203, true},
		{"二〇二四", 2024, true}, // digit by digit
		{"2024", 2024, true},
		{"１５", 15, true},
		{"〇", 0, true},
		{"", 0, false},
		{"元", 0, false}, // an era's first year is the caller's to read
		{"十a", 0, false},
		{"九九九九九九九九九九九", 1e9, true}, // capped
	} {
		if n, ok := ParseNumber(tt.s); n != tt.n || ok != tt.ok {
			t.Errorf("ParseNumber(%q) = %d, %v; want %d, %v", tt.s, n, ok, tt.n, tt.ok)
		}
	}
}
