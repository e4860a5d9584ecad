package main

import (
	"strings"
	"testing"
)

// TestBlankQueriesRefused: a query of only control characters, NULs or
// invalid bytes is refused by search and ask like an empty one, instead
// of returning arbitrary chunks.
func TestBlankQueriesRefused(t *testing.T) {
	fixture := indexedFixture(t)
	workspace(t, fixture)
	for _, q := range []string{"", "\x00\x00", "\x01\x1b\x7f", "\xff\xfe\xc0", "\u200b\ufeff"} {
		for _, cmd := range []string{"search", "ask"} {
			out, _, err := run(t, "", cmd, q)
			if err == nil || !strings.Contains(err.Error(), "空") {
				t.Errorf("%s %q: %v\n%s; want the empty-question refusal", cmd, q, err, out)
			}
		}
	}
}
